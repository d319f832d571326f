package seams_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mrtr"
	"github.com/wopneg/wopneg/negotiate/seams"
	"github.com/wopneg/wopneg/policy"
)

// now is the clock of every decision in these tests.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// testFacets is a host whose floors lie below its preferred versions. A2A
// 1.1 is hypothetical: no A2A 1.1 exists; it is here so that the A2A
// downgrade rules have a version between the floor and preferred.
func testFacets() facets.Set {
	return facets.Set{
		A2A: &facets.A2A{Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.1", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"},
		MCP: &facets.MCP{
			Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25",
			RefreshedAt: "2026-11-01", MRTR: &facets.MRTR{MaxRounds: 2},
		},
	}
}

// The callers: two tenants, and the tokens that name them.
var (
	acme  = negotiate.Subject{Issuer: "urn:test:idp", SubjectID: "alice", Tenant: "acme", Lane: policy.LaneAPIKey, Kind: policy.KindUser}
	umbra = negotiate.Subject{Issuer: "urn:test:idp", SubjectID: "bob", Tenant: "umbra", Lane: policy.LaneAPIKey, Kind: policy.KindUser}
)

func subjectOf(r *http.Request) *negotiate.Subject {
	switch r.Header.Get("Authorization") {
	case "Bearer acme":
		s := acme
		return &s
	case "Bearer umbra":
		s := umbra
		return &s
	}
	return nil
}

// rig is a host with the seams and the event log mounted.
type rig struct {
	srv     *httptest.Server
	log     events.Log
	emitted atomic.Int64 // the events the seams recorded
}

func newRig(t testing.TB, set facets.Set) *rig {
	t.Helper()
	return newRigWith(t, set, func(*seams.Handler) {})
}

// newRigWith is newRig with the Handler as edit leaves it.
func newRigWith(t testing.TB, set facets.Set, edit func(*seams.Handler)) *rig {
	t.Helper()
	n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	log := events.NewMemoryLog(0, 0)
	r := &rig{log: log}
	h := &seams.Handler{Negotiator: n, Subject: subjectOf, AllowLoopback: true, Sink: events.SinkFunc(func(ctx context.Context, e events.Event) error {
		r.emitted.Add(1)
		return log.Emit(ctx, e)
	})}
	edit(h)
	mux := http.NewServeMux()
	mux.Handle(seams.Prefix+"/", h)
	lh := &events.LogHandler{Log: log, Subject: subjectOf}
	mux.Handle("/runs/", lh)
	mux.Handle("/host/events", lh)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// call POSTs body to the seam of proto as token, and returns the status
// and the decoded answer.
func (r *rig) call(t *testing.T, proto, token string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	return r.do(t, http.MethodPost, seams.Prefix+"/sample/"+proto+"/invoke", token, raw)
}

func (r *rig) do(t *testing.T, method, path, token string, raw []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, r.srv.URL+path, bytes.NewReader(raw))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %q", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, out
}

// runOf is the run id an answer names, at the top or in details.
func runOf(body map[string]any) string {
	if id, ok := body["runId"].(string); ok {
		return id
	}
	d, _ := body["details"].(map[string]any)
	id, _ := d["runId"].(string)
	return id
}

// lastEvent polls the run as token and returns its last event's payload.
func (r *rig) lastEvent(t *testing.T, runID, token string) map[string]any {
	t.Helper()
	status, body := r.do(t, http.MethodGet, "/runs/"+runID+"/events/poll", token, nil)
	if status != http.StatusOK {
		t.Fatalf("poll %s: %d %v", runID, status, body)
	}
	evs, _ := body["events"].([]any)
	if len(evs) == 0 {
		t.Fatalf("poll %s: no events: %v", runID, body)
	}
	last := evs[len(evs)-1].(map[string]any)
	return last["payload"].(map[string]any)
}

// fakeA2A is an A2A peer that offers versions and records every call.
type fakeA2A struct {
	srv      *httptest.Server
	offers   []string
	answer   string // the result of SendMessage, JSON
	mu       sync.Mutex
	versions []string // A2A-Version of every non-GET call
	methods  []string // and its JSON-RPC method
	seen     []seenRequest
}

// seenRequest is a request a fake peer received.
type seenRequest struct {
	method string
	header http.Header
	body   []byte
}

func newFakeA2A(t testing.TB, offers ...string) *fakeA2A {
	t.Helper()
	f := &fakeA2A{offers: offers, answer: `{"kind":"message","role":"agent","parts":[{"text":"pong"}]}`}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeA2A) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		f.mu.Lock()
		f.seen = append(f.seen, seenRequest{r.Method, r.Header.Clone(), nil})
		f.mu.Unlock()
		var ifaces []map[string]string
		for _, v := range f.offers {
			ifaces = append(ifaces, map[string]string{"url": f.srv.URL + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"name": "fake", "supportedInterfaces": ifaces})
		return
	}
	v := r.Header.Get("A2A-Version")
	var msg struct {
		Method string `json:"method"`
	}
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &msg)
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{r.Method, r.Header.Clone(), raw})
	f.versions = append(f.versions, v)
	f.methods = append(f.methods, msg.Method)
	answer := f.answer
	f.mu.Unlock()
	if !slices.Contains(f.offers, v) {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"version not supported"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":`+answer+`}`)
}

