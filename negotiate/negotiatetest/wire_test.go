package negotiatetest_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// kitUser is who the test hosts' authentication resolves the kit's bearer
// token to.
var kitUser = negotiate.Subject{Issuer: "https://idp.example", SubjectID: "kit-user", Tenant: "acme",
	Lane: policy.LaneOIDC, Kind: policy.KindUser}

// bearerAuth is a host's authentication: token is kitUser, anything else
// nobody.
func bearerAuth(token string) func(r *http.Request) *negotiate.Subject {
	return func(r *http.Request) *negotiate.Subject {
		if r.Header.Get("Authorization") != "Bearer "+token {
			return nil
		}
		s := kitUser
		return &s
	}
}

// rpcServer stands for the SDK behind the middleware: it answers every
// JSON-RPC request with an empty result.
var rpcServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
})

// oneDotZeroServer stands for a2a-go v2's JSON-RPC handler alone, which
// serves A2A 1.0: it answers 0.3's message/send as a method it does not
// know (-32601), and everything else (MCP's requests too) with a result.
var oneDotZeroServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	if bytes.Contains(body, []byte(`"message/send"`)) {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"wire-1","error":{"code":-32601,"message":"method not found"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
})

// host is a host built from the module's adapters, with one flaw or none:
// each flaw breaks one rule the wire vectors state, as a host's own code
// could around the middleware.
type host struct {
	flaw string
	// serves is the one protocol the host serves, at /v1/<protocol>; ""
	// is both, at the kit's default paths.
	serves facets.Protocol
	// token is the bearer token the host authenticates; "" is the kit's.
	token string
}

// options are the WireOptions that describe h to the kit.
func (h host) options() negotiatetest.WireOptions {
	o := negotiatetest.WireOptions{Bearer: h.token}
	if h.serves != "" {
		o.Endpoints = map[facets.Protocol]string{h.serves: "/v1/" + string(h.serves)}
	}
	return o
}

func (h host) build(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
	auth := bearerAuth(cmp.Or(h.token, "negotiatetest"))
	switch h.flaw {
	case "no floor check":
		if set.MCP != nil {
			set.MCP.MinimumRevision = set.MCP.Revisions[0]
		}
		if set.A2A != nil {
			set.A2A.MinimumVersion = set.A2A.Versions[0]
		}
	case "anonymous callers authenticated":
		auth = func(*http.Request) *negotiate.Subject { s := kitUser; return &s }
	case "nothing recorded":
		sink = events.SinkFunc(func(context.Context, events.Event) error { return nil })
	case "wrong reason recorded":
		inner := sink
		sink = events.SinkFunc(func(ctx context.Context, e events.Event) error {
			if e.Payload.Reason == events.ReasonBelowFloor {
				e.Payload.Reason = events.ReasonUnsupported
			}
			return inner.Emit(ctx, e)
		})
	}
	n, err := negotiate.Compile(set, p)
	if err != nil {
		return nil, err
	}
	var server http.Handler = rpcServer
	switch {
	case h.flaw == "version header overwritten" && set.A2A != nil:
		server = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("A2A-Version", set.A2A.PreferredVersion)
			rpcServer.ServeHTTP(w, r)
		})
	case h.flaw == "serves 1.0 only":
		server = oneDotZeroServer
	}
	mux := http.NewServeMux()
	if h.serves != facets.ProtocolMCP && set.A2A != nil {
		a, err := a2ahttp.New(n, a2ahttp.Options{Sink: sink, Subject: auth})
		if err != nil {
			return nil, err
		}
		mux.Handle(cmp.Or(h.options().Endpoints[facets.ProtocolA2A], "/a2a"), h.recordsFirst(set, facets.ProtocolA2A, sink, a.Wrap(server)))
	}
	if h.serves != facets.ProtocolA2A && set.MCP != nil {
		m, err := mcphttp.New(n, mcphttp.Options{Sink: sink, Subject: auth})
		if err != nil {
			return nil, err
		}
		mux.Handle(cmp.Or(h.options().Endpoints[facets.ProtocolMCP], "/mcp"), h.recordsFirst(set, facets.ProtocolMCP, sink, m.Wrap(server)))
	}
	return h.front(mux), nil
}

