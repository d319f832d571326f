// Command wopneg runs OpenWOP v2 A2A/MCP version negotiations from the
// command line, for hosts in any language and for people trying the rules.
//
// Usage:
//
//	wopneg decide      read one JSON request on stdin, write the decision on stdout
//	wopneg demo        print the decision table of the built-in example facets
//	wopneg vectors     run the shipped test vectors through the library
//	wopneg lint        report what is wrong with a v2 discovery document
//	wopneg migrate     rewrite a v1-era discovery document as v2
//	wopneg digest      print the peer digest and origin of URLs
//	wopneg conform     run the OpenWOP v2 interop conformance scenarios against a host
//	wopneg report      count a record of negotiation.decided events; what a new floor would refuse
//
// A decide request is
//
//	{"subject": {...v2 Subject...} | null,
//	 "facet": {"a2a": {...}} | {"mcp": {...}},
//	 "offer": {"protocol": "a2a", "peer": "https://peer.example", "requested": "1.1",
//	           "peerVersions": ["1.0", "1.1"], "counterOffer": false},
//	 "policy": {"denyDowngrade": false},
//	 "now": "2026-11-29T12:00:00Z"}
//
// and its answer is {outcome, version, reason, rule, status, error, event},
// with version, status and error only where they apply; `wopneg decide -h`
// prints both shapes. offer.protocol may be left out when the facet
// advertises one protocol. An offer without peerVersions is an inbound
// request: the peer speaks what it requested, or the preferred version
// when it requested nothing (negotiate.InboundOffer); an explicit [] is a peer
// that speaks nothing. now is an RFC 3339 time or a date YYYY-MM-DD. The
// request is read as every JSON of this module is: keys match exactly,
// unknown and repeated keys and trailing bytes are refused. decide exits 0
// for every decision, refusals included, and 2 when the request is
// malformed (bad JSON, an invalid facet or Subject, a peer URL with no
// http(s) or ws(s) origin), with one line on stderr for every problem it
// has, each naming the JSON path at fault.
//
// # lint
//
//	wopneg lint [--json] [--now DATE] FILE|-
//
// reads a discovery document (/.well-known/openwop) and prints every
// violation at once, one per line as "PATH: RULE: message" ("(root)" is
// the document itself), or with --json the same findings as a JSON array
// of {path, rule, message}. It exits 0 when there is none, 1 when there
// are, and 2 when the input is not JSON (or cannot be read). Both lint
// and migrate read the document as every JSON of this module is read
// (internal/strictjson): a syntax error, invalid UTF-8 or nesting deeper
// than 64 levels is "not JSON", named by its JSON path, and a key given
// twice anywhere is the one finding lint reports (duplicate-key), since
// strict readers refuse such a document. --now sets
// the clock the refresh SLA and until are judged by: a date YYYY-MM-DD
// (its midnight UTC) or an RFC 3339 time; the default is now. lint is
// facets.Lint: it checks the root keys RFC 0175 concerns, the a2a/mcp
// records, conformance.seamsProfile and hostEvents.types[]; the root keys
// of other families are passed over, and a note on stderr names them
// once. The rule ids are stable:
//
//	RULE                   WHAT
//	supported-transports   supportedTransports at the root or in a2a/mcp (RFC 0175, C8.2)
//	grpc-block             a root grpc block (RFC 0175, C8.3)
//	root-profiles          a root profiles key (legacy-profiles-absent, .no-root-profiles)
//	legacy-profile         a profile id ending in -legacy (C8.1)
//	legacy-version         the legacy A2A 0.3 or MCP 2025-06-18 in versions/revisions (C8.1)
//	pattern                a value not matching its pattern: versions, profile ids, since, until,
//	                       root protocolVersions/preferredVersion ("major.minor", no leading zeros)
//	date                   a full-date or revision that is not a real calendar day
//	required               a required field is missing (root protocolVersions and preferredVersion;
//	                       record status, since, witness, versions, preferred, floor, refreshedAt)
//	type                   a value of the wrong JSON type, null included; a root that is not an object
//	min-items              an empty versions, revisions or protocolVersions list
//	duplicate              a version listed twice (uniqueItems)
//	duplicate-key          a key given twice in one object, anywhere (then the only finding)
//	unknown-field          a key the closed a2a/mcp record does not allow
//	member                 a preferred version or floor not in its list (root preferredVersion included)
//	floor-above-preferred  minimumVersion/minimumRevision above preferredVersion
//	profile-version        a profile "a2a-X.Y"/"mcp-DATE" whose version is not offered
//	range                  mrtr.maxRounds outside 1–16
//	const                  agentCards or client other than true
//	enum                   status, witness or serverMount transport outside its enum
//	uri                    agentCardUrl or a serverUrls entry that is not an absolute URI
//	until-forbidden        until on a stable record
//	until-required         no until on an experimental or deprecated record
//	until-in-past          an until date before today (validators answer 400 until_in_past)
//	refresh-stale          refreshedAt more than 90 days before now (RFC 0175 §D.4)
//	refresh-future         refreshedAt more than one day after now
//
// # migrate
//
//	wopneg migrate [--now DATE] FILE|-
//
// writes the v2 form of a v1-era discovery document on stdout and one
// line per change on stderr, "PATH: ROW: what", by the rows of
// openwop.codemod.discovery-document-v2: C8.2 drops supportedTransports
// at the root and in a2a/mcp; C8.3 drops the root grpc block; C8.1 drops
// the profile ids a2a-0.3-legacy and mcp-2025-06-18-legacy and the legacy
// version (A2A 0.3, MCP 2025-06-18) from versions[]/revisions[], moving a
// floor that named it up to the lowest version still offered; and
// no-root-profiles drops a root profiles list when every id in it is
// legacy or already listed in its family's profiles. Everything else —
// key order, spacing, escapes, numbers, other families — comes out byte
// for byte, so migrating migrate's output changes nothing. It refuses,
// exit 1 and nothing on stdout, when the preferred version is the legacy
// one, or when a removal would leave no version offered or no floor, or a
// key is repeated anywhere: each reason is a line on stderr. After
// migrating, it lints the result (at --now) and names on stderr what it
// cannot decide, such as a stale refreshedAt. Exit 2 means the input is
// not JSON or not an object.
//
// # digest
//
//	wopneg digest [URL...]
//
// prints one line per URL argument, or per line of stdin when there is
// none: "<64 hex digits>  <origin>" (two spaces, as sha256sum), the
// peerDigest a negotiation.decided event carries for that peer and the
// origin it hashes, or "error: <message>" for an input with no http,
// https, ws or wss origin. Operators use it to find a peer in an audit
// log. It exits 1 when any input was refused, 2 when stdin cannot be read.
//
// # conform
//
//	wopneg conform [--json] [--token BEARER] BASEURL
//
// runs the OpenWOP v2 interop conformance scenarios — RFC 0175's eight and
// RFC 0242's negotiation-decided-inbound — against the host at BASEURL. It
// reads /.well-known/openwop, drives the host's invoke seams
// (/conformance/seams/sample/{a2a,mcp}/invoke, advertised by
// conformance.seamsProfile "openwop-conformance-seams-v2") toward its own
// fake A2A peer and fake MCP server on 127.0.0.1, so the host must run on
// the same machine, and reads /runs/{runId}/events/poll and /host/events.
// It prints one row per requirement id: scenario, requirement, verdict
// (pass, fail, blocked, inapplicable), the assertions it made (those on
// observed traffic in parentheses) and why; --json writes the same as
// {base, counts, results}. No row passes without an assertion on observed
// traffic, a seam exchange whose fake peer received nothing is blocked,
// and a host whose floor equals its preferred version has
// v2-negotiation-authenticated blocked: "floor equals preferred: §D.1 not
// witnessable". --token is the bearer sent to the host (and only to its
// origin) for the legs that need an authenticated caller. It exits 1 when
// a row failed, 2 on a usage error or a BASEURL that is not http(s).
//
// # report
//
//	wopneg report [--json] [--period day|week|month] [--floor [PROTO=]VERSION]...
//	              [--drop [PROTO=]VERSION]... [--names FILE] [FILE|-]...
//
// reads a record of negotiation.decided events as JSON lines — the files
// named, or stdin — exactly as the JSON-lines sink and the example host
// write them, run events and host events alike, and prints per protocol
// and period (UTC month by default) the versions requested and settled,
// the exchanges, the distinct peers (by digest), the refusals by reason
// and the downgrades (accepted at a version other than the one
// requested), with the exchanges still settled at the legacy A2A 0.3 and
// MCP 2025-06-18 and the day each leaves the v1 tree. Each --floor (raise
// the floor to VERSION) and --drop (no longer offer VERSION) adds what
// that change would have refused in the recorded traffic: the accepted
// exchanges it refuses, decided again with the module's own decision, and
// each peer's digest with its count and when it was last seen. PROTO is
// a2a or mcp, and may be left out (A2A versions are major.minor, MCP
// revisions dates). Peers are shown by digest only; --names FILE adds the
// names a host computed with wopneg digest ("<digest>  <origin>" lines).
// --json writes the same as one JSON object. A line that is not JSON, or
// not a negotiation.decided event, is counted and named with its line
// number, and reading goes on. It exits 0 when the report was written,
// 2 on a usage error or a file that cannot be read. PostgreSQL records and
// the HTML report with charts are the report module's (report/, see
// docs/report.md).
package main

import (
	"os"

	"github.com/wopneg/wopneg/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
