package events_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// A host records into a Log and serves it: each caller polls only its own
// tenant's runs.
func ExampleLogHandler() {
	log := events.NewMemoryLog(0, 0) // 65,536 events, 4,096 per tenant
	decided := events.NegotiationDecided{Protocol: facets.ProtocolMCP, Outcome: "accepted", Version: "2026-07-28",
		Reason: events.ReasonOK, Floor: "2025-11-25", At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	e, _ := events.NewRunEvent("acme/audit0123456789abcdef", decided)
	_ = log.Emit(context.Background(), e)

	subject := func(r *http.Request) *policy.Subject { // the host's own authentication
		if r.Header.Get("Authorization") != "Bearer acme-token" {
			return nil
		}
		return &policy.Subject{Issuer: "https://idp.example", SubjectID: "alice", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
	}
	h := &events.LogHandler{Log: log, Subject: subject}
	mux := http.NewServeMux()
	mux.Handle("/runs/", h)
	mux.Handle("/host/events", h)

	for _, token := range []string{"acme-token", ""} {
		req := httptest.NewRequest("GET", "/runs/acme/audit0123456789abcdef/events/poll?afterSequence=0", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		fmt.Println(rec.Code, string(body))
	}
	// Output:
	// 200 {"runId":"acme/audit0123456789abcdef","events":[],"lastSequence":0,"status":"completed","isTerminal":true}
	// 401 {"error":"unauthenticated","message":"the event log is read by an authenticated caller, for its own tenant"}
}
