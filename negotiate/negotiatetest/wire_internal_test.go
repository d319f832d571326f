package negotiatetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

const wireFacets = `"facets": {
	"both": {"a2a": {"versions": ["0.3", "1.0"], "preferredVersion": "1.0", "minimumVersion": "0.3", "refreshedAt": "2026-11-01"},
		"mcp": {"revisions": ["2025-11-25"], "preferredVersion": "2025-11-25", "minimumRevision": "2025-11-25", "refreshedAt": "2026-11-01"}},
	"a2aOnly": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}}`

// wireVectorJSON is one vector with its fields overridden.
func wireVectorJSON(fields ...string) string {
	f := map[string]string{
		"name": `"v"`, "facets": `"both"`, "protocol": `"a2a"`, "body": `{}`,
		"want": `{"status": 200, "event": {"outcome": "accepted", "version": "1.0", "requested": "1.0", "reason": "ok"}}`,
	}
	for i := 0; i+1 < len(fields); i += 2 {
		f[fields[i]] = fields[i+1]
	}
	var parts []string
	for _, k := range []string{"name", "facets", "protocol", "body", "want"} {
		if f[k] != "" {
			parts = append(parts, fmt.Sprintf("%q: %s", k, f[k]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func loadWireJSON(files map[string]string) ([]wireVector, error) {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys["w/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	return loadWire(fsys, "w")
}

func TestLoadWire(t *testing.T) {
	good := `{` + wireFacets + `, "vectors": [` + wireVectorJSON() + `]}`
	vs, err := loadWireJSON(map[string]string{"x.json": good})
	if err != nil || len(vs) != 1 || vs[0].Name != "x/v" || vs[0].set.A2A == nil {
		t.Fatalf("loaded %+v, %v", vs, err)
	}
	refusedWant := func(event string, extra string) string {
		return `{"status": 200` + extra + `, "event": ` + event + `}`
	}
	for _, tc := range []struct {
		name   string
		vector string
		err    string
	}{
		{"an unknown facet set", wireVectorJSON("facets", `"none"`), `no facet set named "none"`},
		{"an unknown protocol", wireVectorJSON("protocol", `"grpc"`), "protocol a2a or mcp"},
		{"a protocol the set does not advertise", wireVectorJSON("facets", `"a2aOnly"`, "protocol", `"mcp"`), "a facet set advertising the protocol"},
		{"no body", wireVectorJSON("body", ""), "a JSON body"},
		{"no status", wireVectorJSON("want", `{"event": {"outcome": "accepted", "version": "1.0", "reason": "ok"}}`), "want.status"},
		{"no event", wireVectorJSON("want", `{"status": 200}`), "want.event"},
		{"an unknown outcome", wireVectorJSON("want", refusedWant(`{"outcome": "downgraded", "version": "1.0", "reason": "ok"}`, "")), "outcome accepted or refused"},
		{"no reason", wireVectorJSON("want", refusedWant(`{"outcome": "accepted", "version": "1.0"}`, "")), "want.event.reason"},
		{"accepted without a version", wireVectorJSON("want", refusedWant(`{"outcome": "accepted", "reason": "ok"}`, "")), "version exactly when accepted"},
		{"refused with a version", wireVectorJSON("want", refusedWant(`{"outcome": "refused", "version": "1.0", "reason": "unsupported"}`, `, "error": -32009`)), "version exactly when accepted"},
		{"refused without a code", wireVectorJSON("want", refusedWant(`{"outcome": "refused", "reason": "unsupported"}`, "")), "want.error exactly when refused"},
		{"accepted with a code", wireVectorJSON("want", refusedWant(`{"outcome": "accepted", "version": "1.0", "reason": "ok"}`, `, "error": -32009`)), "want.error exactly when refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadWireJSON(map[string]string{"x.json": `{` + wireFacets + `, "vectors": [` + tc.vector + `]}`})
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), `w/x.json: vector "x/v"`) {
				t.Errorf("error %v, want one naming the file, the vector and %q", err, tc.err)
			}
		})
	}
	if _, err := loadWireJSON(map[string]string{"x.json": `{` + wireFacets + `, "vectors": [` + wireVectorJSON() + `, ` + wireVectorJSON() + `]}`}); err == nil || !strings.Contains(err.Error(), `duplicate vector name "x/v"`) {
		t.Errorf("a duplicate loaded: %v", err)
	}
	if _, err := loadWireJSON(map[string]string{"x.json": `{` + wireFacets + `, "vectors": [], "extra": 1}`}); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("an unknown key loaded: %v", err)
	}
	if _, err := loadWireJSON(map[string]string{"x.json": `{` + wireFacets + `, "vectors": []}`}); err == nil || !strings.Contains(err.Error(), "no vectors in w") {
		t.Errorf("no vectors loaded: %v", err)
	}
}

// TestShippedWireVectors checks the shipped data: every rule the kit
// promises, on both protocols.
func TestShippedWireVectors(t *testing.T) {
	vs, err := loadWire(wireFiles, "wire")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
		if v.Source == "" {
			t.Errorf("%s: no source", v.Name)
		}
	}
	for _, p := range []string{"a2a/", "mcp/"} {
		for _, rule := range []string{"preferred-accepted", "authenticated-downgrade", "unauthenticated-downgrade-refused",
			"below-floor-refused", "unsupported-refused", "no-header-anonymous-refused"} {
			if !slices.Contains(names, p+rule) {
				t.Errorf("no vector %s%s", p, rule)
			}
		}
	}
	for _, name := range []string{"mcp/header-body-mismatch", "mcp/batch-at-2025-03-26", "mcp/batch-at-2025-06-18-refused", "mcp/no-header-below-floor"} {
		if !slices.Contains(names, name) {
			t.Errorf("no vector %s", name)
		}
	}
}

// fakeTB keeps what the kit reports.
type fakeTB struct {
	testing.TB
	errs []string
}

func (*fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func TestRunWireLoadFailure(t *testing.T) {
	defer func(fsys fs.FS) { wireSource = fsys }(wireSource)
	wireSource = fstest.MapFS{"wire/x.json": &fstest.MapFile{Data: []byte(`{`)}}
	tb := &fakeTB{}
	RunWire(tb, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
		t.Fatal("built a handler for vectors that did not load")
		return nil, nil
	})
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "loading the wire vectors") {
		t.Errorf("reported %q", tb.errs)
	}
}

