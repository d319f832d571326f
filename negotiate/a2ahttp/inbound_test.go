package a2ahttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

func TestNewRefusesWhatItCannotWorkWith(t *testing.T) {
	n := compile(t, wideA2A(), policy.Policy{})
	mcpOnly := compile(t, facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2026-07-28", RefreshedAt: "2026-11-01",
	}}, policy.Policy{})
	sink := &negotiatetest.Recorder{}
	for _, tc := range []struct {
		name string
		n    *negotiate.Negotiator
		opts a2ahttp.Options
		want string
	}{
		{"no negotiator", nil, a2ahttp.Options{Sink: sink}, "a2ahttp: the Negotiator is nil"},
		{"no a2a", mcpOnly, a2ahttp.Options{Sink: sink}, "a2ahttp: the Negotiator does not advertise a2a"},
		{"no sink", n, a2ahttp.Options{}, "a2ahttp: the Sink is nil; every negotiation must be recorded: " + events.ErrClosed.Error()},
		{"relative card path", n, a2ahttp.Options{Sink: sink, CardPath: "agent-card.json"}, `a2ahttp: Options.CardPath "agent-card.json" does not start with /`},
		{"negative bound", n, a2ahttp.Options{Sink: sink, MaxBodyBytes: -1}, "a2ahttp: Options.MaxBodyBytes -1 is negative"},
		{"negative answer bound", n, a2ahttp.Options{Sink: sink, MaxAnswerBytes: -1}, "a2ahttp: Options.MaxAnswerBytes -1 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := a2ahttp.New(tc.n, tc.opts)
			if m != nil || err == nil || err.Error() != tc.want {
				t.Fatalf("New = %v, %v; want nil, %q", m, err, tc.want)
			}
		})
	}
	if _, err := a2ahttp.New(n, a2ahttp.Options{}); !errors.Is(err, events.ErrClosed) {
		t.Errorf("no sink: %v", err)
	}
}

// The JSON-RPC refusal bodies, exactly as written.
const (
	serves     = `; this interface serves 1.1, 1.2` // what an authenticated caller can be served
	servesAnon = `; this interface serves 1.2`      // what anyone else can, and a caller denied downgrades
)

// errInfoServed is the ErrorInfo of a refusal whose message ends with
// what the caller can be served.
func errInfoServed(message string) string {
	list := "1.1,1.2"
	if strings.HasSuffix(message, servesAnon) {
		list = "1.2"
	}
	return `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"` + list + `"}}`
}

