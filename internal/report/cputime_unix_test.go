//go:build unix

package report

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, so that a benchmark on a
// busy machine can say what it costs per second of one core.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
