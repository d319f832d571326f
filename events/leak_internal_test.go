package events

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"
)

// verifyNoLeak, deferred at the start of a test, fails the test when a
// goroutine running this package's code outlives it: the check goleak
// makes, written for this package so that the module needs no dependency
// for it. A goroutine that is a test's own (testing.tRunner) is not a
// leak. Goroutines end a moment after the channel that says so is closed,
// so the check looks again for a while before it fails; it asserts no
// timing, only that the goroutine is gone within that while.
func verifyNoLeak(t testing.TB) {
	t.Helper()
	var leaked [][]byte
	for wait := time.Millisecond; wait < 5*time.Second; wait *= 2 {
		if leaked = leakedGoroutines(); len(leaked) == 0 {
			return
		}
		time.Sleep(wait)
	}
	for _, g := range leaked {
		t.Errorf("leaked goroutine:\n%s", g)
	}
}

// leakedGoroutines returns the stack of every goroutine but the caller's
// that runs this package's code and is not a test.
func leakedGoroutines() [][]byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out [][]byte
	// The first goroutine is the caller's.
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i > 0 && bytes.Contains(g, []byte("wopneg/events.")) && !bytes.Contains(g, []byte("testing.tRunner")) {
			out = append(out, g)
		}
	}
	return out
}

func TestVerifyNoLeakSeesALeak(t *testing.T) {
	stop := make(chan struct{})
	a := NewAsync(SinkFunc(func(ctx context.Context, e Event) error { <-stop; return nil }), AsyncOptions{})
	if got := leakedGoroutines(); len(got) != 1 || !bytes.Contains(got[0], []byte("events.NewAsync")) {
		t.Errorf("with an Async open, leakedGoroutines() = %q, want its recording goroutine", got)
	}
	close(stop)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	verifyNoLeak(t)
}
