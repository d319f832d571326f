package tracectx_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/internal/tracectx/tracectxtest"
)

const (
	trace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent = "00f067aa0ba902b7"
	valid  = "00-" + trace + "-" + parent + "-01"
)

// TestValidParent: every class of malformed traceparent is refused, at
// each edge of the hex ranges, and the well-formed ones pass.
func TestValidParent(t *testing.T) {
	for _, c := range []struct {
		name, s string
		want    bool
	}{
		{"version 00", valid, true},
		{"a future version of 55 bytes", "cc-" + trace + "-" + parent + "-01", true},
		{"version fe", "fe-" + trace + "-" + parent + "-01", true},
		{"flags 00", "00-" + trace + "-" + parent + "-00", true},
		{"every hex digit", "09-abcdef0123456789abcdef0123456789-9876543210fedcba-af", true},
		{"an id with one nonzero digit", "00-" + strings.Repeat("0", 31) + "1-" + strings.Repeat("0", 15) + "1-01", true},
		{"empty", "", false},
		{"version ff", "ff-" + trace + "-" + parent + "-01", false},
		{"uppercase", strings.ToUpper(valid), false},
		{"uppercase version", "0A-" + trace + "-" + parent + "-01", false},
		{"uppercase flags", "00-" + trace + "-" + parent + "-0A", false},
		{"uppercase trace id", "00-" + "4BF92F3577B34DA6A3CE929D0E0E4736" + "-" + parent + "-01", false},
		{"uppercase parent id", "00-" + trace + "-" + "00F067AA0BA902B7" + "-01", false},
		{"g in the trace id", "00-g" + trace[1:] + "-" + parent + "-01", false},
		{"/ in the parent id (below 0)", "00-" + trace + "-/" + parent[1:] + "-01", false},
		{": in the flags (above 9)", "00-" + trace + "-" + parent + "-0:", false},
		{"` in the version (below a)", "`0-" + trace + "-" + parent + "-01", false},
		{"all-zero trace id", "00-" + strings.Repeat("0", 32) + "-" + parent + "-01", false},
		{"all-zero parent id", "00-" + trace + "-" + strings.Repeat("0", 16) + "-01", false},
		{"short trace id", "00-" + trace[:31] + "-" + parent + "-01", false},
		{"long", valid + "0", false},
		{"a future version's extra field", "01-" + trace + "-" + parent + "-01-future", false},
		{"_ for the first dash", "00_" + trace + "-" + parent + "-01", false},
		{"_ for the second dash", "00-" + trace + "_" + parent + "-01", false},
		{"_ for the third dash", "00-" + trace + "-" + parent + "_01", false},
		{"a newline", "00-" + trace + "-" + parent + "-0\n", false},
	} {
		if got := tracectx.ValidParent(c.s); got != c.want {
			t.Errorf("%s: ValidParent(%q) = %v", c.name, c.s, got)
		}
	}
}

