package seams_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/seams"
	"github.com/wopneg/wopneg/policy"
)

// A test host mounts the seams beside its event log, behind its own
// authentication; a production host never mounts them.
func ExampleHandler() {
	set := facets.Set{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"}}
	n, _ := negotiate.Compile(set, policy.Policy{Now: func() time.Time { return time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC) }})
	log := events.NewMemoryLog(0, 0)
	subject := func(r *http.Request) *negotiate.Subject {
		if r.Header.Get("Authorization") != "Bearer test-token" {
			return nil
		}
		return &negotiate.Subject{Issuer: "urn:test", SubjectID: "suite", Tenant: "acme", Lane: policy.LaneAPIKey, Kind: policy.KindAgent}
	}
	mux := http.NewServeMux()
	mux.Handle(seams.Prefix+"/", &seams.Handler{Negotiator: n, Sink: log, Subject: subject, AllowLoopback: true})
	host := httptest.NewServer(mux)
	defer host.Close()

	// A peer that offers only A2A 0.3, below the host's floor.
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"protocolVersion":"0.3.0","url":"http://`+r.Host+`/rpc"}`)
	}))
	defer peer.Close()

	req, _ := http.NewRequest("POST", host.URL+seams.Prefix+"/sample/a2a/invoke", strings.NewReader(`{"peerUrl":"`+peer.URL+`"}`))
	req.Header.Set("Authorization", "Bearer test-token")
	resp, _ := http.DefaultClient.Do(req)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"error":"interop_version_unsupported"`), strings.Contains(string(body), `"runId":"acme/`))
	// Output:
	// 400 true true
}