// recordsFirst is, for the flaw "records before deciding", the host's
// own layer that records every request of protocol p as served at the
// preferred version before the middleware decides; otherwise next.
func (h host) recordsFirst(set facets.Set, p facets.Protocol, sink events.Sink, next http.Handler) http.Handler {
	if h.flaw != "records before deciding" {
		return next
	}
	adv, _ := set.Lookup(p)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := events.NewHostEvent("", events.NegotiationDecided{Protocol: p, Outcome: "accepted", Version: adv.Preferred,
			Requested: adv.Preferred, Reason: events.ReasonOK, Floor: adv.Floor, At: time.Now()})
		if err == nil {
			err = sink.Emit(r.Context(), e)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// front is what the flawed host puts in front of the middleware.
func (h host) front(next http.Handler) http.Handler {
	switch h.flaw {
	case "no header read as preferred":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("A2A-Version") == "" && r.Header.Get("MCP-Protocol-Version") == "" {
				r.Header.Set("A2A-Version", "1.0")
				r.Header.Set("MCP-Protocol-Version", "2026-07-28")
			}
			next.ServeHTTP(w, r)
		})
	case "wrong JSON-RPC code", "refusal on HTTP 200":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body, status := rec.Body.Bytes(), rec.Code
			if h.flaw == "wrong JSON-RPC code" {
				body = bytes.ReplaceAll(body, []byte("-32009"), []byte("-32600"))
				body = bytes.ReplaceAll(body, []byte("-32022"), []byte("-32602"))
			} else if status == http.StatusBadRequest {
				status = http.StatusOK
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
	}
	return next
}

// TestRunWireAdapters runs the wire vectors against a host built from the
// module's own adapters.
func TestRunWireAdapters(t *testing.T) {
	negotiatetest.RunWire(t, host{}.build)
}

// recordingTB is a testing.TB that keeps what it is told to report, so
// that a test can run the kit and read its verdict. The kit calls only
// Helper and Errorf on a TB that is not a *testing.T.
type recordingTB struct {
	testing.TB
	errs []string
}

func (*recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// failed returns the names of the vectors the kit failed.
func (r *recordingTB) failed() []string {
	var names []string
	for _, e := range r.errs {
		name, _, _ := strings.Cut(e, " ")
		names = append(names, name)
	}
	return names
}

// TestRunWireCatchesFlaws runs the kit against a host with each flaw and
// checks that the vectors of the rule it breaks fail: a kit that passes a
// broken host checks nothing. Each flaw is tried on a host serving both
// protocols and on hosts serving one, at another path and with another
// token, told to the kit through WireOptions: the vectors of the protocol
// served must still fail.
func TestRunWireCatchesFlaws(t *testing.T) {
	for flaw, mustFail := range map[string][]string{
		"no floor check":                  {"mcp/below-floor-refused", "mcp/no-header-below-floor"},
		"anonymous callers authenticated": {"a2a/unauthenticated-downgrade-refused", "a2a/no-header-anonymous-refused", "mcp/unauthenticated-downgrade-refused", "mcp/no-header-anonymous-refused"},
		"nothing recorded":                {"a2a/preferred-accepted", "a2a/below-floor-refused", "mcp/preferred-accepted", "mcp/batch-at-2025-06-18-refused"},
		"wrong reason recorded":           {"a2a/below-floor-refused", "mcp/below-floor-refused", "mcp/no-header-below-floor"},
		"version header overwritten":      {"a2a/authenticated-downgrade", "a2a/no-header-authenticated-is-0.3"},
		"no header read as preferred":     {"a2a/no-header-authenticated-is-0.3", "a2a/no-header-anonymous-refused", "mcp/no-header-below-floor", "mcp/no-header-authenticated-is-2025-03-26"},
		"wrong JSON-RPC code":             {"a2a/unauthenticated-downgrade-refused", "mcp/below-floor-refused", "mcp/unsupported-refused"},
		"refusal on HTTP 200":             {"mcp/unauthenticated-downgrade-refused", "mcp/header-body-mismatch", "mcp/batch-at-2025-06-18-refused"},
	} {
		for _, shape := range []host{{}, {serves: facets.ProtocolMCP, token: "mcp-token"}, {serves: facets.ProtocolA2A, token: "a2a-token"}} {
			shape.flaw = flaw
			t.Run(flaw+"/"+cmp.Or(string(shape.serves), "both"), func(t *testing.T) {
				tb := &recordingTB{}
				negotiatetest.RunWire(tb, shape.build, shape.options())
				failed := tb.failed()
				for _, name := range mustFail {
					if (shape.serves == "" || strings.HasPrefix(name, string(shape.serves)+"/")) && !slices.Contains(failed, name) {
						t.Errorf("the kit passed %s on a host with %q; it failed %q", name, flaw, failed)
					}
				}
			})
		}
	}
}

// TestRunWireOneProtocol is the regression test of issue 21 item 3: a
// host serving one protocol, at a path of its own, behind a token of its
// own, passes the kit told so, and the kit runs every vector of that
// protocol against it and none of the other; told nothing, the kit fails
// the vectors the host does not serve, naming the path it tried.
func TestRunWireOneProtocol(t *testing.T) {
	for _, h := range []host{{serves: facets.ProtocolMCP, token: "mcp-token"}, {serves: facets.ProtocolA2A, token: "a2a-token"}} {
		t.Run(string(h.serves), func(t *testing.T) {
			var built int
			tb := &recordingTB{}
			negotiatetest.RunWire(tb, func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
				built++
				if _, ok := set.Lookup(h.serves); !ok || len(set.Protocols()) != 1 {
					t.Errorf("the host serving %s was built from a set advertising %v", h.serves, set.Protocols())
				}
				return h.build(set, p, sink)
			}, h.options())
			if len(tb.errs) != 0 {
				t.Errorf("a correct %s-only host failed: %q", h.serves, tb.errs)
			}
			if want := map[facets.Protocol]int{facets.ProtocolA2A: 8, facets.ProtocolMCP: 12}[h.serves]; built != want {
				t.Errorf("the kit ran %d vectors against the %s-only host, want %d", built, h.serves, want)
			}

			tb = &recordingTB{}
			negotiatetest.RunWire(tb, h.build)
			if len(tb.errs) == 0 {
				t.Fatalf("the kit, told nothing, passed a %s-only host at /v1/%s", h.serves, h.serves)
			}
			for _, e := range tb.errs {
				if !strings.Contains(e, "the host serves nothing at /") || !strings.Contains(e, "WireOptions.Endpoints") {
					t.Errorf("a vector the host cannot serve reported %q, without the path it tried", e)
				}
			}
		})
	}
}

// TestRunWireBearer: a host that authenticates another token fails the
// authenticated vectors until the kit is told the token.
func TestRunWireBearer(t *testing.T) {
	h := host{token: "s3cret"}
	tb := &recordingTB{}
	negotiatetest.RunWire(tb, h.build)
	if failed := tb.failed(); !slices.Contains(failed, "a2a/authenticated-downgrade") || !slices.Contains(failed, "mcp/authenticated-downgrade") {
		t.Errorf("the kit sent its own token to a host of another and failed only %q", failed)
	}
	tb = &recordingTB{}
	negotiatetest.RunWire(tb, h.build, negotiatetest.WireOptions{Bearer: "s3cret"})
	if len(tb.errs) != 0 {
		t.Errorf("told the host's token, the kit failed %q", tb.errs)
	}
}

// TestRunWireReports checks what the kit reports through a TB that is not
// a *testing.T: nothing for a correct host, and a failure per vector, with
// the vector's name and the build error, for a host that cannot be built.
func TestRunWireReports(t *testing.T) {
	tb := &recordingTB{}
	negotiatetest.RunWire(tb, host{}.build)
	if len(tb.errs) != 0 {
		t.Errorf("a correct host failed: %q", tb.errs)
	}
	tb = &recordingTB{}
	negotiatetest.RunWire(tb, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) {
		return nil, io.ErrUnexpectedEOF
	})
	if len(tb.errs) < 20 {
		t.Fatalf("%d failures for a host that cannot be built, want one per vector", len(tb.errs))
	}
	for _, e := range tb.errs {
		if !strings.Contains(e, "build: unexpected EOF") {
			t.Errorf("failure %q does not carry the build error", e)
		}
	}
	tb = &recordingTB{}
	negotiatetest.RunWire(tb, func(facets.Set, policy.Policy, events.Sink) (http.Handler, error) { return nil, nil })
	if len(tb.errs) < 20 || !strings.Contains(tb.errs[0], "nil handler") {
		t.Errorf("a nil handler reported %q", tb.errs)
	}
}

