package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopneg/wopneg/examples/tenline/internal/logfile"
)

// bearer presents the demo token on every request.
type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer demo")
	return b.base.RoundTrip(r)
}

// send03 sends a message with the a2a-go 0.3 client, which sends no
// A2A-Version, as the caller client is.
func send03(t *testing.T, url string, client *http.Client) (string, error) {
	t.Helper()
	ctx := context.Background()
	card := &a2a03.AgentCard{Name: "a2alegacy", URL: url, PreferredTransport: a2a03.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0"}
	c, err := a2aclient03.NewFromCard(ctx, card, a2aclient03.WithJSONRPCTransport(client))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: "hi"})})
	if err != nil {
		return "", err
	}
	msg, ok := res.(*a2a03.Message)
	if !ok || len(msg.Parts) != 1 {
		t.Fatalf("SendMessage returned %#v", res)
	}
	return msg.Parts[0].(a2a03.TextPart).Text, nil
}

// TestHost runs the host with real clients: the a2a-go 0.3 client, which
// sends no A2A-Version, is served at 0.3 when it shows the token and
// refused when it does not; the a2a-go v2 client is served at 1.0. Every
// decision is on the record, through slog.Default.
func TestHost(t *testing.T) {
	logged := logfile.Capture(t)
	srv := httptest.NewServer(host())
	t.Cleanup(srv.Close)

	got, err := send03(t, srv.URL, &http.Client{Transport: bearer{srv.Client().Transport}})
	if err != nil || got != "served at 0.3" {
		t.Errorf("the authenticated 0.3 client got %q, %v", got, err)
	}
	if got, err := send03(t, srv.URL, srv.Client()); err == nil {
		t.Errorf("the anonymous 0.3 client was served %q", got)
	}

	ctx := context.Background()
	card := &a2a.AgentCard{Name: "a2alegacy", SupportedInterfaces: []*a2a.AgentInterface{{URL: srv.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}}}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if msg, ok := res.(*a2a.Message); err != nil || !ok || msg.Parts[0].Text() != "served at 1.0" {
		t.Errorf("the v2 client got %#v, %v", res, err)
	}

	log := logged()
	for _, want := range []string{"outcome=accepted version=0.3 requested=0.3", "outcome=refused requested=0.3 reason=unauthenticated", "outcome=accepted version=1.0 requested=1.0"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}
