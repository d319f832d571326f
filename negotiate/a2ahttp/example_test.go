package a2ahttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// A host puts the middleware in front of its A2A JSON-RPC handler. A
// request that names 1.0 is served at 1.0; one that names no version is a
// request for 0.3 (A2A §3.6.2), which this anonymous caller may not have;
// one that names a version the host does not serve is refused with -32009
// on HTTP 200, as A2A clients expect; all are recorded.
func ExampleMiddleware() {
	set := facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	store := &negotiatetest.Recorder{} // a host passes its event store
	m, err := a2ahttp.New(n, a2ahttp.Options{
		Sink: store,
		// The host's own authentication; no token, no Subject.
		Subject: func(r *http.Request) *negotiate.Subject { return nil },
	})
	if err != nil {
		panic(err)
	}
	a2a := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := a2ahttp.Version(r.Context())
		fmt.Fprintf(w, "served at %s", v)
	}))

	for _, version := range []string{"1.0", "", "9.9"} {
		r := httptest.NewRequest("POST", "/a2a", strings.NewReader(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t-1"},"id":"req-1"}`))
		if version != "" {
			r.Header.Set("A2A-Version", version)
		}
		w := httptest.NewRecorder()
		a2a.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("A2A-Version"), w.Body)
	}
	for _, e := range store.Events() {
		p := e.Payload
		fmt.Println("host event:", e.RunID == "", p.Outcome, p.Version, p.Requested, p.Reason)
	}
	// Output:
	// 200 1.0 served at 1.0
	// 200 1.0 {"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"A2A-Version (none, which A2A reads as 0.3) is below the preferred version 1.0 and is served only to an authenticated caller; this interface serves 1.0","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0"}}]}}
	// 200 1.0 {"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"A2A-Version \"9.9\" is not served; this interface serves 1.0","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0"}}]}}
	// host event: true accepted 1.0 1.0 ok
	// host event: true refused  0.3 unauthenticated
	// host event: true refused  9.9 unsupported
}

// A host resolves the caller's Subject from its own credentials: here a
// bearer token looked up in the host's token table. The Subject must be
// valid against the v2 Subject schema (a subjectId has no '/', a tenant is
// A-Z a-z 0-9 . _ ~ -); an invalid one is logged and read as no Subject,
// or, with StrictSubject, refused. A request without A2A-Version is a
// request for 0.3, which only the authenticated caller gets.
func ExampleOptions_bearerToken() {
	tokens := map[string]string{"s3cr3t": "peer-agent", "typo": "agents/7"} // the host's token table
	subject := func(r *http.Request) *negotiate.Subject {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		id, known := tokens[token]
		if !ok || !known {
			return nil // no credential: unauthenticated
		}
		return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: id, Tenant: "acme",
			Lane: policy.LaneAPIKey, Kind: policy.KindAgent}
	}

	set := facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	m, err := a2ahttp.New(n, a2ahttp.Options{
		Sink:     &negotiatetest.Recorder{},
		Subject:  subject,
		ErrorLog: slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})),
	})
	if err != nil {
		panic(err)
	}
	a2a := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := a2ahttp.Version(r.Context())
		fmt.Fprintf(w, "served at %s", v)
	}))
	for _, token := range []string{"s3cr3t", "", "typo"} {
		r := httptest.NewRequest("POST", "/a2a", strings.NewReader(`{"jsonrpc":"2.0","method":"message/send","id":1}`))
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		a2a.ServeHTTP(w, r)
		var refusal struct{ Error struct{ Code int } }
		if json.Unmarshal(w.Body.Bytes(), &refusal) == nil {
			fmt.Println(w.Header().Get("A2A-Version"), "refused", refusal.Error.Code)
			continue
		}
		fmt.Println(w.Header().Get("A2A-Version"), w.Body)
	}
	// Output:
	// 0.3 served at 0.3
	// 1.0 refused -32009
	// level=ERROR msg="wopneg: invalid Subject: subject.subjectId: \"agents/7\" contains whitespace or '/'" refused=false
	// 1.0 refused -32009
}

