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
