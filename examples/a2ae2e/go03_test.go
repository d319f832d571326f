package a2ae2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/a2ahttp"
)

// TestA2AGo03ClientSendsNoHeader drives the a2a-go 0.3 client
// (github.com/a2aproject/a2a-go v0.3.15), which, as A2A 0.3 allowed, sends
// no A2A-Version at all. Its call is a request for 0.3 (A2A §3.6.2):
// served at 0.3 by a2a-go's 0.3 handler for an authenticated caller,
// refused with -32009 for an anonymous one, recorded as requested "0.3"
// either way. Its card request gets the preferred card (the v2 card rule),
// served as the 0.3/1.0 union card so that the 0.3 client can read it.
//
// This client predates the A2A 1.0 error details: it decodes error.data as
// an object and fails on the ErrorInfo list, so a host that serves it sets
// Options.OmitErrorData; it then surfaces the -32009 it does not know as
// an internal error carrying the middleware's message.
func TestA2AGo03ClientSendsNoHeader(t *testing.T) {
	const refusal = "A2A-Version (none, which A2A reads as 0.3) is below the preferred version 1.0 and is served only to an authenticated caller; this interface serves 1.0"
	for _, tc := range []struct {
		name     string
		auth     bool
		omitData bool
		reply    string // "" when refused
		check    func(error) bool
		served   string // the A2A-Version of the call's response
		event    events.NegotiationDecided
	}{
		{"authenticated: served at 0.3", true, false, "served at 0.3", nil, "0.3", accepted("0.3", "0.3")},
		{"anonymous, without error data: refused, read as an internal error", false, true, "", func(err error) bool {
			var ae *a2a03.Error
			return errors.Is(err, a2a03.ErrInternalError) && errors.As(err, &ae) && ae.Message == refusal
		}, "1.0", refused("0.3", events.ReasonUnauthenticated)},
		{"anonymous, with error data: refused, the client cannot decode it", false, false, "", func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "failed to decode response: json: cannot unmarshal array into Go struct field Error.error.data")
		}, "1.0", refused("0.3", events.ReasonUnauthenticated)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, func(o *a2ahttp.Options) { o.Card, o.OmitErrorData = unionCard, tc.omitData })
			ctx := context.Background()
			card, err := agentcard03.NewResolver(h.client(tc.auth)).Resolve(ctx, h.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			client, err := a2aclient03.NewFromCard(ctx, card, a2aclient03.WithJSONRPCTransport(h.client(tc.auth)))
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.SendMessage(ctx, &a2a03.MessageSendParams{Message: a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: "hello"})})
			if tc.reply != "" {
				msg, ok := res.(*a2a03.Message)
				if err != nil || !ok || len(msg.Parts) != 1 || msg.Parts[0].(a2a03.TextPart).Text != tc.reply {
					t.Fatalf("SendMessage = %#v, %v; want the reply %q", res, err, tc.reply)
				}
			} else if !tc.check(err) {
				t.Fatalf("SendMessage = %#v, %v (%T)", res, err, err)
			}
			checkWire(t, h, []exchange{
				{"GET", a2asrv.WellKnownAgentCardPath, nil, []string{"1.0"}, 200},
				{"POST", "/a2a", nil, []string{tc.served}, 200},
			})
			checkEvents(t, h, accepted("1.0", ""), tc.event)
		})
	}
}
