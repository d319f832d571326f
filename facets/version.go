package facets

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Protocol names an embedded protocol: "a2a" or "mcp".
type Protocol string

// The protocols a facet can describe.
const (
	ProtocolA2A Protocol = "a2a"
	ProtocolMCP Protocol = "mcp"
)

// Valid reports whether p is a2a or mcp.
func (p Protocol) Valid() bool { return p == ProtocolA2A || p == ProtocolMCP }

// Version is a parsed A2A version or MCP revision. Versions of the same
// protocol compare by [Version.Compare]; the zero Version is not valid and
// is not equal to any parsed one.
type Version struct {
	key  uint64
	text string
	tag  protocolTag
}

// protocolTag stands for a Protocol inside a Version, so that comparing
// two versions compares integers only.
type protocolTag uint8

const (
	noProtocol protocolTag = iota
	tagA2A
	tagMCP
)

func (t protocolTag) protocol() Protocol {
	switch t {
	case tagA2A:
		return ProtocolA2A
	case tagMCP:
		return ProtocolMCP
	}
	return ""
}

// ParseVersion parses s as a version of p.
//
// A2A versions are "major.minor" in decimal without leading zeros (so
// "1.10" > "1.9", and "01.0" is refused: the facet pattern would admit it,
// but semantic versioning, which orders A2A versions here, does not); each
// part must fit in 32 bits. MCP revisions are RFC 3339 full-dates that name
// a real calendar day ("2025-02-30" is refused). A malformed version is a
// [*Violation] of rule "pattern" (A2A), "date" (MCP) or "enum" (p is
// neither).
func ParseVersion(p Protocol, s string) (Version, error) {
	v, problem := parseVersion(p, s)
	if problem != "" {
		return Version{}, versionError(p, s, problem)
	}
	return v, nil
}

// parseVersion is ParseVersion without the error: problem says what is
// wrong with s, as a phrase, or is "" when s is a version of p.
func parseVersion(p Protocol, s string) (v Version, problem string) {
	if p == ProtocolA2A {
		major, minor, problem := parseMajorMinor(s)
		return Version{major<<32 | minor, s, tagA2A}, problem
	}
	if p == ProtocolMCP {
		y, m, d, problem := parseFullDate(s)
		return Version{y*10000 + m*100 + d, s, tagMCP}, problem
	}
	return Version{}, "unknown protocol"
}

// versionError copies what it reports, so that a failed parse keeps no
// reference to its input: callers on hot paths can parse from buffers
// that stay on their stack.
func versionError(p Protocol, s, problem string) error {
	rule := "enum"
	if p == ProtocolA2A {
		rule = "pattern"
	}
	if p == ProtocolMCP {
		rule = "date"
	}
	return violations{{"", rule, fmt.Sprintf("%s version %q: %s", p, s, problem)}}
}

// MustParseVersion is ParseVersion for constants; it panics on a
// malformed version.
func MustParseVersion(p Protocol, s string) Version {
	v, err := ParseVersion(p, s)
	if err != nil {
		panic(err)
	}
	return v
}

// String returns the version as it was written.
func (v Version) String() string { return v.text }

// Compare returns -1, 0 or +1 as v is older than, the same as, or newer
// than w: A2A versions as semantic versions, MCP revisions as calendar
// dates. Versions of different protocols are not comparable; Compare
// orders them by protocol name so that sorting stays total, and the zero
// Version before every parsed one.
func (v Version) Compare(w Version) int {
	if v.tag != w.tag {
		return strings.Compare(string(v.tag.protocol()), string(w.tag.protocol()))
	}
	if v.key < w.key {
		return -1
	}
	if v.key > w.key {
		return 1
	}
	return 0
}

func parseMajorMinor(s string) (major, minor uint64, problem string) {
	dot := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		return 0, 0, `want "major.minor"`
	}
	if major, problem = parseDecimal(s[:dot], "major"); problem != "" {
		return 0, 0, problem
	}
	if minor, problem = parseDecimal(s[dot+1:], "minor"); problem != "" {
		return 0, 0, problem
	}
	return major, minor, ""
}

func parseDecimal(s, part string) (uint64, string) {
	if s == "" {
		return 0, part + ` part is empty; want "major.minor"`
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			return 0, part + ` part is not a decimal number; want "major.minor"`
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, part + " part has a leading zero"
	}
	if len(s) > 10 {
		return 0, part + " part does not fit in 32 bits"
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		n = n*10 + uint64(s[i]-'0')
	}
	if n > 1<<32-1 {
		return 0, part + " part does not fit in 32 bits"
	}
	return n, ""
}

// parseFullDate parses an RFC 3339 full-date and checks that it names a
// real day of the proleptic Gregorian calendar.
func parseFullDate(s string) (y, m, d uint64, problem string) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, "want a date YYYY-MM-DD"
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if s[i] < '0' || s[i] > '9' {
			return 0, 0, 0, "want a date YYYY-MM-DD"
		}
	}
	num := func(a, b int) uint64 {
		var n uint64
		for _, c := range []byte(s[a:b]) {
			n = n*10 + uint64(c-'0')
		}
		return n
	}
	y, m, d = num(0, 4), num(5, 7), num(8, 10)
	if m < 1 || m > 12 {
		return 0, 0, 0, "month is not 01–12"
	}
	if d < 1 || d > daysIn(y, m) {
		return 0, 0, 0, "no such day in that month"
	}
	return y, m, d, ""
}

func daysIn(y, m uint64) uint64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseDate parses an RFC 3339 full-date ("2026-09-18") as midnight UTC,
// refusing days the calendar does not have. Its error says what is wrong,
// as a phrase.
func parseDate(s string) (time.Time, error) {
	y, m, d, problem := parseFullDate(s)
	if problem != "" {
		return time.Time{}, errors.New(problem)
	}
	return time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC), nil
}
