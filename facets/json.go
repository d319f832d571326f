package facets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// The JSON decoding here walks the document once with the module's one
// strict reader (internal/strictjson), which is strict where encoding/json
// is lenient: keys match case-sensitively, a key given twice is refused,
// nothing may follow the value, and nesting is bounded while reading. On
// top of it the records are closed, so an unknown key is reported rather
// than dropped; null is never a value of any field; and every shape
// problem in a document is reported at once, each at its JSON path. A
// repeated key ends the walk: which of its values counts is what readers
// disagree on, so nothing after it is decoded, and only the problems found
// before it are reported with it. Encoding needs nothing special: the
// struct tags (omitzero) keep explicit false and [] and drop only what was
// absent.

// UnmarshalJSON decodes `{"a2a": {...}, "mcp": {...}}` strictly: no other
// key is admitted. JSON null leaves an empty Set, which [Set.Validate]
// then reports as advertising nothing.
func (s *Set) UnmarshalJSON(data []byte) error {
	*s = Set{}
	vs, _ := readDoc(data, func(d *decoder) error { return d.set(s) })
	return asError(vs)
}

// Parse decodes a facet set, `{"a2a": {...}, "mcp": {...}}`, and
// validates it ([Set.Validate]). Shape and value violations come back
// together in one error (see [Violation]), without the echoes a shape problem would cause (a field of the wrong
// type is not also reported as missing). On error the Set is zero.
func Parse(data []byte) (Set, error) {
	return parseSet(data, false)
}

