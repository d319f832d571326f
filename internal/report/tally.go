package report

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// Period is how a report groups exchanges in time: by UTC day, ISO week
// (starting on Monday) or calendar month.
type Period string

// The periods a report groups by.
const (
	Day   Period = "day"
	Week  Period = "week"
	Month Period = "month"
)

// start returns the first instant of the period t falls in.
func (p Period) start(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	switch p {
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case Week:
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return day.AddDate(0, 0, -(int(day.Weekday())+6)%7)
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// end returns the first instant after the period that starts at start.
func (p Period) end(start time.Time) time.Time {
	switch p {
	case Day:
		return start.AddDate(0, 0, 1)
	case Week:
		return start.AddDate(0, 0, 7)
	}
	return start.AddDate(0, 1, 0)
}

// ParsePeriod reads a Period: day, week or month.
func ParsePeriod(s string) (Period, error) {
	p := Period(s)
	if p != Day && p != Week && p != Month {
		return "", fmt.Errorf("period %q is not day, week or month", s)
	}
	return p, nil
}

// Change is a change to the versions a host offers, whose effect on the
// recorded traffic a report shows: raising the floor of Protocol to Floor,
// or no longer offering Drop. Exactly one of Floor and Drop is set.
type Change struct {
	Protocol facets.Protocol
	Floor    string
	Drop     string
}

// ParseChange reads the operand of --floor or --drop (kind "floor" or
// "drop"): PROTOCOL=VERSION, or a bare VERSION, whose protocol is the one
// whose grammar it has (A2A versions are major.minor, MCP revisions dates).
func ParseChange(kind, s string) (Change, error) {
	if kind != "floor" && kind != "drop" {
		return Change{}, fmt.Errorf("change %q is not floor or drop", kind)
	}
	proto, version, named := strings.Cut(s, "=")
	if !named {
		version = s
		proto = string(facets.ProtocolA2A)
		if _, err := facets.ParseVersion(facets.ProtocolA2A, version); err != nil {
			proto = string(facets.ProtocolMCP)
		}
	}
	p := facets.Protocol(proto)
	if !p.Valid() {
		return Change{}, fmt.Errorf("--%s %s: protocol %q is not a2a or mcp", kind, s, proto)
	}
	if _, err := facets.ParseVersion(p, version); err != nil {
		return Change{}, fmt.Errorf("--%s %s: %w", kind, s, err)
	}
	c := Change{Protocol: p, Floor: version}
	if kind == "drop" {
		c = Change{Protocol: p, Drop: version}
	}
	return c, nil
}

// String names the change as the report shows it: "floor a2a 1.0",
// "drop mcp 2025-06-18".
func (c Change) String() string {
	if c.Floor != "" {
		return "floor " + string(c.Protocol) + " " + c.Floor
	}
	return "drop " + string(c.Protocol) + " " + c.Drop
}

// Options configures a [Tally].
type Options struct {
	// Period groups the exchanges; empty means Month.
	Period Period
	// Changes are the changes whose effect the report shows.
	Changes []Change
}

// Tally counts a record of negotiation.decided events as it is read, in
// memory bounded by the distinct peers, periods and versions it holds, not
// by the events. The zero Tally groups by month and shows no change. It is
// not safe for concurrent use.
type Tally struct {
	period    Period
	reader    reader
	lines     int64
	events    int64
	notJSON   int64
	invalid   int64
	badLines  []BadLine
	protocols map[facets.Protocol]*protocolTally
	changes   []*changeTally
}

// MaxBadLines is how many bad lines a report names; it counts them all.
const MaxBadLines = 100

// New returns a Tally for opts, or an error naming what is wrong with them.
func New(opts Options) (*Tally, error) {
	t := &Tally{period: opts.Period}
	if t.period != "" {
		if _, err := ParsePeriod(string(t.period)); err != nil {
			return nil, err
		}
	}
	for _, c := range opts.Changes {
		ct, err := newChangeTally(c)
		if err != nil {
			return nil, err
		}
		t.changes = append(t.changes, ct)
	}
	return t, nil
}

// bad counts a bad line: one that is not JSON when notJSON is set, and
// otherwise JSON that is not a negotiation.decided event.
func (t *Tally) bad(source string, line int64, problem string, notJSON bool) {
	if notJSON {
		t.notJSON++
	} else {
		t.invalid++
	}
	if len(t.badLines) < MaxBadLines {
		t.badLines = append(t.badLines, BadLine{Source: source, Line: line, Problem: problem})
	}
}

// counts is what a report shows of a set of exchanges.
type counts struct {
	exchanges, accepted, refused, downgrades, withoutPeer int64
	requested, settled, refusals                          map[string]int64
	peers                                                 map[string]struct{}
	first, last                                           time.Time
}

func (c *counts) add(p *events.NegotiationDecided) {
	if c.exchanges == 0 {
		c.requested, c.settled, c.refusals = map[string]int64{}, map[string]int64{}, map[string]int64{}
		c.peers = map[string]struct{}{}
		c.first, c.last = p.At, p.At
	}
	c.exchanges++
	c.requested[orNone(p.Requested)]++
	if p.Outcome == "accepted" {
		c.accepted++
		c.settled[p.Version]++
		if p.Requested != "" && p.Version != p.Requested {
			c.downgrades++
		}
	} else {
		c.refused++
		c.refusals[orNone(p.Reason)]++
	}
	if p.PeerDigest == "" {
		c.withoutPeer++
	} else {
		c.peers[p.PeerDigest] = struct{}{}
	}
	if p.At.Before(c.first) {
		c.first = p.At
	}
	if p.At.After(c.last) {
		c.last = p.At
	}
}

// none stands for a value the record left out: no version requested, no
// reason given. No version or reason is spelled so.
const none = "none"

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

type protocolTally struct {
	all     counts
	periods map[time.Time]*counts
	// current is the period the last exchange fell in, from start to
	// end: a record is mostly in time order, so the next one is likely
	// there too.
	start, end time.Time
	current    *counts
	// legacy counts the exchanges settled at the protocol's legacy
	// version, and their peers.
	legacy      int64
	legacyPeers map[string]struct{}
}

// Add counts one exchange. p must be valid (as every payload read from a
// record is); Add does not check it again.
func (t *Tally) Add(p *events.NegotiationDecided) {
	t.events++
	if t.protocols == nil {
		t.protocols = map[facets.Protocol]*protocolTally{}
	}
	pt := t.protocols[p.Protocol]
	if pt == nil {
		pt = &protocolTally{periods: map[time.Time]*counts{}, legacyPeers: map[string]struct{}{}}
		t.protocols[p.Protocol] = pt
	}
	pt.all.add(p)
	if pt.current == nil || p.At.Before(pt.start) || !p.At.Before(pt.end) {
		period := cmp.Or(t.period, Month)
		pt.start = period.start(p.At)
		pt.end = period.end(pt.start)
		pt.current = pt.periods[pt.start]
		if pt.current == nil {
			pt.current = &counts{}
			pt.periods[pt.start] = pt.current
		}
	}
	pt.current.add(p)
	start := pt.start
	if p.Outcome == "accepted" && p.Version == legacies[p.Protocol].Version {
		pt.legacy++
		if p.PeerDigest != "" {
			pt.legacyPeers[p.PeerDigest] = struct{}{}
		}
	}
	for _, c := range t.changes {
		c.add(p, start)
	}
}

// legacies are the versions RFC 0175 removed from the v2 tree (the ones
// facets' lint reports as legacy-version), and the day each leaves the
// v1 tree, after which no peer may be expected to speak it.
var legacies = map[facets.Protocol]Legacy{
	facets.ProtocolA2A: {Version: "0.3", Leaves: "2027-03-12"},
	facets.ProtocolMCP: {Version: "2025-06-18", Leaves: "2027-08-12"},
}

// changeTally counts what one change would have refused.
type changeTally struct {
	Change
	// target is the version the change names, parsed.
	target                                           facets.Version
	considered, refused, alreadyRefused, withoutPeer int64
	peers                                            map[string]*Affected
	periods                                          map[time.Time]int64
	verdicts                                         map[verdictKey]bool
}

// verdictKey is what deciding a recorded exchange again depends on.
type verdictKey struct{ version, requested, floor string }

// maxVerdicts bounds the verdicts a change keeps; past it an exchange is
// decided again each time.
const maxVerdicts = 1 << 16

func newChangeTally(c Change) (*changeTally, error) {
	v := c.Floor
	if (c.Floor == "") == (c.Drop == "") {
		return nil, errors.New("a change sets exactly one of Floor and Drop")
	}
	if v == "" {
		v = c.Drop
	}
	target, err := facets.ParseVersion(c.Protocol, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	return &changeTally{Change: c, target: target, peers: map[string]*Affected{}, periods: map[time.Time]int64{}, verdicts: map[verdictKey]bool{}}, nil
}

func (c *changeTally) add(p *events.NegotiationDecided, period time.Time) {
	if p.Protocol != c.Protocol {
		return
	}
	if p.Outcome != "accepted" {
		c.alreadyRefused++
		return
	}
	c.considered++
	if !c.refuses(p) {
		return
	}
	c.refused++
	c.periods[period]++
	if p.PeerDigest == "" {
		c.withoutPeer++
		return
	}
	a := c.peers[p.PeerDigest]
	if a == nil {
		a = &Affected{Peer: p.PeerDigest, LastSeen: p.At}
		c.peers[p.PeerDigest] = a
	}
	a.Exchanges++
	if p.At.After(a.LastSeen) {
		a.LastSeen = p.At
	}
}

// refuses reports whether the host, changed by c, would have refused the
// accepted exchange p: it decides p again, with negotiate.Decide.
func (c *changeTally) refuses(p *events.NegotiationDecided) bool {
	key := verdictKey{p.Version, p.Requested, p.Floor}
	if v, ok := c.verdicts[key]; ok {
		return v
	}
	v := c.decide(p)
	if len(c.verdicts) < maxVerdicts {
		c.verdicts[key] = v
	}
	return v
}

// decisionSubject is the caller an exchange is decided again for: an
// authenticated one, since the exchange was accepted, and a downgrade it
// settled at was therefore one its caller could have.
var decisionSubject = &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "report", Tenant: "report", Lane: "oidc", Kind: "user"}

// decide decides the accepted exchange p again against the facet c
// leaves. The record holds what the decision needs: the peer speaks the
// version it settled at (the newest both sides spoke, so none between it
// and the one requested), and, when the host counter-offered (settled
// above the version requested, which only a counter-offer does), the one
// it requested too; the host offered the settled version, the requested
// one and its recorded floor. c then raises the floor (keeping a higher
// recorded one) or takes one version out.
func (c *changeTally) decide(p *events.NegotiationDecided) bool {
	v := c.parse(p.Version)
	counter := p.Requested != "" && c.parse(p.Requested).Compare(v) < 0
	offered := []facets.Version{v}
	add := func(s string) {
		if s == "" {
			return
		}
		w := c.parse(s)
		if !slices.Contains(offered, w) {
			offered = append(offered, w)
		}
	}
	add(p.Requested)
	add(p.Floor)
	var floor facets.Version
	if c.Floor != "" {
		floor = c.target
		if p.Floor != "" {
			floor = later(floor, c.parse(p.Floor))
		}
		add(floor.String())
		offered = slices.DeleteFunc(offered, func(w facets.Version) bool { return w.Compare(floor) < 0 })
	} else {
		offered = slices.DeleteFunc(offered, func(w facets.Version) bool { return w == c.target })
		if p.Floor != "" && p.Floor != c.Drop {
			floor = c.parse(p.Floor)
		} else if len(offered) > 0 {
			floor = slices.MinFunc(offered, facets.Version.Compare)
		}
	}
	var preferred facets.Version
	if len(offered) > 0 {
		preferred = slices.MaxFunc(offered, facets.Version.Compare)
	}
	texts := make([]string, len(offered))
	for i, w := range offered {
		texts[i] = w.String()
	}
	var set facets.Set
	if c.Protocol == facets.ProtocolA2A {
		set.A2A = &facets.A2A{Versions: texts, PreferredVersion: preferred.String(), MinimumVersion: floor.String()}
	} else {
		set.MCP = &facets.MCP{Revisions: texts, PreferredVersion: preferred.String(), MinimumRevision: floor.String()}
	}
	speaks := []string{p.Version}
	if counter {
		speaks = append(speaks, p.Requested)
	}
	offer := negotiate.Offer{Protocol: c.Protocol, Requested: p.Requested, PeerVersions: speaks, CounterOffer: counter}
	o, _ := negotiate.Decide(decisionSubject, set, offer, policy.Policy{Now: p.At.UTC})
	return o.Kind == negotiate.Refused
}

// parse parses a version of c's protocol that a valid payload carries.
func (c *changeTally) parse(s string) facets.Version {
	v, _ := facets.ParseVersion(c.Protocol, s)
	return v
}

// later returns the later of two versions.
func later(a, b facets.Version) facets.Version {
	if a.Compare(b) < 0 {
		return b
	}
	return a
}

// Report is what a Tally has counted, as `wopneg report --json` writes it.
type Report struct {
	// Period is how Periods group the exchanges.
	Period Period `json:"period"`
	// Lines is the number of lines read that were not blank; Events the
	// negotiation.decided events among them (or rows, read from a
	// database).
	Lines  int64 `json:"lines"`
	Events int64 `json:"events"`
	// Bad counts the lines that were not events, and names the first
	// MaxBadLines.
	Bad Bad `json:"bad"`
	// Protocols has one entry per protocol the record holds, a2a first.
	Protocols []Protocol `json:"protocols"`
	// Changes has one entry per change asked for, in the order asked.
	Changes []ChangeReport `json:"changes,omitzero"`
}

// Bad counts the lines that were not negotiation.decided events.
type Bad struct {
	NotJSON    int64     `json:"notJson"`
	NotDecided int64     `json:"notDecided"`
	Lines      []BadLine `json:"lines,omitzero"`
}

// BadLine is one line that was not a negotiation.decided event, and why.
type BadLine struct {
	Source  string `json:"source"`
	Line    int64  `json:"line"`
	Problem string `json:"problem"`
}

// Counts is what a report tells of a set of exchanges.
type Counts struct {
	Exchanges int64 `json:"exchanges"`
	Accepted  int64 `json:"accepted"`
	Refused   int64 `json:"refused"`
	// Downgrades are the exchanges accepted at a version other than the
	// one requested.
	Downgrades int64 `json:"downgrades"`
	// Peers is the number of distinct peer digests; WithoutPeer the
	// exchanges whose record names no peer (most inbound ones).
	Peers       int64 `json:"peers"`
	WithoutPeer int64 `json:"withoutPeer"`
	// Requested and Settled count the exchanges by version requested
	// ("none" when none was named) and settled at; Refusals the refused
	// ones by reason.
	Requested map[string]int64 `json:"requested"`
	Settled   map[string]int64 `json:"settled"`
	Refusals  map[string]int64 `json:"refusals"`
	// First and Last are the times of the first and last exchange.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

func (c *counts) report() Counts {
	return Counts{
		Exchanges: c.exchanges, Accepted: c.accepted, Refused: c.refused, Downgrades: c.downgrades,
		Peers: int64(len(c.peers)), WithoutPeer: c.withoutPeer,
		Requested: c.requested, Settled: c.settled, Refusals: c.refusals,
		First: c.first, Last: c.last,
	}
}

// Protocol is the report of one protocol.
type Protocol struct {
	Protocol facets.Protocol `json:"protocol"`
	Counts
	// Legacy is the protocol's legacy version, when it leaves, and the
	// exchanges (and peers) still settled at it.
	Legacy Legacy `json:"legacy"`
	// Periods are the periods with exchanges, oldest first.
	Periods []PeriodCounts `json:"periods"`
}

// PeriodCounts are the counts of one period, which starts at Start.
type PeriodCounts struct {
	Start time.Time `json:"start"`
	Counts
}

// Legacy is a version RFC 0175 removed from the v2 tree and the day
// (YYYY-MM-DD) it leaves the v1 tree, with the accepted exchanges and
// distinct peers of the record settled at it.
type Legacy struct {
	Version   string `json:"version"`
	Leaves    string `json:"leaves"`
	Exchanges int64  `json:"exchanges"`
	Peers     int64  `json:"peers"`
}

// ChangeReport is what one change would have refused in the record.
type ChangeReport struct {
	// Change names it: "floor a2a 1.0".
	Change   string          `json:"change"`
	Protocol facets.Protocol `json:"protocol"`
	Floor    string          `json:"floor,omitzero"`
	Drop     string          `json:"drop,omitzero"`
	// Considered are the accepted exchanges decided again; Refused those
	// the changed host refuses; AlreadyRefused the exchanges of the
	// protocol that were refused as recorded (a change that only takes
	// versions away refuses them still).
	Considered     int64 `json:"considered"`
	Refused        int64 `json:"refused"`
	AlreadyRefused int64 `json:"alreadyRefused"`
	// Peers is the number of distinct peers with a refused exchange;
	// WithoutPeer the refused exchanges whose record names no peer.
	Peers       int64 `json:"peers"`
	WithoutPeer int64 `json:"withoutPeer"`
	// Sunset is the legacy version the change stops serving, when it
	// leaves the v1 tree, and the exchanges and peers of the record settled
	// at it; nil when the change keeps it.
	Sunset *Legacy `json:"sunset,omitzero"`
	// Affected are the refused peers, the most recently seen first.
	Affected []Affected `json:"affected"`
	// Periods count the refused exchanges of each period, oldest first.
	Periods []PeriodRefused `json:"periods"`
}

// Affected is a peer some of whose exchanges a change refuses: how many,
// and when the last was.
type Affected struct {
	// Peer is the peer's digest; Name what --names gives for it.
	Peer      string    `json:"peer"`
	Name      string    `json:"name,omitzero"`
	Exchanges int64     `json:"exchanges"`
	LastSeen  time.Time `json:"lastSeen"`
}

// PeriodRefused is how many exchanges of the period starting at Start a
// change refuses.
type PeriodRefused struct {
	Start   time.Time `json:"start"`
	Refused int64     `json:"refused"`
}

// Report returns what t has counted so far. The report shares nothing
// with t that t changes afterwards only when t reads no more.
func (t *Tally) Report() Report {
	r := Report{Period: cmp.Or(t.period, Month), Lines: t.lines, Events: t.events,
		Bad: Bad{NotJSON: t.notJSON, NotDecided: t.invalid, Lines: t.badLines}}
	for _, proto := range []facets.Protocol{facets.ProtocolA2A, facets.ProtocolMCP} {
		pt := t.protocols[proto]
		if pt == nil {
			continue
		}
		legacy := legacies[proto]
		legacy.Exchanges, legacy.Peers = pt.legacy, int64(len(pt.legacyPeers))
		pr := Protocol{Protocol: proto, Counts: pt.all.report(), Legacy: legacy}
		for _, start := range slices.SortedFunc(maps.Keys(pt.periods), time.Time.Compare) {
			pr.Periods = append(pr.Periods, PeriodCounts{Start: start, Counts: pt.periods[start].report()})
		}
		r.Protocols = append(r.Protocols, pr)
	}
	for _, c := range t.changes {
		cr := ChangeReport{Change: c.String(), Protocol: c.Protocol, Floor: c.Floor, Drop: c.Drop,
			Considered: c.considered, Refused: c.refused, AlreadyRefused: c.alreadyRefused,
			Peers: int64(len(c.peers)), WithoutPeer: c.withoutPeer, Affected: []Affected{}, Periods: []PeriodRefused{}}
		if legacy := legacies[c.Protocol]; c.stopsServing(legacy.Version) {
			cr.Sunset = &legacy
			if pt := t.protocols[c.Protocol]; pt != nil {
				cr.Sunset.Exchanges, cr.Sunset.Peers = pt.legacy, int64(len(pt.legacyPeers))
			}
		}
		for _, a := range c.peers {
			cr.Affected = append(cr.Affected, *a)
		}
		slices.SortFunc(cr.Affected, func(a, b Affected) int {
			return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(a.Peer, b.Peer))
		})
		for _, start := range slices.SortedFunc(maps.Keys(c.periods), time.Time.Compare) {
			cr.Periods = append(cr.Periods, PeriodRefused{Start: start, Refused: c.periods[start]})
		}
		r.Changes = append(r.Changes, cr)
	}
	return r
}

// stopsServing reports whether a host changed by c no longer serves
// version v of c's protocol.
func (c *changeTally) stopsServing(v string) bool {
	if c.Drop != "" {
		return v == c.Drop
	}
	return c.parse(v).Compare(c.target) < 0
}
