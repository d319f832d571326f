// Package facets reads, validates and writes the `a2a` and `mcp` facets of
// an OpenWOP v2 discovery document (RFC 0175 §B–§E): what a host says about
// the A2A versions and MCP revisions it speaks, which one it prefers, the
// floor below which it never negotiates, and when it last checked that
// list against upstream. Negotiation decides with nothing else, so a wrong
// facet means wrong decisions; this package refuses wrong facets early and
// says exactly where they are wrong.
//
// # The facets
//
// [A2A] and [MCP] are the two facets. Each is also the `a2a` / `mcp` record
// of the discovery schema when its [Record] fields (status, since, until,
// witness) are filled, plus the record-only flags agentCards and client.
// A [Set] carries either or both; [Set.Lookup] gives the protocol-neutral
// [Advertised] view a negotiation decides with.
//
// # Parsing and validating
//
// [Parse] decodes `{"a2a": {...}, "mcp": {...}}` and validates it as
// facets; values built in Go are checked with [Set.Validate]. Decoding is
// strict: unknown keys, repeated keys, null, and values of the wrong JSON
// type are violations, not silently dropped. Documents are read in one
// pass by the module's one strict JSON reader, with its paths (a key that
// is not a name is quoted: a2a["x-y"]); nesting deeper than 64 levels is
// refused while reading. A repeated key ends the reading, since JSON
// readers disagree on which of its values counts: what follows it is
// neither decoded nor validated, so the report holds the repeat and what
// was found before it.
//
// Every broken rule is a [*Violation], the one error type of this
// package: its JSON path ("mcp.revisions[2]", "a2a.preferredVersion"), a
// stable rule id and a sentence. A function that finds several reports
// them all at once in one error, which matches [ErrInvalid] under
// errors.Is, gives the first *Violation to errors.As, and lists each one
// through its Unwrap() []error method. The rule ids are:
//
//	RULE                   WHAT
//	syntax                 not JSON, not UTF-8, or nested deeper than 64 levels (path "")
//	duplicate-key          a key given twice in one object
//	type                   a value of the wrong JSON type, null included
//	unknown-field          a key a closed object does not allow
//	required               a required field is missing
//	pattern, date, enum,   a value not matching its pattern, calendar, enum, const
//	const, uri, range      or URI form, or mrtr.maxRounds outside 1–16
//	min-items, duplicate   an empty list; a version listed twice
//	member                 a preferred version or floor not in its list
//	floor-above-preferred  the floor above the preferred version
//	profile-version        a profile "a2a-X.Y"/"mcp-DATE" whose version is not offered
//	legacy-profile         a profile id ending in -legacy
//	until-forbidden        until on a stable record
//	until-required         no until on an experimental or deprecated record
//	supported-transports   supportedTransports at the root or in a2a/mcp (RFC 0175)
//	grpc-block             a root grpc block (RFC 0175)
//	root-profiles          a root profiles key (RFC 0175)
//	legacy-version         A2A 0.3 or MCP 2025-06-18 offered, as floor, preferred or profile
//	until-in-past          an until date before today (Lint only)
//	refresh-stale          refreshedAt more than 90 days before now (CheckRefresh), or none
//	                       in a Refresher's Report after a check that failed
//	refresh-future         refreshedAt more than one day after now (CheckRefresh)
//	refresh-closing        the refresh window closes soon (a Refresher's Report)
//	unlisted, superseded   what a Refresher's check found upstream (a Report)
//	supersede-order,       a release list's supersededBy not later than its version; a
//	after-taken            release published after the list's takenAt (a Refresher's Upstream)
//
// # Ordering
//
// A2A versions are "major.minor" and order as semantic versions: "1.10"
// is newer than "1.9" (the tests check the order against
// golang.org/x/mod/semver). MCP revisions are dates and order by the
// calendar. [ParseVersion] gives a [Version] that compares either way.
//
// # The refresh SLA
//
// A facet's refreshedAt must be at most 90 days ([RefreshWindow]) before
// now and at most one day after it, refreshedAt read as midnight UTC, both
// bounds inclusive (RFC 0175 §D.4 and the conformance suite's
// v2-refresh-sla). No field carries the window. [CheckRefresh] takes the
// caller's clock; validation does not, so a document does not become
// malformed by growing old.
//
// A [Refresher] keeps refreshedAt honest: it checks the offered versions
// against an upstream release list — by default the one embedded here;
// Refresher.Upstream opens a host's own mirror — reports versions
// upstream does not list (which fail the check) or has superseded (which
// do not: a floor below preferred offers an older release on purpose),
// returns a copy of the facets with refreshedAt moved by a check that
// passed, and warns through a *slog.Logger before the window closes. It
// never changes what a host offers.
//
// refreshedAt says when the versions were last checked against upstream,
// and a check can vouch for no later day than its list was taken from
// upstream. The embedded list carries that day (takenAt, 2026-11-29), so
// a check against it dates a facet no later: a host on an old build of
// this module is warned, then reported stale, 90 days after its list was
// taken, as RFC 0175 §D.4 intends. A mirror of upstream's present (no
// takenAt) dates it on the day of the check. Stricter reading: the SLA
// says re-evaluated "against upstream", and a copy embedded at build time
// is upstream only as of the day it was taken.
//
// # Discovery
//
// A [Discovery] is the root of a v2 discovery document as this module
// serves it: protocolVersions and preferredVersion (the OpenWOP versions),
// the a2a and mcp records, conformance.seamsProfile ([SeamsProfile], when
// Seams is set) and hostEvents.types[] ([HostEvent]). Its JSON form is
// closed and deterministic; [ParseDiscovery] reads it strictly.
//
// [NewHandler] serves a Discovery at [WellKnownPath],
// "/.well-known/openwop", and [Handler.Run] keeps its refreshedAt with
// the Handler's Refresher: only a check that passed moves a facet's
// refreshedAt, so a stale advertisement is served as stale, never as
// fresh. A host that serves either protocol inbound (a2a.agentCardUrl,
// mcp.serverUrls or mcp.serverMount present) advertises
// {"type": "negotiation.decided", "delivery": "durable"} in
// hostEvents.types[] (RFC 0242 §B) without asking, unless it lists
// negotiation.decided itself (as "ephemeral", when its audit is not
// durable). The seams profile is
// off unless the host sets Seams because it mounts the conformance seams.
//
// [Lint] checks any host's discovery document the way the conformance
// scenarios no-transport-advertisement, legacy-profiles-absent and
// refresh-sla read it, with a clock; `wopneg lint` prints its findings.
//
// # Stricter readings
//
// Where the specification is ambiguous or silent, this package takes the
// stricter reading, so that a facet it accepts is accepted everywhere:
//
//   - Floor and preferred: the schemas require neither that
//     minimumVersion ≤ preferredVersion nor that both are in the offered
//     list; only the v2-refresh-sla scenario checks membership. Both are
//     enforced at validation, for every facet.
//   - Version patterns: the A2A facet pattern ^[0-9]+\.[0-9]+$ admits
//     leading zeros, which semantic versioning (and the root
//     protocolVersions pattern) forbid; "01.0" is refused. MCP revisions
//     are JSON Schema "format: date" here, where v1 used a bare
//     ^[0-9]{4}-[0-9]{2}-[0-9]{2}$: they must name a real calendar day,
//     so "2025-02-30" is refused, and so is a profile or until naming one.
//   - Closed facets: the facet schema files declare no
//     additionalProperties, but the discovery records that carry them are
//     closed, so an unknown key is a violation in both. Keys match
//     case-sensitively.
//   - Closed discovery objects: conformance holds only seamsProfile, which
//     it requires; hostEvents holds only types, which it requires
//     non-empty; each host event type is {type, delivery}, listed once.
//   - Unique versions: versions[] and revisions[] have no uniqueItems in
//     the schema; a version offered twice is a violation.
//   - Numbers: maxRounds is an integer in JSON Schema's sense, so 4.0 is
//     accepted as 4; null is not accepted for any field.
//   - URIs: agentCardUrl and serverUrls[] must be absolute RFC 3986 URIs,
//     and http(s) ones must name a host.
//   - until: a bare facet need not carry status, so there only a stable
//     status with an until is refused; a record with status experimental
//     or deprecated must carry until.
package facets
