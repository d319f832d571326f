package events_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/wopneg/wopneg/events"
)

// threadCPU is the CPU time of the calling thread. Wall-clock figures on a
// shared machine measure the neighbours as much as the code; the caller's
// own CPU time leaves out the time it was not running, which is what the
// request path pays when the machine is quiet.
func threadCPU(b *testing.B) time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}

// benchThreadCPU runs op in b.Loop on one locked thread and reports its
// CPU time per op as cpu-ns/op beside the wall-clock ns/op.
func benchThreadCPU(b *testing.B, op func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	start, n := threadCPU(b), 0
	for b.Loop() {
		op()
		n++
	}
	b.ReportMetric(float64(threadCPU(b)-start)/float64(n), "cpu-ns/op")
}

// BenchmarkAsyncEmitCPU is BenchmarkAsyncEmit measured by the calling
// thread's CPU time: the request path's cost, validation included.
func BenchmarkAsyncEmitCPU(b *testing.B) {
	a := events.NewAsync(keepUp{}, events.AsyncOptions{})
	defer a.Close()
	e := sinkRun(sinkRunID(1), sinkAccepted())
	ctx := context.Background()
	benchThreadCPU(b, func() {
		if err := a.Emit(ctx, e); err != nil && err != events.ErrDropped {
			b.Fatal(err)
		}
	})
}

// BenchmarkEventValidateCPU is the validation share of
// BenchmarkAsyncEmitCPU.
func BenchmarkEventValidateCPU(b *testing.B) {
	e := sinkRun(sinkRunID(1), sinkAccepted())
	benchThreadCPU(b, func() {
		if err := e.Validate(); err != nil {
			b.Fatal(err)
		}
	})
}
