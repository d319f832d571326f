package conform

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/conform/verdict"
)

var docNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// docRunner is a runner holding doc, as discovery would have read it.
func docRunner(t *testing.T, doc string) *runner {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &runner{doc: m, now: docNow}
}

const (
	a2aRec = `"a2a":{"status":"stable","since":"2.0","witness":"seam-gated","versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-11-01","profiles":["a2a-1.0"]}`
	mcpRec = `"mcp":{"status":"stable","since":"2.0","witness":"seam-gated","revisions":["2025-11-25","2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2025-11-25","refreshedAt":"2026-11-01","mrtr":{"maxRounds":4}}`
	root   = `"protocolVersions":["2.0"],"preferredVersion":"2.0"`
)

// rowVerdicts runs the document scenarios and returns each row's verdict
// and why, by requirement id.
func rowVerdicts(r *runner) map[string]verdict.Result {
	out := map[string]verdict.Result{}
	for _, sc := range []func(context.Context) []verdict.Result{r.noTransport, r.legacyProfiles, r.refreshSLA, r.rounds} {
		for _, res := range sc(context.Background()) {
			out[res.Requirement()] = res
		}
	}
	return out
}

func TestDocumentRows(t *testing.T) {
	for _, tc := range []struct {
		name, doc, req string
		want           verdict.Verdict
		why            string
	}{
		{"correct a2a only", `{` + root + `,` + a2aRec + `}`, rNoTransport, verdict.Pass, ""},
		{"correct mcp only", `{` + root + `,` + mcpRec + `}`, rRefresh, verdict.Pass, ""},
		{"empty protocolVersions", `{"protocolVersions":[],"preferredVersion":"2.0",` + a2aRec + `}`, rNoTransport, verdict.Fail, "protocolVersions"},
		{"duplicate protocolVersions", `{"protocolVersions":["2.0","2.0"],"preferredVersion":"2.0",` + a2aRec + `}`, rNoTransport, verdict.Fail, "protocolVersions"},
		{"non-string protocolVersions", `{"protocolVersions":["2.0",2],"preferredVersion":"2.0",` + a2aRec + `}`, rNoTransport, verdict.Fail, "protocolVersions"},
		{"bad root preferred", `{"protocolVersions":["2.0"],"preferredVersion":"02.0",` + a2aRec + `}`, rNoTransport, verdict.Fail, "preferredVersion"},
		{"grpc", `{` + root + `,"grpc":{},` + a2aRec + `}`, rNoTransport, verdict.Fail, "grpc"},
		{"transports in mcp", `{` + root + `,` + strings.Replace(mcpRec, `"mrtr"`, `"supportedTransports":["http"],"mrtr"`, 1) + `}`, rNoTransport, verdict.Fail, "mcp carries supportedTransports"},
		{"invalid record", `{` + root + `,` + strings.Replace(a2aRec, `"stable"`, `"shiny"`, 1) + `}`, rNoTransport, verdict.Fail, "does not validate"},
		{"record without witness", `{` + root + `,` + strings.Replace(mcpRec, `"witness":"seam-gated",`, ``, 1) + `}`, rNoTransport, verdict.Fail, "mcp.witness is required"},
		{"no facet: legacy inapplicable", `{` + root + `}`, rLegacy, verdict.Inapplicable, "neither"},
		{"no facet: refresh inapplicable", `{` + root + `}`, rRefresh, verdict.Inapplicable, "neither"},
		{"no facet: root profiles judged", `{` + root + `}`, rRootProfiles, verdict.Pass, ""},
		{"root profiles", `{` + root + `,"profiles":[]}`, rRootProfiles, verdict.Fail, "profiles"},
		{"legacy profile", `{` + root + `,` + strings.Replace(a2aRec, `"a2a-1.0"`, `"a2a-0.3-legacy"`, 1) + `}`, rLegacy, verdict.Fail, "legacy profile"},
		{"bad profile id", `{` + root + `,` + strings.Replace(a2aRec, `"a2a-1.0"`, `"mcp-2026-07-28"`, 1) + `}`, rLegacy, verdict.Fail, "not a v2 profile id"},
		{"stale", `{` + root + `,` + strings.Replace(a2aRec, `2026-11-01`, `2026-09-01`, 1) + `}`, rRefresh, verdict.Fail, "days old"},
		{"not a date", `{` + root + `,` + strings.Replace(a2aRec, `2026-11-01`, `2026-09-01T12`, 1) + `}`, rRefresh, verdict.Fail, "YYYY-MM-DD"},
		{"future", `{` + root + `,` + strings.Replace(a2aRec, `2026-11-01`, `2026-12-02`, 1) + `}`, rRefresh, verdict.Fail, "future"},
		{"a day ahead is fine", `{` + root + `,` + strings.Replace(a2aRec, `2026-11-01`, `2026-12-01`, 1) + `}`, rRefresh, verdict.Pass, ""},
		{"floor not offered", `{` + root + `,` + strings.Replace(mcpRec, `"minimumRevision":"2025-11-25"`, `"minimumRevision":"2025-06-18"`, 1) + `}`, rRefresh, verdict.Fail, "floor"},
		{"preferred not offered", `{` + root + `,` + strings.Replace(a2aRec, `"preferredVersion":"1.0"`, `"preferredVersion":"1.1"`, 1) + `}`, rRefresh, verdict.Fail, "preferredVersion"},
		{"no versions", `{` + root + `,` + strings.Replace(a2aRec, `"versions":["1.0"]`, `"versions":[]`, 1) + `}`, rRefresh, verdict.Fail, "offers no version"},
		{"maxRounds 0", `{` + root + `,` + strings.Replace(mcpRec, `"maxRounds":4`, `"maxRounds":0`, 1) + `}`, rRounds, verdict.Fail, "1..16"},
		{"maxRounds 17", `{` + root + `,` + strings.Replace(mcpRec, `"maxRounds":4`, `"maxRounds":17`, 1) + `}`, rRounds, verdict.Fail, "1..16"},
		{"maxRounds 2.5", `{` + root + `,` + strings.Replace(mcpRec, `"maxRounds":4`, `"maxRounds":2.5`, 1) + `}`, rRounds, verdict.Fail, "1..16"},
		{"maxRounds 16", `{` + root + `,` + strings.Replace(mcpRec, `"maxRounds":4`, `"maxRounds":16`, 1) + `}`, rRounds, verdict.Pass, ""},
		{"maxRounds 1", `{` + root + `,` + strings.Replace(mcpRec, `"maxRounds":4`, `"maxRounds":1`, 1) + `}`, rRounds, verdict.Pass, ""},
		{"bad maxRounds blocks the ceiling", `{` + root + `,` + strings.Replace(mcpRec, `"maxRounds":4`, `"maxRounds":"4"`, 1) + `}`, rRefused, verdict.Blocked, "no valid maxRounds"},
		{"no mrtr", `{` + root + `,` + strings.Replace(mcpRec, `,"mrtr":{"maxRounds":4}`, ``, 1) + `}`, rRounds, verdict.Inapplicable, "mrtr"},
		{"no seams blocks the ceiling", `{` + root + `,` + mcpRec + `}`, rRefused, verdict.Blocked, "seamsProfile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, ok := rowVerdicts(docRunner(t, tc.doc))[tc.req]
			if !ok || res.Verdict() != tc.want || !strings.Contains(res.Why(), tc.why) {
				t.Fatalf("%s: %s %q, want %s with %q", tc.req, res.Verdict(), res.Why(), tc.want, tc.why)
			}
		})
	}
}

