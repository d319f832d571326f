package facets

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// SeamsProfile is the one value of conformance.seamsProfile: a host that
// advertises it serves the conformance seams the OpenWOP v2 scenarios
// drive (spec/v1/host-sample-test-seams.md §22/§23 in openwop/openwop).
const SeamsProfile = "openwop-conformance-seams-v2"

// HostEvent is one entry of a discovery document's hostEvents.types[]: a
// host event type the host emits ("negotiation.decided") and how it is
// delivered ("durable" or "ephemeral").
type HostEvent struct {
	Type     string `json:"type"`
	Delivery string `json:"delivery"`
}

// Discovery is the root of an OpenWOP v2 discovery document, as far as
// this module serves it (schemas/v2/capabilities.schema.json in
// openwop/openwop): the OpenWOP versions, the `a2a` and `mcp` records,
// the conformance seams profile and the host event types. Its JSON form
// is closed — no other key is read or written — and deterministic: keys
// in the order of the fields below, conformance written as
// `{"seamsProfile": "openwop-conformance-seams-v2"}` when Seams is set,
// hostEvents as `{"types": [...]}` when HostEvents is not empty.
//
// It never carries supportedTransports, grpc or root profiles (RFC 0175
// removed them), and a profile id never ends in -legacy.
type Discovery struct {
	// ProtocolVersions lists the OpenWOP versions served, "major.minor"
	// without leading zeros, each once.
	ProtocolVersions []string
	// PreferredVersion is one of ProtocolVersions.
	PreferredVersion string
	// Seams advertises conformance.seamsProfile ([SeamsProfile]): set it
	// only when the host mounts the conformance seams.
	Seams bool
	// HostEvents lists hostEvents.types[]. A [Handler] adds
	// {negotiation.decided, durable} when the host serves a protocol
	// inbound.
	HostEvents []HostEvent
	// A2A and MCP are the records; each needs status, since and witness
	// besides its facet's fields (see [Record]).
	A2A *A2A
	MCP *MCP
}

// discoveryJSON is the JSON form of a Discovery.
type discoveryJSON struct {
	ProtocolVersions []string        `json:"protocolVersions"`
	PreferredVersion string          `json:"preferredVersion"`
	Conformance      *conformanceDoc `json:"conformance,omitzero"`
	HostEvents       *hostEventsDoc  `json:"hostEvents,omitzero"`
	A2A              *A2A            `json:"a2a,omitzero"`
	MCP              *MCP            `json:"mcp,omitzero"`
}

type conformanceDoc struct {
	SeamsProfile string `json:"seamsProfile"`
}

type hostEventsDoc struct {
	Types []HostEvent `json:"types"`
}

// MarshalJSON writes the closed JSON form of d, keys in a fixed order.
func (d Discovery) MarshalJSON() ([]byte, error) {
	out := discoveryJSON{ProtocolVersions: d.ProtocolVersions, PreferredVersion: d.PreferredVersion, A2A: d.A2A, MCP: d.MCP}
	if d.Seams {
		out.Conformance = &conformanceDoc{SeamsProfile}
	}
	if len(d.HostEvents) > 0 {
		out.HostEvents = &hostEventsDoc{d.HostEvents}
	}
	if out.ProtocolVersions == nil {
		out.ProtocolVersions = []string{}
	}
	return json.Marshal(out)
}

// ParseDiscovery decodes a discovery document strictly and validates it,
// as [Parse] does a facet set: unknown keys (supportedTransports, grpc
// and root profiles included), repeated keys, wrong JSON types and every
// rule of the records come back together in one error (see [Violation]).
// It refuses what [Lint] reports without a clock, and a document that
// advertises neither a2a nor mcp. On error the Discovery is zero.
func ParseDiscovery(data []byte) (Discovery, error) {
	d, vs, _ := readDiscovery(data, true)
	if err := asError(vs); err != nil {
		return Discovery{}, err
	}
	return d, nil
}

// UnmarshalJSON is [ParseDiscovery], so that encoding/json and the
// module's strict reader decode a Discovery the one strict way.
func (d *Discovery) UnmarshalJSON(data []byte) error {
	var err error
	*d, err = ParseDiscovery(data)
	return err
}

// readDiscovery reads and validates a discovery document. closed refuses
// root keys this package does not know; without it (for Lint) they are
// passed over, and a document without a2a or mcp is no violation. It
// also returns the root keys in document order. The violations come in
// path order, then the legacy versions. A root that is not an object is
// one violation: what validation would add is covered by it.
func readDiscovery(data []byte, closed bool) (Discovery, []Violation, []string) {
	var doc Discovery
	var keys []string
	vs, complete := readDoc(data, func(d *decoder) error {
		return d.discovery(&doc, closed, &keys)
	})
	if !complete {
		return Discovery{}, vs, keys
	}
	set := Set{A2A: doc.A2A, MCP: doc.MCP}
	values := rootVersionViolations(doc.ProtocolVersions, doc.PreferredVersion)
	values = append(values, hostEventViolations(doc.HostEvents)...)
	if closed || set.A2A != nil || set.MCP != nil {
		values = append(values, set.violations(true)...)
	}
	vs = merge(vs, values)
	for i := range vs {
		if vs[i].Rule == "unknown-field" && (vs[i].Path == "a2a.supportedTransports" || vs[i].Path == "mcp.supportedTransports") {
			vs[i].Rule = "supported-transports"
		}
	}
	sortViolations(vs)
	return doc, append(vs, legacyViolations(set)...), keys
}