func rpcRefusal(id, message string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32009,"message":"` + message + `","data":[` + errInfoServed(message) + `]}}`
}

func TestJSONRPCBinding(t *testing.T) {
	type want struct {
		status  int
		version string // the A2A-Version response header
		body    string
		served  string // the version the handler saw; empty when it was not called
		kind    negotiate.Kind
		event   events.NegotiationDecided
	}
	accepted := func(version, requested string) events.NegotiationDecided {
		return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: version, Requested: requested, Reason: events.ReasonOK, Floor: "1.1", At: testNow}
	}
	refused := func(requested string, reason string) events.NegotiationDecided {
		return events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: requested, Reason: reason, Floor: "1.1", At: testNow}
	}
	for _, tc := range []struct {
		name   string
		target string
		header []string
		id     string
		want   want
	}{
		{"absent: a request for 0.3, below the floor", "/a2a", nil, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1`+servesAnon), "", negotiate.Refused, refused("0.3", events.ReasonBelowFloor)}},
		{"empty: a request for 0.3, below the floor", "/a2a", []string{"A2A-Version", ""}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1`+servesAnon), "", negotiate.Refused, refused("0.3", events.ReasonBelowFloor)}},
		{"blank: a request for 0.3, below the floor", "/a2a", []string{"A2A-Version", " \t"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1`+servesAnon), "", negotiate.Refused, refused("0.3", events.ReasonBelowFloor)}},
		{"preferred named", "/a2a", []string{"A2A-Version", "1.2"}, `"req-1"`,
			want{200, "1.2", "served", "1.2", negotiate.Accepted, accepted("1.2", "1.2")}},
		{"space around the value", "/a2a", []string{"A2A-Version", " 1.2\t"}, `"req-1"`,
			want{200, "1.2", "served", "1.2", negotiate.Accepted, accepted("1.2", "1.2")}},
		{"authenticated downgrade", "/a2a", []string{"A2A-Version", "1.1", "Authorization", bearer}, `"req-1"`,
			want{200, "1.1", "served", "1.1", negotiate.Downgraded, accepted("1.1", "1.1")}},
		{"query ignored on JSON-RPC", "/a2a?A2A-Version=1.2", nil, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1`+servesAnon), "", negotiate.Refused, refused("0.3", events.ReasonBelowFloor)}},
		{"unauthenticated downgrade", "/a2a", []string{"A2A-Version", "1.1"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"1.1\" is below the preferred version 1.2 and is served only to an authenticated caller`+servesAnon), "", negotiate.Refused, refused("1.1", events.ReasonUnauthenticated)}},
		{"below the floor", "/a2a", []string{"A2A-Version", "1.0", "Authorization", bearer}, `7`,
			want{200, "1.2", rpcRefusal(`7`, `A2A-Version \"1.0\" is below this interface's minimum version 1.1`+serves), "", negotiate.Refused, refused("1.0", events.ReasonBelowFloor)}},
		{"below everything", "/a2a", []string{"A2A-Version", "0.3"}, `-1.5e3`,
			want{200, "1.2", rpcRefusal(`-1.5e3`, `A2A-Version \"0.3\" is below this interface's minimum version 1.1`+servesAnon), "", negotiate.Refused, refused("0.3", events.ReasonBelowFloor)}},
		{"unsupported", "/a2a", []string{"A2A-Version", "9.9", "Authorization", bearer}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"9.9\" is not served`+serves), "", negotiate.Refused, refused("9.9", events.ReasonUnsupported)}},
		{"malformed", "/a2a", []string{"A2A-Version", "v1"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"v1\" is not a version: want major.minor, such as \"1.2\"`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"full semver", "/a2a", []string{"A2A-Version", "1.2.0"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"1.2.0\" is not a version: want major.minor, such as \"1.2\"`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"leading zero", "/a2a", []string{"A2A-Version", "01.2"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"01.2\" is not a version: want major.minor, such as \"1.2\"`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"two header lines", "/a2a", []string{"A2A-Version", "0.2", "A2A-Version", "1.0"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 2 values (\"0.2\", \"1.0\"), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"two equal header lines", "/a2a", []string{"A2A-Version", "1.2", "A2A-Version", "1.2"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 2 values (\"1.2\", \"1.2\"), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"a comma list", "/a2a", []string{"A2A-Version", "1.2, 1.1"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 2 values (\"1.2\", \"1.1\"), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"a trailing comma", "/a2a", []string{"A2A-Version", "1.2,"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 2 values (\"1.2\", \"\"), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"an empty line beside a value", "/a2a", []string{"A2A-Version", "", "A2A-Version", "1.2"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 2 values (\"\", \"1.2\"), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"four values, all listed", "/a2a", []string{"A2A-Version", "1.0,1.1", "A2A-Version", "1.2,1.3"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 4 values (\"1.0\", \"1.1\", \"1.2\", \"1.3\"), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"many values, listed up to four", "/a2a", []string{"A2A-Version", "1.0,1.1,1.2,1.3,1.4"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version carries 5 values (\"1.0\", \"1.1\", \"1.2\", \"1.3\", ...), not one; send exactly one version`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"a long value is cut in the message", "/a2a", []string{"A2A-Version", strings.Repeat("9", 40)}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"`+strings.Repeat("9", 32)+`\"... is not a version: want major.minor, such as \"1.2\"`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"a value of the longest echoed length is echoed whole", "/a2a", []string{"A2A-Version", strings.Repeat("9", 32)}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"`+strings.Repeat("9", 32)+`\" is not a version: want major.minor, such as \"1.2\"`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
		{"a control character is escaped", "/a2a", []string{"A2A-Version", "1.\x012"}, `"req-1"`,
			want{200, "1.2", rpcRefusal(`"req-1"`, `A2A-Version \"1.\\x012\" is not a version: want major.minor, such as \"1.2\"`+servesAnon), "", negotiate.Refused, refused("", events.ReasonUnsupported)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.Policy{}, a2ahttp.Options{})
			w := f.do(post(tc.target, rpcBody(tc.id), tc.header...))
			if w.Code != tc.want.status || w.Header().Get("A2A-Version") != tc.want.version || w.Body.String() != tc.want.body {
				t.Errorf("response: %d, A2A-Version %q, body\n%s\nwant %d, %q, body\n%s", w.Code, w.Header().Get("A2A-Version"), w.Body, tc.want.status, tc.want.version, tc.want.body)
			}
			if got := w.Header().Values("A2A-Version"); len(got) != 1 {
				t.Errorf("A2A-Version response lines %q, want exactly one", got)
			}
			if tc.want.served == "" {
				if f.served.calls != 0 {
					t.Errorf("the handler was called on a refusal")
				}
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			} else {
				if f.served.calls != 1 || !f.served.ok || f.served.version != tc.want.served || f.served.outcome.Kind != tc.want.kind || f.served.outcome.Version != tc.want.served {
					t.Errorf("handler saw calls %d, Version %q %v, Outcome %v %q; want 1 call at %q, %v",
						f.served.calls, f.served.version, f.served.ok, f.served.outcome.Kind, f.served.outcome.Version, tc.want.served, tc.want.kind)
				}
				if string(f.served.body) != rpcBody(tc.id) {
					t.Errorf("the handler read body %q, want %q", f.served.body, rpcBody(tc.id))
				}
			}
			if got := onlyPayload(t, f.rec); got != tc.want.event {
				t.Errorf("event payload\n got %+v\nwant %+v", got, tc.want.event)
			}
			if f.log.Len() != 0 {
				t.Errorf("logged %q", f.log)
			}
		})
	}
}

