package mcphttp_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
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
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// scripted is a wrapped server that answers every request the same way:
// a status (0 writes none), headers, and the body in chunks, each flushed.
type scripted struct {
	status int
	header map[string]string
	chunks []string
}

func (s scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	if s.status != 0 {
		w.WriteHeader(s.status)
	}
	for _, c := range s.chunks {
		_, _ = io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
}

func discover(rev string) call {
	body := `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	return call{body: body, headers: hdr(mcphttp.HeaderProtocolVersion, rev, mcphttp.HeaderMethod, "server/discover", "Authorization", "Bearer user")}
}

const (
	jsonCT = "application/json"
	sseCT  = "text/event-stream"
	// discoverLegacy is the go-sdk stateful handler's discover result: it
	// lists only the handshake revisions.
	discoverLegacy = `{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2025-06-18","2025-11-25"],"capabilities":{}}}`
	discoverAll    = `{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2025-06-18","2025-11-25","2026-07-28"],"capabilities":{}}}`
	refused32022   = `{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"protocol version \"2026-07-28\" is not supported by this server","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`
)

// TestRecordFollowsServer: an accepted decision is recorded as the wrapped
// server answered it (issue 9 item 2): accepted when the server served the
// revision, refused unsupported when it answered -32022 or a discover or
// initialize result without the revision; and the answer reaches the
// client byte for byte either way.
func TestRecordFollowsServer(t *testing.T) {
	accepted := func(v string) events.NegotiationDecided {
		return events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: v, Requested: v, Reason: events.ReasonOK, Floor: "2025-11-25", At: now}
	}
	refused := func(v string) events.NegotiationDecided {
		return events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: v, Reason: events.ReasonUnsupported, Floor: "2025-11-25", At: now}
	}
	user := hdr("Authorization", "Bearer user")
	tools := stateless("2026-07-28", "2026-07-28")
	tools.headers["Authorization"] = "Bearer user"
	cases := []struct {
		name   string
		req    call
		server scripted
		want   events.NegotiationDecided
	}{
		{"discover lists the revision", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{discoverAll}}, accepted("2026-07-28")},
		{"discover lists it, split in writes", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{discoverAll[:20], discoverAll[20:]}}, accepted("2026-07-28")},
		{"stateful go-sdk discover", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{discoverLegacy}}, refused("2026-07-28")},
		{"stateful go-sdk discover, as events", discover("2026-07-28"), scripted{200, hdr("Content-Type", sseCT), []string{"event: message\ndata: " + discoverLegacy + "\n\n"}}, refused("2026-07-28")},
		{"discover as events, after a notification", discover("2026-07-28"), scripted{200, hdr("Content-Type", sseCT), []string{
			": comment\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\r\n\r\n",
			"data: " + discoverAll[:24], "\ndata: " + discoverAll[24:] + "\r", "\n\r\n",
		}}, accepted("2026-07-28")},
		{"discover as events: an event with bytes after its JSON is no response", discover("2026-07-28"), scripted{200, hdr("Content-Type", sseCT), []string{"data: " + discoverLegacy + " {}\n\n", "data: " + discoverAll + "\n\n"}}, accepted("2026-07-28")},
		{"discover stream ends without a response", discover("2026-07-28"), scripted{200, hdr("Content-Type", sseCT), []string{"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\ndata: " + discoverAll}}, refused("2026-07-28")},
		{"discover answered -32022", discover("2026-07-28"), scripted{400, hdr("Content-Type", jsonCT), []string{refused32022}}, refused("2026-07-28")},
		{"discover answered as text", discover("2026-07-28"), scripted{400, hdr("Content-Type", "text/plain"), []string{"Bad Request: stateless only\n"}}, refused("2026-07-28")},
		{"discover answered with nothing", discover("2026-07-28"), scripted{}, refused("2026-07-28")},
		{"discover answered not JSON", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{"{"}}, refused("2026-07-28")},
		{"discover result beside a Result", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2026-07-28"]},"Result":{}}`}}, refused("2026-07-28")},
		{"discover result beside an Error", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2026-07-28"]},"ERROR":{"code":-32022}}`}}, refused("2026-07-28")},
		{"discover result not an object", discover("2026-07-28"), scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":3,"result":["2026-07-28"]}`}}, refused("2026-07-28")},
		{"tools/list served", tools, scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`}}, accepted("2026-07-28")},
		{"tools/list answered -32022", tools, scripted{400, hdr("Content-Type", jsonCT), []string{refused32022}}, refused("2026-07-28")},
		{"tools/list answered -32022 on 200", tools, scripted{200, hdr("Content-Type", "application/json; charset=utf-8"), []string{refused32022}}, refused("2026-07-28")},
		{"tools/list answered another error", tools, scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`}}, accepted("2026-07-28")},
		{"tools/list answered not JSON", tools, scripted{200, hdr("Content-Type", jsonCT), []string{"]"}}, accepted("2026-07-28")},
		{"tools/list answered as text", tools, scripted{404, hdr("Content-Type", "text/plain"), []string{"not found"}}, accepted("2026-07-28")},
		{"tools/list answered with nothing", tools, scripted{}, accepted("2026-07-28")},
		{"tools/list refused as events", tools, scripted{200, hdr("Content-Type", sseCT), []string{"data: " + refused32022 + "\n\n"}}, refused("2026-07-28")},
		{"tools/list served as events, after a notification", tools, scripted{200, hdr("Content-Type", sseCT), []string{"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"}}, accepted("2026-07-28")},
		{"tools/list stream ends without a response", tools, scripted{200, hdr("Content-Type", sseCT), []string{"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n"}}, accepted("2026-07-28")},
		{"tools/list answered at the answer bound", tools, scripted{200, hdr("Content-Type", jsonCT), []string{pad(`{"jsonrpc":"2.0","id":7,"result":{}}`, 1<<10)}}, accepted("2026-07-28")},
		{"initialize served", call{body: initialize("2025-11-25"), headers: user}, scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`}}, accepted("2025-11-25")},
		{"initialize answered at another revision", call{body: initialize("2025-11-25"), headers: user}, scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`}}, refused("2025-11-25")},
		{"initialize answered at the body bound", call{body: initialize("2025-11-25"), headers: user}, scripted{200, hdr("Content-Type", jsonCT), []string{pad(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, 1<<10)}}, accepted("2025-11-25")},
		{"tools/list refused at the answer bound", tools, scripted{400, hdr("Content-Type", jsonCT), []string{pad(refused32022, 1<<10)}}, refused("2026-07-28")},
		{"initialize answered with nothing", call{body: initialize("2025-11-25"), headers: user}, scripted{}, refused("2025-11-25")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			// A clock a second later at each reading: the record is the
			// one decision made when the request came, at its time, not a
			// second one made when the server answered.
			decisions := 0
			clock := policy.Policy{Now: func() time.Time { decisions++; return now.Add(time.Duration(decisions) * time.Second) }}
			m, err := mcphttp.New(compile(t, wideFacets(), clock), mcphttp.Options{Sink: rec, Subject: subjectOf, MaxAnswerBytes: 1 << 10})
			if err != nil {
				t.Fatal(err)
			}
			decisions = 0 // New read the clock once, for the refresh window
			got := (&rig{h: m.Wrap(c.server)}).do(c.req)
			// The answer is the server's, untouched.
			want := httptest.NewRecorder()
			c.server.ServeHTTP(want, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.req.body)))
			if got.status != want.Code || got.body != want.Body.String() || got.header.Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Errorf("answer %d %q %q, want the server's %d %q %q", got.status, got.header.Get("Content-Type"), got.body, want.Code, want.Header().Get("Content-Type"), want.Body.String())
			}
			ev := payloads(t, rec)
			c.want.At = now.Add(time.Second)
			if len(ev) != 1 || ev[0] != c.want {
				t.Errorf("recorded %+v, want %+v", ev, c.want)
			}
		})
	}
}

