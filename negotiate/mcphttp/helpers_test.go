package mcphttp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// now is the clock every decision in these tests is stamped with.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// wideFacets is the example host's pair: the floor below preferred, and
// preferred a stateless revision.
func wideFacets() facets.Set {
	return facets.Set{MCP: &facets.MCP{
		Revisions:        []string{"2025-06-18", "2025-11-25", "2026-07-28"},
		PreferredVersion: "2026-07-28",
		MinimumRevision:  "2025-11-25",
		RefreshedAt:      "2026-11-01",
	}}
}

// legacyFacets prefers a handshake revision, so initialize can be
// counter-offered.
func legacyFacets() facets.Set {
	return facets.Set{MCP: &facets.MCP{
		Revisions:        []string{"2025-03-26", "2025-06-18", "2025-11-25"},
		PreferredVersion: "2025-11-25",
		MinimumRevision:  "2025-06-18",
		RefreshedAt:      "2026-11-01",
	}}
}

func compile(t testing.TB, s facets.Set, p policy.Policy) *negotiate.Negotiator {
	t.Helper()
	if p.Now == nil {
		p.Now = func() time.Time { return now }
	}
	n, err := negotiate.Compile(s, p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// user is an authenticated caller; the fake auth layer sets it for
// requests carrying "Authorization: Bearer user".
var user = &negotiate.Subject{
	Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme",
	Lane: policy.LaneOIDC, Kind: policy.KindUser,
}

var other = &negotiate.Subject{
	Issuer: "https://idp.example", SubjectID: "u-43", Tenant: "acme",
	Lane: policy.LaneOIDC, Kind: policy.KindUser,
}

func subjectOf(r *http.Request) *negotiate.Subject {
	switch r.Header.Get("Authorization") {
	case "Bearer user":
		return user
	case "Bearer other":
		return other
	}
	return nil
}

// fakeServer is an MCP server for the middleware to wrap: it keeps every
// request it is given, answers initialize as the go-sdk and mcp-go servers
// do (the client's revision when it serves it, else its newest handshake
// revision), hands out a session id when stateful, and answers anything
// else with an empty result.
type fakeServer struct {
	revisions []string
	stateful  bool

	mu       sync.Mutex
	bodies   [][]byte
	outcomes []negotiate.Outcome
	next     int
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o, _ := mcphttp.Outcome(r.Context())
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.outcomes = append(f.outcomes, o)
	f.mu.Unlock()
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	result := map[string]any{}
	if msg.Method == "initialize" {
		v := msg.Params.ProtocolVersion
		if !slices.Contains(f.revisions, v) || v >= mcphttp.StatelessRevision {
			// Both SDK servers answer with their newest handshake revision.
			v = ""
			for _, r := range f.revisions {
				if r < mcphttp.StatelessRevision && r > v {
					v = r
				}
			}
		}
		result["protocolVersion"] = v
		if f.stateful {
			f.mu.Lock()
			f.next++
			sid := "session-" + string(rune('a'+f.next-1))
			f.mu.Unlock()
			w.Header().Set(mcphttp.HeaderSessionID, sid)
		}
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
}

func (f *fakeServer) received() ([][]byte, []negotiate.Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bodies), slices.Clone(f.outcomes)
}

// rig is a middleware over a fake server, with the recorder its events go
// to.
type rig struct {
	h      *mcphttp.Handler
	server *fakeServer
	events *negotiatetest.Recorder
}

func newRig(t testing.TB, s facets.Set, p policy.Policy, stateful bool, mutate func(*mcphttp.Options)) *rig {
	t.Helper()
	adv, _ := s.Lookup(facets.ProtocolMCP)
	r := &rig{server: &fakeServer{revisions: adv.Versions, stateful: stateful}, events: &negotiatetest.Recorder{}}
	opts := mcphttp.Options{Sink: r.events, Subject: subjectOf}
	if mutate != nil {
		mutate(&opts)
	}
	m, err := mcphttp.New(compile(t, s, p), opts)
	if err != nil {
		t.Fatal(err)
	}
	r.h = m.Wrap(r.server)
	return r
}

// call is one request through the rig.
type call struct {
	method  string // HTTP method; POST when empty
	body    string
	headers map[string]string
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (r *rig) do(c call) answer {
	m := c.method
	if m == "" {
		m = http.MethodPost
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req := httptest.NewRequest(m, "http://127.0.0.1/mcp", body)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return answer{w.Code, w.Header(), w.Body.String()}
}

// hdr builds a header map from pairs.
func hdr(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// stateless returns the headers and body of a 2026-07-28-era tools/list at
// header revision h and _meta revision meta.
func stateless(h, meta string) call {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + meta + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	return call{body: body, headers: hdr(mcphttp.HeaderProtocolVersion, h, mcphttp.HeaderMethod, "tools/list")}
}

func initialize(rev string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
}

// payloads returns the payloads of the recorded events, checking that each
// is a durable host event.
func payloads(t *testing.T, r *negotiatetest.Recorder) []events.NegotiationDecided {
	t.Helper()
	var out []events.NegotiationDecided
	for _, e := range r.Events() {
		if e.RunID != "" {
			t.Errorf("event %s is not a host event", e.ID)
		}
		out = append(out, e.Payload)
	}
	return out
}

// compact re-encodes JSON without spaces so bodies compare exactly.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("%v: %q", err, s)
	}
	return b.String()
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// refusedUnsupported is the record of a request refused at revision rev of
// the wide facet for something other than the decision, such as a header
// that disagrees with the body.
func refusedUnsupported(rev string) *events.NegotiationDecided {
	return &events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: rev, Reason: "unsupported", Floor: "2025-11-25", At: now}
}
