package mcphttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// bearer is a RoundTripper that sends a token with every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestOutboundRefusalSaysWhatThePeerOffered: a host that asks a server
// behind this module's middleware for 2025-11-25 without sending its
// token is refused by the server, which serves that revision only to a
// caller it authenticates: Connect's error keeps its registered code and
// says what the server offered and that the caller's identity refused it,
// in its message and, typed, in details.offered and details.peerReason;
// with the token the same call is served. A refusal by the host's own
// rule (an anonymous host, a server that offers only a revision below
// preferred) says the server's offer and the fix too.
func TestOutboundRefusalSaysWhatThePeerOffered(t *testing.T) {
	m, err := mcphttp.New(compile(t, wideFacets(), policy.Policy{}), mcphttp.Options{Sink: &negotiatetest.Recorder{}, Subject: subjectOf})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(m.Wrap(&fakeServer{revisions: wideFacets().MCP.Revisions, stateful: true}))
	t.Cleanup(server.Close)
	host := compile(t, wideFacets(), policy.Policy{})
	connect := func(opts mcphttp.OutboundOptions) (*mcphttp.Transport, error) {
		opts.Sink, opts.Requested, opts.AllowLoopback = &negotiatetest.Recorder{}, "2025-11-25", true
		tr, _, err := mcphttp.Connect(context.Background(), host, server.URL, opts)
		return tr, err
	}

	_, err = connect(mcphttp.OutboundOptions{Subject: user})
	var we *wperrors.Error
	if !errors.Is(err, wperrors.InteropVersionUnsupported) || !errors.As(err, &we) {
		t.Fatalf("no token: %v, want an interop_version_unsupported *errors.Error", err)
	}
	want := "interop_version_unsupported: mcp negotiation refused: unsupported; the peer refused it to an unauthenticated caller, and offers such a caller 2026-07-28: send it credentials it accepts (OutboundOptions.Client)"
	if we.Error() != want || !reflect.DeepEqual(we.Details["offered"], []string{"2026-07-28"}) || we.Details["peerReason"] != "unauthenticated" || we.Details["reason"] != "unsupported" {
		t.Errorf("no token:\n%s %v\nwant\n%s, offered [2026-07-28], peerReason unauthenticated, the record's reason unsupported", we.Error(), we.Details, want)
	}

	tr, err := connect(mcphttp.OutboundOptions{Subject: user, Client: &http.Client{Transport: bearer{"user"}}})
	if err != nil || tr.Version() != "2025-11-25" {
		t.Fatalf("with the token: %v", err)
	}
	_ = tr.Close(context.Background())

	only := httptest.NewServer(http.HandlerFunc(discoverThen(jsonAnswer(200, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","not a revision"]}}`), nil, false)))
	t.Cleanup(only.Close)
	_, _, err = mcphttp.Negotiate(context.Background(), host, only.URL, mcphttp.OutboundOptions{Sink: &negotiatetest.Recorder{}, AllowLoopback: true})
	want = "interop_version_unsupported: mcp negotiation refused: unauthenticated; the peer offers 2025-11-25, below the preferred version, which only an authenticated caller settles on: set OutboundOptions.Subject to the host's identity towards the peer"
	if !errors.As(err, &we) || we.Error() != want || !reflect.DeepEqual(we.Details["offered"], []string{"2025-11-25"}) || we.Details["peerReason"] != nil {
		t.Errorf("an anonymous host:\n%v\nwant\n%s", err, want)
	}
	if !strings.Contains(err.Error(), "the peer offers 2025-11-25") {
		t.Errorf("the joined error %q hides the offer", err)
	}

	// At runtime, the -32022 the server answers a call with says what it
	// offers instead, and that is what the error says.
	p, rt := connected(t, jsonAnswer(400, `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"no","data":{"supported":["2025-11-25"],"requested":"2026-07-28","reason":"below-floor"}}}`))
	_, _, err = postThrough(t, rt, p.URL, toolsCall, nil)
	if !errors.As(err, &we) || !reflect.DeepEqual(we.Details["offered"], []string{"2025-11-25"}) || we.Details["peerReason"] != "below-floor" || !strings.HasSuffix(we.Message, "; the peer offers 2025-11-25") {
		t.Errorf("a runtime refusal: %v", err)
	}
}
