package exchange_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// TestPeerRefusal: an outbound refusal keeps its registered code, status
// and record, and says what the peer offered (only versions of the
// protocol, at most 16) and why, when the caller's identity refused it:
// the host's rule or the peer's reason (of the record's vocabulary
// only). What is not such a refusal is returned as it is.
func TestPeerRefusal(t *testing.T) {
	n, err := negotiate.Compile(facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-29"}}, at(taken))
	if err != nil {
		t.Fatal(err)
	}
	decide := func(offers ...string) negotiate.Outcome {
		o, _ := n.Decide(nil, negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "https://peer.example", PeerVersions: offers})
		return o
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("2.%d", i)
	}
	anonymous := negotiate.Outcome{Protocol: facets.ProtocolA2A, Rule: negotiate.RuleAuthenticated, Reason: "unauthenticated",
		Error: wperrors.New(wperrors.InteropVersionUnsupported, "a2a negotiation refused: unauthenticated")}
	for _, c := range []struct {
		name       string
		o          negotiate.Outcome
		offered    []string
		peerReason string
		message    string
		details    []string // details.offered
		said       any      // details.peerReason
	}{
		{"offers", decide("2.0"), []string{"2.0", "v3", "1.0.1"}, "", "a2a negotiation refused: unsupported; the peer offers 2.0", []string{"2.0"}, nil},
		{"nothing", decide(), nil, "", "a2a negotiation refused: below-floor; the peer offers no version", []string{}, nil},
		{"sixteen at most", decide(many...), many, "", "a2a negotiation refused: unsupported; the peer offers " + strings.Join(many[:16], ", ") + ", ...", many[:16], nil},
		{"exactly sixteen", decide(many[:16]...), many[:16], "", "a2a negotiation refused: unsupported; the peer offers " + strings.Join(many[:16], ", "), many[:16], nil},
		{"seventeen, one not a version", decide(many[:16]...), append(slices.Clone(many[:16]), "x"), "", "a2a negotiation refused: unsupported; the peer offers " + strings.Join(many[:16], ", "), many[:16], nil},
		{"fifteen", decide(many[:15]...), many[:15], "", "a2a negotiation refused: unsupported; the peer offers " + strings.Join(many[:15], ", "), many[:15], nil},
		{"the host's rule", anonymous, []string{"0.9"}, "", "a2a negotiation refused: unauthenticated; the peer offers 0.9, below the preferred version, which only an authenticated caller settles on: set OutboundOptions.Subject to the host's identity towards the peer", []string{"0.9"}, nil},
		{"the peer's identity", decide("2.0"), []string{"2.0"}, "unauthenticated", "a2a negotiation refused: unsupported; the peer refused it to an unauthenticated caller, and offers such a caller 2.0: send it credentials it accepts (OutboundOptions.Client)", []string{"2.0"}, "unauthenticated"},
		{"the peer's reason", decide("2.0"), []string{"2.0"}, "below-floor", "a2a negotiation refused: unsupported; the peer offers 2.0", []string{"2.0"}, "below-floor"},
		{"a reason of no vocabulary", decide("2.0"), []string{"2.0"}, "you lack the gold badge", "a2a negotiation refused: unsupported; the peer offers 2.0", []string{"2.0"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := exchange.PeerRefusal(c.o, c.offered, c.peerReason)
			var e *wperrors.Error
			if !errors.As(err, &e) || !errors.Is(err, wperrors.InteropVersionUnsupported) || e.Message != c.message ||
				!reflect.DeepEqual(e.Details["offered"], c.details) || e.Details["peerReason"] != c.said {
				t.Fatalf("PeerRefusal = %v %v\nwant %s offered %q peerReason %v", err, e, c.message, c.details, c.said)
			}
			if _, touched := c.o.Error.Details["offered"]; touched || c.o.Error.Message == e.Message {
				t.Errorf("the outcome's own error changed: %v", c.o.Error)
			}
		})
	}
	// Not a refusal a peer had a say in: returned as it is.
	if err := exchange.PeerRefusal(decide("1.0"), []string{"1.0"}, ""); err != nil {
		t.Errorf("an acceptance: %v", err)
	}
	input, _ := n.Decide(nil, negotiate.Offer{Protocol: facets.ProtocolA2A, Peer: "no origin", PeerVersions: []string{"1.0"}})
	audit := negotiate.Outcome{Rule: negotiate.RuleAudit, Error: wperrors.New(wperrors.Internal, "could not be recorded")}
	bare := negotiate.Outcome{}
	for _, o := range []negotiate.Outcome{input, audit, bare} {
		if err := exchange.PeerRefusal(o, []string{"1.0"}, "unauthenticated"); err != o.Err() && !reflect.DeepEqual(err, o.Err()) {
			t.Errorf("%+v: %v, want its own error %v", o, err, o.Err())
		}
	}
}

