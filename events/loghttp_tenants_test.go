package events_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/policy"
)

// tryStream opens /host/events as token on srv and returns the answer's
// status, a reader of its frames when it is 200, and what ends it.
func tryStream(t *testing.T, srv *httptest.Server, token string) (int, *bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/host/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	end := func() { cancel(); resp.Body.Close() }
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		end()
		return resp.StatusCode, nil, func() {}
	}
	return resp.StatusCode, bufio.NewReader(resp.Body), end
}

// Tenant acme opens host-event streams, with the handler's default
// bounds, until it is refused, and reads none of them. umbra's first
// stream is still served, and carries umbra's events. (Before streams were
// counted per tenant, acme held all 64 and umbra was answered 429.) When
// everything is closed, no goroutine of the handler is left.
func TestLogHandlerATenantAtItsCapDoesNotShutAnotherOut(t *testing.T) {
	defer events.VerifyNoLeak(t)
	l := events.NewMemoryLog(0, 0)
	srv := httptest.NewServer(&events.LogHandler{Log: l, Subject: callerOf, PollInterval: time.Millisecond})
	defer srv.Close()
	var opened int
	for {
		status, _, end := tryStream(t, srv, "acme")
		defer end()
		if status == http.StatusTooManyRequests {
			break
		}
		if status != http.StatusOK || opened > 64 {
			t.Fatalf("acme's stream %d: %d", opened+1, status)
		}
		opened++
	}
	if opened != 8 {
		t.Errorf("acme opened %d streams, want its share, 8", opened)
	}
	status, r, end := tryStream(t, srv, "umbra")
	defer end()
	if status != http.StatusOK {
		t.Fatalf("umbra's first stream, with acme at its cap: %d, want 200", status)
	}
	want := hostEvent(t, "umbra", 1)
	emitAll(t, l, hostEvent(t, "acme", 1), want)
	if _, id, _ := frame(t, r); id != want.ID {
		t.Errorf("umbra's stream sent %s, want %s", id, want.ID)
	}
}

// A client that sends its request and never reads a byte of the answer
// still loses its stream when the stream's lifetime is over, and the
// handler's goroutine ends.
func TestLogHandlerStreamOfAClientThatNeverReadsEnds(t *testing.T) {
	defer events.VerifyNoLeak(t)
	done := make(chan struct{})
	h := &events.LogHandler{Log: events.NewMemoryLog(0, 0), Subject: callerOf, StreamLifetime: time.Millisecond}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /host/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-done
}

// tenantCaller is the caller "Bearer <tenant>" names: an authenticated
// user of that tenant.
func tenantCaller(r *http.Request) *policy.Subject {
	tenant, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil
	}
	return &policy.Subject{Issuer: "urn:test:idp", SubjectID: "user-" + tenant, Tenant: tenant, Lane: policy.LaneAPIKey, Kind: policy.KindUser}
}