// answering returns a builder of a handler that answers status and body,
// recording events e first.
func answering(status int, body string, header http.Header, e ...events.Event) func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
	return func(_ facets.Set, _ policy.Policy, sink events.Sink) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, ev := range e {
				if err := sink.Emit(r.Context(), ev); err != nil {
					panic(err)
				}
			}
			for k, v := range header {
				w.Header()[http.CanonicalHeaderKey(k)] = v
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}), nil
	}
}

func hostEvent(t *testing.T, p events.NegotiationDecided) events.Event {
	t.Helper()
	p.At = wireNow
	e, err := events.NewHostEvent("", p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWireCheck(t *testing.T) {
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01"}}
	accepted := wireVector{Name: "accepted", Protocol: facets.ProtocolA2A, set: set, Body: []byte(`{}`), Want: wireWant{
		Status: 200, Header: map[string]string{"A2A-Version": "1.0"},
		Event: &wireEvent{Outcome: "accepted", Version: "1.0", Requested: "1.0", Reason: events.ReasonOK},
	}}
	refused := wireVector{Name: "refused", Protocol: facets.ProtocolA2A, set: set, Body: []byte(`{}`), Want: wireWant{
		Status: 200, Error: -32009,
		Event: &wireEvent{Outcome: "refused", Requested: "0.2", Reason: events.ReasonBelowFloor},
	}}
	good := hostEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.0", Requested: "1.0", Reason: events.ReasonOK, Floor: "0.3"})
	goodRefusal := hostEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: "0.2", Reason: events.ReasonBelowFloor, Floor: "0.3"})
	v10 := http.Header{"A2A-Version": {"1.0"}}
	long := `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 600) + `"}`
	for _, tc := range []struct {
		name  string
		v     wireVector
		build func(facets.Set, policy.Policy, events.Sink) (http.Handler, error)
		errs  []string // each must be in the report; none means it passes
	}{
		{"accepted", accepted, answering(200, `{"jsonrpc":"2.0","id":1,"result":{}}`, v10, good), nil},
		{"accepted, method not found", accepted, answering(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}`, v10, good),
			[]string{"not served: a2a at 1.0 must be answered with a JSON-RPC result, and the server behind the middleware answered JSON-RPC error [-32601]; a host serves every version its record accepts"}},
		{"accepted, no result", accepted, answering(200, `{"jsonrpc":"2.0","id":1}`, v10, good),
			[]string{"answered no JSON-RPC result; a host serves every version its record accepts: serve 1.0, or leave it out of the facet"}},
		{"accepted, a refusal code", accepted, answering(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009}}`, v10, good),
			[]string{"accepted, but the answer carries the refusal code -32009"}},
		{"accepted, wrong status", accepted, answering(201, `{"result":{}}`, v10, good), []string{"status = 201, want 200", `answer: 201 {"result":{}}`}},
		{"accepted, no version header", accepted, answering(200, `{}`, nil, good), []string{`header A2A-Version = "", want "1.0": the answer names the version decided`}},
		{"accepted, two version headers", accepted, answering(200, `{}`, http.Header{"A2A-Version": {"1.0", "0.3"}}, good), []string{`header A2A-Version = "1.0, 0.3"`}},
		{"accepted, nothing recorded", accepted, answering(200, `{}`, v10), []string{"recorded 0 events, want exactly one: every exchange is recorded once"}},
		{"accepted, recorded twice", accepted, answering(200, `{}`, v10, good, good), []string{"recorded 2 events, want exactly one"}},
		{"accepted, the refusal recorded", accepted, answering(200, `{}`, v10, goodRefusal),
			[]string{`event.outcome = "refused", want "accepted"`, `event.version = "", want "1.0"`, `event.requested = "0.2", want "1.0"`, `event.reason = "below-floor", want "ok"`}},
		{"accepted, a long answer is cut", accepted, answering(500, long, v10, good), []string{"answer: 500 " + long[:512] + "..."}},
		{"refused", refused, answering(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009}}`, nil, goodRefusal), nil},
		{"refused in a stream", refused, answering(200, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32009}}\n\n", nil, goodRefusal), nil},
		{"refused in a batch", refused, answering(200, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32009}}]`, nil, goodRefusal), nil},
		{"refused, another code", refused, answering(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600}}`, nil, goodRefusal), []string{"JSON-RPC error codes [-32600], want -32009"}},
		{"refused, no JSON", refused, answering(200, `refused`, nil, goodRefusal), []string{"JSON-RPC error codes [], want -32009"}},
		{"refused, wrong floor and protocol", refused, answering(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009}}`, nil,
			hostEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "refused", Requested: "2025-06-18", Reason: events.ReasonBelowFloor, Floor: "2025-11-25"})),
			[]string{`event.protocol = "mcp", want "a2a"`, `event.floor = "2025-11-25", want "0.3"`, `event.requested = "2025-06-18", want "0.2"`}},
		{"a build error", accepted, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) { return nil, errors.New("no db") }, []string{"build: no db"}},
		{"a nil handler", accepted, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) { return nil, nil }, []string{"build returned a nil handler"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.check(tc.build, defaultHost(t))
			if len(tc.errs) == 0 {
				if err != nil {
					t.Errorf("failed a correct answer: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("passed; want %q", tc.errs)
			}
			for _, want := range tc.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("report\n%v\nlacks %q", err, want)
				}
			}
		})
	}
}

