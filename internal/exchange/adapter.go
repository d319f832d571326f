// Package exchange is the one engine every exchange of the module runs on:
// MCP and A2A inbound (negotiate/mcphttp, negotiate/a2ahttp), their
// Connect Transports, and the conformance seams. What is true of an
// exchange is the same at all of these places, so it is written here once,
// and each protocol supplies only its facts (how a request names its
// version, how a refusal is written, which answers refuse):
//
//   - the answer reader ([Answer], [Read]): an answer read as its clients
//     read it, decoded, without a byte-order mark, JSON or an event
//     stream, within one bound; unreadable is never an acceptance; an
//     event that not every client takes as a message (one the stream's
//     end cuts off, which the SDKs' clients read and the event-stream
//     format drops; one with an event type other than message, which the
//     MCP clients pass over) counts when it refuses and only then, the
//     stricter reading; a response answers the request whose id it
//     writes as the request wrote it ([Answered]); a stream settled at a
//     result is followed as its client is given it, for the refusal a
//     client that yields each event reads after the result
//     ([Answer.Follow], [Follower], [Read]'s later);
//   - the lenient reader of what an answer says ([Refusal.Read]): a
//     refusal found as the most lenient client finds it, and what it
//     lists;
//   - the record ([Recorder]): a context that never depends on the
//     client's or the caller's connection, the contradiction of a server
//     or peer recorded as the decision changed to the refusal, the log
//     lines of an unrecorded event and of a negotiation that reached no
//     decision;
//   - the outbound link ([Peer]): calls only to the peer's origin, the
//     runtime refusal recorded;
//   - what an inbound decision records before anything is served
//     ([Recorder.Decided]);
//   - the caller's Subject, an invalid one logged and never trusted
//     ([Subject]);
//   - a header read and stamped under every spelling of its key
//     ([HeaderValues], [SetHeader]);
//   - the start-up check, the outcome carried to the wrapped handler, and
//     the one-call constructor ([Mount]).
//
// The record runs deep. Once an answer shows its verdict it is recorded
// on top of the wrapped server's stack, under every frame of the request,
// and a goroutine whose stack is outgrown doubles it, copying it (a
// request behind either middleware fits in 8 KiB, as one behind otelhttp
// does). So the record's path takes the outcome and its event by pointer,
// the event is made where it is recorded (events' fill), each place keeps
// the rare paths of its common request (a session, a refusal, a replaced
// answer) in functions of their own, whose frames are not under the
// record, and what empties a pooled watcher stays out of line
// ([Hold.Release], [Pool.Put]): Go gives a function one frame, the size
// of all its paths, and a function inlined into another adds its copies
// to that one's.
//
// Its guarantees are tested once, as a table whose rows are the
// guarantees and whose columns are the places (places_test.go).
package exchange

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// Check returns the facet n advertises for p, or why the adapter named pkg
// cannot work with n and sink: a nil Negotiator, one that does not
// advertise p, or a nil sink, which wraps [events.ErrClosed] (a negotiation
// with nowhere to be recorded is a configuration error, not a default), or
// a policy that requires the audit with a sink that is not durable
// ([events.Durable]).
func Check(pkg string, n *negotiate.Negotiator, sink events.Sink, p facets.Protocol) (facets.Advertised, error) {
	if n == nil {
		return facets.Advertised{}, errors.New(pkg + ": the Negotiator is nil")
	}
	adv, ok := n.Facets().Lookup(p)
	if !ok {
		return facets.Advertised{}, fmt.Errorf("%s: the Negotiator does not advertise %s", pkg, p)
	}
	if sink == nil {
		return facets.Advertised{}, fmt.Errorf("%s: the Sink is nil; every negotiation must be recorded: %w", pkg, events.ErrClosed)
	}
	if err := Audited(pkg, n, sink); err != nil {
		return facets.Advertised{}, err
	}
	return adv, nil
}

// Audited returns an error naming the fix when n's policy requires the
// audit and sink does not say it is durable ([events.Durable]), and nil
// otherwise. RequireAudit promises that nothing is answered without its
// record; a sink whose nil means queued in memory, or handed to a pipe,
// can lose a record it already answered for, so the promise would be
// false from the start. It is the one check of it, for every place a host
// starts with a sink: [Check] (the adapters' New and one-call Handler,
// their outbound Negotiate and Connect) and each exchange of the seams.
func Audited(pkg string, n *negotiate.Negotiator, sink events.Sink) error {
	if d, ok := sink.(events.Durable); n.RequiresAudit() && (!ok || !d.Durable()) {
		return errors.New(pkg + ": the policy requires the audit (RequireAudit) but the Sink is not durable (events.Durable), so an answered decision could lose its record; " + auditFix)
	}
	return nil
}

// auditFix is what to do about a required audit with a sink that is not
// durable.
const auditFix = "record into a durable sink (events.NewAsync with AsyncOptions.Acknowledge over a durable store such as examples/pgbatch, or events.NewJSONLinesFile), or drop RequireAudit"

// key keys the accepted outcome of a request for protocol p in its
// context, so that one adapter never reads the other's.
type key struct{ p facets.Protocol }

// The keys of the two protocols, made interface values once: a key made
// per request would cost an allocation each time.
var mcpKey, a2aKey any = key{facets.ProtocolMCP}, key{facets.ProtocolA2A}

