// Package tracectx checks and places the W3C trace context (traceparent,
// tracestate) that mcphttp and a2ahttp carry on an outbound negotiation
// and on every call their Transports stamp, as the OpenWOP reference host
// does (RFC 0207): in the HTTP headers, and in the message (MCP
// params._meta, A2A Message.metadata.openwop) under the unprefixed keys
// traceparent and tracestate.
//
// The host's hook hands the values; nothing here invents a trace. A value
// that is not well formed is dropped, never forwarded, and never fails the
// request: a traceparent that fails [ValidParent] drops the whole context
// (its tracestate with it), and a tracestate that fails [ValidState] is
// dropped alone. A carrier the caller filled is the caller's: it is left
// as it is. Trace context is correlation only: nothing reads it as
// identity, tenant or authority, and it never enters a record.
package tracectx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/negotiate"
)

// The keys of both carriers: the header names (canonical form) and the
// in-message member names.
const (
	Parent = "traceparent"
	State  = "tracestate"

	headerParent = "Traceparent"
	headerState  = "Tracestate"
)

// Bounds of a tracestate (W3C Trace Context §3.3.1.1 and §3.3.1.5): a
// vendor may drop a longer one, and this package does.
const (
	maxStateBytes   = 512
	maxStateMembers = 32
)

// Context is a checked trace context; Parent "" means none, and then State
// is "" too.
type Context struct {
	Parent, State string
}

// From calls hook with ctx and returns what it handed, checked: the zero
// Context when hook is nil or its traceparent is not well formed, and no
// State when its tracestate is not.
func From(ctx context.Context, hook negotiate.TraceContext) Context {
	if hook == nil {
		return Context{}
	}
	parent, state := hook(ctx)
	if !ValidParent(parent) {
		return Context{}
	}
	if !ValidState(state) {
		state = ""
	}
	return Context{Parent: parent, State: state}
}

// Continue returns the hook with which a host continues the trace of an
// inbound request carrying h, as the reference host's seams do (RFC 0207
// §A): each request the hook is asked for carries h's trace id and flags
// under a parent id of its own, minted per request (a span of the same
// trace), and h's tracestate, its header lines joined as W3C reads them.
// Nil, when h does not carry exactly one traceparent line that
// [ValidParent] passes: a host does not invent a trace, and two lines are
// no one trace.
func Continue(h http.Header) negotiate.TraceContext {
	parents := h.Values(headerParent)
	if len(parents) != 1 || !ValidParent(parents[0]) {
		return nil
	}
	parent, state := parents[0], strings.Join(h.Values(headerState), ",")
	return func(context.Context) (string, string) { return childOf(parent), state }
}

// childOf is parent, well formed, under a fresh random parent id, never
// all zeros.
func childOf(parent string) string {
	var id [8]byte
	for id == [8]byte{} {
		_, _ = rand.Read(id[:]) // it never fails: a failing source crashes the program
	}
	return parent[:36] + hex.EncodeToString(id[:]) + parent[52:]
}

// ValidParent reports whether s is a traceparent this package forwards:
// version "-" trace-id "-" parent-id "-" flags, 55 bytes, every field
// lowercase hex, the version not ff, neither id all zeros. A future
// version's longer value is not forwarded: what follows the flags cannot
// be checked.
func ValidParent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	version, trace, parentID, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	return isHex(version) && version != "ff" && isHex(trace) && !allZero(trace) &&
		isHex(parentID) && !allZero(parentID) && isHex(flags)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

// ValidState reports whether s is a tracestate this package forwards: at
// most 512 bytes, at most 32 list members, each key=value by the W3C
// grammar (a simple key, or tenant@system), no key twice. Empty list
// members (OWS between commas) are allowed and not counted, as the
// grammar allows them. The empty string is valid: there is no tracestate.
func ValidState(s string) bool {
	if len(s) > maxStateBytes {
		return false
	}
	var keys []string
	for member := range strings.SplitSeq(s, ",") {
		member = strings.Trim(member, " \t")
		if member == "" {
			continue
		}
		key, value, ok := strings.Cut(member, "=")
		if !ok || !validKey(key) || !validValue(value) || len(keys) == maxStateMembers || slices.Contains(keys, key) {
			return false
		}
		keys = append(keys, key)
	}
	return true
}

// validKey is simple-key / multi-tenant-key: a lowercase letter, then up
// to 255 of [a-z0-9_*/-]; or tenant@system, the tenant up to 241 of those
// starting with a letter or digit, the system up to 14 starting with a
// letter.
func validKey(key string) bool {
	tenant, system, multi := strings.Cut(key, "@")
	if !multi {
		return key != "" && len(key) <= 256 && isLower(key[0]) && keyChars(key[1:])
	}
	return tenant != "" && len(tenant) <= 241 && (isLower(tenant[0]) || isDigit(tenant[0])) && keyChars(tenant[1:]) &&
		system != "" && len(system) <= 14 && isLower(system[0]) && keyChars(system[1:])
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func keyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '_' && c != '-' && c != '*' && c != '/' {
			return false
		}
	}
	return true
}

// validValue is 1 to 256 printable ASCII characters but ',' and '=',
// spaces allowed inside, the last not one.
func validValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c > '~' || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

// SetHeader puts c in h, unless c is empty or h already carries a
// traceparent or tracestate under any spelling of the key: that carrier
// is the caller's, and stays as the caller wrote it.
func (c Context) SetHeader(h http.Header) {
	if c.Parent == "" {
		return
	}
	for k := range h {
		if strings.EqualFold(k, Parent) || strings.EqualFold(k, State) {
			return
		}
	}
	h[headerParent] = []string{c.Parent}
	if c.State != "" {
		h[headerState] = []string{c.State}
	}
}

// Members is c as the JSON members of an in-message carrier,
// `"traceparent":"…"` and `,"tracestate":"…"` when there is one, to be
// inserted into an object; "" when c is empty. Both values are ASCII
// without quotes or backslashes, so quoting them is exact.
func (c Context) Members() string {
	if c.Parent == "" {
		return ""
	}
	out := strconv.Quote(Parent) + ":" + strconv.Quote(c.Parent)
	if c.State != "" {
		out += "," + strconv.Quote(State) + ":" + strconv.Quote(c.State)
	}
	return out
}

// Map is c as the members of an in-message carrier the caller builds
// whole (a negotiation's own request); nil when c is empty.
func (c Context) Map() map[string]any {
	if c.Parent == "" {
		return nil
	}
	m := map[string]any{Parent: c.Parent}
	if c.State != "" {
		m[State] = c.State
	}
	return m
}
