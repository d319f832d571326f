package conform

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mrtr"
	"github.com/wopneg/wopneg/policy"
)

// defect is the one thing a test host does wrong on purpose.
type defect int

const (
	correct defect = iota
	noFloorCheck
	unauthDowngrade
	noEvent
	peerInClear
	roundsPlusOne
	transportsAdvertised
	staleRefresh
	noSeams
	// Shapes that leave rows unwitnessable, or read another way.
	seamsAbsent
	noRunID
	pollBroken
	noContact
	denyDowngrade
	hostEventsJSON
	hostEventsMissing
	noInboundURLs
	chattyStream
)

func (d defect) String() string {
	return [...]string{"correct", "no floor check", "unauthenticated downgrade allowed", "no event recorded",
		"peer host in clear", "round maxRounds+1 let through", "supportedTransports advertised",
		"stale refreshedAt", "no seams profile", "seams absent", "no runId", "poll broken", "no contact",
		"deny downgrade", "host events as JSON", "host events missing", "no inbound URLs",
		"chatty event stream"}[d]
}

// hostShape is what a test host offers.
type hostShape struct {
	a2a       []string // versions, floor first, preferred last
	mcp       []string // revisions, floor first, preferred last
	maxRounds int
}

// wide offers a floor below preferred on both protocols: A2A 1.1 is
// HYPOTHETICAL — no such A2A release exists; it is here only to show the
// A2A §D.1 legs can pass when a second non-legacy release exists.
var wide = hostShape{a2a: []string{"1.0", "1.1"}, mcp: []string{"2025-11-25", "2026-07-28"}, maxRounds: 3}

// examplesShape is examples/host's: A2A 1.0 only, MCP floor below preferred.
var examplesShape = hostShape{a2a: []string{"1.0"}, mcp: []string{"2025-11-25", "2026-07-28"}, maxRounds: 4}

// tokens are the bearer tokens the test hosts know, and their tenants.
var tokens = map[string]string{"tok-acme": "acme", "tok-globex": "globex"}

// testHost implements the wire contract wopneg conform reads — discovery,
// the §22/§23 invoke seams, the run event poll, /host/events, inbound A2A
// and MCP — with the module's decision (negotiate.Negotiator), peer digest,
// event envelopes, card reader and round counter, and at most one defect.
type testHost struct {
	t      testing.TB
	shape  hostShape
	defect defect
	neg    *negotiate.Negotiator
	srv    *httptest.Server
	now    time.Time

	mu   sync.Mutex
	runs map[string][]map[string]any
	subs map[chan []byte]string
	// hostLog keeps each tenant's host events, for hostEventsJSON.
	hostLog map[string][]json.RawMessage
}

