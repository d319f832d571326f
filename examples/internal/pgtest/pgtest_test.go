package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/examples/pgsink"
)

// All pages through more than one page of run events and of host events,
// and returns them in order; Payload alternates refusals and acceptances a
// millisecond apart.
func TestAll(t *testing.T) {
	pool := Connect(t, nil)
	schema := Schema(t, pool)
	ctx := context.Background()
	s, err := pgsink.New(ctx, pool, pgsink.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	const n = 205
	var want []string
	for i := range n {
		e, err := events.NewRunEvent("acme/pgtest-run-0123456789", Payload(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e.ID)
	}
	for i := range n {
		e, err := events.NewHostEvent("", Payload(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Emit(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e.ID)
	}
	got := All(t, pool, schema)
	if len(got) != len(want) {
		t.Fatalf("All = %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i] {
			t.Fatalf("event %d is %s, want %s", i, got[i].ID, want[i])
		}
	}
	for i, tc := range []struct {
		outcome string
		at      time.Duration
	}{{"refused", 0}, {"accepted", time.Millisecond}, {"accepted", 2 * time.Millisecond}, {"refused", 3 * time.Millisecond}} {
		p := Payload(i)
		if p.Outcome != tc.outcome || !p.At.Equal(Payload(0).At.Add(tc.at)) {
			t.Errorf("Payload(%d) = %s at +%v, want %s at +%v", i, p.Outcome, p.At.Sub(Payload(0).At), tc.outcome, tc.at)
		}
	}
}

func TestURL(t *testing.T) {
	t.Setenv("WOPNEG_PG_URL", "")
	if URL() != DefaultURL {
		t.Errorf("URL() = %q without WOPNEG_PG_URL, want the default", URL())
	}
	t.Setenv("WOPNEG_PG_URL", "postgres://elsewhere")
	if URL() != "postgres://elsewhere" {
		t.Errorf("URL() = %q, want WOPNEG_PG_URL", URL())
	}
}