// BenchmarkRunWire runs all the wire vectors against the adapters' host,
// a handler built per vector: what RunWire costs a host's test suite.
func BenchmarkRunWire(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		negotiatetest.RunWire(b, host{}.build)
	}
}

// theHostFacets are the facets the shipped vectors build the host from.
var theHostFacets = facets.Set{
	A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"},
	MCP: &facets.MCP{Revisions: []string{"2025-06-18", "2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"},
}

// ownFacets are facets hosts advertise, as they write them (refreshedAt
// empty or stale: the kit dates them), for the kit to derive its
// vectors from.
var ownFacets = map[string]facets.Set{
	"the shipped host's":        theHostFacets,
	"a2a 1.0 only":              {A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}},
	"a2a 0.3 preferred":         {A2A: &facets.A2A{Versions: []string{"0.2", "0.3"}, PreferredVersion: "0.3", MinimumVersion: "0.2", RefreshedAt: "2020-01-01"}},
	"a2a 0.3 to 1.0, floor 1.0": {A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}},
	"mcp legacy":                {MCP: &facets.MCP{Revisions: []string{"2025-03-26", "2025-06-18", "2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-03-26"}},
	"mcp 2025-11-25 only":       {MCP: &facets.MCP{Revisions: []string{"2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-11-25"}},
	"mcp 2024-11-05 floor":      {MCP: &facets.MCP{Revisions: []string{"2024-11-05", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2024-11-05"}},
	"both, a2a 1.0 only": {A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0"},
		MCP: &facets.MCP{Revisions: []string{"2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2026-07-28"}},
}

// ownFacetVectors is how many vectors the kit derives from each of
// ownFacets: one per rule the facet gives a version to.
var ownFacetVectors = map[string]int{"the shipped host's": 17, "a2a 1.0 only": 6, "a2a 0.3 preferred": 8,
	"a2a 0.3 to 1.0, floor 1.0": 6, "mcp legacy": 9, "mcp 2025-11-25 only": 6, "mcp 2024-11-05 floor": 7, "both, a2a 1.0 only": 12}

// TestRunWireOwnFacets: the module's adapters pass the vectors derived
// from every facet a host may advertise, and the kit builds the host from
// that facet, dated, and runs the vectors it derives: a vector per rule
// the facet gives a version to.
func TestRunWireOwnFacets(t *testing.T) {
	for name, set := range ownFacets {
		t.Run(name, func(t *testing.T) {
			tb := &recordingTB{}
			var built int
			negotiatetest.RunWire(tb, func(got facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
				built++
				for _, proto := range []facets.Protocol{facets.ProtocolA2A, facets.ProtocolMCP} {
					g, ok := got.Lookup(proto)
					w, want := set.Lookup(proto)
					if ok != want || ok && (!slices.Equal(g.Versions, w.Versions) || g.Preferred != w.Preferred || g.Floor != w.Floor || g.RefreshedAt != "2026-11-29") {
						t.Errorf("built from %+v, want %+v refreshed on the kit's day", g, w)
					}
				}
				return host{}.build(got, p, sink)
			}, negotiatetest.WireOptions{Facets: set})
			if len(tb.errs) != 0 {
				t.Errorf("the adapters failed the vectors of their own facets: %q", tb.errs)
			}
			if want := ownFacetVectors[name]; built != want {
				t.Errorf("the kit ran %d vectors, want %d", built, want)
			}
		})
	}
}

// brokenHosts are hosts that break one rule each, with the vectors the
// kit must fail them on and what the failure must say: the rule broken.
var brokenHosts = []struct {
	flaw     string
	opts     negotiatetest.WireOptions
	mustFail map[string]string
}{
	{"serves 1.0 only", negotiatetest.WireOptions{}, map[string]string{
		"a2a/authenticated-downgrade":        "not served: a2a at 0.3 must be answered with a JSON-RPC result, and the server behind the middleware answered JSON-RPC error [-32601]; a host serves every version its record accepts",
		"a2a/no-header-authenticated-is-0.3": "a host serves every version its record accepts: serve 0.3, or leave it out of the facet",
	}},
	{"serves 1.0 only", negotiatetest.WireOptions{Facets: theHostFacets}, map[string]string{
		"a2a/authenticated-downgrade": "a host serves every version its record accepts",
		"a2a/no-header-authenticated": "a host serves every version its record accepts",
	}},
	{"records before deciding", negotiatetest.WireOptions{}, map[string]string{
		"a2a/below-floor-refused": "recorded 2 events, want exactly one: every exchange is recorded once, with the decision made for it",
		"mcp/unsupported-refused": "recorded 2 events, want exactly one",
		"a2a/preferred-accepted":  "recorded 2 events",
	}},
	{"version header overwritten", negotiatetest.WireOptions{}, map[string]string{
		"a2a/authenticated-downgrade": `header A2A-Version = "1.0", want "0.3": the answer names the version decided, and no other`,
	}},
	{"version header overwritten", negotiatetest.WireOptions{Facets: theHostFacets}, map[string]string{
		"a2a/no-header-authenticated": `header A2A-Version = "1.0", want "0.3": the answer names the version decided`,
	}},
	{"nothing recorded", negotiatetest.WireOptions{Facets: ownFacets["a2a 1.0 only"]}, map[string]string{
		"a2a/preferred-accepted":  "recorded 0 events, want exactly one: every exchange is recorded once",
		"a2a/below-floor-refused": "recorded 0 events",
	}},
	{"anonymous callers authenticated", negotiatetest.WireOptions{}, map[string]string{
		"a2a/unauthenticated-downgrade-refused": "rule 5 (RFC 0175 §D.1): no downgrade for an anonymous caller",
		"mcp/unauthenticated-downgrade-refused": `event.reason = "ok", want "unauthenticated"`,
	}},
	{"anonymous callers authenticated", negotiatetest.WireOptions{Facets: theHostFacets}, map[string]string{
		"a2a/unauthenticated-downgrade-refused": "rule 5 (RFC 0175 §D.1): no downgrade for an anonymous caller",
		"a2a/no-header-anonymous":               `event.outcome = "accepted", want "refused"`,
	}},
}

// TestRunWireFailsBrokenHosts: the kit fails each broken host on the
// vectors of the rule it breaks, with a message that names the rule, on
// the shipped vectors and on those derived from the host's facets.
func TestRunWireFailsBrokenHosts(t *testing.T) {
	for _, b := range brokenHosts {
		t.Run(b.flaw+"/"+strconv.Itoa(len(b.opts.Facets.Protocols())), func(t *testing.T) {
			tb := &recordingTB{}
			negotiatetest.RunWire(tb, host{flaw: b.flaw}.build, b.opts)
			for name, says := range b.mustFail {
				var report string
				for _, e := range tb.errs {
					if strings.HasPrefix(e, name+" ") {
						report = e
					}
				}
				if report == "" || !strings.Contains(report, says) {
					t.Errorf("on %s the kit reported %q, want a failure saying %q", name, report, says)
				}
			}
		})
	}
}

// TestRunWireOneDotZeroHost: a host whose A2A server serves 1.0 alone
// passes the vectors derived from the facet it advertises, 1.0 only, and
// fails those of a facet offering 0.3 too, which it cannot serve.
func TestRunWireOneDotZeroHost(t *testing.T) {
	h := host{flaw: "serves 1.0 only"}
	negotiatetest.RunWire(t, h.build, negotiatetest.WireOptions{Facets: ownFacets["both, a2a 1.0 only"]})
	tb := &recordingTB{}
	negotiatetest.RunWire(tb, h.build, negotiatetest.WireOptions{Facets: ownFacets["a2a 0.3 to 1.0, floor 1.0"]})
	if len(tb.errs) != 0 {
		t.Errorf("a 1.0 host whose facet serves 0.3 to nobody failed: %q", tb.errs)
	}
	tb = &recordingTB{}
	negotiatetest.RunWire(tb, h.build, negotiatetest.WireOptions{Facets: theHostFacets})
	if len(tb.errs) == 0 {
		t.Error("the kit passed a 1.0 host whose facet offers 0.3 above the floor")
	}
}