// A host calling a peer negotiates first, then sends every call through a
// Transport that stamps the negotiated version. Here the peer's card offers
// 0.3 and 1.0, and the host, which prefers 1.0, settles on 1.0.
func ExampleNegotiate() {
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			io.WriteString(w, `{"name":"peer","supportedInterfaces":[
				{"url":"http://peer/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
				{"url":"http://peer/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`)
			return
		}
		fmt.Fprintf(w, "the peer saw A2A-Version %s", r.Header.Get("A2A-Version"))
	}))
	defer peer.Close()

	set := facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01",
	}}
	n, err := negotiate.Compile(set, policy.Policy{})
	if err != nil {
		panic(err)
	}
	o, offers, err := a2ahttp.Negotiate(context.Background(), n, peer.URL, a2ahttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, Client: peer.Client()})
	if err != nil {
		panic(err)
	}
	fmt.Println("offers", offers, "settled on", o.Version)

	stamped, err := a2ahttp.NewTransport(o, peer.Client().Transport)
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: stamped}
	resp, err := client.Post(peer.URL+"/a2a", "application/json", strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))

	// A request at another version is never sent.
	req, _ := http.NewRequest("POST", peer.URL+"/a2a", strings.NewReader(`{}`))
	req.Header.Set("A2A-Version", "0.3")
	_, err = client.Do(req)
	fmt.Println(errors.Is(err, a2ahttp.ErrVersionConflict), strings.TrimPrefix(err.Error(), "Post \""+peer.URL+"/a2a\": "))
	// Output:
	// offers [1.0 0.3] settled on 1.0
	// the peer saw A2A-Version 1.0
	// true a2ahttp: the request names A2A-Version "0.3", but 1.0 was negotiated with this peer; nothing was sent
}

// Adoption in plain net/http: New and Wrap in front of the host's A2A
// handler (a2a-go's a2asrv JSON-RPC handler in a real host), the card path
// beside it. The zero Options but Sink is the reference behaviour: every
// caller is unauthenticated, so it is never served below the preferred
// version. Wrap has the shape of any router's middleware (chi's r.Use(m.Wrap)).
func ExampleMiddleware_Wrap() {
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	a2aHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := a2ahttp.Version(r.Context())
		fmt.Fprintf(w, "served at %s", v)
	})

	// The wiring: five lines.
	m, err := a2ahttp.New(n, a2ahttp.Options{Sink: &negotiatetest.Recorder{}}) // a host passes its event store
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/a2a", m.Wrap(a2aHandler))

	r := httptest.NewRequest("POST", "/a2a", strings.NewReader(`{"jsonrpc":"2.0","method":"GetTask","id":1}`))
	r.Header.Set("A2A-Version", "1.0")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body)
	// Output:
	// 200 served at 1.0
}

// A host checks its A2A handler when it starts: this one dispatches on
// the decided version and has no handler for 1.0, the preferred one, so
// the check says so before any client arrives.
func ExampleMiddleware_Check() {
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{
		Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3",
	}}, policy.Policy{})
	if err != nil {
		panic(err)
	}
	m, err := a2ahttp.New(n, a2ahttp.Options{Sink: &negotiatetest.Recorder{}})
	if err != nil {
		panic(err)
	}
	only03 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := a2ahttp.Version(r.Context()); v != "0.3" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32009,"message":"version not supported"}}`)
		}
	})
	if err := m.Check(context.Background(), only03); err != nil {
		fmt.Println(strings.ReplaceAll(err.Error(), "; ", ";\n"))
	}
	// Output:
	// a2ahttp: the server does not serve the preferred version 1.0 the a2a facet advertises: its GetTask at A2A-Version 1.0 was refused as VersionNotSupported;
	// serve 1.0 there (a host that serves several versions dispatches on a2ahttp.Version), or advertise only the versions the server serves
}
