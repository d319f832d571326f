package facets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The JSON decoding here is strict where encoding/json is lenient: the
// records are closed, so an unknown key is reported rather than dropped;
// keys match case-sensitively; a key given twice is an error rather than
// "last one wins"; null is never a value of any field; and every shape
// problem in a document is reported at once, each at its JSON path.
// Encoding needs nothing special: the struct tags (omitzero) keep explicit
// false and [] and drop only what was absent.

// UnmarshalJSON decodes an `a2a` facet or record strictly. Problems of
// shape (unknown or repeated keys, wrong JSON types, present-but-empty
// strings) come back together as a [*ValidationError] with paths under
// "a2a"; the value rules are left to [A2A.Validate]. Use [ParseA2A] for
// both at once.
func (f *A2A) UnmarshalJSON(data []byte) error {
	*f = A2A{}
	return asError(decodeTop(data, func(d *decoder, v []byte) { d.a2a(v, "a2a", f) }))
}

// UnmarshalJSON decodes an `mcp` facet or record strictly; see
// [A2A.UnmarshalJSON].
func (f *MCP) UnmarshalJSON(data []byte) error {
	*f = MCP{}
	return asError(decodeTop(data, func(d *decoder, v []byte) { d.mcp(v, "mcp", f) }))
}

// UnmarshalJSON decodes the closed `mcp.serverMount` object strictly.
func (m *ServerMount) UnmarshalJSON(data []byte) error {
	*m = ServerMount{}
	return asError(decodeTop(data, func(d *decoder, v []byte) { d.serverMount(v, "mcp.serverMount", m) }))
}

// UnmarshalJSON decodes the closed `mcp.mrtr` object strictly. A missing
// maxRounds is reported here, since 0 in the struct cannot tell "absent"
// from "zero".
func (m *MRTR) UnmarshalJSON(data []byte) error {
	*m = MRTR{}
	return asError(decodeTop(data, func(d *decoder, v []byte) { d.mrtr(v, "mcp.mrtr", m) }))
}

// UnmarshalJSON decodes `{"a2a": {...}, "mcp": {...}}` strictly: no other
// key is admitted. JSON null leaves an empty Set, which [Set.Validate]
// then reports as advertising nothing.
func (s *Set) UnmarshalJSON(data []byte) error {
	*s = Set{}
	vs := decodeSet(data, s)
	return asError(vs)
}

// Parse decodes a facet set and validates it as facets ([Set.Validate]).
// Shape and value violations come back merged in one [*ValidationError],
// without the echoes a shape problem would cause (a field of the wrong
// type is not also reported as missing). On error the Set is zero.
func Parse(data []byte) (Set, error) {
	return parseSet(data, false)
}

// ParseRecord is [Parse] for the `a2a`/`mcp` records of a discovery
// document: it validates with [Set.ValidateRecord].
func ParseRecord(data []byte) (Set, error) {
	return parseSet(data, true)
}

// ParseA2A decodes one `a2a` facet object and validates it with
// [A2A.Validate]; violation paths start with "a2a". On error it returns nil.
func ParseA2A(data []byte) (*A2A, error) {
	f := new(A2A)
	shape := decodeTop(data, func(d *decoder, v []byte) { d.a2a(v, "a2a", f) })
	if err := asError(merge(shape, f.violations(false))); err != nil {
		return nil, err
	}
	return f, nil
}

// ParseMCP decodes one `mcp` facet object and validates it with
// [MCP.Validate]; violation paths start with "mcp". On error it returns nil.
func ParseMCP(data []byte) (*MCP, error) {
	f := new(MCP)
	shape := decodeTop(data, func(d *decoder, v []byte) { d.mcp(v, "mcp", f) })
	if err := asError(merge(shape, f.violations(false))); err != nil {
		return nil, err
	}
	return f, nil
}

func parseSet(data []byte, record bool) (Set, error) {
	var s Set
	shape := decodeSet(data, &s)
	if err := asError(merge(shape, s.violations(record))); err != nil {
		return Set{}, err
	}
	return s, nil
}

// merge joins shape violations (from decoding) with value violations
// (from validating what was decoded), dropping value violations at or
// below a path whose shape was already wrong: those describe the
// placeholder the decoder left there, not the document.
func merge(shape, values []Violation) []Violation {
	vs, n := shape, len(shape)
	for _, v := range values {
		if !slices.ContainsFunc(vs[:n], func(s Violation) bool { return covers(s.Path, v.Path) }) {
			vs = append(vs, v)
		}
	}
	return vs
}

// covers reports whether path lies at or below base.
func covers(base, path string) bool {
	rest, ok := strings.CutPrefix(path, base)
	return ok && (base == "" || rest == "" || rest[0] == '.' || rest[0] == '[')
}

// decodeTop checks data is one well-formed UTF-8 JSON value and hands it
// to decode. Unlike a Set, a facet object is never null.
func decodeTop(data []byte, decode func(*decoder, []byte)) []Violation {
	d := new(decoder)
	if d.syntax(data) {
		decode(d, bytes.TrimSpace(data))
	}
	return d.vs
}