// pad fills answer with trailing white space up to n bytes.
func pad(answer string, n int) string { return answer + strings.Repeat(" ", n-len(answer)) }

// TestRecordFollowsServerBatch: a batch (MCP 2025-03-26) is recorded
// refused when the server refused the revision to any of its members.
func TestRecordFollowsServerBatch(t *testing.T) {
	set := facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-03-26", "2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-03-26", RefreshedAt: "2026-11-01",
	}}
	req := call{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-03-26", "Authorization", "Bearer user")}
	for _, c := range []struct {
		answer string
		want   events.NegotiationDecided
	}{
		{`[{"jsonrpc":"2.0","id":1,"result":{}},` + refused32022 + `]`,
			events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-03-26", Reason: events.ReasonUnsupported, Floor: "2025-03-26", At: now}},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
			events.NegotiationDecided{Protocol: "mcp", Outcome: "accepted", Version: "2025-03-26", Requested: "2025-03-26", Reason: events.ReasonOK, Floor: "2025-03-26", At: now}},
	} {
		rec := &negotiatetest.Recorder{}
		m, err := mcphttp.New(compile(t, set, policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
		if err != nil {
			t.Fatal(err)
		}
		got := (&rig{h: m.Wrap(scripted{200, hdr("Content-Type", jsonCT), []string{c.answer}})}).do(req)
		if got.status != 200 || got.body != c.answer {
			t.Errorf("answer %d %s", got.status, got.body)
		}
		if ev := payloads(t, rec); len(ev) != 1 || ev[0] != c.want {
			t.Errorf("recorded %+v, want %+v", ev, c.want)
		}
	}
}

// TestRecordFollowsServerBatchStream: an event stream that answers a
// batch is read until each of its requests has its response, by id: a
// refusal of the second request, after the first one's result, is
// recorded.
func TestRecordFollowsServerBatchStream(t *testing.T) {
	set := facets.Set{MCP: &facets.MCP{
		Revisions: []string{"2025-03-26", "2025-11-25"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-03-26", RefreshedAt: "2026-11-01",
	}}
	req := call{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, headers: hdr(mcphttp.HeaderProtocolVersion, "2025-03-26", "Authorization", "Bearer user")}
	rec := &negotiatetest.Recorder{}
	m, err := mcphttp.New(compile(t, set, policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	answer := []string{"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", "data: " + strings.Replace(refused32022, `"id":7`, `"id":2`, 1) + "\n\n"}
	(&rig{h: m.Wrap(scripted{200, hdr("Content-Type", sseCT), answer})}).do(req)
	want := events.NegotiationDecided{Protocol: "mcp", Outcome: "refused", Requested: "2025-03-26", Reason: events.ReasonUnsupported, Floor: "2025-03-26", At: now}
	if ev := payloads(t, rec); len(ev) != 1 || ev[0] != want {
		t.Errorf("recorded %+v, want %+v", ev, want)
	}
}

// TestRecordFollowsServerAudit: when the record of an answered request
// cannot be written and the policy requires it, the server's answer never
// leaves; the client gets -32603 on 500, and the handler's later writes
// fail.
func TestRecordFollowsServerAudit(t *testing.T) {
	for _, ct := range []string{jsonCT, "text/plain", sseCT} {
		rec := &negotiatetest.Recorder{}
		rec.Fail(errors.New("down"))
		m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{RequireAudit: true}), mcphttp.Options{Sink: rec, Subject: subjectOf})
		if err != nil {
			t.Fatal(err)
		}
		var first, werr error
		h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set(mcphttp.HeaderSessionID, "s-1")
			w.WriteHeader(200)
			w.WriteHeader(201) // superfluous: ignored
			_, first = io.WriteString(w, "data: "+discoverAll+"\n\n")
			w.(http.Flusher).Flush()
			_, werr = io.WriteString(w, "more")
		}))
		a := (&rig{h: h}).do(discover("2026-07-28"))
		want := `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"the negotiation could not be recorded; retry"}}`
		if a.status != 500 || compact(t, a.body) != want || a.header.Get(mcphttp.HeaderSessionID) != "" {
			t.Errorf("%s: %d %v %s", ct, a.status, a.header, a.body)
		}
		// An answer that is not an event stream is read (as JSON, whatever
		// its label) when the handler returns, so its writes succeed.
		if (werr == nil) != (ct != sseCT) {
			t.Errorf("%s: write after the answer was replaced: %v", ct, werr)
		}
		// An event stream is settled by the write that completes its
		// response, which learns that the answer was replaced, as every
		// write after it does.
		if (first == nil) != (ct != sseCT) {
			t.Errorf("%s: the settling write: %v", ct, first)
		}
	}
}