// defaultHost is the host RunWire checks without options.
func defaultHost(t *testing.T) wireHost {
	t.Helper()
	h, err := hostOf(nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The kit sends what the vector says: to the protocol's path, its headers,
// body and, for an authenticated caller, the bearer token; and it builds
// the host from a copy of the vector's set that advertises only what the
// host serves.
func TestWireRequest(t *testing.T) {
	both := facets.Set{
		A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"},
		MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01"},
	}
	for _, tc := range []struct {
		name           string
		opts           []WireOptions
		protocol       facets.Protocol
		path, bearer   string
		hasA2A, hasMCP bool
	}{
		{"defaults, mcp", nil, facets.ProtocolMCP, "/mcp", "Bearer negotiatetest", true, true},
		{"defaults, a2a", nil, facets.ProtocolA2A, "/a2a", "Bearer negotiatetest", true, true},
		{"zero options", []WireOptions{{}}, facets.ProtocolMCP, "/mcp", "Bearer negotiatetest", true, true},
		{"mcp only, elsewhere", []WireOptions{{Endpoints: map[facets.Protocol]string{facets.ProtocolMCP: "/v1/mcp"}, Bearer: "s3cret"}},
			facets.ProtocolMCP, "/v1/mcp", "Bearer s3cret", false, true},
		{"a2a only, default path", []WireOptions{{Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: ""}}},
			facets.ProtocolA2A, "/a2a", "Bearer negotiatetest", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, err := hostOf(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			v := wireVector{Protocol: tc.protocol, Authenticated: true, Header: map[string]string{"Mcp-Method": "tools/list"},
				Body: []byte(`{"x":1}`), set: both}
			var got *http.Request
			var length int64
			_ = v.check(func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
				if (set.A2A != nil) != tc.hasA2A || (set.MCP != nil) != tc.hasMCP {
					t.Errorf("the builder got a2a %v, mcp %v; want %v, %v", set.A2A != nil, set.MCP != nil, tc.hasA2A, tc.hasMCP)
				}
				if set.MCP != nil && set.MCP == v.set.MCP || set.A2A != nil && set.A2A == v.set.A2A {
					t.Error("the builder got the vector's own set, not a copy")
				}
				if !p.Time().Equal(wireNow) {
					t.Errorf("policy clock %v", p.Time())
				}
				if sink == nil {
					t.Error("no sink")
				}
				return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got, length = r, r.ContentLength }), nil
			}, host)
			if got == nil {
				t.Fatal("no request sent")
			}
			if got.Method != http.MethodPost || got.URL.Path != tc.path || got.Header.Get("Authorization") != tc.bearer ||
				got.Header.Get("Mcp-Method") != "tools/list" || got.Header.Get("Content-Type") != "application/json" || length != 7 {
				t.Errorf("sent %s %s %v, length %d", got.Method, got.URL, got.Header, length)
			}
			if v.set.A2A == nil || v.set.MCP == nil {
				t.Error("the vector's own set lost a protocol")
			}
			v.Authenticated = false
			_ = v.check(func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
				return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r }), nil
			}, host)
			if got.Header.Get("Authorization") != "" {
				t.Errorf("an anonymous vector sent %q", got.Header.Get("Authorization"))
			}
		})
	}
}

