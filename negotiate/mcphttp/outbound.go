package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/adapter"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// ErrNoOffers is wrapped by the error of a [Negotiate] whose
// server/discover yielded no list of revisions: the server could not be
// reached, answered something that is not JSON-RPC, or answered an error
// other than -32022 with data. The server then offers nothing, which the
// decision refuses.
var ErrNoOffers = errors.New("mcphttp: the server offers no revision")

// discovered is what an MCP server's server/discover said about the
// revisions it serves.
type discovered struct {
	// versions are the revisions the server lists, as it listed them.
	versions []string
	// refused is true when versions came from the data.supported of a
	// -32022 refusal of the revision asked for, rather than from the
	// result's supportedVersions.
	refused bool
}

// discoverError says why a server/discover yielded no list of revisions.
// It wraps ErrNoOffers and the underlying failure.
type discoverError struct {
	// status is the HTTP status of the answer; 0 when there was none.
	status int
	// code and message are the JSON-RPC error of the answer, when it was
	// one.
	code    int
	message string
	// err is the underlying failure, when there is one.
	err error
}

// Error says what the answer was, as far as there was one.
func (e *discoverError) Error() string {
	var b strings.Builder
	b.WriteString("mcphttp: server/discover")
	if e.status != 0 {
		b.WriteString(": HTTP " + strconv.Itoa(e.status))
	}
	if e.code != 0 {
		b.WriteString(": json-rpc error " + strconv.Itoa(e.code) + " " + strconv.Quote(e.message))
	}
	if e.err != nil {
		b.WriteString(": " + e.err.Error())
	}
	return b.String()
}

// Unwrap returns ErrNoOffers and the underlying failure.
func (e *discoverError) Unwrap() []error { return []error{ErrNoOffers, e.err} }

const methodDiscover = "server/discover"