// TestRecordFollowsServerStreams: an answer that is not held streams as
// the server writes it, after its record; a held one is released, with
// the rest of the stream, as soon as it shows the revision.
func TestRecordFollowsServerStreams(t *testing.T) {
	for _, c := range []struct {
		name string
		req  call
		body string
	}{
		{"tools/list", stateless("2026-07-28", "2026-07-28"), `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`},
		{"discover", discover("2026-07-28"), discoverAll},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
			if err != nil {
				t.Fatal(err)
			}
			read := make(chan struct{})
			recorded := make(chan int, 1)
			srv := httptest.NewServer(m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", sseCT)
				w.WriteHeader(200)
				_, _ = io.WriteString(w, "data: "+c.body+"\n\n")
				w.(http.Flusher).Flush()
				http.NewResponseController(w).Flush()
				recorded <- len(rec.Events())
				<-read // the client has the first event while the handler runs
				_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"late\"}\n\n")
			})))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(c.req.body))
			for k, v := range c.req.headers {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "data: "+c.body+"\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			close(read)
			rest, _ := io.ReadAll(br)
			if string(rest) != "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"late\"}\n\n" {
				t.Errorf("rest %q", rest)
			}
			if n := <-recorded; n != 1 {
				t.Errorf("%d events recorded when the first event was flushed, want 1", n)
			}
		})
	}
}

