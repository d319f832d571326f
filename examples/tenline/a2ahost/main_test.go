package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wopneg/wopneg/examples/tenline/internal/logfile"
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