// discover asks the MCP server at serverURL which revisions it serves: it
// POSTs server/discover at revision (header and _meta), and returns the
// result's supportedVersions, or the data.supported of a -32022 refusal
// (MCP 2026-07-28). The answer may be JSON or a stream of server-sent
// events, and is read up to defaultMaxBodyBytes. client nil means
// http.DefaultClient.
func discover(ctx context.Context, client *http.Client, serverURL, revision string) (discovered, error) {
	if client == nil {
		client = http.DefaultClient
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      1,
		"method":  methodDiscover,
		"params": map[string]any{"_meta": map[string]any{
			metaProtocolVersion:                          revision,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader(body))
	if err != nil {
		return discovered{}, &discoverError{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerProtocolVersion, revision)
	req.Header.Set(headerMethod, methodDiscover)
	resp, err := client.Do(req)
	if err != nil {
		return discovered{}, &discoverError{err: err}
	}
	defer resp.Body.Close()
	data, err := readAnswerBody(resp)
	if err != nil {
		return discovered{}, &discoverError{status: resp.StatusCode, err: err}
	}
	rep, err := readReply(data)
	if err != nil {
		return discovered{}, &discoverError{status: resp.StatusCode, err: fmt.Errorf("the answer is not a JSON-RPC response: %w", err)}
	}
	return discoveryOf(resp.StatusCode, rep)
}

// readAnswerBody reads the JSON-RPC response in an answer, up to
// defaultMaxBodyBytes: the body itself, or the data of the first
// server-sent event that is a response. An event stream is read only as
// far as that event, so a server that keeps its stream open does not hold
// the caller.
func readAnswerBody(resp *http.Response) ([]byte, error) {
	sse := adapter.IsEventStream(resp.Header.Get("Content-Type"))
	var events sseScanner
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > defaultMaxBodyBytes {
			// At most one chunk past the bound is ever held.
			return nil, fmt.Errorf("the answer exceeds %d bytes", defaultMaxBodyBytes)
		}
		if sse {
			if data, ok := events.response(buf); ok {
				return data, nil
			}
		}
		if err == io.EOF && sse {
			return nil, errors.New("the event stream holds no JSON-RPC response")
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// discoveryOf reads the revisions a server/discover reply lists.
func discoveryOf(status int, rep reply) (discovered, error) {
	if rep.result {
		if rep.versions == nil {
			return discovered{}, &discoverError{status: status, err: errors.New(`the result: no member "supportedVersions"`)}
		}
		return discovered{versions: rep.versions}, nil
	}
	if rep.code == rpcerr.RPCMCPUnsupportedProtocolVersion && rep.supported != nil {
		return discovered{versions: rep.supported, refused: true}, nil
	}
	return discovered{}, &discoverError{status: status, code: int(rep.code), message: rep.message}
}

// OutboundOptions configures [Negotiate]. Only Sink is required.
type OutboundOptions struct {
	// Sink records the negotiation.decided event. It is required.
	Sink events.Sink
	// Subject is the host's own outbound identity, on whose behalf it calls
	// the server; nil is unauthenticated, which is never downgraded.
	Subject *negotiate.Subject
	// Destination says where the event is recorded; the zero Destination
	// is a durable host event.
	Destination negotiate.Destination
	// Client sends server/discover; nil means http.DefaultClient. The
	// context given to Negotiate bounds the call.
	Client *http.Client
	// Requested is the revision the host asks for; empty means its
	// preferred one. server/discover is always sent at the preferred
	// revision, so that nothing below the floor reaches the server; the
	// decision then weighs Requested against what the server lists, and a
	// revision the host does not offer, or one below its floor, is refused
	// (this is how a conformance seam forces an unsupported revision).
	Requested string
}

// Negotiate settles the revision a host speaks with the MCP server at
// serverURL: it calls server/discover at the host's preferred revision,
// takes the result's supportedVersions (or a -32022's data.supported) as
// the server's offers, decides with n for opts.Subject and records the
// decision. It returns the outcome, the revisions the server offered, and
// an error that is nil exactly when the outcome is accepted and recorded.
//
// A server that cannot be asked (a URL without an http(s) origin, an
// unreachable server, an answer that lists no revisions) offers nothing,
// and the decision refuses it (below-floor, as the reference host does);
// the error then also wraps [ErrNoOffers]. When the outcome is refused the
// error is the refusal (an interop_version_unsupported or, under a
// required audit, internal_error *errors.Error), joined with the
// *negotiate.AuditError when the event was not recorded; when the outcome
// is accepted but its event was not recorded and the policy does not
// require it, it is the *negotiate.AuditError alone, and the caller decides
// whether to proceed. Nothing is sent at a refused revision: only an
// accepted outcome makes a [Transport].
func Negotiate(ctx context.Context, n *negotiate.Negotiator, serverURL string, opts OutboundOptions) (negotiate.Outcome, []string, error) {
	adv, err := adapter.Check("mcphttp", n, opts.Sink, facets.ProtocolMCP)
	if err != nil {
		return negotiate.Outcome{}, nil, err
	}
	requested := opts.Requested
	if requested == "" {
		// RFC 0242: outbound, requested is what the host asks the peer
		// for, and absent a choice that is its preferred revision.
		requested = adv.Preferred
	}
	var d discovered
	var derr error
	if _, err := events.PeerDigest(serverURL); err == nil {
		d, derr = discover(ctx, opts.Client, serverURL, adv.Preferred)
	}
	// Without a URL that has an origin, nothing is sent, and the decision
	// refuses the exchange (negotiate.RuleInput).
	offer := negotiate.Offer{
		Protocol:     facets.ProtocolMCP,
		Peer:         serverURL,
		Requested:    requested,
		PeerVersions: d.versions,
	}
	o, aerr := n.DecideAndRecord(ctx, opts.Sink, opts.Destination, opts.Subject, offer)
	var refusal error
	if o.Err() != nil {
		refusal = o.Err()
	}
	return o, d.versions, errors.Join(refusal, derr, aerr)
}