// writerLog is a ResponseWriter that logs the calls made on it, and fails
// its writes when fail is set.
type writerLog struct {
	header http.Header
	calls  []string
	fail   error
}

func (w *writerLog) Header() http.Header { return w.header }
func (w *writerLog) WriteHeader(status int) {
	w.calls = append(w.calls, "WriteHeader "+strconv.Itoa(status))
}
func (w *writerLog) Write(p []byte) (int, error) {
	w.calls = append(w.calls, "Write "+string(p))
	if w.fail != nil {
		return 0, w.fail
	}
	return len(p), nil
}
func (w *writerLog) Flush() { w.calls = append(w.calls, "Flush") }

// TestRecordFollowsServerWriter: informational answers go through before
// the real one, a status written after the answer was released goes
// through for net/http to report, a failure to write the held bytes
// reaches the handler, and http.ResponseController reaches the writer
// underneath.
func TestRecordFollowsServerWriter(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	var werr, ctlErr error
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Content-Type", sseCT)
		w.WriteHeader(200)
		w.(http.Flusher).Flush() // held: nothing to flush yet
		_, werr = io.WriteString(w, "data: "+discoverAll+"\n\n")
		w.WriteHeader(500)
		w.(http.Flusher).Flush()
		ctlErr = http.NewResponseController(w).EnableFullDuplex()
	}))
	c := discover("2026-07-28")
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	down := errors.New("connection reset")
	w := &writerLog{header: http.Header{}, fail: down}
	h.ServeHTTP(w, req)
	if want := []string{"WriteHeader 103", "WriteHeader 200", "Write data: " + discoverAll + "\n\n", "WriteHeader 500", "Flush"}; !slices.Equal(w.calls, want) {
		t.Errorf("calls %q, want %q", w.calls, want)
	}
	if !errors.Is(werr, down) {
		t.Errorf("write: %v, want %v", werr, down)
	}
	if !errors.Is(ctlErr, http.ErrNotSupported) {
		t.Errorf("ResponseController: %v, want it to reach the writer underneath (ErrNotSupported)", ctlErr)
	}
	// A JSON answer is held and written once it shows its verdict, here
	// at the flush that follows it whole; a failure to write it is the
	// handler's to see only if it writes again.
	held := m.Wrap(scripted{200, hdr("Content-Type", jsonCT), []string{discoverAll}})
	w = &writerLog{header: http.Header{}, fail: down}
	req = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	held.ServeHTTP(w, req)
	if want := []string{"WriteHeader 200", "Write " + discoverAll, "Flush"}; !slices.Equal(w.calls, want) {
		t.Errorf("calls %q, want %q", w.calls, want)
	}
	if ev := payloads(t, rec); len(ev) != 2 || ev[0].Outcome != "accepted" || ev[1].Outcome != "accepted" {
		t.Errorf("recorded %+v", ev)
	}
}

func tools() call { return stateless("2026-07-28", "2026-07-28") }

