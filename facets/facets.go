package facets

import "slices"

// A2A is the `a2a` facet of a discovery document (spec/v2/facets/a2a.schema.json),
// and with [Record] filled the `a2a` record of the discovery schema.
//
// Optional booleans are pointers so that an explicit false survives a JSON
// round trip; optional lists are kept as nil when absent and as an empty
// list when the document said `[]`.
type A2A struct {
	// Versions lists the A2A versions offered, as "major.minor".
	Versions []string `json:"versions" validate:"required,min=1,dive,a2aversion"`
	// PreferredVersion is the version the host asks for and serves by default.
	PreferredVersion string `json:"preferredVersion" validate:"required,a2aversion"`
	// MinimumVersion is the floor: nothing below it is ever negotiated.
	MinimumVersion string `json:"minimumVersion" validate:"required,a2aversion"`
	// RefreshedAt is the full-date (YYYY-MM-DD) on which Versions was last
	// re-checked against upstream; see [CheckRefresh].
	RefreshedAt string `json:"refreshedAt" validate:"required,fulldate"`
	// AgentCardURL is where the host's agent card is served.
	AgentCardURL string `json:"agentCardUrl,omitzero" validate:"omitempty,absuri"`
	// Profiles lists conformance profile ids, "a2a-X.Y"; each needs X.Y offered.
	Profiles []string `json:"profiles,omitzero" validate:"omitempty,dive,a2aprofile"`
	// Streaming says whether the host's A2A endpoint streams its answers
	// (A2A's streaming methods, over server-sent events); nil when the
	// document does not say. The schema sets no rule on it beyond being a
	// boolean, and negotiation never reads it.
	Streaming *bool `json:"streaming,omitzero"`
	// PushNotifications says whether the host sends A2A push notifications
	// (task updates posted to a webhook the client registers); nil when the
	// document does not say. A boolean, as Streaming.
	PushNotifications *bool `json:"pushNotifications,omitzero"`
	// DurableTasks says whether the host's A2A tasks outlive the request
	// that started them, so that a client can come back for one; nil when
	// the document does not say. A boolean, as Streaming.
	DurableTasks *bool `json:"durableTasks,omitzero"`
	// AgentCards (record only, RFC 0202) is true when per-agent cards are
	// served; the schema allows no other value.
	AgentCards *bool `json:"agentCards,omitzero" validate:"omitnil,eq=true"`
	Record
}

// MCP is the `mcp` facet of a discovery document (spec/v2/facets/mcp.schema.json),
// and with [Record] filled the `mcp` record of the discovery schema.
type MCP struct {
	// Revisions, PreferredVersion, MinimumRevision and RefreshedAt are
	// A2A's Versions, PreferredVersion, MinimumVersion and RefreshedAt,
	// with MCP revisions (calendar dates) for versions. The schema spells
	// the preferred one preferredVersion, not preferredRevision.
	Revisions        []string `json:"revisions" validate:"required,min=1,dive,mcprevision"`
	PreferredVersion string   `json:"preferredVersion" validate:"required,mcprevision"`
	MinimumRevision  string   `json:"minimumRevision" validate:"required,mcprevision"`
	RefreshedAt      string   `json:"refreshedAt" validate:"required,fulldate"`
	// Profiles lists profile ids, "mcp-YYYY-MM-DD"; each needs its revision offered.
	Profiles []string `json:"profiles,omitzero" validate:"omitempty,dive,mcpprofile"`
	// Features lists MCP feature ids such as "server-discover" and "mrtr".
	Features []string `json:"features,omitzero"`
	// ServerURLs lists where the host's MCP servers are reachable.
	ServerURLs []string `json:"serverUrls,omitzero" validate:"omitempty,dive,absuri"`
	// ServerMount says which transports the host mounts MCP servers on.
	ServerMount *ServerMount `json:"serverMount,omitzero" validate:"omitnil"`
	// MRTR bounds multi-round tool results (RFC 0175 §E.1).
	MRTR *MRTR `json:"mrtr,omitzero" validate:"omitnil"`
	// Client (record only, RFC 0204) is true when ctx.mcp is exposed to pack
	// code; the schema allows no other value.
	Client *bool `json:"client,omitzero" validate:"omitnil,eq=true"`
	Record
}

// ServerMount is the closed `mcp.serverMount` object.
type ServerMount struct {
	// Transports are "stdio" and/or "streamable-http".
	Transports []string `json:"transports,omitzero" validate:"omitempty,dive,transport"`
}