// TestValidState: the tracestate grammar and its bounds, at each edge.
func TestValidState(t *testing.T) {
	members := func(n int) string {
		var b []string
		for i := range n {
			b = append(b, "k"+strconv.Itoa(i)+"=v")
		}
		return strings.Join(b, ",")
	}
	for _, c := range []struct {
		name, s string
		want    bool
	}{
		{"none", "", true},
		{"one member", "vendor=x", true},
		{"two members, OWS", "a=1 ,\tb=2", true},
		{"empty members", "a=1,,b=2, ,", true},
		{"multi-tenant key", "t0@sys=1", true},
		{"tenant starting with a digit", "1t@s=1", true},
		{"key characters", "a0_-*/=1", true},
		{"key characters at the ends of their ranges", "z09az=1,z@z=2", true},
		{"multi-tenant characters", "a0_-*/@s0_-*/=1", true},
		{"value characters", "a= !\"#+-<>~", true},
		{"a space inside the value", "a=x y", true},
		{"32 members", members(32), true},
		{"33 members", members(33), false},
		{"512 bytes", "a=" + strings.Repeat("x", 256) + ",b=" + strings.Repeat("y", 251), true},
		{"513 bytes", "a=" + strings.Repeat("x", 256) + ",b=" + strings.Repeat("y", 252), false},
		{"256-byte key", "a" + strings.Repeat("b", 255) + "=1", true},
		{"257-byte key", "a" + strings.Repeat("b", 256) + "=1", false},
		{"241-byte tenant", strings.Repeat("t", 241) + "@s=1", true},
		{"242-byte tenant", strings.Repeat("t", 242) + "@s=1", false},
		{"14-byte system", "t@" + strings.Repeat("s", 14) + "=1", true},
		{"15-byte system", "t@" + strings.Repeat("s", 15) + "=1", false},
		{"256-byte value", "a=" + strings.Repeat("x", 256), true},
		{"257-byte value", "a=" + strings.Repeat("x", 257), false},
		{"no =", "vendor", false},
		{"empty key", "=1", false},
		{"empty value", "a=", false},
		{"uppercase key", "Vendor=1", false},
		{"key starting with a digit", "1a=1", false},
		{"key with a dot", "a.b=1", false},
		{"key with a letter past z", "a{=1", false},
		{"key with a letter before a", "a`=1", false},
		{"key with : (past 9)", "a:=1", false},
		{"empty tenant", "@s=1", false},
		{"empty system", "t@=1", false},
		{"tenant starting with _", "_t@s=1", false},
		{"system starting with a digit", "t@1s=1", false},
		{"uppercase in the tenant", "tA@s=1", false},
		{"uppercase in the system", "t@sA=1", false},
		{"two @", "t@s@u=1", false},
		{"value ending in a space", "a=x =", false},
		{"value ending in a space, then a member", "a=x\x20\x20,b=1", true},
		{"= in the value", "a=x=y", false},
		{"a control character", "a=x\x1fy", false},
		{"DEL", "a=x\x7fy", false},
		{"a newline", "a=1\nb=2", false},
		{"non-ASCII", "a=é", false},
		{"a repeated key", "a=1,b=2,a=3", false},
	} {
		if got := tracectx.ValidState(c.s); got != c.want {
			t.Errorf("%s: ValidState(%q) = %v", c.name, c.s, got)
		}
	}
}

// TestFrom: the hook's values checked; a malformed traceparent drops the
// tracestate too, a malformed tracestate is dropped alone, and the hook
// gets the context it is called for.
func TestFrom(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "mine")
	hook := func(tp, ts string) func(context.Context) (string, string) {
		return func(c context.Context) (string, string) {
			if c.Value(key{}) != "mine" {
				t.Error("the hook was called with another context")
			}
			return tp, ts
		}
	}
	for _, c := range []struct {
		name   string
		hook   func(context.Context) (string, string)
		want   tracectx.Context
		header http.Header
	}{
		{"nil hook", nil, tracectx.Context{}, http.Header{}},
		{"none", hook("", ""), tracectx.Context{}, http.Header{}},
		{"both", hook(valid, "v=1"), tracectx.Context{Parent: valid, State: "v=1"}, http.Header{"Traceparent": {valid}, "Tracestate": {"v=1"}}},
		{"no tracestate", hook(valid, ""), tracectx.Context{Parent: valid}, http.Header{"Traceparent": {valid}}},
		{"malformed traceparent", hook("00-x", "v=1"), tracectx.Context{}, http.Header{}},
		{"tracestate too long", hook(valid, "a="+strings.Repeat("x", 600)), tracectx.Context{Parent: valid}, http.Header{"Traceparent": {valid}}},
	} {
		got := tracectx.From(ctx, c.hook)
		if got != c.want {
			t.Errorf("%s: From = %+v", c.name, got)
		}
		h := http.Header{}
		got.SetHeader(h)
		if !equalHeader(h, c.header) {
			t.Errorf("%s: SetHeader put %v", c.name, h)
		}
	}
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if len(b[k]) != 1 || len(v) != 1 || b[k][0] != v[0] {
			return false
		}
	}
	return true
}

