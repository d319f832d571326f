// Package verdict holds the verdict of one conformance row and the only way
// to reach one: a Leg counts the assertions a scenario makes, and Settle turns
// them into a Result. A Result's fields are unexported, so no code outside
// this package can write a pass: Settle is the one constructor, and it never
// passes a row that made no wire assertion (an assertion on traffic the
// runner observed during the run: what the host answered, or what a fake
// peer received), a row that met a failure, or a row something blocked.
package verdict

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Verdict is how a row came out.
type Verdict string

// The four verdicts. Pass needs at least one wire assertion and none failed;
// Fail means an assertion failed; Blocked means the row could not be
// witnessed (a seam absent, a fake peer never called, a host shape that
// leaves nothing to observe); Inapplicable means the host advertises nothing
// the row concerns.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Blocked      Verdict = "blocked"
	Inapplicable Verdict = "inapplicable"
)

// NoWire is the reason a row with no failure, no block and no wire
// assertion is blocked rather than passed.
const NoWire = "no wire assertion was made: nothing the host did was observed, so nothing can pass"

// maxFailures bounds how many failure messages a Result keeps.
const maxFailures = 4

// Leg accumulates the assertions of one row. The zero Leg has no scenario
// name; use New.
type Leg struct {
	scenario, requirement string
	asserted, wire        int
	failures              []string
	failed                int
	blocked, inapplicable string
}

// New returns an empty Leg for the row (scenario, requirement).
func New(scenario, requirement string) *Leg {
	return &Leg{scenario: scenario, requirement: requirement}
}

// Check counts an assertion on something other than observed traffic and
// records a failure, worded by format and args, when ok is false. It
// returns ok.
func (l *Leg) Check(ok bool, format string, args ...any) bool {
	l.asserted++
	if !ok {
		l.fail(format, args...)
	}
	return ok
}

// Wire counts an assertion on traffic observed during the run, as Check
// does; only these let a row pass.
func (l *Leg) Wire(ok bool, format string, args ...any) bool {
	l.wire++
	return l.Check(ok, format, args...)
}

func (l *Leg) fail(format string, args ...any) {
	l.failed++
	if len(l.failures) < maxFailures {
		l.failures = append(l.failures, fmt.Sprintf(format, args...))
	}
}

// Block marks the row blocked for reason; the first reason given is kept.
func (l *Leg) Block(reason string) {
	if l.blocked == "" {
		l.blocked = reason
	}
}

// Inapplicable marks the row inapplicable for reason; the first reason is
// kept.
func (l *Leg) Inapplicable(reason string) {
	if l.inapplicable == "" {
		l.inapplicable = reason
	}
}

// Failed reports whether an assertion of l has failed.
func (l *Leg) Failed() bool { return l.failed > 0 }

// Settle returns l's Result. A failure makes it Fail, whatever else
// happened; otherwise an inapplicable mark makes it Inapplicable, a block
// Blocked, and no wire assertion Blocked with NoWire; only then is it Pass.
func (l *Leg) Settle() Result {
	r := Result{scenario: l.scenario, requirement: l.requirement, asserted: l.asserted, wire: l.wire}
	if l.failed > 0 {
		r.verdict, r.why = Fail, strings.Join(l.failures, "; ")
		if l.failed > len(l.failures) {
			r.why += fmt.Sprintf("; and %d more", l.failed-len(l.failures))
		}
	} else if l.inapplicable != "" {
		r.verdict, r.why = Inapplicable, l.inapplicable
	} else if l.blocked != "" {
		r.verdict, r.why = Blocked, l.blocked
	} else if l.wire == 0 {
		r.verdict, r.why = Blocked, NoWire
	} else {
		r.verdict, r.why = Pass, fmt.Sprintf("%d assertions held, %d on the wire", l.asserted, l.wire)
	}
	return r
}

// Result is one settled row. Only Leg.Settle makes one.
type Result struct {
	scenario, requirement string
	verdict               Verdict
	asserted, wire        int
	why                   string
}

// Scenario is the scenario's name, such as "v2-refresh-sla".
func (r Result) Scenario() string { return r.scenario }

// Requirement is the requirement id the row judges.
func (r Result) Requirement() string { return r.requirement }

// Verdict is how the row came out.
func (r Result) Verdict() Verdict { return r.verdict }

// Assertions is how many assertions the row made, wire ones included.
func (r Result) Assertions() int { return r.asserted }

// WireAssertions is how many of them were on observed traffic.
func (r Result) WireAssertions() int { return r.wire }

// Why says why the row came out as it did.
func (r Result) Why() string { return r.why }

// MarshalJSON writes {scenario, requirement, verdict, assertions,
// wireAssertions, why}.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Scenario       string  `json:"scenario"`
		Requirement    string  `json:"requirement"`
		Verdict        Verdict `json:"verdict"`
		Assertions     int     `json:"assertions"`
		WireAssertions int     `json:"wireAssertions"`
		Why            string  `json:"why"`
	}{r.scenario, r.requirement, r.verdict, r.asserted, r.wire, r.why})
}
