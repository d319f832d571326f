package report

import (
	"bytes"
	"testing"
)

// benchRecord is a record of 4096 generated events, and where each line
// ends.
func benchRecord(b *testing.B) (data []byte, ends []int) {
	b.Helper()
	data, _ = newGenerator(1, 500).write(b, 4096, 0)
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	return data, ends
}

// BenchmarkReadLines reads b.N events as JSON lines into one Tally, on one
// goroutine: an op is one event, and events/s is the figure the issue
// sets a floor of 500,000 on (events/cpu-s is the same per second of
// CPU, which a busy machine does not skew). -benchtime=1000000x reads a
// million in one run. The record cycles through 4096 generated events, run and host
// events of both protocols from 500 peers.
func BenchmarkReadLines(b *testing.B) {
	for _, bc := range []struct {
		name    string
		changes []Change
	}{{"counts", nil}, {"two-changes", allChanges[:2]}} {
		b.Run(bc.name, func(b *testing.B) {
			data, ends := benchRecord(b)
			t, err := New(Options{Changes: bc.changes})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data) / len(ends)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for left := b.N; left > 0; {
				n := min(left, len(ends))
				if err := t.ReadLines(bytes.NewReader(data[:ends[n-1]]), "record"); err != nil {
					b.Fatal(err)
				}
				left -= n
			}
			b.StopTimer()
			cpu = cpuTime() - cpu
			if got := t.Report().Events; got != int64(b.N) {
				b.Fatalf("read %d events of %d", got, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if cpu > 0 {
				// On a machine shared with other work, wall time
				// undercounts: this is the rate per second of CPU.
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "events/cpu-s")
			}
		})
	}
}