// rootKeys are the root keys of a Discovery, and the removed ones with
// their own rules.
var (
	rootKeys    = []string{"protocolVersions", "preferredVersion", "conformance", "hostEvents", "a2a", "mcp"}
	removedRoot = map[string]Violation{
		"supportedTransports": {"supportedTransports", "supported-transports", "supportedTransports was removed by RFC 0175: v2 does not advertise transports"},
		"grpc":                {"grpc", "grpc-block", "the grpc block was removed by RFC 0175: v2 does not advertise transports"},
		"profiles":            {"profiles", "root-profiles", "root profiles were removed by RFC 0175: profiles live in a2a.profiles and mcp.profiles"},
	}
	conformanceFields = []string{"seamsProfile"}
	hostEventsFields  = []string{"types"}
	hostEventFields   = []string{"type", "delivery"}
)

// discovery reads the root object, noting its keys in document order.
func (d *decoder) discovery(doc *Discovery, closed bool, keys *[]string) error {
	if ok, err := d.is(strictjson.Object, "an object (a discovery document)"); !ok {
		return err
	}
	return d.r.Object(func(key string) error {
		*keys = append(*keys, key)
		if v, ok := removedRoot[key]; ok {
			d.vs = append(d.vs, v)
			return d.walk()
		}
		if !slices.Contains(rootKeys, key) {
			if closed {
				d.add(d.path(), "unknown-field", unknownMessage(key, "a discovery document", rootKeys))
			}
			return d.walk()
		}
		return d.rootField(doc, key)
	})
}

func (d *decoder) rootField(doc *Discovery, key string) error {
	if key == "protocolVersions" {
		return d.strings(&doc.ProtocolVersions)
	}
	if key == "preferredVersion" {
		return d.string(&doc.PreferredVersion, "sinceversion", key)
	}
	if key == "conformance" {
		return d.conformance(&doc.Seams)
	}
	if key == "hostEvents" {
		return d.hostEvents(&doc.HostEvents)
	}
	if key == "a2a" {
		doc.A2A = new(A2A)
		return d.a2a(doc.A2A)
	}
	doc.MCP = new(MCP)
	return d.mcp(doc.MCP)
}

// conformance reads the closed conformance object, whose one member
// seamsProfile may only be [SeamsProfile].
func (d *decoder) conformance(seams *bool) error {
	found := false
	ok, err := d.object("conformance", conformanceFields, func(key string) error {
		found = true
		var profile string
		err := d.string(&profile, "seamsprofile", key)
		if profile != "" && profile != SeamsProfile {
			rule, msg := describe("seamsprofile", key, profile)
			d.add(d.path(), rule, msg)
		}
		*seams = profile == SeamsProfile
		return err
	})
	if ok && !found && err == nil {
		d.add("conformance.seamsProfile", "required", "seamsProfile is required")
	}
	return err
}

func (d *decoder) hostEvents(dst *[]HostEvent) error {
	found := false
	ok, err := d.object("hostEvents", hostEventsFields, func(string) error {
		found = true
		return readObjects(d, dst, "host event type", hostEventFields, func(e *HostEvent, key string) error {
			if key == "type" {
				return d.string(&e.Type, "eventtype", key)
			}
			return d.string(&e.Delivery, "delivery", key)
		})
	})
	if ok && !found && err == nil {
		d.add("hostEvents.types", "required", "types is required")
	}
	return err
}

var (
	eventTypeRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	deliveries  = []string{"durable", "ephemeral"}
)