// TestSetHeaderKeepsTheCallers: a header that carries either key, under
// any spelling, is the caller's and is left as it is.
func TestSetHeaderKeepsTheCallers(t *testing.T) {
	c := tracectx.Context{Parent: valid, State: "v=1"}
	for _, h := range []http.Header{
		{"Traceparent": {"00-mine"}},
		{"traceparent": {"00-mine"}},
		{"Tracestate": {"mine=1"}},
		{"TRACESTATE": {"mine=1"}},
	} {
		want := h.Clone()
		c.SetHeader(h)
		if !equalHeader(h, want) {
			t.Errorf("SetHeader changed %v to %v", want, h)
		}
	}
}

// TestMembers: the in-message members, as JSON text and as a map.
func TestMembers(t *testing.T) {
	for _, c := range []struct {
		c    tracectx.Context
		text string
		n    int
	}{
		{tracectx.Context{}, "", 0},
		{tracectx.Context{Parent: valid}, `"traceparent":"` + valid + `"`, 1},
		{tracectx.Context{Parent: valid, State: "v=1"}, `"traceparent":"` + valid + `","tracestate":"v=1"`, 2},
	} {
		if got := c.c.Members(); got != c.text {
			t.Errorf("Members() = %s, want %s", got, c.text)
		}
		m := c.c.Map()
		if len(m) != c.n || c.n > 0 && m["traceparent"] != valid || c.n > 1 && m["tracestate"] != "v=1" {
			t.Errorf("Map() = %v", m)
		}
		if c.n == 0 && m != nil {
			t.Errorf("Map() of none = %v, want nil", m)
		}
	}
}

// TestCases: the adapters' table says what From makes of each row.
func TestCases(t *testing.T) {
	for _, c := range tracectxtest.Cases {
		got := tracectx.From(context.Background(), c.Hook())
		if got.Parent != c.WantParent || got.State != c.WantState || c.NoHook != (c.Hook() == nil) {
			t.Errorf("%s: From = %+v, want %q %q", c.Name, got, c.WantParent, c.WantState)
		}
	}
}

// Continue hands, for each request, the inbound trace id and flags under
// a parent id of its own (well formed, never the inbound one, never twice),
// and the inbound tracestate lines joined; nothing for an inbound request
// without exactly one well-formed traceparent.
func TestContinue(t *testing.T) {
	in := valid
	for _, tc := range []struct {
		name      string
		parents   []string
		states    []string
		want      bool
		wantState string
	}{
		{name: "one traceparent", parents: []string{in}, want: true},
		{name: "with tracestate", parents: []string{in}, states: []string{"vendor=x"}, want: true, wantState: "vendor=x"},
		{name: "tracestate on two lines", parents: []string{in}, states: []string{"vendor=x", "other=y"}, want: true, wantState: "vendor=x,other=y"},
		{name: "unsampled", parents: []string{in[:53] + "00"}, want: true},
		{name: "none", states: []string{"vendor=x"}},
		{name: "malformed", parents: []string{strings.ToUpper(in)}},
		{name: "two lines", parents: []string{in, in}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := tracectx.Continue(http.Header{"Traceparent": tc.parents, "Tracestate": tc.states})
			if !tc.want {
				if hook != nil {
					t.Fatal("a hook for an inbound request without one well-formed traceparent")
				}
				return
			}
			if hook == nil {
				t.Fatal("no hook")
			}
			seen := map[string]bool{}
			for range 64 {
				got, state := hook(context.Background())
				if !tracectx.ValidParent(got) || got[:36] != tc.parents[0][:36] || got[52:] != tc.parents[0][52:] || got[36:52] == parent || seen[got] {
					t.Fatalf("traceparent %q: want %s's trace id and flags under a fresh parent id", got, tc.parents[0])
				}
				seen[got] = true
				if state != tc.wantState {
					t.Fatalf("tracestate %q, want %q", state, tc.wantState)
				}
			}
		})
	}
}