// BenchmarkRecordFollowsServer is the cost of reading the server's answer
// before the record: a discover result and a JSON tools/list answer are
// held and read, an event stream answering tools/list is recorded at its
// head and passes unheld. "alone" is the same server without the
// middleware.
func BenchmarkRecordFollowsServer(b *testing.B) {
	m, err := mcphttp.New(compile(b, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: discard, Subject: subjectOf})
	if err != nil {
		b.Fatal(err)
	}
	toolsJSON := scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`}}
	toolsSSE := scripted{200, hdr("Content-Type", sseCT), []string{"event: message\ndata: " + `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}` + "\n\n"}}
	disc := scripted{200, hdr("Content-Type", jsonCT), []string{discoverAll}}
	for _, bench := range []struct {
		name string
		c    call
		h    http.Handler
	}{
		{"discover/alone", discover("2026-07-28"), disc},
		{"discover", discover("2026-07-28"), m.Wrap(disc)},
		{"tools-json/alone", stateless("2026-07-28", "2026-07-28"), toolsJSON},
		{"tools-json", stateless("2026-07-28", "2026-07-28"), m.Wrap(toolsJSON)},
		{"tools-sse", stateless("2026-07-28", "2026-07-28"), m.Wrap(toolsSSE)},
	} {
		b.Run(bench.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			for k, v := range bench.c.headers {
				req.Header.Set(k, v)
			}
			body := strings.NewReader(bench.c.body)
			w := &flushWriter{nopWriter{h: http.Header{}}}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(bench.c.body)
				req.Body = io.NopCloser(body)
				req.ContentLength = int64(len(bench.c.body))
				bench.h.ServeHTTP(w, req)
				clear(w.h)
			}
		})
	}
}

// flushWriter is a nopWriter that can be flushed, as net/http's can.
type flushWriter struct{ nopWriter }

func (*flushWriter) Flush() {}

// TestRecordFollowsServerEarlyHints: an informational status before the
// answer settles nothing: the answer after it is read as any other.
func TestRecordFollowsServerEarlyHints(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Content-Type", jsonCT)
		_, _ = io.WriteString(w, discoverAll)
	}))
	c := discover("2026-07-28")
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	w := &writerLog{header: http.Header{}}
	h.ServeHTTP(w, req)
	// The handler wrote no final status: the held answer's Write leaves
	// it to the writer underneath (200), as the handler's own Write would.
	if want := []string{"WriteHeader 103", "Write " + discoverAll}; !slices.Equal(w.calls, want) {
		t.Errorf("calls %q, want %q", w.calls, want)
	}
	if ev := payloads(t, rec); len(ev) != 1 || ev[0].Outcome != "accepted" {
		t.Errorf("recorded %+v", ev)
	}
}

// TestAnswerReadAsClientsDo: whatever a JSON-RPC client reads as a refusal
// of the revision is recorded as one (issue 20 item 3), whatever the
// answer's label, however its code is spelled, however long it is within
// the bound; what no client reads as one leaves the acceptance standing.
// The answer reaches the client byte for byte either way.
func TestAnswerReadAsClientsDo(t *testing.T) {
	const refusal = `{"jsonrpc":"2.0","id":7,"error":{"code":%s,"message":"unsupported"}}`
	code := func(spelling string) string { return strings.Replace(refusal, "%s", spelling, 1) }
	event := func(msg string) string { return "event: message\ndata: " + msg + "\n\n" }
	progress := event(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
	for _, c := range []struct {
		name    string
		server  scripted
		refused bool
	}{
		{"no Content-Type", scripted{400, nil, []string{refused32022}}, true},
		{"application/json-rpc", scripted{200, hdr("Content-Type", "application/json-rpc"), []string{refused32022}}, true},
		{"text/plain", scripted{400, hdr("Content-Type", "text/plain"), []string{refused32022}}, true},
		{"application/json, charset and case", scripted{400, hdr("Content-Type", "Application/JSON; charset=utf-8"), []string{refused32022}}, true},
		{"-3.2022e4", scripted{400, hdr("Content-Type", jsonCT), []string{code("-3.2022e4")}}, true},
		{"-3.2022E+4", scripted{400, hdr("Content-Type", jsonCT), []string{code("-3.2022E+4")}}, true},
		{"-32022.0", scripted{400, hdr("Content-Type", jsonCT), []string{code("-32022.0")}}, true},
		{"-320220e-1", scripted{400, hdr("Content-Type", jsonCT), []string{code("-320220e-1")}}, true},
		{"-32021.99999999999999999 (a float64 parser's -32022)", scripted{400, hdr("Content-Type", jsonCT), []string{code("-32021.99999999999999999")}}, true},
		{"padded past 64 KiB with white space", scripted{400, hdr("Content-Type", jsonCT), []string{pad(refused32022, 70<<10)}}, true},
		{"padded past 64 KiB in its message", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"error":{"message":"` + strings.Repeat("x", 70<<10) + `","code":-32022}}`}}, true},
		{"padded past 64 KiB in writes", scripted{400, hdr("Content-Type", jsonCT), []string{strings.Repeat(" ", 40<<10), strings.Repeat(" ", 40<<10), refused32022}}, true},
		{"as an event", scripted{200, hdr("Content-Type", sseCT), []string{event(refused32022)}}, true},
		{"as an event after a notification", scripted{200, hdr("Content-Type", sseCT), []string{progress, event(code("-3.2022e4"))}}, true},
		{"as an event padded past 64 KiB", scripted{200, hdr("Content-Type", sseCT), []string{strings.Repeat(": keep-alive\n", 6<<10), event(refused32022)}}, true},
		{"keys in another case", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"Error":{"CODE":-32022,"message":"x"}}`}}, true},
		{"a repeated code, the refusal last", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"code":-32022,"message":"x"}}`}}, true},
		{"a repeated code, the refusal first", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"code":-32601,"message":"x"}}`}}, true},
		{"a result and an error", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":-32022,"message":"x"}}`}}, true},
		{"served", scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`}}, false},
		{"served, long", scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"result":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}`}}, false},
		{"another error", scripted{400, hdr("Content-Type", jsonCT), []string{code("-32021")}}, false},
		{"the code as a string", scripted{400, hdr("Content-Type", jsonCT), []string{code(`"-32022"`)}}, false},
		{"-32022 in the data, not the code", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x","data":{"code":-32022}}}`}}, false},
		{"an error that is not an object", scripted{400, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"error":-32022}`}}, false},
		{"-32022 in a result", scripted{200, hdr("Content-Type", jsonCT), []string{`{"jsonrpc":"2.0","id":7,"result":{"error":{"code":-32022}}}`}}, false},
		{"followed by more bytes (a streaming decoder reads the first value)", scripted{400, hdr("Content-Type", jsonCT), []string{refused32022 + "}"}}, true},
		{"cut short after its code", scripted{400, hdr("Content-Type", jsonCT), []string{refused32022[:len(refused32022)-2]}}, true},
		{"a batch, one member refused", scripted{200, hdr("Content-Type", jsonCT), []string{`[{"jsonrpc":"2.0","id":6,"result":{}},` + code("-3.2022e4") + `]`}}, true},
		{"a request from the server (not a response) first", scripted{200, hdr("Content-Type", sseCT), []string{event(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`), event(refused32022)}}, true},
		{"served as an event", scripted{200, hdr("Content-Type", sseCT), []string{progress, event(`{"jsonrpc":"2.0","id":7,"result":{}}`)}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
			if err != nil {
				t.Fatal(err)
			}
			got := (&rig{h: m.Wrap(c.server)}).do(tools())
			want := httptest.NewRecorder()
			c.server.ServeHTTP(want, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tools().body)))
			if got.status != want.Code || got.body != want.Body.String() {
				t.Errorf("answer %d %.80q, want the server's %d %.80q", got.status, got.body, want.Code, want.Body.String())
			}
			outcome := "accepted"
			if c.refused {
				outcome = "refused"
			}
			if ev := payloads(t, rec); len(ev) != 1 || ev[0].Outcome != outcome {
				t.Errorf("recorded %+v, want %s", ev, outcome)
			}
		})
	}
}

