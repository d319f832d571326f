package mcphttp

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/facets"
)

// The streamable-HTTP headers and _meta keys of MCP that carry or mirror the
// protocol revision. Header names are in Go's canonical form, which is how
// net/http stores them; on the wire they match in any case.
const (
	// headerProtocolVersion names the revision of every request after the
	// legacy handshake, and of every 2026-07-28-era request.
	headerProtocolVersion = "Mcp-Protocol-Version"
	// headerMethod mirrors the JSON-RPC method (2026-07-28 era).
	headerMethod = "Mcp-Method"
	// headerName mirrors params.name of tools/call and prompts/get, and
	// params.uri of resources/read (2026-07-28 era).
	headerName = "Mcp-Name"
	// headerSessionID carries the session a legacy server created at
	// initialize.
	headerSessionID = "Mcp-Session-Id"
	// metaProtocolVersion is the params._meta key in which a 2026-07-28-era
	// request declares its revision.
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
)

// Revisions with a meaning of their own in the protocol.
const (
	// statelessRevision is the first revision without the initialize
	// handshake: from it on, every request declares its revision itself,
	// and initialize cannot settle it (both the go-sdk and mcp-go servers
	// answer initialize with at most 2025-11-25).
	statelessRevision = "2026-07-28"
	// impliedRevision is the revision a request without
	// MCP-Protocol-Version is read as (the MCP rule for servers since
	// 2025-06-18): it is refused unless the host offers it.
	impliedRevision = "2025-03-26"
)

var (
	statelessParsed = facets.MustParseVersion(facets.ProtocolMCP, statelessRevision)
	impliedParsed   = facets.MustParseVersion(facets.ProtocolMCP, impliedRevision)
)

// isStateless reports whether rev is a revision at or after
// statelessRevision. A malformed revision is not: it is decided, and
// refused, like any revision the host does not speak.
func isStateless(rev string) bool {
	v, err := facets.ParseVersion(facets.ProtocolMCP, rev)
	return err == nil && v.Compare(statelessParsed) >= 0
}

// headerError is a request whose headers cannot be read unambiguously.
type headerError struct{ msg string }

func (e *headerError) Error() string { return e.msg }

// singleHeader returns the value of the header name, whose values are vs:
// "" when it is absent or empty. More than one field line, or
// (unless commasAllowed) a comma-separated list, is an error: a client
// sends one revision, and a guess between two would be a downgrade nobody
// decided.
func singleHeader(vs []string, name string, commasAllowed bool) (string, error) {
	if len(vs) > 1 {
		return "", &headerError{"more than one " + name + " header"}
	}
	if len(vs) == 0 {
		return "", nil
	}
	v := strings.Trim(vs[0], " \t")
	if !commasAllowed && strings.ContainsRune(v, ',') {
		return "", &headerError{name + " holds a list; one value is allowed"}
	}
	return v, nil
}

// headerValues returns the values of the header name (canonical) under
// every spelling of its key: net/http canonicalizes what it reads off the
// wire, but an http.Header built by hand can hold "MCP-Protocol-Version"
// beside "Mcp-Protocol-Version", and a server reading either must not see
// a value the middleware did not check. Other spellings come after the
// canonical one, sorted by key, so that what is reported does not depend
// on map order.
func headerValues(h http.Header, name string) []string {
	vs := h[name]
	var others []string
	for k := range h {
		if k != name && strings.EqualFold(k, name) {
			others = append(others, k)
		}
	}
	slices.Sort(others)
	for _, k := range others {
		vs = append(vs[:len(vs):len(vs)], h[k]...)
	}
	return vs
}

// headerRevision is what a request whose headers could not be read names
// as its revision, for the record: every value of MCP-Protocol-Version,
// which the decision refuses as no revision when there is more than one,
// or impliedRevision when there is none.
func headerRevision(h http.Header) string {
	return revisionOrImplied(strings.Trim(strings.Join(headerValues(h, headerProtocolVersion), ", "), " \t"))
}

// revisionOrImplied returns the revision a request's header names, or
// impliedRevision when it names none (the MCP rule).
func revisionOrImplied(header string) string {
	if header == "" {
		return impliedRevision
	}
	return header
}

// requestHeaders are the MCP headers of one request.
type requestHeaders struct {
	version string // MCP-Protocol-Version, "" when absent
	method  string // Mcp-Method
	name    string // Mcp-Name, decoded
	session string // Mcp-Session-Id
	hasName bool
}

// revision is the revision the request names, as MCP reads it.
func (rh *requestHeaders) revision() string { return revisionOrImplied(rh.version) }

// readHeaders reads and checks the MCP headers of r. It walks the map
// once to see whether any of them is also under another spelling of its
// key; only then are their values gathered by headerValues, which walks
// the map again for each. Otherwise (every map net/http reads off the
// wire) a header's values are its canonical key's.
func readHeaders(h http.Header) (requestHeaders, error) {
	values := func(name string) []string { return h[name] }
	if respelled(h) {
		values = func(name string) []string { return headerValues(h, name) }
	}
	var rh requestHeaders
	var err error
	if rh.version, err = singleHeader(values(headerProtocolVersion), headerProtocolVersion, false); err != nil {
		return rh, err
	}
	if rh.method, err = singleHeader(values(headerMethod), headerMethod, false); err != nil {
		return rh, err
	}
	if rh.session, err = singleHeader(values(headerSessionID), headerSessionID, false); err != nil {
		return rh, err
	}
	for i := 0; i < len(rh.session); i++ {
		// The session id is visible ASCII (MCP transports §session
		// management); anything else is not one a server issued.
		if c := rh.session[i]; c < 0x21 || c > 0x7e {
			return rh, &headerError{headerSessionID + " holds a character outside visible ASCII"}
		}
	}
	names := values(headerName)
	name, err := singleHeader(names, headerName, true)
	if err != nil {
		return rh, err
	}
	if len(names) > 0 {
		rh.hasName = true
		if rh.name, err = decodeHeaderValue(name); err != nil {
			return rh, err
		}
	}
	return rh, nil
}

// readHeaderNames are the headers readHeaders reads.
var readHeaderNames = [...]string{headerProtocolVersion, headerMethod, headerSessionID, headerName}

// respelled reports whether h holds one of readHeaderNames under a key
// other than its canonical one (see headerValues).
func respelled(h http.Header) bool {
	for k := range h {
		for _, name := range readHeaderNames {
			if k != name && strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}

// decodeHeaderValue undoes the base64 wrapper of an Mcp-Name value, so that
// a name outside ASCII compares with the body's: the wrapper MCP
// (SEP-2243) puts around a header value that is not plain visible ASCII,
// "=?base64?" + standard base64 + "?=".
func decodeHeaderValue(v string) (string, error) {
	inner, opens := strings.CutPrefix(v, "=?base64?")
	inner, closes := strings.CutSuffix(inner, "?=")
	if !opens || !closes {
		return v, nil
	}
	dec, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", &headerError{headerName + " has a malformed base64 value"}
	}
	return string(dec), nil
}
