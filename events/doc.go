// Package events holds the negotiation.decided payload that records every
// A2A and MCP version negotiation (RFC 0175 §D.3), and the peer digest that
// keeps it content-free.
//
// The payload is the v2 schema's closed negotiationDecided object plus the
// optional requested of RFC 0242. The schema and the interop prose disagree
// on its shape; this package follows the schema, as both known emitters and
// RFC 0242 do: outcome is accepted or refused, and a downgrade is an
// accepted record whose version differs from requested.
//
// The peer never appears in clear: [PeerDigest] is the lowercase hex
// SHA-256 of the WHATWG origin serialization of the peer's URL, and a URL
// with no http(s) or ws(s) origin is an error rather than a digest of
// whatever was given.
package events
