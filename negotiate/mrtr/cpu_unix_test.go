//go:build unix

package mrtr_test

import (
	"syscall"
	"testing"
)

// reportCPU reports the process CPU time (user and system, every thread:
// the garbage collector's included) per iteration of b as cpu-ns/op, a
// figure that the other jobs on a shared machine do not inflate as they
// do ns/op. It is called before the loop, and its result after it.
func reportCPU(b *testing.B) func() {
	start := cpuNanos(b)
	return func() {
		b.ReportMetric(float64(cpuNanos(b)-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuNanos(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