// Header names are case-insensitive: a hand-built http.Header can hold the
// version under any spelling, and every spelling counts.
func TestHeaderNameInAnyCase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		header  http.Header
		version string
		body    string
	}{
		{"canonical", http.Header{"A2a-Version": {"1.1"}}, "1.1", "served"},
		{"as the spec spells it", http.Header{"A2A-Version": {"1.1"}}, "1.1", "served"},
		{"lower case", http.Header{"a2a-version": {"1.1"}}, "1.1", "served"},
		{"two spellings", http.Header{"A2a-Version": {"1.1"}, "a2a-version": {"1.2"}}, "1.2",
			rpcRefusal(`"req-1"`, `A2A-Version carries 2 values (\"1.1\", \"1.2\"), not one; send exactly one version`+serves)},
		{"three spellings, listed canonical first then by key", http.Header{"a2a-version": {"1.0"}, "A2A-VERSION": {"0.3"}, "A2a-Version": {"1.1"}}, "1.2",
			rpcRefusal(`"req-1"`, `A2A-Version carries 3 values (\"1.1\", \"0.3\", \"1.0\"), not one; send exactly one version`+serves)},
		{"a longer name is another header", http.Header{"A2A-Versions": {"1.2"}}, "1.2", rpcRefusal(`"req-1"`, `A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1`+serves)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.Policy{}, a2ahttp.Options{})
			r := post("/a2a", rpcBody(`"req-1"`), "Authorization", bearer)
			for k, v := range tc.header {
				r.Header[k] = v
			}
			w := f.do(r)
			if w.Header().Get("A2A-Version") != tc.version || w.Body.String() != tc.body {
				t.Errorf("A2A-Version %q, body\n%s\nwant %q,\n%s", w.Header().Get("A2A-Version"), w.Body, tc.version, tc.body)
			}
		})
	}
}

// The refusal echoes the request's JSON-RPC id as it was written, or null
// when there is none it could echo without guessing.
func TestRefusalEchoesTheID(t *testing.T) {
	for _, tc := range []struct{ name, body, id string }{
		{"string", rpcBody(`"a2a-0123"`), `"a2a-0123"`},
		{"escaped string", rpcBody(`"a\"b\u00e9"`), `"a\"b\u00e9"`},
		{"integer", rpcBody(`42`), `42`},
		{"id first", `{"id":"first","jsonrpc":"2.0","method":"GetTask"}`, `"first"`},
		{"null", rpcBody(`null`), `null`},
		{"missing", `{"jsonrpc":"2.0","method":"GetTask"}`, `null`},
		{"object", rpcBody(`{"a":1}`), `null`},
		{"boolean", rpcBody(`true`), `null`},
		{"two ids", `{"id":1,"jsonrpc":"2.0","method":"GetTask","id":2}`, `null`},
		{"ID is another member", `{"ID":1,"jsonrpc":"2.0","method":"GetTask"}`, `null`},
		{"a batch", `[` + rpcBody(`1`) + `]`, `null`},
		{"not JSON", `id=1`, `null`},
		{"truncated", `{"jsonrpc":"2.0","id":1`, `null`},
		{"trailing data", rpcBody(`1`) + `{}`, `null`},
		{"empty", ``, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.Policy{}, a2ahttp.Options{})
			w := f.do(post("/a2a", tc.body, "A2A-Version", "9.9"))
			want := rpcRefusal(tc.id, `A2A-Version \"9.9\" is not served`+servesAnon)
			if w.Body.String() != want {
				t.Errorf("body\n%s\nwant\n%s", w.Body, want)
			}
		})
	}
}