func decodeSet(data []byte, s *Set) []Violation {
	d := new(decoder)
	if !d.syntax(data) {
		return d.vs
	}
	v := bytes.TrimSpace(data)
	if kindOf(v) == "null" {
		return nil
	}
	if !d.expectObject(v, "", "a facet set") {
		return d.vs
	}
	d.members(v, "", setFields, func(key, path string, v []byte) {
		switch key {
		case "a2a":
			s.A2A = new(A2A)
			d.a2a(v, path, s.A2A)
		case "mcp":
			s.MCP = new(MCP)
			d.mcp(v, path, s.MCP)
		}
	})
	return d.vs
}

// decoder collects shape violations while it walks a document that is
// already known to be valid JSON.
type decoder struct {
	vs []Violation
}

func (d *decoder) add(path, rule, msg string) {
	d.vs = append(d.vs, Violation{path, rule, msg})
}

// syntax reports whether data is one well-formed JSON value in UTF-8, and
// records a "syntax" violation when it is not.
func (d *decoder) syntax(data []byte) bool {
	if !utf8.Valid(data) {
		d.add("", "syntax", "the document is not valid UTF-8")
		return false
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		d.add("", "syntax", "the document is not JSON: "+err.Error())
		return false
	}
	return true
}

// kindOf names the JSON type of a well-formed value by its first byte.
func kindOf(v []byte) string {
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "number"
}

func (d *decoder) wrongType(path, want string, v []byte) {
	d.add(path, "type", fmt.Sprintf("must be %s, not %s", want, kindOf(v)))
}

func (d *decoder) expectObject(v []byte, path, what string) bool {
	if kindOf(v) != "object" {
		d.wrongType(path, "an object ("+what+")", v)
		return false
	}
	return true
}

// members walks the members of a well-formed object in order, reporting
// repeated and unknown keys, and calls field for each known key's first
// occurrence.
func (d *decoder) members(obj []byte, path string, known []string, field func(key, path string, v []byte)) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		var v json.RawMessage
		if err != nil || !ok || dec.Decode(&v) != nil {
			return
		}
		p := keyPath(path, key)
		switch {
		case seen[key]:
			d.add(p, "duplicate-key", fmt.Sprintf("key %q appears more than once", key))
		case !slices.Contains(known, key):
			d.add(p, "unknown-field", unknownMessage(key, known))
		default:
			field(key, p, v)
		}
		seen[key] = true
	}
}

// elements walks the elements of a well-formed array.
func elements(arr []byte, each func(i int, v []byte)) {
	dec := json.NewDecoder(bytes.NewReader(arr))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '['
		return
	}
	for i := 0; dec.More(); i++ {
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return
		}
		each(i, v)
	}
}

// Keys that are not part of a v2 facet but that people write, with what
// to do instead.
var removedKeys = map[string]string{
	"supportedTransports": "supportedTransports was removed by RFC 0175: v2 does not advertise transports",
	"grpc":                "grpc was removed by RFC 0175: v2 does not advertise transports",
	"supported":           "the v1 flag supported is gone in v2: advertising the facet is the claim",
	"protocolVersions":    "the v1 list protocolVersions is gone from the families in v2",
	"preferredRevision":   "unknown field preferredRevision: the mcp facet spells it preferredVersion",
	"refreshWindowDays":   "no field carries the refresh window: it is fixed at 90 days",
	"profiles":            "root profiles were removed by RFC 0175: profiles live in a2a.profiles and mcp.profiles",
}

func unknownMessage(key string, known []string) string {
	if msg, ok := removedKeys[key]; ok {
		return msg
	}
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("unknown field %q (field names are case-sensitive: did you mean %q?)", key, k)
		}
	}
	return fmt.Sprintf("unknown field %q: the record is closed", key)
}