// Options the kit cannot use fail the run instead of passing a host
// nothing was checked against.
func TestHostOfRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []WireOptions
		err  string
	}{
		{"two options", []WireOptions{{}, {}}, "at most one WireOptions, got 2"},
		{"no protocol", []WireOptions{{Endpoints: map[facets.Protocol]string{}}}, "names no protocol"},
		{"an unknown protocol", []WireOptions{{Endpoints: map[facets.Protocol]string{"grpc": "/grpc"}}}, `"grpc" is not a protocol`},
		{"a relative path", []WireOptions{{Endpoints: map[facets.Protocol]string{facets.ProtocolMCP: "mcp"}}}, `Endpoints[mcp]: path "mcp" does not start with "/"`},
		{"a bearer with a space", []WireOptions{{Bearer: "a b"}}, `Bearer "a b"`},
		{"a bearer with a newline", []WireOptions{{Bearer: "a\nb"}}, "visible ASCII"},
		{"a bearer beyond ASCII", []WireOptions{{Bearer: "é"}}, "visible ASCII"},
		{"a bearer with DEL", []WireOptions{{Bearer: "a\x7f"}}, "visible ASCII"},
		{"an invalid facet", []WireOptions{{Facets: facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "2.0", MinimumVersion: "1.0"}}}}, "WireOptions.Facets: "},
		{"a served protocol not advertised", []WireOptions{{Facets: oneDotZero, Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: "/a", facets.ProtocolMCP: "/m"}}},
			`WireOptions.Endpoints serves "mcp", which WireOptions.Facets does not advertise`},
		{"an advertised protocol not served", []WireOptions{{Facets: facets.Set{A2A: oneDotZero.A2A, MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-11-25"}},
			Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: "/a"}}}, "WireOptions.Facets advertises mcp, which WireOptions.Endpoints does not serve"},
		{"a relative path, own facets", []WireOptions{{Facets: oneDotZero, Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: "a"}}}, `Endpoints[a2a]: path "a" does not start with "/"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := hostOf(tc.opts); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("hostOf = %v, want an error with %q", err, tc.err)
			}
			tb := &fakeTB{}
			RunWire(tb, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
				t.Fatal("built a host for options the kit cannot use")
				return nil, nil
			}, tc.opts...)
			if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "negotiatetest: ") || !strings.Contains(tb.errs[0], tc.err) {
				t.Errorf("reported %q", tb.errs)
			}
		})
	}
	if _, err := hostOf([]WireOptions{{Bearer: "~!az09"}}); err != nil {
		t.Errorf("a bearer of visible ASCII was refused: %v", err)
	}
}

// oneDotZero is an A2A host's own facet, written without refreshedAt.
var oneDotZero = facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}}

// A host's own facets say what it serves, at the default paths or at
// Endpoints', dated by the kit's clock; the caller's set is left alone.
func TestHostOfOwnFacets(t *testing.T) {
	h, err := hostOf([]WireOptions{{Facets: oneDotZero}})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(h.paths, map[facets.Protocol]string{facets.ProtocolA2A: "/a2a"}) || h.set.A2A.RefreshedAt != "2026-11-29" || h.set.MCP != nil {
		t.Errorf("host %+v, facet %+v", h.paths, h.set.A2A)
	}
	if oneDotZero.A2A.RefreshedAt != "" {
		t.Error("the kit dated the host's own facet")
	}
	h, err = hostOf([]WireOptions{{Facets: oneDotZero, Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: "/v1/a2a"}}})
	if err != nil || !maps.Equal(h.paths, map[facets.Protocol]string{facets.ProtocolA2A: "/v1/a2a"}) {
		t.Errorf("host %+v, %v", h.paths, err)
	}
	h, err = hostOf([]WireOptions{{Facets: oneDotZero, Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: ""}}})
	if err != nil || !maps.Equal(h.paths, map[facets.Protocol]string{facets.ProtocolA2A: "/a2a"}) {
		t.Errorf("host %+v, %v", h.paths, err)
	}
	vs, err := h.vectors()
	if err != nil || len(vs) != 6 || vs[0].set.A2A.RefreshedAt != "2026-11-29" {
		t.Errorf("%d vectors, %v", len(vs), err)
	}
}

// A host answering 404 is told where the kit sent the request and how
// to say where it serves the protocol instead.
func TestWireCheckNotFound(t *testing.T) {
	v := wireVector{Name: "v", Protocol: facets.ProtocolA2A, Body: []byte(`{}`),
		set:  facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}},
		Want: wireWant{Status: 200, Event: &wireEvent{Outcome: "accepted", Version: "1.0", Requested: "1.0", Reason: events.ReasonOK}}}
	err := v.check(answering(404, "404 page not found", nil), defaultHost(t))
	if err == nil || !strings.Contains(err.Error(), "the host serves nothing at /a2a: route a2a there, or say in WireOptions.Endpoints") {
		t.Errorf("report %v lacks the hint", err)
	}
	v.Want.Status = 404
	if err := v.check(answering(404, "", nil), defaultHost(t)); err != nil && strings.Contains(err.Error(), "serves nothing") {
		t.Errorf("a 404 the vector wants got the hint: %v", err)
	}
	v.Want.Status = 200
	if err := v.check(answering(500, "", nil), defaultHost(t)); err != nil && strings.Contains(err.Error(), "serves nothing") {
		t.Errorf("a 500 got the hint: %v", err)
	}
}

func TestRPCReplies(t *testing.T) {
	for _, tc := range []struct {
		body    string
		want    []int
		results int
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022}}`, []int{-32022}, 0},
		{` {"jsonrpc":"2.0","id":1,"result":{}} `, nil, 1},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, nil, 1},
		{`{"jsonrpc":"2.0","id":1}`, nil, 0},
		{`[{"error":{"code":-32020}},{"result":1},{"error":{"code":-32600}}]`, []int{-32020, -32600}, 1},
		{`[{"result":1},{"result":2}]`, nil, 2},
		{"event: message\ndata: {\"error\":{\"code\":-32022}}\n\ndata:[{\"error\":{\"code\":1}}]\n", []int{-32022, 1}, 0},
		{"event: message\ndata: {\"result\":{}}\n\n", nil, 1},
		{"data: not json\n", nil, 0},
		{`{"error":"text"}`, nil, 0},
		{`"a string"`, nil, 0},
		{``, nil, 0},
		{`{"result":{},"error":{"code":-32022}` + strings.Repeat(" ", maxWireAnswer) + `}`, nil, 0}, // cut at the bound: not JSON
	} {
		if got, results := rpcReplies([]byte(tc.body)); !slices.Equal(got, tc.want) || results != tc.results {
			t.Errorf("rpcReplies(%.60q) = %v, %d; want %v, %d", tc.body, got, results, tc.want, tc.results)
		}
	}
}