// MRTR is the closed `mcp.mrtr` object.
type MRTR struct {
	// MaxRounds is the most input_required rounds one invocation may take,
	// 1 to 16.
	MaxRounds int `json:"maxRounds" validate:"gte=1,lte=16"`
}

// Record holds the fields every family record of a v2 discovery document
// carries. The facet schema alone does not require them; the discovery
// record does (see ValidateRecord).
type Record struct {
	// Status is "stable", "experimental" or "deprecated".
	Status string `json:"status,omitzero" validate:"inrecord,omitempty,status"`
	// Since is the OpenWOP version that introduced the family, "major.minor".
	Since string `json:"since,omitzero" validate:"inrecord,omitempty,sinceversion"`
	// Until is forbidden when Status is stable and required otherwise: an
	// OpenWOP version or a full-date.
	Until string `json:"until,omitzero" validate:"omitempty,until"`
	// Witness is the witness class; both a2a and mcp declare "seam-gated".
	Witness string `json:"witness,omitzero" validate:"inrecord,omitempty,witness"`
}

// Set is the pair of facets a host advertises; either may be nil.
// Its JSON form is `{"a2a": {...}, "mcp": {...}}`.
type Set struct {
	// A2A is the a2a facet; nil when the host does not advertise A2A.
	A2A *A2A `json:"a2a,omitzero"`
	// MCP is the mcp facet; nil when the host does not advertise MCP.
	MCP *MCP `json:"mcp,omitzero"`
}

// Advertised is the part of a facet a negotiation decides with, the same
// shape for both protocols. Its slices alias the facet's.
type Advertised struct {
	// Protocol is the facet's protocol, a2a or mcp.
	Protocol Protocol
	// Versions is the offered list: A2A versions or MCP revisions.
	Versions []string
	// Preferred is the preferred version.
	Preferred string
	// Floor is the minimum version or revision.
	Floor string
	// RefreshedAt is the facet's refreshedAt.
	RefreshedAt string
}

// advertised returns the decision view of f.
func (f *A2A) advertised() Advertised {
	return Advertised{ProtocolA2A, f.Versions, f.PreferredVersion, f.MinimumVersion, f.RefreshedAt}
}

// advertised returns the decision view of f.
func (f *MCP) advertised() Advertised {
	return Advertised{ProtocolMCP, f.Revisions, f.PreferredVersion, f.MinimumRevision, f.RefreshedAt}
}

// Lookup returns the advertised view of the facet for p, and false when s
// does not advertise p.
func (s Set) Lookup(p Protocol) (Advertised, bool) {
	if p == ProtocolA2A && s.A2A != nil {
		return s.A2A.advertised(), true
	}
	if p == ProtocolMCP && s.MCP != nil {
		return s.MCP.advertised(), true
	}
	return Advertised{}, false
}

// Protocols lists the protocols s advertises, a2a first.
func (s Set) Protocols() []Protocol {
	var ps []Protocol
	if s.A2A != nil {
		ps = append(ps, ProtocolA2A)
	}
	if s.MCP != nil {
		ps = append(ps, ProtocolMCP)
	}
	return ps
}

// Clone returns a deep copy of s: no slice, pointer or nested object is
// shared, so a holder of the copy is safe from the caller's later changes.
func (s Set) Clone() Set {
	var c Set
	if s.A2A != nil {
		a := *s.A2A
		a.Versions = slices.Clone(a.Versions)
		a.Profiles = slices.Clone(a.Profiles)
		a.Streaming = cloneBool(a.Streaming)
		a.PushNotifications = cloneBool(a.PushNotifications)
		a.DurableTasks = cloneBool(a.DurableTasks)
		a.AgentCards = cloneBool(a.AgentCards)
		c.A2A = &a
	}
	if s.MCP != nil {
		m := *s.MCP
		m.Revisions = slices.Clone(m.Revisions)
		m.Profiles = slices.Clone(m.Profiles)
		m.Features = slices.Clone(m.Features)
		m.ServerURLs = slices.Clone(m.ServerURLs)
		if m.ServerMount != nil {
			sm := ServerMount{Transports: slices.Clone(m.ServerMount.Transports)}
			m.ServerMount = &sm
		}
		if m.MRTR != nil {
			r := *m.MRTR
			m.MRTR = &r
		}
		m.Client = cloneBool(m.Client)
		c.MCP = &m
	}
	return c
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}