// TestWriteError: an error answer carries the request's id as it was
// written, null when there is none, with its length and type, on its
// status.
func TestWriteError(t *testing.T) {
	for _, c := range []struct {
		id   jsontext.Value
		want string
	}{
		{nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}`},
		{jsontext.Value(`"a-1"`), `{"jsonrpc":"2.0","id":"a-1","error":{"code":-32600,"message":"no"}}`},
		{jsontext.Value(`7`), `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"no"}}`},
	} {
		w := httptest.NewRecorder()
		exchange.WriteError(w, http.StatusBadRequest, c.id, rpcerr.RPCError{Code: -32600, Message: "no"})
		if w.Code != http.StatusBadRequest || w.Body.String() != c.want ||
			w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Length") != strconv.Itoa(len(c.want)) {
			t.Errorf("%d %v %s; want %s", w.Code, w.Header(), w.Body, c.want)
		}
	}
}

// The protocols' refusals, as the adapters give them to the engine's
// lenient reader.
var (
	mcpRefusal = exchange.Refusal{Code: rpcerr.RPCMCPUnsupportedProtocolVersion}
	a2aRefusal = exchange.Refusal{Code: rpcerr.RPCA2AVersionNotSupported, Reason: rpcerr.A2AReasonVersionNotSupported, ResultFirst: true}
	// streamAnswers is a2aRefusal with the members of an HTTP+JSON
	// stream's event that answer its call.
	streamAnswers = exchange.Refusal{Code: rpcerr.RPCA2AVersionNotSupported, Reason: rpcerr.A2AReasonVersionNotSupported, ResultFirst: true, Answers: []string{"task", "statusUpdate"}}
)

// TestRefusalRead reads answers as the most lenient client does, whole
// and as far as they have come: a refusal anywhere a client reads one
// (every member of a batch, keys in any case, the code in any spelling,
// an ErrorInfo's reason), what it lists, the responses of an answer read
// to its end, and the id an answer in the server's place carries.
func TestRefusalRead(t *testing.T) {
	for _, c := range []struct {
		name    string
		f       exchange.Refusal
		msg     string
		partial bool
		want    exchange.Verdict
		resps   int
		listed  []string
		reason  string
		id      string
	}{
		{"a batch of results", mcpRefusal, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`, false, exchange.Served, 2, nil, "", ""},
		{"a notification is no response", mcpRefusal, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]`, false, exchange.Served, 1, nil, "", ""},
		{"a message with neither result nor error is no response", mcpRefusal, `{"jsonrpc":"2.0","note":1}`, false, exchange.Served, 0, nil, "", ""},
		{"an error that is no object answers", mcpRefusal, `{"jsonrpc":"2.0","id":1,"error":"interop_version_unsupported"}`, false, exchange.Served, 1, nil, "", "1"},
		{"another error", mcpRefusal, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x","data":{"a":[1]}}}`, false, exchange.Served, 1, nil, "", "1"},
		{"a code in the data is no code", mcpRefusal, `{"jsonrpc":"2.0","id":1,"error":{"data":{"code":-32022},"code":-32601}}`, false, exchange.Served, 1, nil, "", "1"},
		{"the code after the data", mcpRefusal, `{"jsonrpc":"2.0","id":1,"error":{"data":{"a":1},"code":-32022}}`, false, exchange.Refused, 0, nil, "", "1"},
		{"a refusal in a batch, whatever follows", mcpRefusal, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32022}}] []`, false, exchange.Refused, 0, nil, "", ""},
		{"a batch member that is no object", mcpRefusal, `[1,{"error":{"code":-32022}}]`, false, exchange.Refused, 0, nil, "", ""},
		{"not one JSON value counts no response", mcpRefusal, `{"jsonrpc":"2.0","id":1,"result":{}}}`, false, exchange.Served, 0, nil, "", "1"},
		{"a code that breaks off is no code", mcpRefusal, `{"jsonrpc":"2.0","id":1,"error":{"code":-}}`, false, exchange.Served, 0, nil, "", "1"},
		{"a number that breaks off", mcpRefusal, `{"id":"32022","error":{"code":-`, false, exchange.Served, 0, nil, "", `"32022"`},
		{"what MCP's refusal lists", mcpRefusal, `{"error":{"code":-32022,"data":{"supported":["2025-11-25",1,"2024-11-05"],"reason":"below-floor"}}}`, false, exchange.Refused, 0, []string{"2025-11-25", "2024-11-05"}, "below-floor", ""},
		{"a list that is no array lists nothing", mcpRefusal, `{"error":{"code":-32022,"data":{"supported":"2024-11-05","metadata":["x"]}}}`, false, exchange.Refused, 0, nil, "", ""},
		{"keys in any case, the code in any spelling", mcpRefusal, `{"ERROR":{"Code":-3.2022e4}}`, false, exchange.Refused, 0, nil, "", ""},
		{"a repeated member counts under each value", mcpRefusal, `{"error":{"code":-32022},"error":{"code":1}}`, false, exchange.Refused, 0, nil, "", ""},
		{"read whole: an error after a result", mcpRefusal, `{"result":{},"error":{"code":-32022}}`, false, exchange.Refused, 0, nil, "", ""},
		{"read whole, an error beside a result first refuses", a2aRefusal, `{"result":{},"error":{"code":-32009}}`, false, exchange.Refused, 0, nil, "", ""},
		{"read whole, a result first serves", a2aRefusal, `{"result":{},"error":{"code":-32601}}`, false, exchange.Served, 1, nil, "", ""},
		{"what A2A's refusal lists", a2aRefusal, `{"error":{"code":400,"details":[{"reason":"VERSION_NOT_SUPPORTED","metadata":{"requested":"1.1","supportedVersions":" 0.3, 0.2,","SUPPORTEDVERSIONS":["0.1"]}}]}}`, false, exchange.Refused, 0, []string{"0.3", "0.2"}, "VERSION_NOT_SUPPORTED", ""},
		{"one bare detail", a2aRefusal, `{"error":{"code":1,"data":{"reason":"VERSION_NOT_SUPPORTED"}}}`, false, exchange.Refused, 0, nil, "VERSION_NOT_SUPPORTED", ""},
		{"another reason", a2aRefusal, `{"error":{"code":1,"data":[{"reason":"TASK_NOT_FOUND"},2,{"reason":1}]}}`, false, exchange.Served, 1, nil, "", ""},
		{"a reason refuses only where the protocol says", mcpRefusal, `{"error":{"code":1,"data":[{"reason":"VERSION_NOT_SUPPORTED"}]}}`, false, exchange.Served, 1, nil, "", ""},
		{"an id that is no string or number", a2aRefusal, `{"id":{"a":1},"error":{"code":-32009}}`, false, exchange.Refused, 0, nil, "", ""},
		{"a refusal cut short is still one", a2aRefusal, `{"jsonrpc":"2.0","id":"req-1","error":{"code":-32009,"message":"no"`, false, exchange.Refused, 0, nil, "", `"req-1"`},
		{"so far, a number that may go on", a2aRefusal, `{"id":7,"error":{"code":-32009`, true, exchange.Undecided, 0, nil, "", "7"},
		{"so far, another number", a2aRefusal, `{"id":7,"error":{"code":-3200`, true, exchange.Undecided, 0, nil, "", "7"},
		{"so far, a refusal whose list is still coming", a2aRefusal, `{"id":7,"error":{"code":-32009,"data":[{"metadata":{"supportedVersions":"0.2"`, true, exchange.Undecided, 0, nil, "", "7"},
		{"so far, a whole error", a2aRefusal, `{"id":7,"error":{"code":-32009}`, true, exchange.Refused, 0, nil, "", "7"},
		{"so far, a refusal broken after its code", a2aRefusal, `{"id":7,"error":{"code":-32009,]`, true, exchange.Refused, 0, nil, "", "7"},
		{"so far, a result first", a2aRefusal, `{"result":`, true, exchange.Served, 1, nil, "", ""},
		{"so far, a refusal in a batch", mcpRefusal, `[{"error":{"code":-32022}}`, true, exchange.Refused, 0, nil, "", ""},
		{"so far, a batch that may yet refuse", a2aRefusal, `[{"result":{}}`, true, exchange.Undecided, 0, nil, "", ""},
		{"so far, broken before any refusal", a2aRefusal, `{"id":7,]`, true, exchange.Served, 0, nil, "", "7"},
		{"one of the protocol's answers is a response", streamAnswers, `{"task":{"id":"t"}}`, false, exchange.Served, 1, nil, "", ""},
		{"in any case", streamAnswers, `{"STATUSUPDATE":{}}`, false, exchange.Served, 1, nil, "", ""},
		{"a null one answers nothing", streamAnswers, `{"task":null}`, false, exchange.Served, 0, nil, "", ""},
		{"nor does a member of another name", streamAnswers, `{"tasks":{}}`, false, exchange.Served, 0, nil, "", ""},
		{"nor a request that holds one", streamAnswers, `{"method":"m","task":{}}`, false, exchange.Served, 0, nil, "", ""},
		{"another protocol's answer is no response", a2aRefusal, `{"task":{}}`, false, exchange.Served, 0, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.f.Read([]byte(c.msg), !c.partial)
			if r.Verdict != c.want || r.Responses != c.resps || !slices.Equal(r.Listed, c.listed) || r.Reason != c.reason || string(r.ID) != c.id {
				t.Errorf("%+v; want %d, %d responses, listing %q, reason %q, id %s", r, c.want, c.resps, c.listed, c.reason, c.id)
			}
		})
	}
}

// TestRefusalReadIDs: the ids of the responses read are those every
// client reads alike: one member spelled id, a string or a number, as
// written, of a response (a batch's members included) in an answer read
// to its end as one JSON value.
func TestRefusalReadIDs(t *testing.T) {
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                          "1",
		`[{"id":1,"result":{}},{"id":"a","error":{"code":1}},{"id":2}]`: `1|"a"`,
		`{"result":{},"id":"x"}`:                                        `"x"`,
		`{"jsonrpc":"2.0","id":1.0,"result":{}}`:                        "1.0",
		`{"ID":1,"result":{}}`:                                          "",
		`{"id":1,"Id":1,"result":{}}`:                                   "",
		`{"id":1,"id":2,"result":{}}`:                                   "",
		`{"id":null,"result":{}}`:                                       "",
		`{"id":[1],"result":{}}`:                                        "",
		`{"id":1,"method":"m","result":{}}`:                             "",
		`{"id":1,"method":"m"}`:                                         "",
		`{"id":1,"result":{}} {}`:                                       "",
		`{"id":1,"error":{"code":-32022}}`:                              "",
	} {
		r := mcpRefusal.Read([]byte(msg), true)
		var got []string
		for _, id := range r.IDs {
			got = append(got, string(id))
		}
		if strings.Join(got, "|") != want {
			t.Errorf("%s: ids %q, want %q", msg, got, want)
		}
	}
}

// TestAnswered: a request is answered by a response whose id is written
// as the request wrote it; what is left is pending still.
func TestAnswered(t *testing.T) {
	ids := func(s ...string) []jsontext.Value {
		out := make([]jsontext.Value, len(s))
		for i, v := range s {
			out[i] = jsontext.Value(v)
		}
		return out
	}
	for _, c := range []struct{ pending, answers, want []jsontext.Value }{
		{ids("1"), ids("1"), ids()},
		{ids("1"), ids("2", "1.0", `"1"`), ids("1")},
		{ids("1", `"a"`, "3"), ids(`"a"`, "1"), ids("3")},
		{ids(), ids("1"), ids()},
		{ids("1", "2"), nil, ids("1", "2")},
	} {
		if got := exchange.Answered(slices.Clone(c.pending), c.answers); !slices.EqualFunc(got, c.want, func(a, b jsontext.Value) bool { return string(a) == string(b) }) {
			t.Errorf("Answered(%s, %s) = %s, want %s", c.pending, c.answers, got, c.want)
		}
	}
}

// TestMayRefuse: an answer that cannot spell the refusal is not read.
func TestMayRefuse(t *testing.T) {
	for _, c := range []struct {
		f   exchange.Refusal
		msg string
		may bool
	}{
		{mcpRefusal, `{"error":{"code":-32022.0}}`, true},
		{mcpRefusal, `{"error":{"code":-32021}}`, false},
		{mcpRefusal, `{"reason":"VERSION_NOT_SUPPORTED","x":"\u0041"}`, false},
		{a2aRefusal, `{"error":{"code":1,"data":[{"reason":"VERSION_NOT_SUPPORTED"}]}}`, true},
		{a2aRefusal, `{"error":{"code":1,"data":[{"reason":"VERSION\u005fNOT_SUPPORTED"}]}}`, true},
		{a2aRefusal, `{"error":{"code":-32009}}`, true},
		{a2aRefusal, `{"error":{"code":-32001,"data":[{"reason":"TASK_NOT_FOUND"}]}}`, false},
		// An escape at the very start could spell the reason too (it is no
		// JSON, but false must be certain).
		{a2aRefusal, `\u0056ERSION_NOT_SUPPORTED`, true},
	} {
		if got := c.f.MayRefuse([]byte(c.msg)); got != c.may {
			t.Errorf("%+v %s: %t", c.f, c.msg, got)
		}
	}
}

// FuzzRefusalRead: whatever an answer holds, reading it never panics, and
// an answer read as far as it has come, wherever it is cut, shows nothing
// or what it shows whole: the same verdict, the same listing. The one
// exception is the bound's: a result first settles an A2A answer cut
// short as served (ResultFirst), which its whole may contradict.
func FuzzRefusalRead(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"data":{"supported":["2025-11-25"],"reason":"below-floor"}}}`,
		`[{"result":{}},{"error":{"code":-32009,"details":[{"reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"0.3"}}]}}]`,
		`{"result":{},"error":{"code":-3.2009e4}}`, `{"error":{"code":-32009,]`, `{"id":"x","error":{"code":-320090}}`, `[[[`, ``,
	} {
		f.Add([]byte(seed), uint16(20), false)
		f.Add([]byte(seed), uint16(40), true)
	}
	f.Fuzz(func(t *testing.T, msg []byte, cut uint16, a2a bool) {
		r := mcpRefusal
		if a2a {
			r = a2aRefusal
		}
		whole := r.Read(msg, true)
		if whole.Verdict == exchange.Undecided || whole.Verdict == exchange.Unreadable {
			t.Fatalf("%q read whole: %+v", msg, whole)
		}
		at := int(cut) % (len(msg) + 1)
		part := r.Read(msg[:at], false)
		if part.Verdict != exchange.Undecided && !(a2a && part.Verdict == exchange.Served) && (part.Verdict != whole.Verdict || !slices.Equal(part.Listed, whole.Listed) || part.Reason != whole.Reason) {
			t.Fatalf("%q cut at %d: %+v, whole %+v", msg, at, part, whole)
		}
	})
}