func FuzzRPCReplies(f *testing.F) {
	for _, s := range []string{`{"error":{"code":-32009}}`, "data: {\"error\":{\"code\":1}}\n", `[{"error":{"code":2}}]`, "data: data: x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		codes, results := rpcReplies(body)
		if len(codes)+results > len(body) {
			t.Errorf("%d codes from %d bytes", len(codes), len(body))
		}
	})
}

func TestTruncateAnswer(t *testing.T) {
	exact := strings.Repeat("a", 512)
	if got := truncateAnswer([]byte(exact)); got != exact {
		t.Errorf("512 bytes cut to %q", got)
	}
	if got := truncateAnswer([]byte(exact + "b")); got != exact+"..." {
		t.Errorf("513 bytes shown as %q", got)
	}
}

// A vector's own set stays as loaded when a builder changes what it got.
func TestBuilderCannotChangeTheExpectation(t *testing.T) {
	vs, err := loadWire(wireFiles, "wire")
	if err != nil {
		t.Fatal(err)
	}
	v := vs[0]
	floor := v.set.A2A.MinimumVersion
	_ = v.check(func(set facets.Set, _ policy.Policy, _ events.Sink) (http.Handler, error) {
		set.A2A.MinimumVersion = "9.9"
		return nil, context.Canceled
	}, defaultHost(t))
	if v.set.A2A.MinimumVersion != floor {
		t.Errorf("the builder changed the vector's floor to %s", v.set.A2A.MinimumVersion)
	}
}
