package a2ahttp

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/exchange"
)

// headerName is the header, and on the HTTP+JSON binding the query
// parameter, that names the A2A version of a request. Header names are
// matched in any case; net/http writes and reads this one as A2a-Version.
const headerName = "A2A-Version"

// canonicalHeader is headerName as net/http stores it, so that the common
// case is one map lookup.
var canonicalHeader = http.CanonicalHeaderKey(headerName)

// readVersion reads the A2A-Version of a request from its header lines and,
// when query is true (the HTTP+JSON binding), from rawQuery.
//
// Every header line counts, whatever the case of its name, and so does
// every query parameter of that name; a line holding a comma-separated
// list counts as one value per element. One value in all is the version,
// or malformed; none, or one empty line or parameter, is no version (the
// caller decides what that means); anything more is several values, never
// a choice among them.
func readVersion(h http.Header, rawQuery string, query bool) a2aversion.Requested {
	all := exchange.HeaderValues(h, canonicalHeader)
	if query && rawQuery != "" {
		// A fresh slice: appending to the header's own could write into
		// its backing array.
		all = slices.Concat(all, queryValues(rawQuery))
	}
	return a2aversion.Read(all)
}

// queryValues returns the values of every A2A-Version parameter in
// rawQuery, in order. The name is matched exactly, as query parameter names
// are case-sensitive. A parameter whose value cannot be unescaped is kept
// as it was sent, so that it is refused as malformed rather than dropped.
func queryValues(rawQuery string) []string {
	if !strings.Contains(rawQuery, "A2A") && !strings.Contains(rawQuery, "%") {
		return nil // the common case: no parameter of that name.
	}
	var values []string
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if value, ok := versionParam(pair); ok {
			values = append(values, value)
		}
	}
	return values
}

// withoutVersion is rawQuery without its A2A-Version parameters, the
// others kept as they were written.
func withoutVersion(rawQuery string) string {
	var kept []string
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if _, ok := versionParam(pair); !ok {
			kept = append(kept, pair)
		}
	}
	return strings.Join(kept, "&")
}

// versionParam reports whether pair, one key=value of a query, is an
// A2A-Version parameter, and returns its value, unescaped when it can be.
func versionParam(pair string) (string, bool) {
	key, value, _ := strings.Cut(pair, "=")
	if k, err := url.QueryUnescape(key); err != nil || k != headerName {
		return "", false
	}
	if v, err := url.QueryUnescape(value); err == nil {
		value = v
	}
	return value, true
}

// trimOWS trims the optional whitespace HTTP allows around a field value
// and its list elements: spaces and horizontal tabs.
func trimOWS(s string) string { return strings.Trim(s, " \t") }