func keyOf(p facets.Protocol) any {
	switch p {
	case facets.ProtocolMCP:
		return mcpKey
	case facets.ProtocolA2A:
		return a2aKey
	}
	return key{p}
}

// WithOutcome returns ctx carrying o, the accepted outcome of a request
// for protocol p.
func WithOutcome(ctx context.Context, p facets.Protocol, o *negotiate.Outcome) context.Context {
	return context.WithValue(ctx, keyOf(p), o)
}

// Outcome returns the outcome WithOutcome put in ctx for p, and false when
// there is none.
func Outcome(ctx context.Context, p facets.Protocol) (negotiate.Outcome, bool) {
	o, ok := ctx.Value(keyOf(p)).(*negotiate.Outcome)
	if !ok {
		return negotiate.Outcome{}, false
	}
	return *o, true
}

// Sendable returns nil when o is an accepted outcome of protocol p with a
// well-formed version, the only kind a transport may send at, and
// otherwise why the adapter named pkg makes no transport for it.
func Sendable(pkg string, o negotiate.Outcome, p facets.Protocol) error {
	if o.Err() != nil {
		return fmt.Errorf("%s: no transport for a refused negotiation: %w", pkg, o.Err())
	}
	if o.Protocol != p {
		return fmt.Errorf("%s: no transport for a %q negotiation", pkg, o.Protocol)
	}
	if _, err := facets.ParseVersion(p, o.Version); err != nil {
		return fmt.Errorf("%s: no transport for the outcome: %w", pkg, err)
	}
	return nil
}

// Offer is the Offer of a request that reached the host at requested, as
// [negotiate.InboundOffer] makes it, with its one version taken from adv's
// own list when adv offers it: the decision only reads the list, so the
// common request allocates nothing for it. adv is the middleware's own,
// never handed out.
func Offer(adv facets.Advertised, requested string) negotiate.Offer {
	if i := slices.Index(adv.Versions, requested); i >= 0 && requested != "" {
		return negotiate.Offer{Protocol: adv.Protocol, Requested: requested, PeerVersions: adv.Versions[i : i+1 : i+1]}
	}
	return negotiate.InboundOffer(adv, "", requested)
}

// Subject is the Subject a request is decided for, given s, the one the
// host's Subject function resolved (nil: none): s when it is valid. An
// invalid Subject is a fault of the host's authentication, which never
// gains a caller anything and is never silent: it is logged to log with
// every violation ("wopneg: invalid Subject: ..."), and read as no
// Subject, or, when strict, its violations come back for the request to
// be refused before any negotiation.
func Subject(ctx context.Context, s *negotiate.Subject, strict bool, log *slog.Logger) (valid *negotiate.Subject, invalid string) {
	if s == nil {
		return nil, ""
	}
	err := s.Validate() // every violation, each with its JSON path
	if err == nil {
		return s, ""
	}
	invalid = strings.TrimPrefix(err.Error(), "invalid subject: ")
	log.ErrorContext(ctx, "wopneg: invalid Subject: "+invalid, slog.Bool("refused", strict))
	if strict {
		return nil, invalid
	}
	return nil, ""
}

// HeaderValues returns the values of the header whose canonical key is
// name under every spelling of its key. net/http canonicalizes what it
// reads off the wire, but an http.Header built by hand can hold
// "MCP-Protocol-Version" beside "Mcp-Protocol-Version", and whoever reads
// it next (the wrapped server, the peer) reads both: no value may pass
// unchecked under a spelling a check did not see. Other spellings come
// after the canonical one, sorted by key, so that what is reported does
// not depend on map order; with none (every header net/http read) the
// values are h[name] itself.
func HeaderValues(h http.Header, name string) []string {
	vs := h[name]
	var others []string
	for k := range h {
		if k != name && strings.EqualFold(k, name) {
			others = append(others, k)
		}
	}
	slices.Sort(others)
	for _, k := range others {
		vs = append(vs[:len(vs):len(vs)], h[k]...) // never into the header's own array
	}
	return vs
}

// SetHeader returns h (a new one when h is nil) with the header whose
// canonical key is name set to value alone, under that key: every other
// spelling of it is deleted, so that the peer reads the one value.
func SetHeader(h http.Header, name, value string) http.Header {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
	if h == nil {
		h = make(http.Header, 1)
	}
	h[name] = []string{value}
	return h
}

// Leading returns members, JSON object members a stamp inserts first into
// the object that opens at body[open], followed by a comma unless that
// object is empty, so that it stays valid JSON. body is JSON, so a key or
// the closing brace follows the opening one. Both protocols stamp a
// request's body this way (MCP's _meta, A2A's message metadata).
func Leading(body []byte, open int, members string) string {
	if bytes.TrimLeft(body[open+1:], " \t\r\n")[0] == '}' {
		return members
	}
	return members + ","
}

// Unmade is the error of a zero value of an adapter's type typ, which only
// made (its constructors) readies: it has no Negotiator to decide with and
// no version to send at, so it serves and sends nothing.
func Unmade(pkg, typ, made string) error {
	return errors.New(pkg + ": a zero " + typ + " decides nothing and sends nothing; make it with " + made)
}

// Refusing is the handler a zero Middleware wraps a handler in: every
// request is answered err, as JSON-RPC's internal error on HTTP 500, and
// reaches nothing.
func Refusing(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, http.StatusInternalServerError, nil, rpcerr.RPCError{Code: -32603, Message: err.Error()})
	})
}
