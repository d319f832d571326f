// Package a2aversion is how every A2A binding of the module reads the
// version a call names, and says why it refused one: the rules are A2A's,
// not a binding's, so that a2ahttp (header lines and the ?A2A-Version=
// query parameter) and a2agrpc (the a2a-version metadata) read the same
// values the same way and refuse them in the same words.
package a2aversion

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
)

// Name is the service parameter that names the A2A version of a call: an
// HTTP header and query parameter, gRPC metadata (lower-cased there).
const Name = "A2A-Version"

// Implied is the version A2A reads a call that names none as (A2A §3.6.2:
// "Agents MUST interpret empty value as 0.3 version"), on every binding,
// everywhere but on the agent card.
const Implied = "0.3"

// MaxListed bounds how many of several values a refusal lists.
const MaxListed = 4

// Problem says what is wrong with the versions a call named.
type Problem uint8

const (
	// None: one well-formed value, or none at all.
	None Problem = iota
	// Multiple: more than one value, in any combination of lines,
	// comma-separated elements and parameters.
	Multiple
	// Malformed: one value that is not major.minor.
	Malformed
)

// Requested is the version a call named, as read.
type Requested struct {
	// Version is the one well-formed value; empty when the call named none
	// (absent or empty).
	Version string
	// Implied says the call named no version and Version is the one A2A
	// reads that as (see [Requested.Call]).
	Implied bool
	// Values are what the call sent, each trimmed, when it is refused: the
	// malformed value, or the first MaxListed of several.
	Values []string
	// Count is how many values a call with several sent.
	Count   int
	Problem Problem
}

// Read reads the values a call carries, all of them in order (every
// header line or metadata value, then every query parameter): a line
// holding a comma-separated list counts as one value per element. One
// value in all is the version, or malformed; none, or one empty value, is
// no version; anything more is several values, never a choice among them.
// Only the first MaxListed values are kept, for the message: a value of
// commas must not cost a string per byte.
func Read(all []string) Requested {
	n := len(all)
	if n == 0 {
		return Requested{}
	}
	if n == 1 && strings.IndexByte(all[0], ',') < 0 {
		return single(trimOWS(all[0]))
	}
	req := Requested{Problem: Multiple}
	for _, v := range all {
		req.Count += strings.Count(v, ",") + 1
		for elem := range strings.SplitSeq(v, ",") {
			if len(req.Values) == MaxListed {
				break
			}
			req.Values = append(req.Values, trimOWS(elem))
		}
	}
	return req
}

// single reads one value.
func single(v string) Requested {
	if v == "" {
		return Requested{}
	}
	if _, err := facets.ParseVersion(facets.ProtocolA2A, v); err != nil {
		return Requested{Values: []string{v}, Problem: Malformed}
	}
	return Requested{Version: v}
}

// Listed returns the versions list names, comma-separated, as a
// refusal's ErrorInfo lists them in supportedVersions (A2A 1.0): each
// element trimmed of optional white space, empty ones dropped; nil when it
// names none. Both bindings read a refusal's listing with it.
func Listed(list string) []string {
	var out []string
	for elem := range strings.SplitSeq(list, ",") {
		if elem = trimOWS(elem); elem != "" {
			out = append(out, elem)
		}
	}
	return out
}

// trimOWS trims the optional whitespace HTTP allows around a field value
// and its list elements: spaces and horizontal tabs.
func trimOWS(s string) string { return strings.Trim(s, " \t") }

// Call is r as a call other than the agent card's reads it: one that
// names no version asks for Implied.
func (r Requested) Call() Requested {
	if r.Version == "" && r.Problem == None {
		return Requested{Version: Implied, Implied: true}
	}
	return r
}

// Raw is what is handed to the decision as the requested version: the
// version, or for a refusal what was sent, so that the decision refuses it
// (a malformed version is one the host does not speak) and the event
// leaves it out.
func (r *Requested) Raw() string {
	if r.Problem == None {
		return r.Version
	}
	return strings.Join(r.Values, ", ")
}

// Message says, for people, why r was refused with o and what this
// interface, advertising adv, serves instead: servable, the decision's
// details.supported.
func Message(r *Requested, adv facets.Advertised, o *negotiate.Outcome, servable []string) string {
	serves := "; this interface serves " + strings.Join(servable, ", ")
	switch r.Problem {
	case Multiple:
		return fmt.Sprintf("%s carries %d values (%s), not one; send exactly one version", Name, r.Count, listed(r)) + serves
	case Malformed:
		return fmt.Sprintf("%s %s is not a version: want major.minor, such as %q", Name, Quote(r.Values[0]), adv.Preferred) + serves
	}
	named := Quote(r.Version)
	if r.Implied {
		named = "(none, which A2A reads as " + Implied + ")"
	}
	if o.Reason == events.ReasonBelowFloor {
		return fmt.Sprintf("%s %s is below this interface's minimum version %s", Name, named, adv.Floor) + serves
	}
	if o.Reason == events.ReasonUnauthenticated {
		return fmt.Sprintf("%s %s is below the preferred version %s and is served only to an authenticated caller", Name, named, adv.Preferred) + serves
	}
	if o.Rule == negotiate.RulePolicy {
		return fmt.Sprintf("%s %s is not served to this caller by the host's policy", Name, named) + serves
	}
	return fmt.Sprintf("%s %s is not served", Name, named) + serves
}

// listed quotes the values of a call that sent several, with "..." for
// those not kept.
func listed(r *Requested) string {
	if r.Count > len(r.Values) {
		return QuoteList(r.Values) + ", ..."
	}
	return QuoteList(r.Values)
}

// maxQuoted bounds how much of a value the caller sent is echoed in a
// message: enough to recognise it, not a way to make the answer large.
const maxQuoted = 32

// Quote quotes s as a message echoes it: at most maxQuoted bytes, marked
// "..." when cut.
func Quote(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "..."
	}
	return strconv.Quote(s)
}

// QuoteList quotes the first MaxListed of values, separated by commas.
func QuoteList(values []string) string {
	quoted := make([]string, 0, MaxListed+1)
	for _, v := range values[:min(len(values), MaxListed)] {
		quoted = append(quoted, Quote(v))
	}
	if len(values) > MaxListed {
		quoted = append(quoted, "...")
	}
	return strings.Join(quoted, ", ")
}
