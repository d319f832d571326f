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
// facets; [ParseRecord] validates the same shape as discovery records,
// which also need status, since and witness. [ParseA2A] and [ParseMCP]
// read one facet object. Errors are a [*ValidationError] that lists every
// [Violation] at once, each at its JSON path ("mcp.revisions[2]",
// "a2a.preferredVersion") with a stable rule id and a sentence, and that
// matches [ErrInvalid] under errors.Is. Decoding is strict: unknown keys,
// repeated keys, null, and values of the wrong JSON type are violations,
// not silently dropped. Documents are read in one pass by the module's one
// strict JSON reader, with its paths (a key that is not a name is quoted:
// a2a["x-y"]); nesting deeper than 64 levels is refused while reading. A
// repeated key ends the reading, since JSON readers disagree on which of
// its values counts: what follows it is neither decoded nor validated, so
// the report holds the repeat and what was found before it. Values built in Go are checked with
// [A2A.Validate], [MCP.Validate] and [Set.Validate] (or their
// ValidateRecord forms); [Record.CheckUntil] checks, against a clock, that
// a record's until has not passed.
//
// Besides the schemas' own rules, validation enforces what no schema
// states: the preferred version and the floor are both offered, the floor
// is not above the preferred version, no version is offered twice, and a
// profile "a2a-X.Y" or "mcp-DATE" needs its version offered. A value that
// fails its own format is reported once, not again by every rule that
// reads it.
//
// # Ordering
//
// A2A versions are "major.minor" and order as semantic versions (through
// golang.org/x/mod/semver): "1.10" is newer than "1.9". MCP revisions are
// dates and order by the calendar. [ParseVersion] gives a [Version] that
// compares either way; [CompareVersions] compares two strings.
//
// # The refresh SLA
//
// A facet's refreshedAt must be at most 90 days ([RefreshWindow]) before
// now and at most one day ([RefreshLeeway]) after it, refreshedAt read as
// midnight UTC, both bounds inclusive (RFC 0175 §D.4 and the conformance
// suite's v2-refresh-sla). No field carries the window. [CheckRefresh]
// and [Set.CheckRefresh] take the caller's clock; validation does not, so
// a document does not become malformed by growing old.
//
// A [Refresher] keeps refreshedAt honest: on a schedule the host gives (at
// most the 90-day window) it checks the offered versions against an
// [Upstream] release list — by default [PublishedReleases], embedded here;
// [FileUpstream] and [HTTPUpstream] read a host's own mirror — reports
// versions upstream does not list (which fail the check) or has
// superseded (which do not: a floor below preferred offers an older
// release on purpose), returns a copy of the facets with refreshedAt
// moved to the day of a check that passed,
// and warns through a *slog.Logger before the window closes. It never
// changes what a host offers. [DecodeRecord] serves tools such as
// `wopneg lint`: the violations of [ParseRecord] together with what was
// decoded, for the checks that need a clock.
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
