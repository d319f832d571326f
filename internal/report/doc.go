// Package report reads a record of negotiation.decided events back and
// tells what it holds: per protocol and period, the versions requested
// and settled, the exchanges and distinct peers (by digest), the refusals
// by reason and the downgrades (accepted at a version other than the one
// requested); and, for a change a host is planning — raising its floor,
// or no longer offering a version — what that change would have refused
// in the recorded traffic: how many exchanges, which peers, and when each
// was last seen. It is `wopneg report`, and the report module's command
// (PostgreSQL and HTML) builds on it.
//
// # Reading
//
// [Tally.ReadLines] reads JSON lines exactly as [events.JSONLines] and the
// example host write them, run events and host events alike. A line that
// is not JSON, or is JSON but not a negotiation.decided event, is counted
// and named with its line number, and reading goes on; nothing in the
// input is changed. Lines in the shape the sinks write take a fast path
// over JSON v2's token reader that allocates nothing per event; any other
// line is read by [events.Event.UnmarshalJSON], the module's strict
// reader, which decides what it is, so that both paths accept the same
// events (FuzzReadLine holds them to it).
//
// Memory grows with the distinct peers, periods and versions, never with
// the events: a Tally keeps sets of digests and counters, not events.
//
// # Deciding again
//
// A change is judged by deciding each accepted exchange of the record
// again with [negotiate.Decide], against the facet the change leaves,
// with what the record holds: the peer speaks the version it settled at
// (the newest both sides spoke); the host offered that version, its
// recorded floor, and the version requested unless it counter-offered
// (settled above the version requested). A refused exchange stays
// refused: a change that raises a floor or drops a version offers
// nothing new. The peer's other versions are not in the record, so an
// exchange the change refuses might have settled at one of them; the
// report is what the record can tell.
//
// The legacy versions RFC 0175 removed from the v2 tree, A2A 0.3 and MCP
// 2025-06-18, leave the v1 tree on 2027-03-12 and 2027-08-12: the report
// counts the exchanges still settled at them, and names the date for a
// change that stops serving one.
//
// Peers appear only as the SHA-256 digests the record holds; a host that
// knows its peers names them with a file `wopneg digest` wrote
// ([ReadNames], --names).
package report
