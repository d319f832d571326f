package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

// Discovery is what an MCP server's server/discover said about the
// revisions it serves.
type Discovery struct {
	// Versions are the revisions the server lists, as it listed them.
	Versions []string
	// Refused is true when Versions came from the data.supported of a
	// -32022 refusal of the revision asked for, rather than from the
	// result's supportedVersions.
	Refused bool
}

// DiscoverError reports a server/discover that yielded no list of
// revisions: the server could not be reached, answered something that is
// not JSON-RPC, or answered an error other than -32022 with data.
type DiscoverError struct {
	// Status is the HTTP status of the answer; 0 when there was none.
	Status int
	// Code and Message are the JSON-RPC error of the answer, when it was
	// one.
	Code    int
	Message string
	// Err is the underlying failure, when there is one.
	Err error
}

// Error says what the answer was, as far as there was one.
func (e *DiscoverError) Error() string {
	var b strings.Builder
	b.WriteString("mcphttp: server/discover")
	if e.Status != 0 {
		b.WriteString(": HTTP " + strconv.Itoa(e.Status))
	}
	if e.Code != 0 {
		b.WriteString(": json-rpc error " + strconv.Itoa(e.Code) + " " + strconv.Quote(e.Message))
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *DiscoverError) Unwrap() error { return e.Err }

const methodDiscover = "server/discover"

// Discover asks the MCP server at serverURL which revisions it serves: it
// POSTs server/discover at revision (header and _meta), and returns the
// result's supportedVersions, or the data.supported of a -32022 refusal
// (MCP 2026-07-28). The answer may be JSON or a stream of server-sent
// events, and is read up to DefaultMaxBodyBytes. client nil means
// http.DefaultClient.
func Discover(ctx context.Context, client *http.Client, serverURL, revision string) (Discovery, error) {
	if _, err := facets.ParseVersion(facets.ProtocolMCP, revision); err != nil {
		return Discovery{}, fmt.Errorf("mcphttp: Discover: %w", err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      1,
		"method":  methodDiscover,
		"params": map[string]any{"_meta": map[string]any{
			MetaProtocolVersion:                          revision,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader(body))
	if err != nil {
		return Discovery{}, &DiscoverError{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderProtocolVersion, revision)
	req.Header.Set(HeaderMethod, methodDiscover)
	resp, err := client.Do(req)
	if err != nil {
		return Discovery{}, &DiscoverError{Err: err}
	}
	defer resp.Body.Close()
	data, err := readAnswer(resp)
	if err != nil {
		return Discovery{}, &DiscoverError{Status: resp.StatusCode, Err: err}
	}
	r := strictjson.NewReader(data, 0)
	rep, err := readReply(r)
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return Discovery{}, &DiscoverError{Status: resp.StatusCode, Err: fmt.Errorf("the answer is not a JSON-RPC response: %w", err)}
	}
	return discovery(resp.StatusCode, rep)
}

// readAnswer reads the JSON-RPC response in an answer, up to
// DefaultMaxBodyBytes: the body itself, or the data of the first
// server-sent event that is a response. An event stream is read only as
// far as that event, so a server that keeps its stream open does not hold
// the caller.
func readAnswer(resp *http.Response) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := mt == "text/event-stream"
	var events sseScanner
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > DefaultMaxBodyBytes {
			// At most one chunk past the bound is ever held.
			return nil, fmt.Errorf("the answer exceeds %d bytes", DefaultMaxBodyBytes)
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

func discovery(status int, rep reply) (Discovery, error) {
	if rep.err == nil {
		versions, err := resultVersions(rep.result)
		if err != nil {
			return Discovery{}, &DiscoverError{Status: status, Err: fmt.Errorf("the result: %w", err)}
		}
		return Discovery{Versions: versions}, nil
	}
	if rep.err.code == rpcerr.RPCMCPUnsupportedProtocolVersion && rep.err.data != nil {
		if supported, err := stringsMember(rep.err.data, "supported"); err == nil {
			return Discovery{Versions: supported, Refused: true}, nil
		}
	}
	return Discovery{}, &DiscoverError{Status: status, Code: int(rep.err.code), Message: rep.err.message}
}

// OutboundOptions configures [Negotiate].
type OutboundOptions struct {
	// Sink records the negotiation.decided event. It is required.
	Sink events.Sink
	// Subject is the host's own outbound identity, on whose behalf it calls
	// the server; nil is unauthenticated, which is never downgraded.
	Subject *negotiate.Subject
	// Destination says where the event is recorded; the zero Destination
	// is a durable host event.
	Destination negotiate.Destination
	// Client sends server/discover; nil means http.DefaultClient.
	Client *http.Client
}

// Negotiate settles the revision a host speaks with the MCP server at
// serverURL: it calls server/discover at the host's preferred revision
// (see [Discover]), decides with n for opts.Subject with the revisions the
// server lists as the peer's offer, and records the decision. It returns
// the outcome, what discovery said, and an error that is nil exactly when
// the outcome is accepted and recorded.
//
// A server that cannot be asked (a URL without an http(s) origin, an
// unreachable server, an answer that lists no revisions) offers nothing,
// and the decision refuses it (below-floor, as the reference host does);
// the error then also holds the [*DiscoverError]. Nothing is sent at a
// refused revision: only an accepted outcome makes a [Transport].
func Negotiate(ctx context.Context, n *negotiate.Negotiator, serverURL string, opts OutboundOptions) (negotiate.Outcome, Discovery, error) {
	if n == nil {
		return negotiate.Outcome{}, Discovery{}, errors.New("mcphttp: Negotiate: the negotiator is nil")
	}
	if opts.Sink == nil {
		return negotiate.Outcome{}, Discovery{}, errors.New("mcphttp: Negotiate: OutboundOptions.Sink is nil; every negotiation must be recorded")
	}
	adv, ok := n.Facets().Lookup(facets.ProtocolMCP)
	if !ok {
		return negotiate.Outcome{}, Discovery{}, errors.New("mcphttp: Negotiate: the negotiator does not advertise the mcp facet")
	}
	var d Discovery
	var derr error
	if _, err := events.PeerDigest(serverURL); err == nil {
		d, derr = Discover(ctx, opts.Client, serverURL, adv.Preferred)
	}
	// Without a URL that has an origin, nothing is sent, and the decision
	// refuses the exchange (negotiate.RuleInput).
	offer := negotiate.Offer{
		Protocol:     facets.ProtocolMCP,
		Peer:         serverURL,
		Requested:    adv.Preferred,
		PeerVersions: d.Versions,
	}
	o, aerr := n.DecideAndRecord(ctx, opts.Sink, opts.Destination, opts.Subject, offer)
	var refusal error
	if o.Err() != nil {
		refusal = o.Err()
	}
	return o, d, errors.Join(refusal, derr, aerr)
}