// An id after more than MaxBodyBytes is not read: the refusal names null.
func TestRefusalReadsTheBodyWithinTheBound(t *testing.T) {
	body := rpcBody(`"late"`)
	for _, tc := range []struct {
		max int64
		id  string
	}{{int64(len(body)), `"late"`}, {int64(len(body)) - 1, `null`}} {
		f := newFixture(t, policy.Policy{}, a2ahttp.Options{MaxBodyBytes: tc.max})
		w := f.do(post("/a2a", body, "A2A-Version", "9.9"))
		if want := rpcRefusal(tc.id, `A2A-Version \"9.9\" is not served`+servesAnon); w.Body.String() != want {
			t.Errorf("MaxBodyBytes %d: body\n%s\nwant\n%s", tc.max, w.Body, want)
		}
	}
}

func TestOmitErrorData(t *testing.T) {
	f := newFixture(t, policy.Policy{}, a2ahttp.Options{OmitErrorData: true})
	w := f.do(post("/a2a", rpcBody(`"req-1"`), "A2A-Version", "9.9"))
	want := `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"A2A-Version \"9.9\" is not served` + servesAnon + `"}}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("%d\n%s\nwant 200\n%s", w.Code, w.Body, want)
	}
}

func statusRefusal(message string) string {
	return `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"` + message + `","details":[` + errInfoServed(message) + `]}}`
}

func TestHTTPJSONBinding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		target  string
		header  []string
		status  int
		version string
		body    string
	}{
		{"absent: a request for 0.3", "/tasks/t-1", nil, 400, "1.2",
			statusRefusal(`A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1` + servesAnon)},
		{"header", "/tasks/t-1", []string{"A2A-Version", "1.1", "Authorization", bearer}, 200, "1.1", "served"},
		{"query", "/tasks/t-1?A2A-Version=1.1", []string{"Authorization", bearer}, 200, "1.1", "served"},
		{"escaped query name and value", "/tasks/t-1?x=1&A2A%2DVersion=1%2E1", []string{"Authorization", bearer}, 200, "1.1", "served"},
		{"empty query value: a request for 0.3", "/tasks/t-1?A2A-Version=", nil, 400, "1.2",
			statusRefusal(`A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1` + servesAnon)},
		{"another case is another parameter: a request for 0.3", "/tasks/t-1?a2a-version=1.2", nil, 400, "1.2",
			statusRefusal(`A2A-Version (none, which A2A reads as 0.3) is below this interface's minimum version 1.1` + servesAnon)},
		{"query unsupported", "/tasks/t-1?A2A-Version=9.9", nil, 400, "1.2",
			statusRefusal(`A2A-Version \"9.9\" is not served` + servesAnon)},
		{"header unauthenticated", "/tasks/t-1", []string{"A2A-Version", "1.1"}, 400, "1.2",
			statusRefusal(`A2A-Version \"1.1\" is below the preferred version 1.2 and is served only to an authenticated caller` + servesAnon)},
		{"header and query", "/tasks/t-1?A2A-Version=1.2", []string{"A2A-Version", "1.2"}, 400, "1.2",
			statusRefusal(`A2A-Version carries 2 values (\"1.2\", \"1.2\"), not one; send exactly one version` + servesAnon)},
		{"two query parameters", "/tasks/t-1?A2A-Version=1.2&A2A-Version=1.1", nil, 400, "1.2",
			statusRefusal(`A2A-Version carries 2 values (\"1.2\", \"1.1\"), not one; send exactly one version` + servesAnon)},
		{"a query value that does not unescape", "/tasks/t-1?A2A-Version=1%zz", nil, 400, "1.2",
			statusRefusal(`A2A-Version \"1%zz\" is not a version: want major.minor, such as \"1.2\"` + servesAnon)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.Policy{}, a2ahttp.Options{HTTPJSON: true})
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			for i := 0; i < len(tc.header); i += 2 {
				r.Header.Add(tc.header[i], tc.header[i+1])
			}
			w := f.do(r)
			if w.Code != tc.status || w.Header().Get("A2A-Version") != tc.version || w.Body.String() != tc.body {
				t.Errorf("%d, A2A-Version %q, body\n%s\nwant %d, %q,\n%s", w.Code, w.Header().Get("A2A-Version"), w.Body, tc.status, tc.version, tc.body)
			}
			if tc.status != 200 && w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", w.Header().Get("Content-Type"))
			}
			if len(f.rec.Events()) != 1 {
				t.Errorf("recorded %d events, want 1", len(f.rec.Events()))
			}
		})
	}
}