// TestAnswerPastTheBound: an answer the middleware cannot read within
// Options.MaxAnswerBytes is never recorded as an acceptance it did not
// see: it is recorded refused, and the client gets the middleware's
// -32603 on 502 instead of bytes nobody read, as does the handler's every
// later write.
func TestAnswerPastTheBound(t *testing.T) {
	const bound = 1 << 10
	long := `{"jsonrpc":"2.0","id":7,"result":{"pad":"` + strings.Repeat("x", bound) + `"}}`
	for _, c := range []struct {
		name   string
		req    call
		chunks []string
		ct     string
	}{
		{"a result", tools(), []string{long}, jsonCT},
		{"a result in small writes", tools(), []string{long[:bound/2], long[bound/2:]}, jsonCT},
		{"notifications and no response", tools(), []string{strings.Repeat("data: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n", bound/30)}, sseCT},
		{"a discover result", discover("2026-07-28"), []string{long}, jsonCT},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &negotiatetest.Recorder{}
			m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf, MaxAnswerBytes: bound})
			if err != nil {
				t.Fatal(err)
			}
			var werr error
			h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.ct)
				for _, chunk := range c.chunks {
					_, werr = io.WriteString(w, chunk)
				}
				_, werr = io.WriteString(w, "more")
			}))
			got := (&rig{h: h}).do(c.req)
			a := decodeAnswer(t, got.body)
			if got.status != http.StatusBadGateway || a.Error.Code != -32603 || !strings.Contains(a.Error.Message, "exceeds 1024 bytes") {
				t.Errorf("answer %d %s", got.status, got.body)
			}
			if werr == nil {
				t.Error("a write after the answer was replaced succeeded")
			}
			if ev := payloads(t, rec); len(ev) != 1 || ev[0].Outcome != "refused" || ev[0].Reason != events.ReasonUnsupported {
				t.Errorf("recorded %+v", ev)
			}
		})
	}
}

