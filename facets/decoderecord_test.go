package facets

import (
	"reflect"
	"testing"
	"time"
)

// TestDecodeRecordAgreesWithParseRecord holds DecodeRecord to its promise:
// the same error as ParseRecord on every fixture, and on success the same
// Set.
func TestDecodeRecordAgreesWithParseRecord(t *testing.T) {
	n := 0
	for _, fx := range loadFixtures(t) {
		if fx.Target != "" {
			continue
		}
		n++
		want, wantErr := ParseRecord(fx.doc())
		got, err := DecodeRecord(fx.doc())
		if !reflect.DeepEqual(err, wantErr) {
			t.Errorf("%s/%s: DecodeRecord error\n%v\nParseRecord error\n%v", fx.file, fx.Name, err, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s/%s: DecodeRecord = %+v, ParseRecord = %+v", fx.file, fx.Name, got, want)
		}
	}
	if n < 20 {
		t.Fatalf("only %d set fixtures compared", n)
	}
}

// TestDecodeRecordKeepsWhatDecoded checks that a document with violations
// still yields the values the clock checks need.
func TestDecodeRecordKeepsWhatDecoded(t *testing.T) {
	doc := []byte(`{
	  "a2a": {"status": "experimental", "since": "2.0", "until": "2026-01-31", "witness": "seam-gated",
	          "versions": ["1.0"], "preferredVersion": "1.0", "minimumVersion": "1.0",
	          "refreshedAt": "2026-01-02", "supportedTransports": ["JSONRPC"]},
	  "mcp": 7
	}`)
	s, err := DecodeRecord(doc)
	got := sortedPairs(pairsOf(violationsOf(t, err)))
	want := []string{"a2a.supportedTransports unknown-field", "mcp type"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("violations %v, want %v", got, want)
	}
	if s.A2A == nil || s.A2A.RefreshedAt != "2026-01-02" || s.A2A.Until != "2026-01-31" {
		t.Fatalf("a2a = %+v, want the decoded record", s.A2A)
	}
	if s.MCP == nil || !reflect.DeepEqual(*s.MCP, MCP{}) {
		t.Errorf("mcp = %+v, want a zero facet for a value that is not an object", s.MCP)
	}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	if err := CheckRefresh(s.A2A.Advertised(), now); err == nil {
		t.Error("CheckRefresh on the decoded a2a: nil, want stale")
	}
	if err := s.A2A.CheckUntil(ProtocolA2A, now); err == nil {
		t.Error("CheckUntil on the decoded a2a: nil, want until-in-past")
	}
	if err := CheckRefresh(s.MCP.Advertised(), now); err == nil {
		t.Error("CheckRefresh on the zero mcp: nil, want a malformed-date error the caller can skip")
	}
}

func TestDecodeRecordNotJSON(t *testing.T) {
	s, err := DecodeRecord([]byte(`{"a2a":`))
	if !reflect.DeepEqual(s, Set{}) {
		t.Errorf("Set = %+v, want zero", s)
	}
	if got := sortedPairs(pairsOf(violationsOf(t, err))); !reflect.DeepEqual(got, []string{" syntax"}) {
		t.Errorf("violations %v, want one syntax violation", got)
	}
}

func pairsOf(vs []Violation) []pathRule {
	ps := make([]pathRule, len(vs))
	for i, v := range vs {
		ps[i] = pathRule{v.Path, v.Rule}
	}
	return ps
}

// FuzzDecodeRecord checks that DecodeRecord never panics and always
// returns the error ParseRecord returns.
func FuzzDecodeRecord(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.doc())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, want := ParseRecord(data)
		if _, err := DecodeRecord(data); !reflect.DeepEqual(err, want) {
			t.Fatalf("DecodeRecord error %v, ParseRecord error %v", err, want)
		}
	})
}
