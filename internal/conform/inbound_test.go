package conform

import (
	"errors"
	"testing"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// TestJudgeInbound: an inbound leg passes only when the answer and the
// host event both say what the exchange was: accepted without a refusal
// code (the protocol's, or -32020), or refused with the protocol's code;
// and a valid durable record of it with that outcome.
func TestJudgeInbound(t *testing.T) {
	rec := func(p facets.Protocol, requested, outcome string, edit func(record)) record {
		r := record{
			Envelope: map[string]any{"type": decidedType, "delivery": "durable"},
			Payload:  map[string]any{"protocol": string(p), "requested": requested, "outcome": outcome},
		}
		if outcome == "accepted" {
			r.Payload["version"] = requested
		}
		if edit != nil {
			edit(r)
		}
		return r
	}
	answered := func(code float64) answer {
		if code == 0 {
			return answer{Status: 200, JSON: map[string]any{"result": map[string]any{}}}
		}
		return answer{Status: 200, JSON: map[string]any{"error": map[string]any{"code": code}}}
	}
	a2a, mcp := facets.ProtocolA2A, facets.ProtocolMCP
	for _, tc := range []struct {
		name     string
		p        facets.Protocol
		accepted bool
		named    string
		ans      answer
		seen     []record
		pass     bool
	}{
		{"a2a accepted", a2a, true, "1.0", answered(0), []record{rec(a2a, "1.0", "accepted", nil)}, true},
		{"mcp accepted", mcp, true, "2026-07-28", answered(0), []record{rec(mcp, "2026-07-28", "accepted", nil)}, true},
		{"a2a refused", a2a, false, "0.3", answered(-32009), []record{rec(a2a, "0.3", "refused", nil)}, true},
		{"mcp refused", mcp, false, "2025-06-18", answered(-32022), []record{rec(mcp, "2025-06-18", "refused", nil)}, true},
		{"the last of two records counts", a2a, true, "1.0", answered(0), []record{rec(a2a, "1.0", "refused", nil), rec(a2a, "1.0", "accepted", nil)}, true},
		{"accepted answered -32020", a2a, true, "1.0", answered(-32020), []record{rec(a2a, "1.0", "accepted", nil)}, false},
		{"accepted answered the refusal", mcp, true, "2026-07-28", answered(-32022), []record{rec(mcp, "2026-07-28", "accepted", nil)}, false},
		{"below the floor answered", a2a, false, "0.3", answered(0), []record{rec(a2a, "0.3", "refused", nil)}, false},
		{"below the floor answered another code", mcp, false, "2025-06-18", answered(-32009), []record{rec(mcp, "2025-06-18", "refused", nil)}, false},
		{"no record", a2a, true, "1.0", answered(0), nil, false},
		{"only another exchange's record", a2a, true, "1.0", answered(0), []record{rec(a2a, "0.3", "accepted", nil)}, false},
		{"the record's outcome is wrong", a2a, false, "0.3", answered(-32009), []record{rec(a2a, "0.3", "accepted", nil)}, false},
		{"accepted names no version", a2a, true, "1.0", answered(0), []record{rec(a2a, "1.0", "accepted", func(r record) { delete(r.Payload, "version") })}, false},
		{"ephemeral", a2a, true, "1.0", answered(0), []record{rec(a2a, "1.0", "accepted", func(r record) { r.Envelope["delivery"] = "ephemeral" })}, false},
		{"runId", a2a, true, "1.0", answered(0), []record{rec(a2a, "1.0", "accepted", func(r record) { r.Envelope["runId"] = "x" })}, false},
		{"sequence", a2a, true, "1.0", answered(0), []record{rec(a2a, "1.0", "accepted", func(r record) { r.Envelope["sequence"] = 0.0 })}, false},
		{"an invalid frame beside", a2a, true, "1.0", answered(0), []record{{Invalid: errors.New("not a JSON object")}, rec(a2a, "1.0", "accepted", nil)}, false},
	} {
		l := verdict.New("v2-negotiation-decided-inbound", "row")
		(&runner{}).judgeInbound(l, tc.p, tc.accepted, tc.named, tc.seen, tc.ans)
		if got := l.Settle(); (got.Verdict() == verdict.Pass) != tc.pass {
			t.Errorf("%s: %s (%s), want pass %v", tc.name, got.Verdict(), got.Why(), tc.pass)
		}
	}
}
