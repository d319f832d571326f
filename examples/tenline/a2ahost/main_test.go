package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/tenline/internal/logfile"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// TestHost runs the ten-line host: an a2a-go v2 client with its defaults
// resolves the card and sends a message at 1.0, and both decisions are on
// the record, through slog.Default.
func TestHost(t *testing.T) {
	logged := logfile.Capture(t)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = host("http://" + srv.Listener.Addr().String())
	srv.Start()
	t.Cleanup(srv.Close)

	ctx := context.Background()
	card, err := agentcard.NewResolver(srv.Client()).Resolve(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := res.(*a2a.Message); !ok || len(msg.Parts) != 1 || msg.Parts[0].Text() != "hello" {
		t.Errorf("SendMessage returned %#v", res)
	}
	if got := logged(); strings.Count(got, "protocol=a2a outcome=accepted version=1.0") != 2 {
		t.Errorf("the log holds not two acceptances of 1.0 (the card, the message):\n%s", got)
	}
}

// wireHost is the host as the fixture kit builds it: the agent behind
// a2ahttp.Handler, compiled from the facet, policy and sink the kit
// hands it.
func wireHost(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error) {
	return a2ahttp.Handler(set.A2A, caller, agentServer("http://127.0.0.1"),
		a2ahttp.HandlerOptions{Options: a2ahttp.Options{Sink: sink}, Policy: p})
}

// wireOptions tell the kit how the host serves: A2A's JSON-RPC at /, and
// the demo token.
func wireOptions(advertised facets.Set) negotiatetest.WireOptions {
	return negotiatetest.WireOptions{Facets: advertised, Endpoints: map[facets.Protocol]string{facets.ProtocolA2A: "/"}, Bearer: "demo"}
}

// TestWire: the host passes the fixture kit's vectors derived from the
// facet it advertises, 1.0 only; built from a facet that also offers 0.3
// above the floor, which a2a-go v2's handler cannot serve, it fails them,
// the kit naming the rule.
func TestWire(t *testing.T) {
	negotiatetest.RunWire(t, wireHost, wireOptions(facets.Set{A2A: facet}))

	tb := &recordingTB{}
	negotiatetest.RunWire(tb, wireHost, wireOptions(facets.Set{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3"}}))
	var caught bool
	for _, e := range tb.errs {
		caught = caught || strings.HasPrefix(e, "a2a/authenticated-downgrade ") && strings.Contains(e, "JSON-RPC error [-32601]; a host serves every version its record accepts")
	}
	if !caught {
		t.Errorf("the kit passed a 1.0 agent advertising 0.3: %q", tb.errs)
	}
}

// recordingTB keeps what the kit reports.
type recordingTB struct {
	testing.TB
	errs []string
}

func (*recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
