package a2ahttp_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopneg/wopneg/negotiate/a2ahttp"
	"github.com/wopneg/wopneg/policy"
)

// A refusal reads the request's body for its id, so a caller that
// declares a large body and sends none makes the middleware wait. What it
// holds meanwhile must not depend on the declared length: 100 connections
// declaring 4 MiB each and sending headers only hold no more than 8 MiB of
// heap in all, whether the declaration is over the bound (not read at all)
// or within it (read into a buffer that grows as bytes arrive).
func TestBodilessDeclarationsPinNoMemory(t *testing.T) {
	const (
		conns    = 100
		declared = 4 << 20
		goal     = 8 << 20
	)
	for _, tc := range []struct {
		name string
		max  int64
	}{{"over the bound", 0}, {"within the bound", 2 * declared}} {
		t.Run(tc.name, func(t *testing.T) {
			growth := heapGrowth(t, conns, declared, tc.max)
			t.Logf("heap growth from %d bodiless %d MiB declarations (MaxBodyBytes %d): %.2f MiB (goal <= %d MiB)",
				conns, declared>>20, tc.max, float64(growth)/(1<<20), goal>>20)
			if growth > goal {
				t.Errorf("%d bodiless declarations of %d bytes grew the heap by %d bytes, more than %d", conns, declared, growth, goal)
			}
		})
	}
}

// heapGrowth serves conns connections that each declare a body of
// declared bytes for a refused request and send none, and returns how much
// the live heap grew while they are all being served.
func heapGrowth(t *testing.T, conns, declared int, maxBody int64) int64 {
	t.Helper()
	f := newFixture(t, policy.Policy{}, a2ahttp.Options{MaxBodyBytes: maxBody})
	var entered, answered atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		f.h.ServeHTTP(w, r)
		answered.Add(1)
	}))
	defer srv.Close()

	before := liveHeap()
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		fmt.Fprintf(c, "POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 9.9\r\nContent-Length: %d\r\n\r\n", declared)
	}
	for entered.Load() < int32(conns) {
		time.Sleep(time.Millisecond)
	}
	after := liveHeap()
	if maxBody > int64(declared) && answered.Load() != 0 {
		t.Errorf("%d requests were answered before their bodies arrived", answered.Load())
	}
	return int64(after) - int64(before)
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
