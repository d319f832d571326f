package events_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// fileBytes reads a file back for the kit.
type fileBytes string

func (f fileBytes) Bytes() []byte {
	b, _ := os.ReadFile(string(f))
	return b
}

// A JSONLines over a synced file keeps the sink contract, the file
// holding what it recorded (the kit's fault is a file that refuses).
func TestSinkConformanceJSONLinesFile(t *testing.T) {
	negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
		if fault != nil {
			return nil, nil // a file cannot be made to fail with a given error
		}
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		return events.NewJSONLinesFile(f), func() []events.Event { return parseJSONLines(t, fileBytes(path)) }
	})
}

// Only a JSONLines made over a file it syncs says it is durable; one over
// no file records nothing.
func TestJSONLinesDurable(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		name string
		j    *events.JSONLines
		want bool
	}{
		{"NewJSONLinesFile", events.NewJSONLinesFile(f), true},
		{"NewJSONLines over the same file", events.NewJSONLines(f), false},
		{"NewJSONLinesFile(nil)", events.NewJSONLinesFile(nil), false},
		{"nil", nil, false},
		{"zero", &events.JSONLines{}, false},
	} {
		if got := c.j.Durable(); got != c.want {
			t.Errorf("%s: Durable() = %v, want %v", c.name, got, c.want)
		}
	}
	if err := events.NewJSONLinesFile(nil).Emit(context.Background(), runEvent(t, run("acme", 1), 0)); !errors.Is(err, events.ErrClosed) {
		t.Errorf("over no file: %v, want ErrClosed", err)
	}
}

// A line whose sync failed (a pipe cannot be synced) is an error, as it
// may not survive a crash; it was written whole, so it keeps its sequence
// and the next event of its run takes the next one.
func TestJSONLinesFileSyncFails(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	read := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		read <- string(b)
	}()
	j := events.NewJSONLinesFile(w)
	ctx := context.Background()
	for i := range 2 {
		err := j.Emit(ctx, runEvent(t, run("acme", 1), i))
		if err == nil || !strings.Contains(err.Error(), "events: JSON lines: sync: ") {
			t.Errorf("event %d over a pipe: %v, want the sync's error", i, err)
		}
	}
	_ = w.Close()
	got := <-read
	if strings.Count(got, "\n") != 2 || !strings.Contains(got, `"sequence":0`) || !strings.Contains(got, `"sequence":1`) {
		t.Errorf("the pipe got %q, want two whole lines, sequences 0 and 1", got)
	}
}
