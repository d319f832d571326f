package mcphttp

import (
	"bufio"
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

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
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
	raw, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxBodyBytes+1))
	if err != nil {
		return Discovery{}, &DiscoverError{Status: resp.StatusCode, Err: err}
	}
	if len(raw) > DefaultMaxBodyBytes {
		return Discovery{}, &DiscoverError{Status: resp.StatusCode, Err: fmt.Errorf("the answer exceeds %d bytes", DefaultMaxBodyBytes)}
	}
	msg, err := rpcAnswer(resp.Header.Get("Content-Type"), raw)
	if err != nil {
		return Discovery{}, &DiscoverError{Status: resp.StatusCode, Err: err}
	}
	return discovery(resp.StatusCode, msg)
}

// rpcResponse is a JSON-RPC response, as much of it as discovery reads.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		SupportedVersions []string `json:"supportedVersions"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// rpcAnswer finds the JSON-RPC response in an answer: the body itself, or
// the first server-sent event whose data is a response.
func rpcAnswer(contentType string, raw []byte) (rpcResponse, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "text/event-stream" {
		var r rpcResponse
		if err := json.Unmarshal(raw, &r); err != nil {
			return rpcResponse{}, fmt.Errorf("the answer is not a JSON-RPC response: %w", err)
		}
		return r, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), DefaultMaxBodyBytes+1)
	var data []byte
	try := func() (rpcResponse, bool) {
		defer func() { data = data[:0] }()
		var r rpcResponse
		if len(data) == 0 || json.Unmarshal(data, &r) != nil || (r.Result == nil && r.Error == nil) {
			return r, false
		}
		return r, true
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if r, ok := try(); ok {
				return r, nil
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	if r, ok := try(); ok {
		return r, nil
	}
	return rpcResponse{}, errors.New("the event stream holds no JSON-RPC response")
}

func discovery(status int, r rpcResponse) (Discovery, error) {
	switch {
	case r.Result != nil && r.Error == nil:
		if r.Result.SupportedVersions == nil {
			return Discovery{}, &DiscoverError{Status: status, Err: errors.New("the result has no supportedVersions")}
		}
		return Discovery{Versions: r.Result.SupportedVersions}, nil
	case r.Error != nil && r.Result == nil:
		if r.Error.Code == wperrors.RPCMCPUnsupportedProtocolVersion && len(r.Error.Data) > 0 {
			var d struct {
				Supported []string `json:"supported"`
			}
			if err := json.Unmarshal(r.Error.Data, &d); err == nil && d.Supported != nil {
				return Discovery{Versions: d.Supported, Refused: true}, nil
			}
		}
		return Discovery{}, &DiscoverError{Status: status, Code: r.Error.Code, Message: r.Error.Message}
	}
	return Discovery{}, &DiscoverError{Status: status, Err: errors.New("the answer is neither a result nor an error")}
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
	if !o.Accepted() {
		refusal = o.Err()
	}
	return o, d, errors.Join(refusal, derr, aerr)
}