func TestAgentCard(t *testing.T) {
	cardFor := func(_ *http.Request, version string) ([]byte, error) {
		if version == "1.1" {
			return nil, errors.New("no 1.1 card today")
		}
		return []byte(`{"name":"host","version":"` + version + `"}`), nil
	}
	for _, tc := range []struct {
		name     string
		httpJSON bool
		card     func(*http.Request, string) ([]byte, error)
		method   string
		header   []string
		status   int
		version  string
		body     string
		calls    int
		log      string
	}{
		{"no header: the preferred card", false, cardFor, "GET", nil, 200, "1.2", `{"name":"host","version":"1.2"}`, 0, ""},
		{"HEAD", false, cardFor, "HEAD", nil, 200, "1.2", ``, 0, ""},
		{"a named version", false, cardFor, "GET", []string{"A2A-Version", "1.2"}, 200, "1.2", `{"name":"host","version":"1.2"}`, 0, ""},
		{"refused on the JSON-RPC binding is still a status body", false, cardFor, "GET", []string{"A2A-Version", "0.3"}, 400, "1.2",
			statusRefusal(`A2A-Version \"0.3\" is below this interface's minimum version 1.1` + servesAnon), 0, ""},
		{"the card function fails", false, cardFor, "GET", []string{"A2A-Version", "1.1", "Authorization", bearer}, 500, "1.1",
			`{"error":{"code":500,"status":"INTERNAL","message":"the agent card could not be produced","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`, 0,
			"level=ERROR msg=\"a2ahttp: the agent card could not be produced\" version=1.1 error=\"no 1.1 card today\"\n"},
		{"no card function: the wrapped handler serves it", true, nil, "GET", nil, 200, "1.2", "served", 1, ""},
		{"POST to the card path is a binding request", false, cardFor, "POST", []string{"A2A-Version", "9.9"}, 200, "1.2",
			rpcRefusal(`null`, `A2A-Version \"9.9\" is not served`+servesAnon), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.Policy{}, a2ahttp.Options{HTTPJSON: tc.httpJSON, Card: tc.card})
			r := httptest.NewRequest(tc.method, "/.well-known/agent-card.json", nil)
			for i := 0; i < len(tc.header); i += 2 {
				r.Header.Add(tc.header[i], tc.header[i+1])
			}
			w := f.do(r)
			if w.Code != tc.status || w.Header().Get("A2A-Version") != tc.version || w.Body.String() != tc.body || f.served.calls != tc.calls {
				t.Errorf("%d, A2A-Version %q, body %s, handler calls %d\nwant %d, %q, %s, %d", w.Code, w.Header().Get("A2A-Version"), w.Body, f.served.calls, tc.status, tc.version, tc.body, tc.calls)
			}
			if tc.calls == 1 && f.served.version != "1.2" {
				t.Errorf("the handler saw version %q", f.served.version)
			}
			// A cache must not hand one version's card to another's client.
			if vary := w.Header().Values("Vary"); tc.method != "POST" && !slices.Contains(vary, "A2A-Version") {
				t.Errorf("Vary %q, want A2A-Version", vary)
			}
			if strings.HasPrefix(tc.body, `{"name"`) && w.Header().Get("Content-Length") != "31" {
				t.Errorf("Content-Length %q", w.Header().Get("Content-Length"))
			}
			if f.log.String() != tc.log {
				t.Errorf("log %q, want %q", f.log, tc.log)
			}
		})
	}
}

func TestCardPathOption(t *testing.T) {
	f := newFixture(t, policy.Policy{}, a2ahttp.Options{CardPath: "/agents/a/card.json", Card: func(*http.Request, string) ([]byte, error) { return []byte(`{}`), nil }})
	if w := f.do(httptest.NewRequest("GET", "/agents/a/card.json", nil)); w.Body.String() != `{}` {
		t.Errorf("the configured card path answered %s", w.Body)
	}
	r := httptest.NewRequest("GET", "/.well-known/agent-card.json", nil)
	r.Header.Set("A2A-Version", "1.2")
	if w := f.do(r); w.Body.String() != "served" {
		t.Errorf("the default card path answered %s, want the wrapped handler", w.Body)
	}
}

