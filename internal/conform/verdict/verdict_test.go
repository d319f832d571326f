package verdict_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/wopneg/wopneg/internal/conform/verdict"
)

func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(l *verdict.Leg)
		want  verdict.Verdict
		why   string
		n, w  int
	}{
		{"nothing observed", func(*verdict.Leg) {}, verdict.Blocked, verdict.NoWire, 0, 0},
		{"only non-wire checks", func(l *verdict.Leg) { l.Check(true, "x") }, verdict.Blocked, verdict.NoWire, 1, 0},
		{"a wire check", func(l *verdict.Leg) { l.Check(true, "x"); l.Wire(true, "y") }, verdict.Pass, "2 assertions held, 1 on the wire", 2, 1},
		{"a failed check", func(l *verdict.Leg) { l.Wire(true, "y"); l.Check(false, "bad %d", 1) }, verdict.Fail, "bad 1", 2, 1},
		{"failure beats block", func(l *verdict.Leg) { l.Block("b"); l.Wire(false, "bad") }, verdict.Fail, "bad", 1, 1},
		{"failure beats inapplicable", func(l *verdict.Leg) { l.Inapplicable("i"); l.Wire(false, "bad") }, verdict.Fail, "bad", 1, 1},
		{"block beats wire", func(l *verdict.Leg) { l.Wire(true, "y"); l.Block("first"); l.Block("second") }, verdict.Blocked, "first", 1, 1},
		{"inapplicable beats block", func(l *verdict.Leg) { l.Block("b"); l.Inapplicable("first"); l.Inapplicable("second") }, verdict.Inapplicable, "first", 0, 0},
		{"many failures", func(l *verdict.Leg) {
			for i := range 6 {
				l.Wire(false, "f%d", i)
			}
		}, verdict.Fail, "f0; f1; f2; f3; and 2 more", 6, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := verdict.New("sc", "req")
			tc.build(l)
			r := l.Settle()
			if r.Verdict() != tc.want || r.Why() != tc.why || r.Assertions() != tc.n || r.WireAssertions() != tc.w {
				t.Fatalf("got %s %q %d/%d, want %s %q %d/%d", r.Verdict(), r.Why(), r.Assertions(), r.WireAssertions(), tc.want, tc.why, tc.n, tc.w)
			}
			if r.Scenario() != "sc" || r.Requirement() != "req" {
				t.Fatalf("names %q %q", r.Scenario(), r.Requirement())
			}
			if l.Failed() != (tc.want == verdict.Fail) {
				t.Fatalf("Failed() = %v", l.Failed())
			}
		})
	}
}

func TestCheckReturnsOK(t *testing.T) {
	l := verdict.New("s", "r")
	if !l.Check(true, "x") || l.Check(false, "x") || !l.Wire(true, "x") || l.Wire(false, "x") {
		t.Fatal("Check and Wire return the condition")
	}
}

// TestNeverVacuous: whatever a leg records, it passes only with at least
// one wire assertion, no failure, no block and no inapplicable mark; and a
// failure always fails it.
func TestNeverVacuous(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := verdict.New("s", "r")
		wire, failed, marked := 0, false, false
		for _, op := range rapid.SliceOfN(rapid.IntRange(0, 5), 0, 20).Draw(t, "ops") {
			switch op {
			case 0:
				l.Check(true, "ok")
			case 1:
				l.Check(false, "no")
				failed = true
			case 2:
				l.Wire(true, "ok")
				wire++
			case 3:
				l.Wire(false, "no")
				wire++
				failed = true
			case 4:
				l.Block("blocked")
				marked = true
			case 5:
				l.Inapplicable("inapplicable")
				marked = true
			}
		}
		r := l.Settle()
		if (r.Verdict() == verdict.Pass) != (wire > 0 && !failed && !marked) {
			t.Fatalf("verdict %s with %d wire assertions, failed %v, marked %v", r.Verdict(), wire, failed, marked)
		}
		if failed != (r.Verdict() == verdict.Fail) {
			t.Fatalf("verdict %s, failed %v", r.Verdict(), failed)
		}
		if r.WireAssertions() != wire || r.WireAssertions() > r.Assertions() {
			t.Fatalf("counts %d/%d, want %d wire", r.WireAssertions(), r.Assertions(), wire)
		}
	})
}

func TestMarshalJSON(t *testing.T) {
	l := verdict.New("v2-refresh-sla", "openwop.requirement.0175.refresh-sla")
	l.Wire(true, "x")
	data, err := json.Marshal(l.Settle())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"scenario":"v2-refresh-sla","requirement":"openwop.requirement.0175.refresh-sla","verdict":"pass","assertions":1,"wireAssertions":1,"why":"1 assertions held, 1 on the wire"}`
	if string(data) != want {
		t.Fatalf("got %s", data)
	}
}

func ExampleLeg_Settle() {
	l := verdict.New("v2-negotiation-authenticated", "openwop.requirement.0175.negotiation-authenticated")
	l.Check(true, "the facet parses") // not on the wire: cannot pass a row alone
	fmt.Println(l.Settle().Verdict())
	l.Wire(true, "the peer received no call below preferred")
	fmt.Println(l.Settle().Verdict())
	l.Wire(false, "the record's reason is %s", "ok")
	r := l.Settle()
	fmt.Println(r.Verdict(), strings.Count(r.Why(), ";"), r.Assertions(), r.WireAssertions())
	// Output:
	// blocked
	// pass
	// fail 0 3 2
}
