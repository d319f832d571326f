package facets

import "time"

// Lint checks a discovery document as the OpenWOP v2 conformance
// scenarios read it (no-transport-advertisement, legacy-profiles-absent,
// refresh-sla) and as [ParseDiscovery] does, with the clock now for the
// rules that need one, and returns every finding at once, in document
// order. It returns nil for a document with nothing to report.
//
// Unlike ParseDiscovery, Lint reads any host's document: root keys of
// families this package does not know are passed over, and a document
// that advertises neither a2a nor mcp is no finding. A document that is
// not JSON is one finding of rule "syntax" at path ""; a key given twice
// anywhere is the one finding "duplicate-key", since strict readers
// refuse such a document.
//
// Besides the rules of validation, Lint reports "supported-transports"
// (at the root or in a2a/mcp), "grpc-block" and "root-profiles" (RFC 0175
// removed them), "legacy-version" (A2A 0.3 or MCP 2025-06-18 offered, as
// floor, as preferred or as a profile), and against now "refresh-stale",
// "refresh-future" ([CheckRefresh]) and "until-in-past".
func Lint(doc []byte, now time.Time) []Violation {
	d, vs, keys := readDiscovery(doc, false)
	if n := len(vs); n > 0 && vs[n-1].Rule == "duplicate-key" {
		return vs[n-1:]
	}
	set := Set{A2A: d.A2A, MCP: d.MCP}
	for _, p := range set.Protocols() {
		adv, _ := set.Lookup(p)
		if refresh := refreshViolations(adv, now); len(refresh) > 0 && refresh[0].Rule != "date" {
			vs = append(vs, refresh...)
		}
		vs = append(vs, recordOf(set, p).pastUntil(p, now)...)
	}
	sortByKeys(vs, keys)
	return vs
}

func recordOf(s Set, p Protocol) Record {
	if p == ProtocolA2A {
		return s.A2A.Record
	}
	return s.MCP.Record
}