func newTestHost(t testing.TB, shape hostShape, d defect) *testHost {
	t.Helper()
	h := &testHost{t: t, shape: shape, defect: d, now: docNow, runs: map[string][]map[string]any{}, subs: map[chan []byte]string{}, hostLog: map[string][]json.RawMessage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openwop", h.discovery)
	mux.HandleFunc("POST /conformance/seams/sample/a2a/invoke", h.a2aInvoke)
	mux.HandleFunc("POST /conformance/seams/sample/mcp/invoke", h.mcpInvoke)
	mux.HandleFunc("GET /runs/{runId}/events/poll", h.poll)
	mux.HandleFunc("GET /host/events", h.hostEvents)
	mux.HandleFunc("GET /.well-known/agent-card.json", h.card)
	mux.HandleFunc("POST /a2a/jsonrpc", h.a2aInbound)
	mux.HandleFunc("POST /mcp", h.mcpInbound)
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	n, err := negotiate.Compile(h.facets(), policy.Policy{DenyDowngrade: d == denyDowngrade})
	if err != nil {
		t.Fatal(err)
	}
	h.neg = n
	return h
}

// clock is the test host's clock, for Options.Now: the runner judges the
// refresh SLA by the clock the host dated its facets with, never by the
// day the test runs.
func (h *testHost) clock() time.Time { return h.now }

func (h *testHost) facets() facets.Set {
	rec := facets.Record{Status: "experimental", Since: "2.0", Until: "2.1", Witness: "seam-gated"}
	refreshed := h.now.Format(time.DateOnly)
	if h.defect == staleRefresh {
		refreshed = h.now.AddDate(0, 0, -120).Format(time.DateOnly)
	}
	a, m := h.shape.a2a, h.shape.mcp
	var mrtr *facets.MRTR
	if h.shape.maxRounds > 0 {
		mrtr = &facets.MRTR{MaxRounds: h.shape.maxRounds}
	}
	set := facets.Set{
		A2A: &facets.A2A{Versions: a, PreferredVersion: a[len(a)-1], MinimumVersion: a[0], RefreshedAt: refreshed,
			Profiles: []string{"a2a-" + a[0]}, AgentCardURL: h.srv.URL + cardPath, Record: rec},
		MCP: &facets.MCP{Revisions: m, PreferredVersion: m[len(m)-1], MinimumRevision: m[0], RefreshedAt: refreshed,
			Profiles: []string{"mcp-" + m[len(m)-1]}, ServerURLs: []string{h.srv.URL + "/mcp"}, MRTR: mrtr, Record: rec},
	}
	if h.defect == noInboundURLs {
		set.A2A.AgentCardURL, set.MCP.ServerURLs = "", nil
		set.MCP.ServerMount = &facets.ServerMount{Transports: []string{"streamable-http"}}
	}
	return set
}

func (h *testHost) discovery(w http.ResponseWriter, _ *http.Request) {
	doc := map[string]any{"protocolVersions": []string{"2.0"}, "preferredVersion": "2.0",
		"hostEvents": map[string]any{"types": []any{map[string]any{"type": "negotiation.decided", "delivery": "durable"}}}}
	if h.defect != noSeams {
		doc["conformance"] = map[string]any{"seamsProfile": seamsProfile}
	}
	if h.defect == transportsAdvertised {
		doc["supportedTransports"] = []string{"http", "grpc"}
	}
	set := h.facets()
	doc["a2a"], doc["mcp"] = set.A2A, set.MCP
	writeJSON(w, http.StatusOK, doc)
}

// tenant is the tenant of the caller's bearer token, "" for none.
func tenant(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tokens[tok]
}

func subjectOf(ten string) *negotiate.Subject {
	return &negotiate.Subject{Issuer: "urn:conform-test:host", SubjectID: "interop", Tenant: ten, Lane: "workload", Kind: "workload"}
}

// decision is what the test host decided: the version, or the refusal.
type decision struct {
	version string
	refusal *wperrors.Error
}

func (d decision) ok() bool { return d.refusal == nil }

// decide is the module's decision, with the host's defect applied.
func (h *testHost) decide(subj *negotiate.Subject, offer negotiate.Offer) (decision, events.NegotiationDecided) {
	if h.defect == unauthDowngrade && subj == nil {
		subj = subjectOf("acme")
	}
	o, p := h.neg.Decide(subj, offer)
	d := decision{version: o.Version}
	if o.Err() != nil {
		d.refusal = o.Error
		if d.refusal == nil {
			d.refusal = wperrors.New(wperrors.InteropVersionUnsupported, "refused")
		}
	}
	if h.defect == noFloorCheck && p.Reason == "below-floor" && len(offer.PeerVersions) > 0 {
		d = decision{version: slices.Max(offer.PeerVersions)}
		p.Outcome, p.Version, p.Reason = "accepted", d.version, "ok"
	}
	return d, p
}

// openRun opens the audit run of one seam exchange in the caller's tenant.
func (h *testHost) openRun(r *http.Request) string {
	id := tenant(r) + "/" + randomID()
	h.mu.Lock()
	h.runs[id] = []map[string]any{}
	h.mu.Unlock()
	return id
}

// record puts p on run runID (or, with runID "", publishes it to the
// subscribers of tenant ten as a host event). The envelope is written here,
// as the v2 schemas have it, so that a defect can alter it.
func (h *testHost) record(runID, ten string, p events.NegotiationDecided, peer string) {
	if h.defect == noEvent {
		return
	}
	data, err := json.Marshal(p)
	if err != nil {
		h.t.Error(err)
		return
	}
	var payload map[string]any
	_ = json.Unmarshal(data, &payload)
	env := map[string]any{"eventId": randomID(), "type": "negotiation.decided", "timestamp": p.At.UTC().Format(time.RFC3339Nano), "payload": payload}
	h.mu.Lock()
	defer h.mu.Unlock()
	if runID == "" {
		env["delivery"] = "durable"
		data, _ := json.Marshal(env)
		if ten != "" {
			h.hostLog[ten] = append(h.hostLog[ten], data)
		}
		for ch, t := range h.subs {
			if t == ten && ten != "" {
				select {
				case ch <- data:
				default:
				}
			}
		}
		return
	}
	env["runId"], env["sequence"], env["schemaVersion"] = runID, len(h.runs[runID]), 1
	if h.defect == peerInClear {
		origin, _ := events.Origin(peer)
		payload["peerDigest"] = origin
	}
	h.runs[runID] = append(h.runs[runID], env)
}

// randomID is an event or run id: 26 characters of base32.
func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}

