package a2ahttp_test

import (
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
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// answering is a wrapped A2A server that answers with status (none written
// when zero) and a Content-Type (none when empty), writing parts one
// after another.
func answering(status int, contentType string, parts ...string) http.Handler {
	return writing(false, status, contentType, parts...)
}

// streaming is answering, flushing after each part as a streaming server
// does.
func streaming(status int, contentType string, parts ...string) http.Handler {
	return writing(true, status, contentType, parts...)
}

func writing(flush bool, status int, contentType string, parts ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Header().Set("A2A-Version", "1.2") // a server's own claim never stands for a refusal
		if status != 0 {
			w.WriteHeader(status)
		}
		for _, p := range parts {
			_, _ = w.Write([]byte(p))
			if flush {
				w.(http.Flusher).Flush()
			}
		}
	})
}

// following is a middleware over h recording into its own Recorder.
func following(t *testing.T, p policy.Policy, opts a2ahttp.Options, h http.Handler) (*negotiatetest.Recorder, http.Handler) {
	t.Helper()
	rec := &negotiatetest.Recorder{}
	opts.Sink, opts.Subject = rec, subjectOf
	m, err := a2ahttp.New(compile(t, wideA2A(), p), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rec, m.Wrap(h)
}

var (
	accepted12 = events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: "1.2", Requested: "1.2", Reason: events.ReasonOK, Floor: "1.1", At: testNow}
	refused12  = events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "refused", Requested: "1.2", Reason: events.ReasonUnsupported, Floor: "1.1", At: testNow}
)