func TestListed(t *testing.T) {
	for _, tc := range []struct {
		doc, why string
		a2a, mcp bool
	}{
		{`{"a2a":{"agentCardUrl":"x"},"hostEvents":{"types":[{"type":"negotiation.decided","delivery":"durable"}]}}`, "", true, false},
		{`{"mcp":{"serverMount":{}},"hostEvents":{"types":[{"type":"other"},{"type":"negotiation.decided","delivery":"ephemeral"}]}}`, "not durable", false, true},
		{`{"mcp":{"serverUrls":["http://x/mcp"]}}`, "must list", false, true},
		{`{"mcp":{},"a2a":{}}`, "must list", false, false},
	} {
		r := docRunner(t, tc.doc)
		if got := r.listed(); !strings.Contains(got, tc.why) || (tc.why == "") != (got == "") {
			t.Errorf("%s: listed %q", tc.doc, got)
		}
		if r.inboundServed("a2a") != tc.a2a || r.inboundServed("mcp") != tc.mcp {
			t.Errorf("%s: served a2a %v mcp %v", tc.doc, r.inboundServed("a2a"), r.inboundServed("mcp"))
		}
	}
}

// TestRefreshBounds: both bounds are inclusive, judged at midnight UTC.
func TestRefreshBounds(t *testing.T) {
	for date, want := range map[string]verdict.Verdict{
		"2026-09-01": verdict.Pass, "2026-08-31": verdict.Fail, "2026-12-01": verdict.Pass, "2026-12-02": verdict.Fail,
	} {
		r := docRunner(t, `{`+root+`,`+strings.Replace(a2aRec, `2026-11-01`, date, 1)+`}`)
		r.now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
		if got := rowVerdicts(r)[rRefresh]; got.Verdict() != want {
			t.Errorf("refreshedAt %s: %s (%s), want %s", date, got.Verdict(), got.Why(), want)
		}
	}
}

func TestBelow(t *testing.T) {
	for _, tc := range []struct {
		p    string
		a, b string
		want bool
	}{
		{"a2a", "0.3", "1.0", true}, {"a2a", "1.9", "1.10", true}, {"a2a", "1.0", "1.0", false}, {"a2a", "1.1", "1.0", false},
		{"a2a", "", "1.0", false}, {"a2a", "1.0", "x", false},
		{"mcp", "2025-06-18", "2025-11-25", true}, {"mcp", "2026-07-28", "2025-11-25", false},
	} {
		if got := below(facets.Protocol(tc.p), tc.a, tc.b); got != tc.want {
			t.Errorf("below(%s, %q, %q) = %v", tc.p, tc.a, tc.b, got)
		}
	}
}
