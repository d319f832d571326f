package facets

import (
	"errors"
	"fmt"
	"testing"
	"testing/quick"

	"golang.org/x/mod/semver"
)

func TestParseVersionA2A(t *testing.T) {
	for _, tc := range []struct {
		in      string
		problem string // "" when valid
	}{
		{"1.0", ""},
		{"0.3", ""},
		{"0.0", ""},
		{"1.9", ""},
		{"1.10", ""},
		{"10.0", ""},
		{"4294967295.4294967295", ""},
		{"1.4294967295", ""},
		{"4294967296.0", "major part does not fit in 32 bits"},
		{"1.4294967296", "minor part does not fit in 32 bits"},
		{"1.9999999999", "minor part does not fit in 32 bits"},
		{"1.10000000000", "minor part does not fit in 32 bits"},
		{"01.0", "major part has a leading zero"},
		{"1.00", "minor part has a leading zero"},
		{"1.01", "minor part has a leading zero"},
		{"1", `want "major.minor"`},
		{"", `want "major.minor"`},
		{"1.", `minor part is empty; want "major.minor"`},
		{".1", `major part is empty; want "major.minor"`},
		{"a.b", `major part is not a decimal number; want "major.minor"`},
		{"1.b", `minor part is not a decimal number; want "major.minor"`},
		{"1./", `minor part is not a decimal number; want "major.minor"`},
		{"1.:", `minor part is not a decimal number; want "major.minor"`},
		{"1.1.0", `minor part is not a decimal number; want "major.minor"`},
		{"1.0.0", `minor part is not a decimal number; want "major.minor"`},
		{"v1.0", `major part is not a decimal number; want "major.minor"`},
		{"-1.0", `major part is not a decimal number; want "major.minor"`},
		{"1.1 ", `minor part is not a decimal number; want "major.minor"`},
	} {
		v, err := ParseVersion(ProtocolA2A, tc.in)
		if tc.problem == "" {
			if err != nil || v.String() != tc.in || v.tag != tagA2A {
				t.Errorf("ParseVersion(a2a, %q) = %v, %v", tc.in, v, err)
			}
			continue
		}
		if got := violationsOf(t, err); len(got) != 1 || got[0].Rule != "pattern" || got[0].Path != "" || v != (Version{}) {
			t.Errorf("ParseVersion(a2a, %q) = %v, %q; want one pattern violation", tc.in, v, got)
		}
		if got, want := err.Error(), fmt.Sprintf("a2a version %q: %s", tc.in, tc.problem); got != want {
			t.Errorf("error text %q, want %q", got, want)
		}
	}
}

func TestParseVersionMCP(t *testing.T) {
	for _, tc := range []struct {
		in      string
		problem string
	}{
		{"2026-07-28", ""},
		{"2025-06-18", ""},
		{"2024-02-29", ""},
		{"2000-02-29", ""},
		{"1600-02-29", ""},
		{"2023-02-28", ""},
		{"0000-01-01", ""},
		{"9999-12-31", ""},
		{"2026-01-31", ""},
		{"2026-03-31", ""},
		{"2026-04-30", ""},
		{"2026-06-30", ""},
		{"2026-09-30", ""},
		{"2026-11-30", ""},
		{"2026-12-31", ""},
		{"1900-02-29", "no such day in that month"},
		{"2100-02-29", "no such day in that month"},
		{"2023-02-29", "no such day in that month"},
		{"2024-02-30", "no such day in that month"},
		{"2026-04-31", "no such day in that month"},
		{"2026-06-31", "no such day in that month"},
		{"2026-09-31", "no such day in that month"},
		{"2026-11-31", "no such day in that month"},
		{"2026-01-32", "no such day in that month"},
		{"2026-01-00", "no such day in that month"},
		{"2026-00-01", "month is not 01–12"},
		{"2026-13-01", "month is not 01–12"},
		{"2026-7-28", "want a date YYYY-MM-DD"},
		{"2026-07-2", "want a date YYYY-MM-DD"},
		{"2026-07-280", "want a date YYYY-MM-DD"},
		{"2026/07/28", "want a date YYYY-MM-DD"},
		{"2026-07/28", "want a date YYYY-MM-DD"},
		{"2026-0a-28", "want a date YYYY-MM-DD"},
		{"a026-07-28", "want a date YYYY-MM-DD"},
		{"2026-07-2:", "want a date YYYY-MM-DD"},
		{"2026-07-/8", "want a date YYYY-MM-DD"},
		{"", "want a date YYYY-MM-DD"},
		{"1.0", "want a date YYYY-MM-DD"},
	} {
		v, err := ParseVersion(ProtocolMCP, tc.in)
		if tc.problem == "" {
			if err != nil || v.String() != tc.in || v.tag != tagMCP {
				t.Errorf("ParseVersion(mcp, %q) = %v, %v", tc.in, v, err)
			}
			continue
		}
		got := violationsOf(t, err)
		if len(got) != 1 || got[0].Rule != "date" || got[0].Message != fmt.Sprintf("mcp version %q: %s", tc.in, tc.problem) || v != (Version{}) {
			t.Errorf("ParseVersion(mcp, %q) = %v, %q; want problem %q", tc.in, v, got, tc.problem)
		}
	}
}