func (h *testHost) poll(w http.ResponseWriter, r *http.Request) {
	if h.defect == pollBroken {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "internal_error", "message": "broken"})
		return
	}
	id := r.PathValue("runId")
	ten, _, _ := strings.Cut(id, "/")
	h.mu.Lock()
	evs, ok := h.runs[id]
	h.mu.Unlock()
	if !ok || ten != tenant(r) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": "no such run"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs})
}

func (h *testHost) hostEvents(w http.ResponseWriter, r *http.Request) {
	ten := tenant(r)
	if ten == "" || h.defect == hostEventsMissing {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if h.defect == hostEventsJSON {
		h.mu.Lock()
		evs := h.hostLog[ten]
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"events": evs})
		return
	}
	ch := make(chan []byte, 16)
	h.mu.Lock()
	h.subs[ch] = ten
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	for {
		select {
		case data := <-ch:
			if h.defect == chattyStream {
				writeDecoys(w, data)
			}
			fmt.Fprintf(w, "event: negotiation.decided\ndata: %s\n\n", data)
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// writeDecoys writes, before the host event data, what a busy stream
// carries besides it: a frame of another type that is no JSON, and a valid
// negotiation.decided host event of another exchange, one that requested
// another version, which the runner must not take for the one it watches.
func writeDecoys(w io.Writer, data []byte) {
	fmt.Fprint(w, "event: heartbeat\ndata: not json\n\n")
	var env map[string]any
	_ = json.Unmarshal(data, &env)
	payload := env["payload"].(map[string]any)
	env["eventId"], payload["requested"] = randomID(), map[string]any{"a2a": "0.0", "mcp": "2000-01-01"}[payload["protocol"].(string)]
	decoy, _ := json.Marshal(env)
	fmt.Fprintf(w, "event: negotiation.decided\ndata: %s\n\n", decoy)
}

// refuse answers a refused outcome with the v2 envelope naming the run.
func refuse(w http.ResponseWriter, err *wperrors.Error, runID string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(err.Code.HTTPStatus())
	if runID != "" {
		err = err.WithDetail("runId", runID)
	}
	_ = json.NewEncoder(w).Encode(err)
}

// lazy answers for the noContact and noRunID hosts: a refusal below the
// floor, recorded, without asking the peer anything, and a refusal that
// names no run. It reports whether it answered.
func (h *testHost) lazy(w http.ResponseWriter, r *http.Request, p facets.Protocol) bool {
	if h.defect != noContact && h.defect != noRunID {
		return false
	}
	d, pl := h.decide(nil, negotiate.Offer{Protocol: p, Peer: "http://peer.invalid", PeerVersions: nil})
	runID := h.openRun(r)
	h.record(runID, "", pl, "http://peer.invalid")
	if h.defect == noRunID {
		runID = ""
	}
	refuse(w, d.refusal, runID)
	return true
}

// peerPost sends one JSON request to a fake peer and reads its answer.
func peerPost(ctx context.Context, url string, h http.Header, body any) (int, map[string]any, error) {
	var rd io.Reader = http.NoBody
	method := http.MethodGet
	if body != nil {
		data, _ := json.Marshal(body)
		rd, method = bytes.NewReader(data), http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var m map[string]any
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	_ = json.Unmarshal(data, &m)
	return res.StatusCode, m, nil
}

type seamRequest struct {
	PeerURL            string         `json:"peerUrl"`
	ServerURL          string         `json:"serverUrl"`
	Authenticated      *bool          `json:"authenticated"`
	PeerOffersOnly     string         `json:"peerOffersOnly"`
	RequestVersion     string         `json:"requestVersion"`
	Tool               string         `json:"tool"`
	Arguments          map[string]any `json:"arguments"`
	ClientCapabilities map[string]any `json:"clientCapabilities"`
	ElicitationAnswer  map[string]any `json:"elicitationAnswer"`
}

func (h *testHost) seamRequest(w http.ResponseWriter, r *http.Request) (seamRequest, *negotiate.Subject, bool) {
	var req seamRequest
	if h.defect == seamsAbsent || h.defect == noSeams {
		http.NotFound(w, r)
		return req, nil, false
	}
	if tenant(r) == "" {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthenticated", "message": "the seams need an authenticated caller"})
		return req, nil, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "validation_error", "message": err.Error()})
		return req, nil, false
	}
	if req.Authenticated != nil && !*req.Authenticated {
		return req, nil, true
	}
	return req, subjectOf(tenant(r)), true
}

func (h *testHost) a2aInvoke(w http.ResponseWriter, r *http.Request) {
	req, subj, ok := h.seamRequest(w, r)
	if !ok || h.lazy(w, r, facets.ProtocolA2A) {
		return
	}
	pref := h.shape.a2a[len(h.shape.a2a)-1]
	runID := h.openRun(r)
	var offers []string
	if res, err := http.DefaultClient.Do(mustReq(r.Context(), req.PeerURL+cardPath, pref)); err == nil {
		data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		offers = cardOffers(data)
	}
	if req.PeerOffersOnly != "" {
		offers = slices.DeleteFunc(offers, func(v string) bool { return v != req.PeerOffersOnly })
	}
	requested := cmpOr(req.RequestVersion, pref)
	d, p := h.decide(subj, negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: req.PeerURL, Requested: requested, PeerVersions: offers})
	h.record(runID, "", p, req.PeerURL)
	if !d.ok() {
		refuse(w, d.refusal, runID)
		return
	}
	_, result, err := peerPost(r.Context(), req.PeerURL+a2aRPCPath, http.Header{"A2A-Version": {d.version}, "Content-Type": {"application/json"}},
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": map[string]any{"role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}}})
	if err != nil {
		refuse(w, wperrors.New(wperrors.Internal, err.Error()), runID)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"negotiatedVersion": d.version, "protocol": "a2a", "runId": runID, "peerDigest": p.PeerDigest, "result": result})
}

