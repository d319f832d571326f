// Package tracectxtest holds the table of trace-context hook outputs that
// the tests of every adapter run through each outbound request they make,
// and the tests of package tracectx check against From. Only tests import
// it.
package tracectxtest

import (
	"context"
	"strings"

	"github.com/wopneg/wopneg/negotiate"
)

// Case is what a hook hands and what an adapter must then stamp: one row
// of the table the tests of mcphttp and a2ahttp each run through every
// outbound request they make.
type Case struct {
	Name string
	// NoHook is the row of a nil hook.
	NoHook bool
	// Parent and State are what the hook hands.
	Parent, State string
	// WantParent and WantState are what every carrier must then hold;
	// "" is nothing.
	WantParent, WantState string
}

// caseParent is the well-formed traceparent of Cases.
const caseParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// Cases are the hook outputs an adapter is tested with: well formed, each
// class of malformed traceparent (dropped with its tracestate), and a
// malformed tracestate (dropped alone).
var Cases = []Case{
	{Name: "nil hook", NoHook: true},
	{Name: "valid, with tracestate", Parent: caseParent, State: "vendor=x,other=y", WantParent: caseParent, WantState: "vendor=x,other=y"},
	{Name: "valid, no tracestate", Parent: caseParent, State: "", WantParent: caseParent, WantState: ""},
	{Name: "empty", Parent: "", State: "vendor=x", WantParent: "", WantState: ""},
	{Name: "version ff", Parent: "ff" + caseParent[2:], State: "vendor=x", WantParent: "", WantState: ""},
	{Name: "uppercase", Parent: strings.ToUpper(caseParent), State: "vendor=x", WantParent: "", WantState: ""},
	{Name: "all-zero trace id", Parent: "00-" + strings.Repeat("0", 32) + caseParent[35:], State: "", WantParent: "", WantState: ""},
	{Name: "all-zero parent id", Parent: caseParent[:36] + strings.Repeat("0", 16) + "-01", State: "", WantParent: "", WantState: ""},
	{Name: "short", Parent: caseParent[:54], State: "", WantParent: "", WantState: ""},
	{Name: "trailing field", Parent: caseParent + "-x", State: "", WantParent: "", WantState: ""},
	{Name: "a header injection", Parent: caseParent[:54] + "\n", State: "", WantParent: "", WantState: ""},
	{Name: "tracestate too long", Parent: caseParent, State: "a=" + strings.Repeat("x", 600), WantParent: caseParent, WantState: ""},
	{Name: "tracestate malformed", Parent: caseParent, State: "Vendor=x", WantParent: caseParent, WantState: ""},
	{Name: "tracestate with a newline", Parent: caseParent, State: "a=1\nb=2", WantParent: caseParent, WantState: ""},
}

// Hook is the hook of c: nil for the NoHook row, else one that hands
// Parent and State whatever the context.
func (c Case) Hook() negotiate.TraceContext {
	if c.NoHook {
		return nil
	}
	return func(context.Context) (string, string) { return c.Parent, c.State }
}