func TestParseVersionUnknownProtocol(t *testing.T) {
	_, err := ParseVersion("grpc", "1.0")
	if got, want := fmt.Sprint(err), `grpc version "1.0": unknown protocol`; got != want || violationsOf(t, err)[0].Rule != "enum" {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestProtocolValid(t *testing.T) {
	for p, want := range map[Protocol]bool{ProtocolA2A: true, ProtocolMCP: true, "": false, "A2A": false, "grpc": false} {
		if p.Valid() != want {
			t.Errorf("%q.Valid() = %v", p, !want)
		}
	}
}

func TestMustParseVersion(t *testing.T) {
	if v := MustParseVersion(ProtocolA2A, "1.10"); v.String() != "1.10" {
		t.Errorf("got %v", v)
	}
	defer func() {
		if r := recover(); r == nil || !errors.Is(r.(error), ErrInvalid) {
			t.Errorf("recovered %v", r)
		}
	}()
	MustParseVersion(ProtocolMCP, "2025-02-30")
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		p    Protocol
		a, b string
		want int
	}{
		{ProtocolA2A, "1.10", "1.9", 1},
		{ProtocolA2A, "1.9", "1.10", -1},
		{ProtocolA2A, "1.0", "1.0", 0},
		{ProtocolA2A, "0.3", "1.0", -1},
		{ProtocolA2A, "2.0", "1.99", 1},
		{ProtocolA2A, "1.2", "2.1", -1},
		{ProtocolA2A, "10.0", "9.0", 1},
		{ProtocolA2A, "4294967295.0", "4294967294.4294967295", 1},
		{ProtocolA2A, "1.4294967295", "2.0", -1},
		{ProtocolMCP, "2026-07-28", "2025-06-18", 1},
		{ProtocolMCP, "2025-12-31", "2026-01-01", -1},
		{ProtocolMCP, "2026-01-31", "2026-02-01", -1},
		{ProtocolMCP, "2026-02-01", "2026-01-31", 1},
		{ProtocolMCP, "2026-07-28", "2026-07-28", 0},
		{ProtocolMCP, "2026-07-27", "2026-07-28", -1},
		{ProtocolMCP, "1999-12-31", "2000-01-01", -1},
	} {
		va, vb := MustParseVersion(tc.p, tc.a), MustParseVersion(tc.p, tc.b)
		if got := va.Compare(vb); got != tc.want {
			t.Errorf("%s %q.Compare(%q) = %d, want %d", tc.p, tc.a, tc.b, got, tc.want)
		}
	}
	// Across protocols, and against the zero Version, the order is by
	// protocol name: total, but meaningless.
	a, m := MustParseVersion(ProtocolA2A, "1.0"), MustParseVersion(ProtocolMCP, "2026-07-28")
	if a.Compare(m) != -1 || m.Compare(a) != 1 || (Version{}).Compare(a) != -1 || a.Compare(Version{}) != 1 || (Version{}).Compare(Version{}) != 0 {
		t.Error("cross-protocol order is not by protocol name")
	}
}

// TestCompareAgreesWithSemver checks, for random major.minor pairs, that
// the package's A2A order is semantic-version order.
func TestCompareAgreesWithSemver(t *testing.T) {
	prop := func(a1, a2, b1, b2 uint32, small bool) bool {
		if small { // make equal and near-equal parts likely
			a1, a2, b1, b2 = a1%3, a2%12, b1%3, b2%12
		}
		a, b := fmt.Sprintf("%d.%d", a1, a2), fmt.Sprintf("%d.%d", b1, b2)
		va, err1 := ParseVersion(ProtocolA2A, a)
		vb, err2 := ParseVersion(ProtocolA2A, b)
		want := semver.Compare("v"+a, "v"+b)
		return err1 == nil && err2 == nil && va.Compare(vb) == want
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 5000}); err != nil {
		t.Error(err)
	}
}

func TestParseDate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // RFC 3339, "" when malformed
	}{
		{"2026-09-18", "2026-09-18T00:00:00Z"},
		{"2024-02-29", "2024-02-29T00:00:00Z"},
		{"2000-02-29", "2000-02-29T00:00:00Z"},
		{"0001-01-01", "0001-01-01T00:00:00Z"},
		{"1900-02-29", ""},
		{"2023-02-29", ""},
		{"2026-13-01", ""},
		{"2026-09-18T00:00:00Z", ""},
		{"26-09-18", ""},
		{"", ""},
	} {
		got, err := parseDate(tc.in)
		if tc.want == "" {
			if err == nil || !got.IsZero() {
				t.Errorf("parseDate(%q) = %v, %v; want an error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got.Format("2006-01-02T15:04:05Z07:00") != tc.want || got.Location().String() != "UTC" {
			t.Errorf("parseDate(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	_, err := parseDate("2023-02-29")
	if got, want := fmt.Sprint(err), `no such day in that month`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAdvertisedAndLookup(t *testing.T) {
	a, m := refA2A(), refMCP()
	wantA := Advertised{ProtocolA2A, a.Versions, "1.0", "1.0", "2026-09-18"}
	wantM := Advertised{ProtocolMCP, m.Revisions, "2026-07-28", "2026-07-28", "2026-09-18"}
	s := Set{A2A: a, MCP: m}
	for _, tc := range []struct {
		set  Set
		p    Protocol
		want Advertised
		ok   bool
	}{
		{s, ProtocolA2A, wantA, true},
		{s, ProtocolMCP, wantM, true},
		{Set{MCP: m}, ProtocolA2A, Advertised{}, false},
		{Set{A2A: a}, ProtocolMCP, Advertised{}, false},
		{s, "grpc", Advertised{}, false},
	} {
		got, ok := tc.set.Lookup(tc.p)
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Lookup(%s) = %v, %v; want %v, %v", tc.p, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		set  Set
		want string
	}{
		{s, "[a2a mcp]"}, {Set{A2A: a}, "[a2a]"}, {Set{MCP: m}, "[mcp]"}, {Set{}, "[]"},
	} {
		if got := fmt.Sprint(tc.set.Protocols()); got != tc.want {
			t.Errorf("Protocols() = %s, want %s", got, tc.want)
		}
	}
}