// parseSet reads a facet set and validates what it read, as records when
// record is set. When the document could not be read to its end nothing
// is validated: what follows the place reading stopped was never
// decoded, and would read as missing. On error the Set is zero.
func parseSet(data []byte, record bool) (Set, error) {
	var s Set
	vs, complete := readDoc(data, func(d *decoder) error { return d.set(&s) })
	if complete {
		vs = merge(vs, s.violations(record))
	}
	if err := asError(vs); err != nil {
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

// decoder collects shape violations while it walks a document with the
// strict reader. Its methods read the next value; one of the wrong JSON
// type is reported and skipped. They return only the reader's errors,
// which end the walk.
type decoder struct {
	r  *strictjson.Reader
	vs []Violation
}

// readDoc walks data with walk and returns the shape violations it found,
// and whether the document was read to its end. One that was not is
// reported by the one violation that stopped it: a "syntax" one when data
// is not a JSON value in UTF-8 (then it is the only one), else the key it
// repeated.
func readDoc(data []byte, walk func(*decoder) error) ([]Violation, bool) {
	d := &decoder{r: strictjson.NewReader(data, 0)}
	err := walk(d)
	if err == nil {
		err = d.r.End()
	}
	if err == nil {
		return d.vs, true
	}
	if !utf8.Valid(data) {
		return []Violation{{"", "syntax", "the document is not valid UTF-8"}}, false
	}
	if e := strictjson.Syntax(data); e != nil {
		return []Violation{{"", "syntax", "the document is " + e.Msg}}, false
	}
	// The document is well-formed, so what stopped the walk is the one
	// thing Skip does not look for: a key repeated in an object.
	var e *strictjson.Error
	if !errors.As(err, &e) {
		e = &strictjson.Error{Msg: err.Error()}
	}
	path := memberPath(e.Path, e.Key)
	return append(d.vs, Violation{path, "duplicate-key", fmt.Sprintf("key %q appears more than once", e.Key)}), false
}

// walk reads a value this package does not decode, to its end, so that
// a key repeated anywhere in the document is found: the strict reader's
// Skip checks syntax and depth only.
func (d *decoder) walk() error {
	k, err := d.r.Next()
	if err != nil {
		return err
	}
	if k == strictjson.Object {
		return d.r.Object(func(string) error { return d.walk() })
	}
	if k == strictjson.Array {
		return d.r.Array(func(int) error { return d.walk() })
	}
	return d.r.Skip()
}

func (d *decoder) add(path, rule, msg string) {
	d.vs = append(d.vs, Violation{path, rule, msg})
}

// path returns the path of the value being read.
func (d *decoder) path() string { return d.r.Path() }

// memberPath is the reader's path of the member key of the object at obj:
// obj.key, or obj["key"] when key is not a name.
func memberPath(obj, key string) string {
	name := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		name = name && (isAlpha(c) || c == '_' || i > 0 && isDigit(c))
	}
	if !name {
		return obj + "[" + strconv.Quote(key) + "]"
	}
	if obj == "" {
		return key
	}
	return obj + "." + key
}

var kindNames = [...]string{0: "nothing", strictjson.Object: "object", strictjson.Array: "array",
	strictjson.String: "string", strictjson.Number: "number", strictjson.Bool: "boolean", strictjson.Null: "null"}

// is reports whether the next value is of kind k. When it is not, the
// value is reported as not being what (such as "a string") and skipped.
func (d *decoder) is(k strictjson.Kind, what string) (bool, error) {
	got, _ := d.r.Next() // an error here is Skip's too
	if got == k {
		return true, nil
	}
	d.add(d.path(), "type", fmt.Sprintf("must be %s, not %s", what, kindNames[got]))
	return false, d.walk()
}

// object walks the members of an object that is what (such as "the a2a
// facet") in order, reporting unknown keys, and calls field for each
// known key. It reports whether the value was an object.
func (d *decoder) object(what string, known []string, field func(key string) error) (bool, error) {
	if ok, err := d.is(strictjson.Object, "an object ("+what+")"); !ok {
		return false, err
	}
	return true, d.r.Object(func(key string) error {
		if !slices.Contains(known, key) {
			d.add(d.path(), "unknown-field", unknownMessage(key, what, known))
			return d.walk()
		}
		return field(key)
	})
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

// crossedKeys are the members one facet spells and the other is given,
// by the object (what) they were given to, with the spelling meant: an
// edit-distance hint does not reach "revisions" from "versions".
var crossedKeys = map[string]map[string]string{
	"the mcp facet": {"versions": "revisions", "minimumVersion": "minimumRevision"},
	"the a2a facet": {"revisions": "versions", "minimumRevision": "minimumVersion"},
}

// unknownMessage says what an unknown member key of what (such as "the
// mcp facet"), whose members are known, is, and what was meant.
func unknownMessage(key, what string, known []string) string {
	if meant, ok := crossedKeys[what][key]; ok {
		return fmt.Sprintf("unknown field %q (did you mean %q?)", key, meant)
	}
	if what == "a facet set" && slices.Contains(rootKeys, key) {
		return fmt.Sprintf("%s is a member of a v2 discovery document, not of a facet set: a facet set holds only \"a2a\" and \"mcp\"; "+
			"read the whole document with facets.ParseDiscovery (wopneg lint checks one), or give only its a2a and mcp members", key)
	}
	if msg, ok := removedKeys[key]; ok {
		return msg
	}
	if hint := strictjson.Suggest(key, known); hint != "" {
		return fmt.Sprintf("unknown field %q%s", key, hint)
	}
	return fmt.Sprintf("unknown field %q: the record is closed", key)
}

var (
	setFields         = []string{"a2a", "mcp"}
	serverMountFields = []string{"transports"}
	mrtrFields        = []string{"maxRounds"}
)

// set reads a facet set; null is an empty one.
func (d *decoder) set(s *Set) error {
	if k, _ := d.r.Next(); k == strictjson.Null {
		return d.walk()
	}
	_, err := d.object("a facet set", setFields, func(key string) error {
		if key == "a2a" {
			s.A2A = new(A2A)
			return d.a2a(s.A2A)
		}
		s.MCP = new(MCP)
		return d.mcp(s.MCP)
	})
	return err
}

// slot is where the decoder puts one member of a facet: a string, with
// the rule an empty one breaks; a list of strings; or a flag.
type slot struct {
	str  *string
	tag  string
	list *[]string
	flag **bool
}

func (d *decoder) fill(s slot, key string) error {
	if s.list != nil {
		return d.strings(s.list)
	}
	if s.flag != nil {
		return d.bool(s.flag)
	}
	return d.string(s.str, s.tag, key)
}

// slots adds the record fields the two families share to m.
func (r *Record) slots(m map[string]slot) map[string]slot {
	m["status"], m["since"] = slot{str: &r.Status, tag: "status"}, slot{str: &r.Since, tag: "sinceversion"}
	m["until"], m["witness"] = slot{str: &r.Until, tag: "until"}, slot{str: &r.Witness, tag: "witness"}
	return m
}

func (d *decoder) a2a(f *A2A) error {
	return d.facet("the a2a facet", a2aFields, f.Record.slots(map[string]slot{
		"versions": {list: &f.Versions}, "preferredVersion": {str: &f.PreferredVersion, tag: "a2aversion"},
		"minimumVersion": {str: &f.MinimumVersion, tag: "a2aversion"}, "refreshedAt": {str: &f.RefreshedAt, tag: "fulldate"},
		"profiles": {list: &f.Profiles}, "agentCardUrl": {str: &f.AgentCardURL, tag: "absuri"},
		"streaming": {flag: &f.Streaming}, "pushNotifications": {flag: &f.PushNotifications},
		"durableTasks": {flag: &f.DurableTasks}, "agentCards": {flag: &f.AgentCards},
	}), nil)
}

func (d *decoder) mcp(f *MCP) error {
	return d.facet("the mcp facet", mcpFields, f.Record.slots(map[string]slot{
		"revisions": {list: &f.Revisions}, "preferredVersion": {str: &f.PreferredVersion, tag: "mcprevision"},
		"minimumRevision": {str: &f.MinimumRevision, tag: "mcprevision"}, "refreshedAt": {str: &f.RefreshedAt, tag: "fulldate"},
		"profiles": {list: &f.Profiles}, "features": {list: &f.Features}, "serverUrls": {list: &f.ServerURLs},
		"client": {flag: &f.Client},
	}), func(key string) error {
		if key == "serverMount" {
			f.ServerMount = new(ServerMount)
			return d.serverMount(f.ServerMount)
		}
		f.MRTR = new(MRTR)
		return d.mrtr(f.MRTR)
	})
}

// facet reads a facet object whose known members are the keys of slots,
// and those other reads.
func (d *decoder) facet(what string, known []string, slots map[string]slot, other func(key string) error) error {
	_, err := d.object(what, known, func(key string) error {
		if s, ok := slots[key]; ok {
			return d.fill(s, key)
		}
		return other(key)
	})
	return err
}

func (d *decoder) serverMount(m *ServerMount) error {
	_, err := d.object("serverMount", serverMountFields, func(string) error {
		return d.strings(&m.Transports)
	})
	return err
}

func (d *decoder) mrtr(m *MRTR) error {
	found := false
	ok, err := d.object("mrtr", mrtrFields, func(string) error {
		found = true
		return d.integer(&m.MaxRounds, "maxRounds")
	})
	if ok && !found {
		d.add(memberPath(d.r.Path(), "maxRounds"), "required", "maxRounds is required")
	}
	return err
}

// string decodes a string field. An empty string is reported under the
// field's own rule: the struct would otherwise read it as absent.
func (d *decoder) string(dst *string, tag, field string) error {
	if ok, err := d.is(strictjson.String, "a string"); !ok {
		return err
	}
	s, err := d.r.String()
	if s == "" && err == nil {
		rule, msg := describe(tag, field, s)
		d.add(d.path(), rule, msg)
	}
	*dst = s
	return err
}

// strings decodes a list of strings. A non-string element is reported and
// kept as "" so the indexes of the others stay those of the document.
func (d *decoder) strings(dst *[]string) error {
	return readList(d, dst, "strings", func(s *string) error {
		ok, err := d.is(strictjson.String, "a string")
		if ok {
			*s, err = d.r.String()
		}
		return err
	})
}

// readList reads an array, each element with read; what names the
// elements, as "strings".
func readList[T any](d *decoder, dst *[]T, what string, read func(*T) error) error {
	if ok, err := d.is(strictjson.Array, "an array of "+what); !ok {
		return err
	}
	list := []T{}
	err := d.r.Array(func(int) error {
		var e T
		err := read(&e)
		list = append(list, e)
		return err
	})
	*dst = list
	return err
}

// readObjects reads an array of closed objects, each of type T, whose
// known members field reads; what names one, as "release".
func readObjects[T any](d *decoder, dst *[]T, what string, known []string, field func(e *T, key string) error) error {
	return readList(d, dst, what+"s", func(e *T) error {
		_, err := d.object("a "+what, known, func(key string) error { return field(e, key) })
		return err
	})
}

func (d *decoder) bool(dst **bool) error {
	if ok, err := d.is(strictjson.Bool, "a boolean"); !ok {
		return err
	}
	b, err := d.r.Bool()
	*dst = &b
	return err
}

// integer decodes a JSON integer. As in JSON Schema, a number with a zero
// fraction ("4.0", "4e0") is an integer. One too large for the struct is
// reported as out of range here and kept as 0.
func (d *decoder) integer(dst *int, field string) error {
	if ok, err := d.is(strictjson.Number, "an integer"); !ok {
		return err
	}
	n, err := d.r.Number()
	if err != nil {
		return err
	}
	f, perr := strconv.ParseFloat(string(n), 64)
	if perr == nil && f != math.Trunc(f) {
		d.add(d.path(), "type", fmt.Sprintf("must be an integer, not %s", n))
		return nil
	}
	if perr != nil || math.Abs(f) > math.MaxInt32 {
		d.add(d.path(), "range", fmt.Sprintf("%s %s is not in 1–16", field, n))
		return nil
	}
	*dst = int(f)
	return nil
}