// With RequireAudit, a negotiation that cannot be recorded is refused as an
// internal error whatever it would have been. A request that may act never
// reaches the handler; the card, which does not act, is recorded as its
// handler answers, and that answer is replaced.
func TestRequiredAuditFailsClosed(t *testing.T) {
	internalInfo := `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}`
	const msg = "the A2A version negotiation could not be recorded; retry"
	for _, tc := range []struct {
		name   string
		opts   a2ahttp.Options
		target string
		status int
		body   string
		calls  int
	}{
		{"JSON-RPC", a2ahttp.Options{}, "/a2a", 200,
			`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32603,"message":"` + msg + `","data":[` + internalInfo + `]}}`, 0},
		{"JSON-RPC without data", a2ahttp.Options{OmitErrorData: true}, "/a2a", 200,
			`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32603,"message":"` + msg + `"}}`, 0},
		{"HTTP+JSON", a2ahttp.Options{HTTPJSON: true}, "/a2a", 500,
			`{"error":{"code":500,"status":"INTERNAL","message":"` + msg + `","details":[` + internalInfo + `]}}`, 0},
		{"card", a2ahttp.Options{}, "/.well-known/agent-card.json", 500,
			`{"error":{"code":500,"status":"INTERNAL","message":"` + msg + `","details":[` + internalInfo + `]}}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.Policy{RequireAudit: true}, tc.opts)
			f.rec.Fail(errors.New("event store down"))
			w := f.do(cardOrPost(tc.target, "1.2"))
			if w.Code != tc.status || w.Body.String() != tc.body || w.Header().Get("A2A-Version") != "1.2" || f.served.calls != tc.calls {
				t.Errorf("%d, A2A-Version %q, body %s, handler calls %d\nwant %d, 1.2, %s, %d", w.Code, w.Header().Get("A2A-Version"), w.Body, f.served.calls, tc.status, tc.body, tc.calls)
			}
			// Under RequireAudit the refusal answered is the record of the
			// failure: nothing is logged (Options.ErrorLog).
			if wantLog := ""; f.log.String() != wantLog {
				t.Errorf("log %q\nwant %q", f.log, wantLog)
			}
		})
	}
}

// What the log echoes of the requested version is bounded like the
// messages: 32 bytes, then "...".
func TestAuditFailureLogIsBounded(t *testing.T) {
	for _, tc := range []struct{ sent, logged string }{
		{strings.Repeat("7", 32), strings.Repeat("7", 32)},
		{strings.Repeat("7", 33), strings.Repeat("7", 32) + "..."},
	} {
		f := newFixture(t, policy.Policy{}, a2ahttp.Options{})
		f.rec.Fail(errors.New("event store down"))
		f.do(post("/a2a", rpcBody(`1`), "A2A-Version", tc.sent))
		want := "level=ERROR msg=\"a2ahttp: negotiation.decided was not recorded\" protocol=a2a requested=" + tc.logged + " decided=refused version=\"\" error=\"negotiate: negotiation.decided was not recorded: event store down\"\n"
		if f.log.String() != want {
			t.Errorf("log %q\nwant %q", f.log, want)
		}
	}
}

// Without RequireAudit the request is served, and the failure is logged.
func TestAuditFailureIsLoggedWhenNotRequired(t *testing.T) {
	f := newFixture(t, policy.Policy{}, a2ahttp.Options{})
	f.rec.Fail(errors.New("event store down"))
	w := f.do(post("/a2a", rpcBody(`1`), "A2A-Version", "1.2"))
	if w.Body.String() != "served" || w.Header().Get("A2A-Version") != "1.2" {
		t.Errorf("A2A-Version %q, body %s", w.Header().Get("A2A-Version"), w.Body)
	}
	want := "level=ERROR msg=\"a2ahttp: negotiation.decided was not recorded\" protocol=a2a requested=1.2 decided=accepted version=1.2 error=\"negotiate: negotiation.decided was not recorded: event store down\"\n"
	if f.log.String() != want {
		t.Errorf("log %q\nwant %q", f.log, want)
	}
}

// A policy that denies the downgrade refuses it with a message that says so.
func TestPolicyDeniedDowngrade(t *testing.T) {
	f := newFixture(t, policy.Policy{DenyDowngrade: true}, a2ahttp.Options{})
	w := f.do(post("/a2a", rpcBody(`1`), "A2A-Version", "1.1", "Authorization", bearer))
	if want := rpcRefusal(`1`, `A2A-Version \"1.1\" is not served to this caller by the host's policy`+servesAnon); w.Body.String() != want {
		t.Errorf("body\n%s\nwant\n%s", w.Body, want)
	}
}

func TestAccessorsOutsideTheMiddleware(t *testing.T) {
	if v, ok := a2ahttp.Version(context.Background()); v != "" || ok {
		t.Errorf("Version = %q, %v", v, ok)
	}
	if o, ok := a2ahttp.Outcome(context.Background()); o.Kind != negotiate.Refused || ok {
		t.Errorf("Outcome = %+v, %v", o, ok)
	}
}

// A request that names no version is a request for 0.3 (A2A §3.6.2), on
// both bindings and whatever the host prefers: served at 0.3 to a caller
// that may have it, refused otherwise, and recorded as requested "0.3".
// Only the agent card keeps the v2 rule (the preferred version's card).
func TestHeaderlessRequestIsA2A03(t *testing.T) {
	const (
		errInfo03 = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0"}}`
		msg       = `A2A-Version (none, which A2A reads as 0.3) is below the preferred version 1.0 and is served only to an authenticated caller; this interface serves 1.0`
	)
	accepted03 := events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "0.3", Requested: "0.3", Reason: events.ReasonOK, Floor: "0.3", At: testNow}
	refused03 := events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: "0.3", Reason: events.ReasonUnauthenticated, Floor: "0.3", At: testNow}
	card10 := events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", Reason: events.ReasonOK, Floor: "0.3", At: testNow}
	for _, tc := range []struct {
		name     string
		httpJSON bool
		method   string
		target   string
		header   []string
		status   int
		version  string
		body     string
		event    events.NegotiationDecided
	}{
		{"JSON-RPC, authenticated: served at 0.3", false, "POST", "/a2a", []string{"Authorization", bearer}, 200, "0.3", "served", accepted03},
		{"JSON-RPC, empty header, authenticated: served at 0.3", false, "POST", "/a2a", []string{"A2A-Version", "", "Authorization", bearer}, 200, "0.3", "served", accepted03},
		{"JSON-RPC, anonymous: refused -32009", false, "POST", "/a2a", nil, 200, "1.0",
			`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"` + msg + `","data":[` + errInfo03 + `]}}`, refused03},
		{"HTTP+JSON, authenticated: served at 0.3", true, "POST", "/message:send", []string{"Authorization", bearer}, 200, "0.3", "served", accepted03},
		{"HTTP+JSON, empty query, authenticated: served at 0.3", true, "POST", "/message:send?A2A-Version=", []string{"Authorization", bearer}, 200, "0.3", "served", accepted03},
		{"HTTP+JSON, anonymous: refused 400", true, "POST", "/message:send", nil, 400, "1.0",
			`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"` + msg + `","details":[` + errInfo03 + `]}}`, refused03},
		{"the card, anonymous: the preferred card", false, "GET", "/.well-known/agent-card.json", nil, 200, "1.0", "served", card10},
		{"the card, authenticated: still the preferred card", true, "HEAD", "/.well-known/agent-card.json", []string{"Authorization", bearer}, 200, "1.0", "served", card10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureOf(t, legacyA2A(), policy.Policy{}, a2ahttp.Options{HTTPJSON: tc.httpJSON})
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(rpcBody(`"req-1"`)))
			for i := 0; i+1 < len(tc.header); i += 2 {
				r.Header.Add(tc.header[i], tc.header[i+1])
			}
			w := f.do(r)
			if w.Code != tc.status || w.Header().Get("A2A-Version") != tc.version || w.Body.String() != tc.body {
				t.Errorf("%d, A2A-Version %q, body\n%s\nwant %d, %q,\n%s", w.Code, w.Header().Get("A2A-Version"), w.Body, tc.status, tc.version, tc.body)
			}
			if tc.body == "served" && (f.served.version != tc.version || f.served.outcome.Version != tc.version) {
				t.Errorf("the handler saw version %q, outcome %q; want %q", f.served.version, f.served.outcome.Version, tc.version)
			}
			if got := onlyPayload(t, f.rec); got != tc.event {
				t.Errorf("event payload\n got %+v\nwant %+v", got, tc.event)
			}
		})
	}
}