func (f *fakeA2A) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.versions)
}

// fakeMCP is an MCP server that offers revisions, records every call,
// and serves echo and needs_input_loop (arguments.rounds input_required
// rounds, each state sealed and single use).
type fakeMCP struct {
	srv    *httptest.Server
	offers []string
	sealer *mrtr.Sealer
	sse    bool
	notify bool // a notification event comes before a stream's response
	mu     sync.Mutex
	calls  []mcpCall
	seen   []seenRequest
}

type mcpCall struct {
	method, header, meta string
	state                string
	body                 []byte
	id                   string
	responses            map[string]any
}

func newFakeMCP(t testing.TB, offers ...string) *fakeMCP {
	t.Helper()
	s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{{ID: "k", Secret: bytes.Repeat([]byte{7}, 32)}}, MaxRounds: 16})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeMCP{offers: offers, sealer: s}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeMCP) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		Params struct {
			Name           string         `json:"name"`
			Arguments      map[string]any `json:"arguments"`
			Meta           map[string]any `json:"_meta"`
			RequestState   string         `json:"requestState"`
			InputResponses map[string]any `json:"inputResponses"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &msg)
	meta, _ := msg.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	header := r.Header.Get("MCP-Protocol-Version")
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{r.Method, r.Header.Clone(), raw})
	f.calls = append(f.calls, mcpCall{method: msg.Method, header: header, meta: meta, state: msg.Params.RequestState, body: raw, id: fmt.Sprint(msg.ID), responses: msg.Params.InputResponses})
	f.mu.Unlock()
	id, _ := json.Marshal(msg.ID)
	reply := func(status int, member string) {
		body := `{"jsonrpc":"2.0","id":` + string(id) + `,` + member + `}`
		if f.sse {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(status)
			if f.notify {
				_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`+"\n\n")
			}
			_, _ = io.WriteString(w, ": hello\n\nevent: message\ndata: "+body+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
	supported, _ := json.Marshal(f.offers)
	if !slices.Contains(f.offers, header) {
		reply(http.StatusBadRequest, `"error":{"code":-32022,"message":"unsupported","data":{"supported":`+string(supported)+`,"requested":"`+header+`"}}`)
		return
	}
	if msg.Method == "server/discover" {
		reply(http.StatusOK, `"result":{"supportedVersions":`+string(supported)+`}`)
		return
	}
	if msg.Params.Name != "needs_input_loop" {
		reply(http.StatusOK, `"result":{"resultType":"complete","content":[{"type":"text","text":"ping"}],"claims":{"approved":true,"scopes":["admin"]}}`)
		return
	}
	want, _ := msg.Params.Arguments["rounds"].(float64)
	if stateless, _ := msg.Params.Arguments["stateless"].(bool); stateless {
		if msg.Params.InputResponses != nil {
			reply(http.StatusOK, `"result":{"resultType":"complete","content":[]}`)
			return
		}
		reply(http.StatusOK, `"result":{"resultType":"input_required","inputRequests":{"a":{},"b":{}}}`)
		return
	}
	round := 1
	if msg.Params.RequestState != "" {
		c, err := f.sealer.Open(context.Background(), msg.Params.RequestState, f.binding())
		if err != nil {
			reply(http.StatusOK, `"error":{"code":-32602,"message":"bad requestState"}`)
			return
		}
		round = c.Round + 1
	}
	if round > int(want) {
		reply(http.StatusOK, `"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
		return
	}
	state, err := f.sealer.Seal(f.binding(), round)
	if err != nil {
		reply(http.StatusOK, `"error":{"code":-32603,"message":"`+err.Error()+`"}`)
		return
	}
	reply(http.StatusOK, `"result":{"resultType":"input_required","inputRequests":{"name-`+strconv.Itoa(round)+`":{"method":"elicitation/create"}},"requestState":"`+state+`"}`)
}

func (f *fakeMCP) binding() mrtr.Binding {
	return mrtr.Binding{Tenant: "fake", Principal: "seams", RunID: "fake/0123456789abcdef", InterruptID: "i", RequestDigest: "d"}
}

func (f *fakeMCP) log() []mcpCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// countOf is how many calls of method the server saw.
func countOf(calls []mcpCall, method string) int {
	n := 0
	for _, c := range calls {
		if c.method == method {
			n++
		}
	}
	return n
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

// closedSink records nothing.
type closedSink struct{}

func (closedSink) Emit(context.Context, events.Event) error { return events.ErrClosed }