// TestWritesReportTheirBytes: every write the wrapped handler makes
// reports all its bytes, held, settling or passed through, by Write and
// WriteString alike.
func TestWritesReportTheirBytes(t *testing.T) {
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	chunks := []string{"data: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n", "data: {}\n\n"}
	for _, ct := range []string{sseCT, jsonCT} {
		for _, asString := range []bool{false, true} {
			var counts []int
			h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ct)
				for _, c := range chunks {
					var n int
					if asString {
						n, _ = io.WriteString(w, c)
					} else {
						n, _ = w.Write([]byte(c))
					}
					counts = append(counts, n)
				}
			}))
			got := (&rig{h: h}).do(tools())
			for i, c := range chunks {
				if counts[i] != len(c) {
					t.Errorf("%s, WriteString %t: write %d reported %d bytes of %d", ct, asString, i, counts[i], len(c))
				}
			}
			if got.body != strings.Join(chunks, "") {
				t.Errorf("%s: answer %q", ct, got.body)
			}
		}
	}
}

// TestHeadChangedWhileHeld: what the handler changes in the head after
// its status, while the answer is held, is not sent, as net/http sends
// the head as it was at WriteHeader; the head before it is sent whole.
func TestHeadChangedWhileHeld(t *testing.T) {
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", jsonCT)
		w.Header().Set("X-Early", "1")
		w.WriteHeader(http.StatusOK)
		w.Header().Set("X-Late", "1")
		w.Header().Del("X-Early")
		if w.Header().Get("X-Late") != "1" {
			t.Error("the handler does not read back what it set while held")
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{}}`)
	}))
	got := (&rig{h: h}).do(tools())
	if got.header.Get("X-Early") != "1" || got.header.Get("X-Late") != "" || got.header.Get("Content-Type") != jsonCT {
		t.Errorf("head %v", got.header)
	}
}

// TestDiscoverAnswerReadAsClientsRead: a server/discover result behind a
// compression middleware inside Wrap, or after a byte-order mark, is read
// as its clients read it: it confirms the revision, and is recorded
// accepted (read raw it was recorded refused).
func TestDiscoverAnswerReadAsClientsRead(t *testing.T) {
	const result = `{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = io.WriteString(zw, result)
	_ = zw.Close()
	for name, write := range map[string]func(w http.ResponseWriter){
		"gzip": func(w http.ResponseWriter) {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(zipped.Bytes())
		},
		"bom": func(w http.ResponseWriter) { _, _ = io.WriteString(w, "\xEF\xBB\xBF"+result) },
	} {
		rec := &negotiatetest.Recorder{}
		m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf})
		if err != nil {
			t.Fatal(err)
		}
		h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", jsonCT)
			write(w)
		}))
		got := (&rig{h: h}).do(discover("2026-07-28"))
		if ev := payloads(t, rec); got.status != http.StatusOK || len(ev) != 1 || ev[0].Outcome != "accepted" {
			t.Errorf("%s: answer %d, recorded %+v", name, got.status, ev)
		}
	}
}