// An invalid Subject is the host's mistake: it is never silently read as
// anonymous. It is logged with every violation; without StrictSubject the
// request is decided as unauthenticated, with it the request is refused
// as an internal error before anything is decided or recorded.
func TestInvalidSubject(t *testing.T) {
	const violations = `subject.subjectId: \"users/42\" contains whitespace or '/'; subject.tenant: \"Acme Corp\" may hold only A-Z a-z 0-9 . _ ~ -`
	invalid := func(*http.Request) *negotiate.Subject {
		s := peerAgent()
		s.SubjectID, s.Tenant = "users/42", "Acme Corp"
		return s
	}
	internalInfo := `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}`
	strictMsg := `the caller's Subject is invalid: ` + violations
	for _, tc := range []struct {
		name    string
		opts    a2ahttp.Options
		target  string
		status  int
		version string
		body    string
		events  int
		log     string
	}{
		{"JSON-RPC: decided as unauthenticated", a2ahttp.Options{}, "/a2a", 200, "1.2",
			rpcRefusal(`"req-1"`, `A2A-Version \"1.1\" is below the preferred version 1.2 and is served only to an authenticated caller`+servesAnon), 1,
			`level=ERROR msg="wopneg: invalid Subject: ` + violations + `" refused=false` + "\n"},
		{"JSON-RPC, strict: -32603", a2ahttp.Options{StrictSubject: true}, "/a2a", 200, "1.2",
			`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32603,"message":"` + strictMsg + `","data":[` + internalInfo + `]}}`, 0,
			`level=ERROR msg="wopneg: invalid Subject: ` + violations + `" refused=true` + "\n"},
		{"JSON-RPC, strict, without data", a2ahttp.Options{StrictSubject: true, OmitErrorData: true}, "/a2a", 200, "1.2",
			`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32603,"message":"` + strictMsg + `"}}`, 0,
			`level=ERROR msg="wopneg: invalid Subject: ` + violations + `" refused=true` + "\n"},
		{"HTTP+JSON, strict: 500", a2ahttp.Options{StrictSubject: true, HTTPJSON: true}, "/a2a", 500, "1.2",
			`{"error":{"code":500,"status":"INTERNAL","message":"` + strictMsg + `","details":[` + internalInfo + `]}}`, 0,
			`level=ERROR msg="wopneg: invalid Subject: ` + violations + `" refused=true` + "\n"},
		{"the card, strict: 500", a2ahttp.Options{StrictSubject: true}, "/.well-known/agent-card.json", 500, "1.2",
			`{"error":{"code":500,"status":"INTERNAL","message":"` + strictMsg + `","details":[` + internalInfo + `]}}`, 0,
			`level=ERROR msg="wopneg: invalid Subject: ` + violations + `" refused=true` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Subject = invalid
			f := newFixture(t, policy.Policy{}, tc.opts)
			w := f.do(cardOrPost(tc.target, "1.1"))
			if w.Code != tc.status || w.Header().Get("A2A-Version") != tc.version || w.Body.String() != tc.body || f.served.calls != 0 {
				t.Errorf("%d, A2A-Version %q, body %s, handler calls %d\nwant %d, %q, %s, 0", w.Code, w.Header().Get("A2A-Version"), w.Body, f.served.calls, tc.status, tc.version, tc.body)
			}
			if got := len(f.rec.Events()); got != tc.events {
				t.Errorf("recorded %d events, want %d", got, tc.events)
			}
			if tc.events == 1 {
				if got := onlyPayload(t, f.rec); got.Reason != events.ReasonUnauthenticated || got.Requested != "1.1" {
					t.Errorf("event %+v, want refused 1.1 as unauthenticated", got)
				}
			}
			if f.log.String() != tc.log {
				t.Errorf("log\n%s\nwant\n%s", f.log, tc.log)
			}
		})
	}
}

// A valid Subject is served as it is, strict or not, and nothing is logged;
// so is the absence of one.
func TestValidSubjectIsNotLogged(t *testing.T) {
	for _, strict := range []bool{false, true} {
		f := newFixture(t, policy.Policy{}, a2ahttp.Options{StrictSubject: strict})
		for _, auth := range []string{bearer, ""} {
			w := f.do(post("/a2a", rpcBody(`1`), "A2A-Version", "1.2", "Authorization", auth))
			if w.Body.String() != "served" {
				t.Errorf("strict %v, auth %q: %s", strict, auth, w.Body)
			}
		}
		if w := f.do(post("/a2a", rpcBody(`1`), "A2A-Version", "1.1", "Authorization", bearer)); w.Body.String() != "served" || f.served.version != "1.1" {
			t.Errorf("strict %v: the authenticated downgrade was not served: %s", strict, w.Body)
		}
		if f.log.Len() != 0 {
			t.Errorf("strict %v: logged %q", strict, f.log)
		}
	}
}
