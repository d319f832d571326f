package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// lockedBuffer is the audit log in a test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestHost runs the host with an a2a-go v2 client: the card is resolved
// and a message sent at 1.0; both decisions are JSON lines of the audit
// log, and the message's server span (started in front, as otelhttp
// would) carries the decision and the method Observe adds, under the
// event's id.
func TestHost(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	old := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(old) })

	audit := &lockedBuffer{}
	srv := httptest.NewUnstartedServer(nil)
	handler, err := host("http://"+srv.Listener.Addr().String(), audit)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := tp.Tracer("test").Start(r.Context(), r.Method+" "+r.URL.Path)
		defer span.End()
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
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
	if got := audit.String(); strings.Count(got, `"outcome":"accepted"`) != 2 || !strings.Contains(got, `"version":"1.0"`) {
		t.Errorf("the audit log holds not two acceptances of 1.0 (the card, the message):\n%s", got)
	}
	var decided bool
	for _, s := range spans.GetSpans() {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		if s.Name == "POST /" && attrs["openwop.negotiation.outcome"] == "accepted" && attrs["openwop.negotiation.negotiated"] == "1.0" &&
			attrs["openwop.event.id"] != "" && attrs["a2a.method.name"] == "SendMessage" {
			decided = true
		}
		t.Logf("span %s: %v", s.Name, attrs)
	}
	if !decided {
		t.Error("no server span carries the decision, its event id and the method")
	}
}