// keyPath appends key to path, as ".key" when it reads as a name and as
// a quoted index otherwise, so that paths stay unambiguous.
func keyPath(path, key string) string {
	plain := key != ""
	for i := 0; i < len(key); i++ {
		if c := key[i]; !isAlpha(c) && c != '_' && c != '$' && (i == 0 || !isDigit(c) && c != '-') {
			plain = false
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

var (
	setFields         = []string{"a2a", "mcp"}
	serverMountFields = []string{"transports"}
	mrtrFields        = []string{"maxRounds"}
)

func (d *decoder) a2a(v []byte, path string, f *A2A) {
	if !d.expectObject(v, path, "the a2a facet") {
		return
	}
	d.members(v, path, a2aFields, func(key, p string, v []byte) {
		switch key {
		case "versions":
			f.Versions = d.strings(v, p)
		case "preferredVersion":
			f.PreferredVersion = d.string(v, p, "a2aversion", key)
		case "minimumVersion":
			f.MinimumVersion = d.string(v, p, "a2aversion", key)
		case "refreshedAt":
			f.RefreshedAt = d.string(v, p, "fulldate", key)
		case "profiles":
			f.Profiles = d.strings(v, p)
		case "agentCardUrl":
			f.AgentCardURL = d.string(v, p, "absuri", key)
		case "streaming":
			f.Streaming = d.bool(v, p)
		case "pushNotifications":
			f.PushNotifications = d.bool(v, p)
		case "durableTasks":
			f.DurableTasks = d.bool(v, p)
		case "agentCards":
			f.AgentCards = d.bool(v, p)
		default:
			d.record(key, v, p, &f.Record)
		}
	})
}

func (d *decoder) mcp(v []byte, path string, f *MCP) {
	if !d.expectObject(v, path, "the mcp facet") {
		return
	}
	d.members(v, path, mcpFields, func(key, p string, v []byte) {
		switch key {
		case "revisions":
			f.Revisions = d.strings(v, p)
		case "preferredVersion":
			f.PreferredVersion = d.string(v, p, "mcprevision", key)
		case "minimumRevision":
			f.MinimumRevision = d.string(v, p, "mcprevision", key)
		case "refreshedAt":
			f.RefreshedAt = d.string(v, p, "fulldate", key)
		case "profiles":
			f.Profiles = d.strings(v, p)
		case "features":
			f.Features = d.strings(v, p)
		case "serverUrls":
			f.ServerURLs = d.strings(v, p)
		case "serverMount":
			f.ServerMount = new(ServerMount)
			d.serverMount(v, p, f.ServerMount)
		case "mrtr":
			f.MRTR = new(MRTR)
			d.mrtr(v, p, f.MRTR)
		case "client":
			f.Client = d.bool(v, p)
		default:
			d.record(key, v, p, &f.Record)
		}
	})
}

// record decodes the record fields the two families share.
func (d *decoder) record(key string, v []byte, p string, r *Record) {
	switch key {
	case "status":
		r.Status = d.string(v, p, "status", key)
	case "since":
		r.Since = d.string(v, p, "sinceversion", key)
	case "until":
		r.Until = d.string(v, p, "until", key)
	case "witness":
		r.Witness = d.string(v, p, "witness", key)
	}
}

func (d *decoder) serverMount(v []byte, path string, m *ServerMount) {
	if !d.expectObject(v, path, "serverMount") {
		return
	}
	d.members(v, path, serverMountFields, func(_, p string, v []byte) {
		m.Transports = d.strings(v, p)
	})
}

func (d *decoder) mrtr(v []byte, path string, m *MRTR) {
	if !d.expectObject(v, path, "mrtr") {
		return
	}
	found := false
	d.members(v, path, mrtrFields, func(_, p string, v []byte) {
		found = true
		m.MaxRounds = d.integer(v, p, "maxRounds")
	})
	if !found {
		d.add(path+".maxRounds", "required", "maxRounds is required")
	}
}

// string decodes a string field. An empty string is reported under the
// field's own rule: the struct would otherwise read it as absent.
func (d *decoder) string(v []byte, path, tag, field string) string {
	if kindOf(v) != "string" {
		d.wrongType(path, "a string", v)
		return ""
	}
	var s string
	_ = json.Unmarshal(v, &s) // well-formed: cannot fail
	if s == "" {
		rule, msg := describe(tag, field, s)
		d.add(path, rule, msg)
	}
	return s
}

// strings decodes a list of strings. A non-string element is reported and
// kept as "" so the indexes of the others stay those of the document.
func (d *decoder) strings(v []byte, path string) []string {
	if kindOf(v) != "array" {
		d.wrongType(path, "an array of strings", v)
		return nil
	}
	list := []string{}
	elements(v, func(i int, e []byte) {
		var s string
		if kindOf(e) == "string" {
			_ = json.Unmarshal(e, &s)
		} else {
			d.wrongType(fmt.Sprintf("%s[%d]", path, i), "a string", e)
		}
		list = append(list, s)
	})
	return list
}

func (d *decoder) bool(v []byte, path string) *bool {
	if kindOf(v) != "boolean" {
		d.wrongType(path, "a boolean", v)
		return nil
	}
	b := v[0] == 't'
	return &b
}

// integer decodes a JSON integer. As in JSON Schema, a number with a zero
// fraction ("4.0", "4e0") is an integer. One too large for the struct is
// reported as out of range here and kept as 0.
func (d *decoder) integer(v []byte, path, field string) int {
	if kindOf(v) != "number" {
		d.wrongType(path, "an integer", v)
		return 0
	}
	f, err := strconv.ParseFloat(string(v), 64)
	switch {
	case err == nil && f != math.Trunc(f):
		d.add(path, "type", fmt.Sprintf("must be an integer, not %s", v))
	case err != nil || math.Abs(f) > math.MaxInt32:
		d.add(path, "range", fmt.Sprintf("%s %s is not in 1–16", field, v))
	default:
		return int(f)
	}
	return 0
}