func mustReq(ctx context.Context, url, version string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("A2A-Version", version)
	return req
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mcpHeaders(v, method, name string) http.Header {
	h := http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {method}, "Content-Type": {"application/json"}}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

func (h *testHost) mcpInvoke(w http.ResponseWriter, r *http.Request) {
	req, subj, ok := h.seamRequest(w, r)
	if !ok || h.lazy(w, r, facets.ProtocolMCP) {
		return
	}
	ctx := r.Context()
	pref := h.shape.mcp[len(h.shape.mcp)-1]
	runID := h.openRun(r)
	_, disc, _ := peerPost(ctx, req.ServerURL, mcpHeaders(pref, "server/discover", ""),
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": map[string]any{"_meta": map[string]any{metaVersion: pref}}})
	offers := strs(obj(disc, "result"), "supportedVersions")
	if e := obj(disc, "error"); e != nil {
		offers = strs(obj(e, "data"), "supported")
	}
	d, p := h.decide(subj, negotiate.Offer{Protocol: facets.ProtocolMCP, Peer: req.ServerURL, Requested: cmpOr(req.RequestVersion, pref), PeerVersions: offers})
	h.record(runID, "", p, req.ServerURL)
	if !d.ok() {
		refuse(w, d.refusal, runID)
		return
	}
	tool := cmpOr(req.Tool, "echo")
	args := req.Arguments
	if args == nil {
		args = map[string]any{"text": "conform"}
	}
	max := h.shape.maxRounds
	if h.defect == roundsPlusOne {
		max++
	}
	rounds, err := mrtr.NewGuard(max)
	if err != nil {
		h.t.Error(err)
		return
	}
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{metaVersion: d.version, metaClientCap: cmpMap(req.ClientCapabilities)}}
	for i := 0; i < 20; i++ {
		_, res, err := peerPost(ctx, req.ServerURL, mcpHeaders(d.version, "tools/call", tool), map[string]any{"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": params})
		result := obj(res, "result")
		if err != nil || result == nil {
			refuse(w, wperrors.New(wperrors.Internal, fmt.Sprintf("tools/call failed: %v %v", err, res)), runID)
			return
		}
		if result["resultType"] != "input_required" {
			writeJSON(w, http.StatusOK, map[string]any{"negotiatedVersion": d.version, "protocol": "mcp", "runId": runID, "peerDigest": p.PeerDigest, "result": result})
			return
		}
		if err := rounds.Next(); err != nil {
			var we *wperrors.Error
			if !errors.As(err, &we) {
				h.t.Error(err)
				return
			}
			refuse(w, we, runID)
			return
		}
		responses := map[string]any{}
		for k := range obj(result, "inputRequests") {
			responses[k] = map[string]any{"action": "accept", "content": req.ElicitationAnswer}
		}
		params["requestState"], params["inputResponses"] = result["requestState"], responses
	}
	refuse(w, wperrors.New(wperrors.Internal, "too many rounds"), runID)
}

func cmpMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (h *testHost) card(w http.ResponseWriter, _ *http.Request) {
	ifaces := []any{}
	for _, v := range h.shape.a2a {
		ifaces = append(ifaces, map[string]any{"url": h.srv.URL + a2aRPCPath, "protocolBinding": "JSONRPC", "protocolVersion": v})
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": "test host", "supportedInterfaces": ifaces})
}

// inbound decides and records one inbound request naming v: the peer
// speaks what it names.
func (h *testHost) inbound(r *http.Request, p facets.Protocol, v string) decision {
	ten := tenant(r)
	var subj *negotiate.Subject
	if ten != "" {
		subj = subjectOf(ten)
	}
	d, pl := h.decide(subj, negotiate.Offer{Protocol: p, Requested: v, PeerVersions: []string{v}})
	h.record("", ten, pl, "")
	return d
}

func (h *testHost) a2aInbound(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req)
	v := cmpOr(r.Header.Get("A2A-Version"), a2aLegacy)
	if d := h.inbound(r, facets.ProtocolA2A, v); !d.ok() {
		writeJSON(w, http.StatusOK, rpcError(req.ID, -32009, "A2A-Version "+v+" is not served", nil))
		return
	}
	writeJSON(w, http.StatusOK, rpcError(req.ID, -32001, "task not found", nil))
}

func (h *testHost) mcpInbound(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req)
	v := r.Header.Get("MCP-Protocol-Version")
	if d := h.inbound(r, facets.ProtocolMCP, v); !d.ok() {
		writeJSON(w, http.StatusBadRequest, rpcError(req.ID, -32022, "unsupported protocol version", map[string]any{"supported": h.shape.mcp, "requested": v}))
		return
	}
	writeJSON(w, http.StatusOK, rpcResult(req.ID, map[string]any{"resultType": "complete", "tools": []any{}}))
}

// cardOffers are the versions an agent card offers, as the reference host
// reads them: supportedInterfaces[].protocolVersion, or else the 0.3
// card's protocolVersion cut to major.minor.
func cardOffers(card []byte) []string {
	var c map[string]any
	_ = json.Unmarshal(card, &c)
	var out []string
	ifaces, _ := c["supportedInterfaces"].([]any)
	for _, i := range ifaces {
		if v, ok := str(obj(map[string]any{"i": i}, "i"), "protocolVersion"); ok {
			out = append(out, v)
		}
	}
	if v, ok := str(c, "protocolVersion"); ok && len(out) == 0 {
		major, rest, _ := strings.Cut(v, ".")
		minor, _, _ := strings.Cut(rest, ".")
		out = append(out, major+"."+minor)
	}
	return out
}