// rootVersionViolations checks the OpenWOP protocolVersions and
// preferredVersion of the root (both required, the list non-empty and
// unique, each a version without leading zeros) and, as every
// conformance run does, that preferredVersion is listed.
func rootVersionViolations(list []string, pref string) []Violation {
	var vs []Violation
	listOK := len(list) > 0
	if list == nil {
		vs = append(vs, Violation{"protocolVersions", "required", "protocolVersions is required"})
	} else if len(list) == 0 {
		vs = append(vs, Violation{"protocolVersions", "min-items", "protocolVersions must list at least one entry"})
	}
	first := map[string]int{}
	for i, v := range list {
		path := fmt.Sprintf("protocolVersions[%d]", i)
		if !sinceRE.MatchString(v) {
			listOK = false
			vs = append(vs, Violation{path, "pattern", fmt.Sprintf("%q is not an OpenWOP version \"major.minor\" (no leading zeros)", v)})
		} else if j, seen := first[v]; seen {
			vs = append(vs, Violation{path, "duplicate", fmt.Sprintf("%q is listed twice (first at protocolVersions[%d])", v, j)})
		} else {
			first[v] = i
		}
	}
	if pref == "" {
		vs = append(vs, Violation{"preferredVersion", "required", "preferredVersion is required"})
	} else if !sinceRE.MatchString(pref) {
		vs = append(vs, Violation{"preferredVersion", "pattern", fmt.Sprintf("%q is not an OpenWOP version \"major.minor\" (no leading zeros)", pref)})
	} else if listOK && !slices.Contains(list, pref) {
		vs = append(vs, Violation{"preferredVersion", "member", fmt.Sprintf("%q is not one of the protocolVersions", pref)})
	}
	return vs
}

// hostEventViolations checks hostEvents.types[]: each a host event type
// name with a delivery, each pair once.
func hostEventViolations(list []HostEvent) []Violation {
	var vs []Violation
	if list != nil && len(list) == 0 {
		vs = append(vs, Violation{"hostEvents.types", "min-items", "types must list at least one entry"})
	}
	seen := map[HostEvent]int{}
	for i, e := range list {
		at := fmt.Sprintf("hostEvents.types[%d].", i)
		if e.Type == "" {
			vs = append(vs, Violation{at + "type", "required", "type is required"})
		} else if !eventTypeRE.MatchString(e.Type) {
			rule, msg := describe("eventtype", "type", e.Type)
			vs = append(vs, Violation{at + "type", rule, msg})
		}
		if e.Delivery == "" {
			vs = append(vs, Violation{at + "delivery", "required", "delivery is required"})
		} else if !slices.Contains(deliveries, e.Delivery) {
			rule, msg := describe("delivery", "delivery", e.Delivery)
			vs = append(vs, Violation{at + "delivery", rule, msg})
		}
		if !eventTypeRE.MatchString(e.Type) || !slices.Contains(deliveries, e.Delivery) {
			continue
		}
		if j, ok := seen[e]; ok {
			vs = append(vs, Violation{at[:len(at)-1], "duplicate", fmt.Sprintf("%s/%s is listed twice (first at hostEvents.types[%d])", e.Type, e.Delivery, j)})
			continue
		}
		seen[e] = i
	}
	return vs
}

// legacy is what RFC 0175 removed from one family: its legacy version.
type legacy struct {
	p                      Protocol
	list, floor, noun, ver string
}

var legacies = [...]legacy{
	{ProtocolA2A, "versions", "minimumVersion", "version", "0.3"},
	{ProtocolMCP, "revisions", "minimumRevision", "revision", "2025-06-18"},
}

// legacyViolations reports every place a record names its family's
// legacy version (A2A 0.3, MCP 2025-06-18): in the offered list, as the
// floor or the preferred version, and as a profile id ("a2a-0.3").
// `wopneg migrate` rewrites each of these places by codemod row C8.1 (or,
// for the preferred version, refuses).
func legacyViolations(s Set) []Violation {
	var vs []Violation
	for _, l := range legacies {
		adv, ok := s.Lookup(l.p)
		if !ok {
			continue
		}
		what := fmt.Sprintf("the legacy %s %s %q RFC 0175 removed", l.p, l.noun, l.ver)
		add := func(path, msg string) { vs = append(vs, Violation{string(l.p) + "." + path, "legacy-version", msg}) }
		for i, v := range adv.Versions {
			if v == l.ver {
				add(fmt.Sprintf("%s[%d]", l.list, i), what+" is offered; migrate drops it (C8.1)")
			}
		}
		if adv.Floor == l.ver {
			add(l.floor, "the floor is "+what+"; migrate moves it to the lowest "+l.noun+" still offered (C8.1)")
		}
		if adv.Preferred == l.ver {
			add("preferredVersion", "the preferred "+l.noun+" is "+what+"; choose a v2 one (migrate cannot)")
		}
		for i, id := range profilesOf(s, l.p) {
			if id == string(l.p)+"-"+l.ver {
				add(fmt.Sprintf("profiles[%d]", i), fmt.Sprintf("profile %q names %s; migrate drops it (C8.1)", id, what))
			}
		}
	}
	return vs
}

func profilesOf(s Set, p Protocol) []string {
	if p == ProtocolA2A {
		return s.A2A.Profiles
	}
	return s.MCP.Profiles
}

// sortByKeys orders violations as the document orders its root keys,
// the document itself and required keys it lacks first; within one key
// they keep their order.
func sortByKeys(vs []Violation, keys []string) {
	rank := func(v Violation) int {
		top, _ := cutName(v.Path)
		return slices.Index(keys, top)
	}
	slices.SortStableFunc(vs, func(a, b Violation) int { return rank(a) - rank(b) })
}