// TestUnreadableAnswerWithinTheBound: an answer that fits the bound, to
// its last byte, but that no client could read is refused as unreadable,
// not as too long.
func TestUnreadableAnswerWithinTheBound(t *testing.T) {
	const bound = 64
	rec := &negotiatetest.Recorder{}
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: rec, Subject: subjectOf, MaxAnswerBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", jsonCT)
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = io.WriteString(w, strings.Repeat("x", bound)) // not gzip
	}))
	got := (&rig{h: h}).do(tools())
	a := decodeAnswer(t, got.body)
	if got.status != http.StatusBadGateway || !strings.Contains(a.Error.Message, "could not be read as its clients read it within 64 bytes") {
		t.Errorf("answer %d %s", got.status, got.body)
	}
	if ev := payloads(t, rec); len(ev) != 1 || ev[0].Outcome != "refused" {
		t.Errorf("recorded %+v", ev)
	}
}

// TestStreamOfNoRequestPassesThrough: a GET's event stream answers no
// request of its own, so the middleware holds none of it: what the server
// flushes (here a keep-alive comment, which no event completes) reaches
// the client then.
func TestStreamOfNoRequestPassesThrough(t *testing.T) {
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	var atFlush string
	h := m.Wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", sseCT)
		_, _ = io.WriteString(rw, ": keep-alive\n\n")
		rw.(http.Flusher).Flush()
		atFlush = w.Body.String()
	}))
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	req.Header.Set("Accept", sseCT)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer user")
	h.ServeHTTP(w, req)
	if atFlush != ": keep-alive\n\n" {
		t.Errorf("the client had %q when the server flushed; want the keep-alive (answer %d %s)", atFlush, w.Code, w.Body)
	}
}

// TestRecordFollowsServerOnASession: a request on a legacy session the
// middleware remembers is watched as any other. Its acceptance is the
// session's, recorded at initialize, so a served request adds nothing
// to the record and is not observed; the server's -32022 to it (plain
// or in a stream, the audit required or not) is recorded as a refusal of
// the session's revision in an event of its own, and observed.
func TestRecordFollowsServerOnASession(t *testing.T) {
	const result = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`
	refusal := strings.ReplaceAll(strings.ReplaceAll(refused32022, `"id":7`, `"id":2`), "2026-07-28", "2025-11-25")
	cases := []struct {
		name     string
		ct       string
		answer   string
		outcomes []string
	}{
		{"served", jsonCT, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, []string{"accepted"}},
		{"refused", jsonCT, refusal, []string{"accepted", "refused"}},
		{"refused in a stream", sseCT, "event: message\ndata: " + refusal + "\n\n", []string{"accepted", "refused"}},
	}
	for _, c := range cases {
		for _, audit := range []bool{false, true} {
			t.Run(c.name+"/RequireAudit="+strconv.FormatBool(audit), func(t *testing.T) {
				var observed []string
				rec := &negotiatetest.Recorder{}
				m, err := mcphttp.New(compile(t, legacyFacets(), policy.Policy{RequireAudit: audit}), mcphttp.Options{
					Sink: rec, Subject: subjectOf,
					Observe: func(_ context.Context, x negotiate.Exchange) {
						observed = append(observed, x.Method+" "+x.Outcome.Kind.String())
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set(mcphttp.HeaderSessionID, "s")
					if r.Header.Get(mcphttp.HeaderSessionID) == "" {
						w.Header().Set("Content-Type", jsonCT)
						_, _ = io.WriteString(w, result)
						return
					}
					w.Header().Set("Content-Type", c.ct)
					_, _ = io.WriteString(w, c.answer)
				}))
				rg := &rig{h: h, events: rec}
				sid := initializeOn(t, rg, "2025-11-25", "Bearer user")
				a := rg.do(onSession(sid, "2025-11-25", "Bearer user"))
				if a.status != http.StatusOK || a.body != c.answer {
					t.Errorf("the session's request was answered %d %q, want the server's answer", a.status, a.body)
				}
				var got []string
				for _, p := range payloads(t, rec) {
					got = append(got, p.Outcome)
				}
				if !slices.Equal(got, c.outcomes) {
					t.Errorf("recorded %v, want %v", got, c.outcomes)
				}
				want := []string{"initialize accepted"}
				if len(c.outcomes) > 1 {
					want = append(want, "tools/list refused")
				}
				if !slices.Equal(observed, want) {
					t.Errorf("observed %v, want %v", observed, want)
				}
			})
		}
	}
}