const versionInfo = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}`

// The record follows the server: an answer a client reads as a refusal of
// the version is recorded refused, whatever its spelling, and carries no
// A2A-Version; any other answer is recorded accepted and says the version
// served. The answer itself goes through unchanged.
func TestRecordFollowsServer(t *testing.T) {
	const sse = "text/event-stream"
	ok := `{"jsonrpc":"2.0","id":"req-1","result":{"id":"task-1"}}`
	for _, tc := range []struct {
		name     string
		httpJSON bool
		target   string
		h        http.Handler
		refused  bool
	}{
		{"a result", false, "/a2a", answering(0, "application/json", ok), false},
		{"-32009", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"}}`), true},
		{"-32009.0", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009.0,"message":"no"}}`), true},
		{"-3.2009e4", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"message":"no","code":-3.2009e4}}`), true},
		{"-32008.99999999999999999 (a float64 parser's -32009)", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"message":"no","code":-32008.99999999999999999}}`), true},
		{"-320090e-1", false, "/a2a", answering(0, "application/json", `{"error":{"code":-320090e-1}}`), true},
		{"no Content-Type", false, "/a2a", answering(0, "", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"}}`), true},
		{"application/json-rpc", false, "/a2a", answering(0, "application/json-rpc", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"}}`), true},
		{"on HTTP 400", false, "/a2a", answering(400, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"}}`), true},
		{"member names in another case", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","Error":{"CODE":-32009,"message":"no"}}`), true},
		{"an escaped name", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","\u0065rror":{"code":-32009}}`), true},
		{"a repeated code", false, "/a2a", answering(0, "application/json", `{"error":{"code":-32603,"code":-32009}}`), true},
		{"the code split across writes", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-320`, `09,"message":"no"}}`), true},
		{"the code split across flushed writes", false, "/a2a", streaming(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-320`, `09,"message":"no"}}`), true},
		{"a result flushed", false, "/a2a", streaming(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","result":`, `{"code":-32009}}`), false},
		{"a batch flushed after a result, a refusal to come", false, "/a2a", streaming(0, "application/json", `[{"jsonrpc":"2.0","id":1,"result":{}}`, `,{"jsonrpc":"2.0","id":2,"error":{"code":-32009,"message":"no"}}]`), true},
		{"the reason in data", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32000,"message":"no","data":[{"@type":"x"},`+versionInfo+`]}}`), true},
		{"the reason in a bare data object", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32000,"data":`+versionInfo+`}}`), true},
		{"in a batch", false, "/a2a", answering(0, "application/json", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32009}}]`), true},
		{"a batch of results", false, "/a2a", answering(0, "application/json", `[{"jsonrpc":"2.0","id":1,"result":{"n":-32009}},{"jsonrpc":"2.0","id":2,"error":{"code":-32001}}]`), false},
		{"the first event of a stream", false, "/a2a", streaming(0, sse, ": hello\n\n", "data: {\"jsonrpc\":\"2.0\",\"id\":\"req-1\",", "\"error\":{\"code\":-32009}}\n\n", "data: more\n\n"), true},
		{"another error", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32001,"message":"task not found","data":[{"reason":"TASK_NOT_FOUND"}]}}`), false},
		{"-32009 in a result", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","result":{"code":-32009,"error":{"code":-32009}}}`), false},
		{"a refusal cut short is still a refusal", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"`), true},
		{"an empty write, then the refusal", false, "/a2a", answering(0, "application/json", "", `{"error":{"code":-32009}}`), true},
		{"an escaped reason", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":1,"data":[{"reason":"VERSION\u005fNOT_SUPPORTED"}]}}`), true},
		{"-32009 after 33", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":33,"error":{"code":-32009}}`), true},
		{"-32009 after another 3", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":3,"error":{"code":-32009}}`), true},
		{"an error that is no object", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":-32009}`), false},
		{"a code that is no number", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":"-32009"}}`), false},
		{"data that is a string", false, "/a2a", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"code":1,"data":"VERSION_NOT_SUPPORTED","details":["VERSION_NOT_SUPPORTED"]}}`), false},
		{"a reason that is no string", false, "/a2a", answering(0, "application/json", `{"error":{"code":1,"data":[{"reason":["VERSION_NOT_SUPPORTED"]}]}}`), false},
		{"not JSON", false, "/a2a", answering(0, "text/plain", "-32009"), false},
		{"nothing", false, "/a2a", answering(0, ""), false},
		{"HTTP+JSON: 400 with the reason", true, "/a2a", answering(400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[`+versionInfo+`]}}`), true},
		{"HTTP+JSON: a bare details object", true, "/a2a", answering(400, "application/json", `{"error":{"code":400,"details":`+versionInfo+`}}`), true},
		{"HTTP+JSON: another reason", true, "/a2a", answering(404, "application/json", `{"error":{"code":404,"status":"NOT_FOUND","details":[{"reason":"TASK_NOT_FOUND"}]}}`), false},
		{"HTTP+JSON: 300 is an error status", true, "/a2a", answering(300, "application/json", `{"error":{"code":300,"details":[`+versionInfo+`]}}`), true},
		// a2a-go's REST client reads every status but 200 as an error.
		{"HTTP+JSON: 299 is an error", true, "/a2a", answering(299, "application/json", `{"error":{"code":400,"details":[`+versionInfo+`]}}`), true},
		{"HTTP+JSON: 201 is an error", true, "/a2a", answering(201, "application/json", `{"error":{"code":400,"details":[`+versionInfo+`]}}`), true},
		{"HTTP+JSON: 201 with a result", true, "/a2a", answering(201, "application/json", `{"task":{"id":"task-1"}}`), false},
		{"the card: 203 with the reason", false, "/.well-known/agent-card.json", answering(203, "application/json", `{"error":{"code":400,"details":[`+versionInfo+`]}}`), true},
		{"HTTP+JSON: a success is no error", true, "/a2a", answering(200, "application/json", `{"error":{"code":-32009}}`), false},
		{"HTTP+JSON: an event of a stream", true, "/a2a", answering(200, "Text/Event-Stream; charset=utf-8", "data: {\"error\":{\"code\":400,\"details\":["+versionInfo+"]}}\r\n\r\n"), true},
		{"the card: 400 with the reason", false, "/.well-known/agent-card.json", answering(400, "application/json", `{"error":{"code":400,"details":[`+versionInfo+`]}}`), true},
		{"the card", false, "/.well-known/agent-card.json", answering(0, "application/json", `{"name":"host","error":{"code":-32009}}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A clock a second later at each reading: the record is the
			// decision made when the request came, at its time, not a
			// second one made when the server answered, whether the server
			// served it or refused.
			decisions := 0
			later := policy.Policy{Now: func() time.Time { decisions++; return testNow.Add(time.Duration(decisions) * time.Second) }}
			rec, h := following(t, later, a2ahttp.Options{HTTPJSON: tc.httpJSON}, tc.h)
			decisions = 0 // New read the clock once, for the refresh window
			bare := httptest.NewRecorder()
			tc.h.ServeHTTP(bare, cardOrPost(tc.target, "1.2"))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, cardOrPost(tc.target, "1.2"))
			want, version := accepted12, "1.2"
			if tc.refused {
				want, version = refused12, ""
			}
			want.At = testNow.Add(time.Second)
			if got := onlyPayload(t, rec); got != want {
				t.Errorf("recorded %+v\nwant %+v", got, want)
			}
			if w.Code != bare.Code || w.Body.String() != bare.Body.String() || w.Header().Get("Content-Type") != bare.Header().Get("Content-Type") {
				t.Errorf("answered %d %q %s\nwant the server's %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body, bare.Code, bare.Header().Get("Content-Type"), bare.Body)
			}
			// The head as it was sent, not the map the handler may still change.
			if got := strings.Join(w.Result().Header.Values("A2A-Version"), ","); got != version {
				t.Errorf("A2A-Version %q, want %q", got, version)
			}
		})
	}
}

// A stream released at its first result is followed as it passes:
// a2a-go yields a stream's events one by one, so its caller is given a
// refusal that comes after a result, and the record holds it, after the
// acceptance, in a second event. The answer goes through unchanged.
func TestRecordFollowsAStreamPastItsResult(t *testing.T) {
	const sse = "text/event-stream"
	result := "data: {\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"result\":{\"id\":\"task-1\"}}\n\n"
	refusal := "data: {\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"error\":{\"code\":-32009,\"message\":\"no\"}}\n\n"
	long := "data: {\"pad\":\"" + strings.Repeat("x", 400) + "\"}\n\n"
	padded := "data: {\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"error\":{\"code\":-32009,\"message\":\"no\"},\"pad\":\"" + strings.Repeat("x", 400) + "\"}\n\n"
	gzipped := func(text string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", sse)
			w.Header().Set("Content-Encoding", "gzip")
			z := gzip.NewWriter(w)
			_, _ = io.WriteString(z, text)
			_ = z.Close()
		})
	}
	for _, tc := range []struct {
		name    string
		h       http.Handler
		refused bool
	}{
		{"a refusal after the result", streaming(0, sse, result, refusal), true},
		{"a refusal in the result's write", answering(0, sse, result+refusal), true},
		{"a refusal in pieces, byte by byte", streaming(0, sse, append([]string{result}, strings.Split(refusal, "")...)...), true},
		{"a refusal the stream's end cuts off", streaming(0, sse, result, strings.TrimSuffix(refusal, "\n\n")), true},
		{"a refusal of an event type of its own", streaming(0, sse, result, "event: other\n"+refusal), true},
		{"a refusal after an event past the bound", streaming(0, sse, result, long, refusal), true},
		{"a refusal after a line past the bound, in pieces", streaming(0, sse, result, long[:300], long[300:], refusal), true},
		{"a refusal after a CR the next write ends", streaming(0, sse, result, "data: {\"n\":1}\r", "\n\r\n"+refusal), true},
		{"a refusal in a gzip-coded stream", gzipped(result + refusal), true},
		{"two refusals, recorded once", streaming(0, sse, result, refusal, refusal), true},
		{"results only", streaming(0, sse, result, result), false},
		// The data of an event continues past a line the bound dropped: an
		// error on the event's next data line is no JSON a client reads.
		{"a refusal inside an event past the bound", streaming(0, sse, result, long[:len(long)-1], refusal), false},
		// Past the bound an event is read as a plain answer past its bound
		// is: its error object must end within the bound.
		{"a refusal padded past the bound", streaming(0, sse, result, padded), true},
		{"a refusal padded past the bound, in pieces", streaming(0, sse, result, padded[:200], padded[200:]), true},
		{"a refusal padded past the bound on lines of its own", streaming(0, sse, result, strings.Replace(padded, `"pad"`, "\ndata: \"pad\"", 1)), true},
		{"a refusal whose error is padded past the bound", streaming(0, sse, result, "data: {\"error\":{\"code\":-32009,\"message\":\""+strings.Repeat("x", 400)+"\"}}\n\n"), false},
		{"a refusal whose code is past the bound", streaming(0, sse, result, "data: {\"pad\":\""+strings.Repeat("x", 400)+"\",\"error\":{\"code\":-32009,\"message\":\"no\"}}\n\n"), false},
		{"a refusal before a comment past the bound", streaming(0, sse, result, strings.TrimSuffix(refusal, "\n"), ": "+strings.Repeat("x", 400), "\n\n"), true},
		{"a result after the result", streaming(0, sse, result, "data: {\"result\":{}}\n\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, audit := range []bool{false, true} {
				rec, h := following(t, policy.Policy{RequireAudit: audit}, a2ahttp.Options{MaxAnswerBytes: 256}, tc.h)
				bare := httptest.NewRecorder()
				tc.h.ServeHTTP(bare, cardOrPost("/a2a", "1.2"))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
				want := []events.NegotiationDecided{accepted12}
				if tc.refused {
					want = append(want, refused12)
				}
				var got []events.NegotiationDecided
				for _, e := range rec.Events() {
					got = append(got, e.Payload)
				}
				if !slices.Equal(got, want) {
					t.Errorf("audit required %t: recorded %+v\nwant %+v", audit, got, want)
				}
				if w.Body.String() != bare.Body.String() || w.Header().Get("A2A-Version") != "1.2" {
					t.Errorf("audit required %t: answered %q with A2A-Version %q, want the server's %q with 1.2", audit, w.Body, w.Header().Get("A2A-Version"), bare.Body)
				}
			}
		})
	}
}

// The record is in place before the first byte of the answer leaves, so a
// client never acts on an answer the record does not hold.
func TestRecordBeforeTheAnswer(t *testing.T) {
	rec := &negotiatetest.Recorder{}
	m, err := a2ahttp.New(compile(t, wideA2A(), policy.Policy{}), a2ahttp.Options{Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(streaming(0, "text/event-stream", "data: {\"result\":{}}\n", "\n", "data: {}\n\n"))
	w := &recordedFirst{ResponseRecorder: httptest.NewRecorder(), rec: rec}
	h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
	if w.seen != 1 || w.Body.String() != "data: {\"result\":{}}\n\ndata: {}\n\n" || !w.Flushed {
		t.Errorf("events recorded at the first byte: %d; body %q, flushed %v", w.seen, w.Body, w.Flushed)
	}
}

type recordedFirst struct {
	*httptest.ResponseRecorder
	rec  *negotiatetest.Recorder
	seen int
	once bool
}

func (w *recordedFirst) Write(p []byte) (int, error) {
	w.first()
	return w.ResponseRecorder.Write(p)
}

// Flush sends what was written: nothing may go before the record either.
func (w *recordedFirst) Flush() {
	w.first()
	w.ResponseRecorder.Flush()
}

func (w *recordedFirst) first() {
	if !w.once {
		w.once, w.seen = true, len(w.rec.Events())
	}
}

// Under RequireAudit a request that may act is recorded before the handler
// sees it; when the server then refuses the version, a second event
// records the refusal, so the audit never shows the acceptance alone.
func TestRequiredAuditRecordsTheServersRefusal(t *testing.T) {
	refusal := `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"}}`
	var before int
	rec := &negotiatetest.Recorder{}
	m, err := a2ahttp.New(compile(t, wideA2A(), policy.Policy{RequireAudit: true}), a2ahttp.Options{Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before = len(rec.Events())
		answering(0, "application/json", refusal).ServeHTTP(w, r)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
	got := rec.Events()
	if before != 1 || len(got) != 2 || got[0].Payload != accepted12 || got[1].Payload != refused12 {
		t.Fatalf("recorded %d before the handler, then %+v", before, got)
	}
	if w.Body.String() != refusal || w.Header().Get("A2A-Version") != "" {
		t.Errorf("answered A2A-Version %q %s", w.Header().Get("A2A-Version"), w.Body)
	}

	// A success is recorded once, before.
	rec2, h2 := following(t, policy.Policy{RequireAudit: true}, a2ahttp.Options{}, answering(0, "application/json", `{"result":{}}`))
	h2.ServeHTTP(httptest.NewRecorder(), cardOrPost("/a2a", "1.2"))
	if p := onlyPayload(t, rec2); p != accepted12 {
		t.Errorf("recorded %+v", p)
	}

	// The refusal's record failing too replaces the answer.
	rec3 := &negotiatetest.Recorder{}
	m3, err := a2ahttp.New(compile(t, wideA2A(), policy.Policy{RequireAudit: true}), a2ahttp.Options{Sink: rec3})
	if err != nil {
		t.Fatal(err)
	}
	var writeErrs [2]error
	h3 := m3.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		rec3.Fail(errors.New("event store down"))
		w.Header().Set("Content-Type", "text/event-stream")
		_, writeErrs[0] = w.Write([]byte("data: " + refusal + "\n\n"))
		_, writeErrs[1] = w.Write([]byte("data: more\n\n"))
	}))
	w3 := httptest.NewRecorder()
	h3.ServeHTTP(w3, cardOrPost("/a2a", "1.2"))
	if !strings.Contains(w3.Body.String(), `"id":"req-1","error":{"code":-32603`) || w3.Result().Header.Get("A2A-Version") != "1.2" {
		t.Errorf("answered A2A-Version %q %s", w3.Result().Header.Get("A2A-Version"), w3.Body)
	}
	// The handler hears that its answer goes nowhere.
	if writeErrs[0] == nil || writeErrs[1] == nil {
		t.Errorf("the handler's writes returned %v", writeErrs)
	}
}

// An answer that has not shown within the bound whether the version was
// served is replaced, and recorded refused; one that shows a result early
// goes through whole, however long.
func TestAnswerBound(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name    string
		h       http.Handler
		refused bool
		body    string
	}{
		{"a long result", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","result":"`, long, `"}`), false,
			`{"jsonrpc":"2.0","id":"req-1","result":"` + long + `"}`},
		{"a long error before its code", answering(0, "application/json", `{"jsonrpc":"2.0","id":"req-1","error":{"message":"`+long, `","code":-32009}}`), true,
			`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32603,"message":"the A2A server's answer could not be read within its bound; the exchange is refused","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`},
		{"a number id is echoed", answering(0, "application/json", `{"jsonrpc":"2.0","id":7,"error":{"message":"`+long, `","code":-32009}}`), true,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"the A2A server's answer could not be read within its bound; the exchange is refused","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`},
		{"an id that is neither is not", answering(0, "application/json", `{"jsonrpc":"2.0","id":{"n":7},"error":{"message":"`+long, `","code":-32009}}`), true,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the A2A server's answer could not be read within its bound; the exchange is refused","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`},
		{"a stream with no event within the bound", answering(0, "text/event-stream", "data: "+long), true,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the A2A server's answer could not be read within its bound; the exchange is refused","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, h := following(t, policy.Policy{}, a2ahttp.Options{MaxAnswerBytes: 64}, tc.h)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
			want := accepted12
			if tc.refused {
				want = refused12
			}
			if got := onlyPayload(t, rec); got != want {
				t.Errorf("recorded %+v", got)
			}
			if w.Body.String() != tc.body {
				t.Errorf("answered %s\nwant %s", w.Body, tc.body)
			}
		})
	}
}

// FuzzFollow feeds the answer reader what a wrapped server could answer,
// as JSON and as an event stream: it never panics, never changes the
// answer, and reads an answer the same however it is split into writes,
// a stream followed past its first result included.
func FuzzFollow(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"error":{"code":-3.2009e4}}`, `[{"result":1},{"error":{"data":[` + versionInfo + `]}}]`,
		`{"error":{"code":-32009`, `{"\u0065rror":{"code":-32009}}`, "data: {\"error\":{\"code\":-32009}}\n\n", `[[[[`, "",
		"data: {\"result\":{}}\n\ndata: {\"error\":{\"code\":-32009}}\r\n\r\n", "data: {\"result\":{}}\r\rdata: {\"error\":{\"code\":-32009}}",
	} {
		f.Add([]byte(seed), uint16(9), false)
		f.Add([]byte(seed), uint16(23), true)
	}
	f.Add([]byte(`{"error":{"Code":-3.2009e4`), uint16(0), false) // an empty first write is no answer yet
	f.Fuzz(func(t *testing.T, b []byte, cut uint16, stream bool) {
		at := int(cut) % (len(b) + 1)
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		var outcomes [2]string
		for i, h := range []http.Handler{answering(0, ct, string(b)), streaming(0, ct, string(b[:at]), string(b[at:]))} {
			rec, h := following(t, policy.Policy{}, a2ahttp.Options{}, h)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
			if w.Body.String() != string(b) {
				t.Fatalf("%q answered as %q", b, w.Body)
			}
			for _, e := range rec.Events() {
				outcomes[i] += e.Payload.Outcome + " "
			}
		}
		if outcomes[0] != outcomes[1] || !stream && strings.Count(outcomes[0], " ") != 1 {
			t.Fatalf("%q (stream %t): %s whole, %s split at %d", b, stream, outcomes[0], outcomes[1], at)
		}
	})
}

// The bound is 64 KiB unless Options.MaxAnswerBytes says otherwise.
func TestAnswerBoundDefault(t *testing.T) {
	head := `{"jsonrpc":"2.0","id":"req-1","error":{"message":"`
	for _, tc := range []struct {
		held int // bytes written before the code
		want string
	}{{64 << 10, "refused"}, {64<<10 + 1, "refused"}} {
		rec, h := following(t, policy.Policy{}, a2ahttp.Options{}, answering(0, "application/json",
			head+strings.Repeat("x", tc.held-len(head)), `","code":-32009}}`))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
		replaced := strings.Contains(w.Body.String(), `"code":-32603`)
		if got := onlyPayload(t, rec); got.Outcome != tc.want || replaced != (tc.held > 64<<10) {
			t.Errorf("%d bytes before the code: recorded %s, replaced %v", tc.held, got.Outcome, replaced)
		}
	}
}

// statuses is a ResponseWriter that keeps every status written to it.
type statuses struct {
	*httptest.ResponseRecorder
	written []int
}

func (w *statuses) WriteHeader(status int) {
	w.written = append(w.written, status)
	w.ResponseRecorder.WriteHeader(status)
}

// An informational answer goes before the real one, unheld, and a status
// written twice is passed on once.
func TestInformationalAnswers(t *testing.T) {
	rec, h := following(t, policy.Policy{}, a2ahttp.Options{}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusOK)
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{"result":{}}`))
	}))
	w := &statuses{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
	if got := onlyPayload(t, rec); got != accepted12 {
		t.Errorf("recorded %+v", got)
	}
	if len(w.written) != 2 || w.written[0] != http.StatusEarlyHints || w.written[1] != http.StatusOK || w.Body.String() != `{"result":{}}` {
		t.Errorf("statuses %v, body %s", w.written, w.Body)
	}
}

// Whatever Vary the handler sets on the card, the answer varies on the
// version; a Vary of * already says so.
func TestCardVaryFollowsTheHandler(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"Accept", "Accept,A2A-Version"},
		{"accept, a2a-version", "accept, a2a-version"},
		{"*", "*"},
	} {
		_, h := following(t, policy.Policy{}, a2ahttp.Options{}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Vary", tc.set)
			_, _ = w.Write([]byte(`{"name":"host"}`))
		}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, cardOrPost("/.well-known/agent-card.json", "1.2"))
		if got := strings.Join(w.Result().Header.Values("Vary"), ","); got != tc.want {
			t.Errorf("the handler set Vary %q: answered %q, want %q", tc.set, got, tc.want)
		}
	}
}

// Flush sends a JSON answer once it shows the version served, while the
// handler still runs; an answer that shows nothing yet stays held.
func TestFlushSendsASettledAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		sent       bool
	}{
		{"settled", `{"jsonrpc":"2.0","id":"req-1","result":{}}`, true},
		{"not yet", `{"jsonrpc":"2.0","id":"req-1",`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			var atFlush string
			var flushed bool
			_, h := following(t, policy.Policy{}, a2ahttp.Options{}, http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
				rw.Header().Set("Content-Type", "application/json")
				_, _ = rw.Write([]byte(tc.part))
				rw.(http.Flusher).Flush()
				atFlush, flushed = w.Body.String(), w.Flushed
			}))
			h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
			if want := map[bool]string{true: tc.part}[tc.sent]; atFlush != want || flushed != tc.sent {
				t.Errorf("at the flush the client had %q (flushed %v), want %q", atFlush, flushed, want)
			}
		})
	}
}

// restEvents are n events of an A2A HTTP+JSON stream as a2a-go's REST
// server writes them: each event's data a StreamResponse (a task, then
// status updates of about 1 KiB), never a JSON-RPC response.
func restEvents(n int) []string {
	events := []string{"data: {\"task\":{\"id\":\"task-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n"}
	for i := 1; i < n; i++ {
		events = append(events, `data: {"statusUpdate":{"taskId":"task-1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m`+strconv.Itoa(i)+`","parts":[{"text":"`+strings.Repeat("x", 1000)+`"}]}}}}`+"\n\n")
	}
	return events
}

// restRefusal is an HTTP+JSON stream's event refusing the version, for
// 1.0 alone: a StreamResponse whose error is a google.rpc.Status.
const restRefusal = `data: {"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"1.0"}}]}}` + "\n\n"

// TestRecordFollowsAnHTTPJSONStream: on the HTTP+JSON binding a stream's
// events are StreamResponses, no JSON-RPC responses, and a2a-go's REST
// client reads each as its call's next answer: one that holds a message,
// a task, a status or an artifact update (its member in any case, as
// encoding/json matches it; not null) serves the version, as a result
// does, and releases the stream, however long it goes on; an error that
// refuses it refuses it, and after a served event is recorded in a
// second event. The answer goes through unchanged.
func TestRecordFollowsAnHTTPJSONStream(t *testing.T) {
	const sse = "text/event-stream"
	task := restEvents(1)[0]
	for _, tc := range []struct {
		name     string
		parts    []string
		recorded []string
	}{
		{"task events longer than the bound", restEvents(100), []string{"accepted"}},
		{"a refusal", []string{restRefusal}, []string{"refused"}},
		{"a refusal after a task", []string{task, restRefusal}, []string{"accepted", "refused"}},
		{"a refusal after a status update in capitals", []string{"data: {\"STATUSUPDATE\":{}}\n\n", restRefusal}, []string{"accepted", "refused"}},
		{"a refusal after a message", []string{"data: {\"message\":{\"messageId\":\"m\"}}\n\n", restRefusal}, []string{"accepted", "refused"}},
		{"a refusal after an artifact update", []string{"data: {\"artifactUpdate\":{}}\n\n", restRefusal}, []string{"accepted", "refused"}},
		{"a refusal after a null task, which answers nothing", []string{"data: {\"task\":null}\n\n", restRefusal}, []string{"refused"}},
		{"a refusal after an event of no StreamResponse member", []string{"data: {\"tasks\":{}}\n\n", restRefusal}, []string{"refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, h := following(t, policy.Policy{}, a2ahttp.Options{HTTPJSON: true}, streaming(200, sse, tc.parts...))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, cardOrPost("/a2a", "1.2"))
			if w.Code != http.StatusOK || w.Body.String() != strings.Join(tc.parts, "") {
				t.Errorf("answered %d with %d bytes, want the server's 200 with %d", w.Code, w.Body.Len(), len(strings.Join(tc.parts, "")))
			}
			var got []string
			for _, e := range rec.Events() {
				got = append(got, e.Payload.Outcome)
			}
			if !slices.Equal(got, tc.recorded) {
				t.Errorf("recorded %v, want %v", got, tc.recorded)
			}
		})
	}
	// The first event reaches the client while the server still works.
	release := make(chan struct{})
	_, h := following(t, policy.Policy{}, a2ahttp.Options{HTTPJSON: true}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", sse)
		_, _ = io.WriteString(w, task)
		w.(http.Flusher).Flush()
		<-release
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(release)
	// A deadline, so that a stream held back fails the test rather than
	// hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := cardOrPost(srv.URL+"/a2a", "1.2").WithContext(ctx)
	req.RequestURI = ""
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len(task))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != task {
		t.Errorf("the stream's first event: %q, %v; want it while the server works", first, err)
	}
}
