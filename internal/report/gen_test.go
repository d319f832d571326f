package report

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// The versions the generator's hosts and peers know: the releases, the
// legacy ones and one nobody offers.
var (
	a2aKnown = []string{"0.2", "0.3", "1.0", "1.1"}
	mcpKnown = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2027-01-01"}
)

// hostFacets are the facets the generated exchanges are decided against:
// legacy versions still offered, at several floors.
var hostFacets = []facets.Set{
	{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "0.3", RefreshedAt: "2026-11-01"},
		MCP: &facets.MCP{Revisions: []string{"2025-06-18", "2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-06-18", RefreshedAt: "2026-11-01"}},
	{A2A: &facets.A2A{Versions: []string{"1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"},
		MCP: &facets.MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25", RefreshedAt: "2026-11-01"}},
	{A2A: &facets.A2A{Versions: []string{"0.3", "1.0"}, PreferredVersion: "1.0", MinimumVersion: "1.0", RefreshedAt: "2026-11-01"},
		MCP: &facets.MCP{Revisions: []string{"2025-06-18", "2025-11-25", "2026-07-28"}, PreferredVersion: "2025-11-25", MinimumRevision: "2025-06-18", RefreshedAt: "2026-11-01"}},
}

// generator makes a record: exchanges decided by negotiate.Decide, from
// random offers of a fixed population of peers, written by the JSON-lines
// sink as run events and host events, with bad lines among them.
type generator struct {
	rng     *rand.Rand
	peers   []string // peer URLs
	at      time.Time
	step    time.Duration // the most time between two exchanges
	subject *negotiate.Subject
}

func newGenerator(seed uint64, peers int) *generator {
	g := &generator{
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		at:      time.Date(2026, 8, 20, 0, 0, 0, 0, time.UTC),
		step:    20 * time.Second,
		subject: &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-1", Tenant: "acme", Lane: "oidc", Kind: "user"},
	}
	for i := range peers {
		g.peers = append(g.peers, fmt.Sprintf("https://peer-%d.example", i))
	}
	return g
}

// exchange decides one random exchange and returns its payload.
func (g *generator) exchange() events.NegotiationDecided {
	g.at = g.at.Add(time.Duration(g.rng.Int64N(int64(g.step))))
	set := hostFacets[g.rng.IntN(len(hostFacets))]
	proto, known := facets.ProtocolA2A, a2aKnown
	if g.rng.IntN(2) == 0 {
		proto, known = facets.ProtocolMCP, mcpKnown
	}
	adv, _ := set.Lookup(proto)
	var subject *negotiate.Subject
	if g.rng.IntN(3) > 0 {
		subject = g.subject
	}
	pick := func() string { return known[g.rng.IntN(len(known))] }
	var offer negotiate.Offer
	if g.rng.IntN(3) == 0 {
		// Outbound: the host asks its preferred version of a peer that
		// speaks some of the known ones.
		var speaks []string
		for _, v := range known {
			if g.rng.IntN(2) == 0 {
				speaks = append(speaks, v)
			}
		}
		offer = negotiate.Offer{Protocol: proto, Peer: g.peers[g.rng.IntN(len(g.peers))], Requested: adv.Preferred, PeerVersions: speaks}
	} else {
		requested := ""
		if g.rng.IntN(5) > 0 {
			requested = pick()
		}
		peer := ""
		if g.rng.IntN(4) == 0 {
			peer = g.peers[g.rng.IntN(len(g.peers))]
		}
		offer = negotiate.InboundOffer(adv, peer, requested)
		offer.CounterOffer = proto == facets.ProtocolMCP && g.rng.IntN(3) == 0
	}
	at := g.at
	_, p := negotiate.Decide(subject, set, offer, policy.Policy{Now: func() time.Time { return at }})
	return p
}

// write writes n exchanges to a record, as the JSON-lines sink writes them,
// with one bad line in every badEvery (none when 0), and returns the
// payloads written.
func (g *generator) write(t testing.TB, n, badEvery int) ([]byte, []events.NegotiationDecided) {
	t.Helper()
	var buf bytes.Buffer
	sink := events.NewJSONLines(&buf)
	payloads := make([]events.NegotiationDecided, 0, n)
	ctx := context.Background()
	runs := []string{"acme/RUN0000000000000001", "anon:acme/RUN0000000000000002"}
	for i := range n {
		if badEvery > 0 && i%badEvery == badEvery-1 {
			buf.WriteString([]string{"not json\n", `{"type":"run.started","eventId":"x"}` + "\n", "{\"half\":\n", "\n"}[g.rng.IntN(4)])
		}
		p := g.exchange()
		var e events.Event
		var err error
		if g.rng.IntN(2) == 0 {
			e, err = events.NewRunEvent(runs[g.rng.IntN(len(runs))], p)
		} else {
			e, err = events.NewHostEvent([]string{"", "ws-1"}[g.rng.IntN(2)], p)
		}
		if err == nil {
			err = sink.Emit(ctx, e)
		}
		if err != nil {
			t.Fatalf("writing event %d (%+v): %v", i, p, err)
		}
		payloads = append(payloads, p)
	}
	return buf.Bytes(), payloads
}

// direct counts payloads as the report should, the plain way: one map
// per question.
type direct struct {
	protocols map[facets.Protocol]*directCounts
	periods   map[facets.Protocol]map[time.Time]*directCounts
}

type directCounts struct {
	Counts
	peers map[string]bool
}

func countDirectly(payloads []events.NegotiationDecided, period Period) direct {
	d := direct{protocols: map[facets.Protocol]*directCounts{}, periods: map[facets.Protocol]map[time.Time]*directCounts{}}
	get := func(m map[facets.Protocol]*directCounts, p facets.Protocol) *directCounts {
		if m[p] == nil {
			m[p] = &directCounts{Counts: Counts{Requested: map[string]int64{}, Settled: map[string]int64{}, Refusals: map[string]int64{}}, peers: map[string]bool{}}
		}
		return m[p]
	}
	for i := range payloads {
		p := &payloads[i]
		if d.periods[p.Protocol] == nil {
			d.periods[p.Protocol] = map[time.Time]*directCounts{}
		}
		y, m, day := p.At.Date()
		start := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		if period == Day {
			start = time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
		}
		byPeriod := map[facets.Protocol]*directCounts{}
		if pc := d.periods[p.Protocol][start]; pc != nil {
			byPeriod[p.Protocol] = pc
		}
		pc := get(byPeriod, p.Protocol)
		d.periods[p.Protocol][start] = pc
		for _, c := range []*directCounts{get(d.protocols, p.Protocol), pc} {
			c.Exchanges++
			req := p.Requested
			if req == "" {
				req = "none"
			}
			c.Requested[req]++
			if p.Outcome == "accepted" {
				c.Accepted++
				c.Settled[p.Version]++
				if p.Requested != "" && p.Requested != p.Version {
					c.Downgrades++
				}
			} else {
				c.Refused++
				c.Refusals[p.Reason]++
			}
			if p.PeerDigest == "" {
				c.WithoutPeer++
			} else {
				c.peers[p.PeerDigest] = true
			}
		}
	}
	return d
}

// refusedDirectly is what change c refuses of the accepted exchange p,
// worked out from the decision rules by hand rather than by deciding: a
// raised floor refuses a version, settled or requested, below it (or
// below the recorded floor, when that is higher). A dropped version
// refuses an exchange settled at it or that asked for it, unless the host
// counter-offered (settled above the version asked for): then the peer
// speaks the version it asked for too, and only asking for the dropped
// floor is refused, as below the floor that is left.
func refusedDirectly(c Change, p *events.NegotiationDecided) bool {
	parse := func(s string) facets.Version { return facets.MustParseVersion(c.Protocol, s) }
	v := parse(p.Version)
	if c.Floor != "" {
		floor := parse(c.Floor)
		if p.Floor != "" && parse(p.Floor).Compare(floor) > 0 {
			floor = parse(p.Floor)
		}
		return v.Compare(floor) < 0 || p.Requested != "" && parse(p.Requested).Compare(floor) < 0
	}
	counter := p.Requested != "" && parse(p.Requested).Compare(v) < 0
	if counter {
		return p.Requested == c.Drop && p.Floor == c.Drop
	}
	return p.Version == c.Drop || p.Requested == c.Drop
}

// allChanges are the changes the generated records are judged by.
var allChanges = func() []Change {
	var cs []Change
	for _, v := range a2aKnown[1:] {
		cs = append(cs, Change{Protocol: facets.ProtocolA2A, Floor: v}, Change{Protocol: facets.ProtocolA2A, Drop: v})
	}
	for _, v := range mcpKnown[1:] {
		cs = append(cs, Change{Protocol: facets.ProtocolMCP, Floor: v}, Change{Protocol: facets.ProtocolMCP, Drop: v})
	}
	return cs
}()

// checkAgainstDirect fails t where r differs from counting payloads
// directly.
func checkAgainstDirect(t testing.TB, r Report, payloads []events.NegotiationDecided, changes []Change) {
	t.Helper()
	d := countDirectly(payloads, r.Period)
	if r.Events != int64(len(payloads)) {
		t.Errorf("events: report %d, written %d", r.Events, len(payloads))
	}
	if len(r.Protocols) != len(d.protocols) {
		t.Errorf("protocols: report %d, direct %d", len(r.Protocols), len(d.protocols))
	}
	same := func(what string, got Counts, want *directCounts) {
		want.Peers = int64(len(want.peers))
		want.Refusals = renameNone(want.Refusals)
		got.First, got.Last = time.Time{}, time.Time{}
		if fmt.Sprint(got) != fmt.Sprint(want.Counts) {
			t.Errorf("%s:\nreport %+v\ndirect %+v", what, got, want.Counts)
		}
	}
	for _, p := range r.Protocols {
		same(string(p.Protocol), p.Counts, d.protocols[p.Protocol])
		if len(p.Periods) != len(d.periods[p.Protocol]) {
			t.Errorf("%s: %d periods, direct %d", p.Protocol, len(p.Periods), len(d.periods[p.Protocol]))
		}
		for _, pc := range p.Periods {
			same(fmt.Sprintf("%s %s", p.Protocol, pc.Start.Format(time.DateOnly)), pc.Counts, d.periods[p.Protocol][pc.Start])
		}
	}
	if len(r.Changes) != len(changes) {
		t.Fatalf("%d changes reported, %d asked for", len(r.Changes), len(changes))
	}
	for i, c := range changes {
		var refused, considered, already int64
		peers := map[string]time.Time{}
		for j := range payloads {
			p := &payloads[j]
			if p.Protocol != c.Protocol {
				continue
			}
			if p.Outcome != "accepted" {
				already++
				continue
			}
			considered++
			if refusedDirectly(c, p) {
				refused++
				if p.PeerDigest != "" && p.At.After(peers[p.PeerDigest]) {
					peers[p.PeerDigest] = p.At
				}
			}
		}
		got := r.Changes[i]
		if got.Refused != refused || got.Considered != considered || got.AlreadyRefused != already || got.Peers != int64(len(peers)) {
			t.Errorf("%s: report refuses %d of %d (%d already, %d peers), direct %d of %d (%d already, %d peers)",
				c, got.Refused, got.Considered, got.AlreadyRefused, got.Peers, refused, considered, already, len(peers))
		}
		for _, a := range got.Affected {
			if !a.LastSeen.Equal(peers[a.Peer]) {
				t.Errorf("%s: peer %s last seen %v, direct %v", c, a.Peer, a.LastSeen, peers[a.Peer])
			}
		}
	}
}

func renameNone(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		if k == "" {
			k = "none"
		}
		out[k] += v
	}
	return out
}

// TestGeneratedRecordMatchesDirectCount is the property: over records of
// random exchanges decided by the module (run and host events, bad lines
// among them), the report's counts are the direct count's, and each
// change refuses what the decision rules, worked by hand, refuse.
func TestGeneratedRecordMatchesDirectCount(t *testing.T) {
	for seed := range uint64(20) {
		g := newGenerator(seed, 1+int(seed)*7)
		n := 50 + int(seed)*97
		data, payloads := g.write(t, n, 7)
		period := []Period{Month, Day}[seed%2]
		tally, err := New(Options{Period: period, Changes: allChanges})
		if err != nil {
			t.Fatal(err)
		}
		if err := tally.ReadLines(bytes.NewReader(data), "record"); err != nil {
			t.Fatal(err)
		}
		r := tally.Report()
		checkAgainstDirect(t, r, payloads, allChanges)
		if bad := r.Bad.NotJSON + r.Bad.NotDecided; bad == 0 || bad > int64(n/7) {
			t.Errorf("seed %d: %d bad lines counted, want 1 to %d", seed, bad, n/7)
		}
	}
}

// TestMillionEvents is the property over a record of a million events:
// the report's counts and every change's refusals equal the direct
// count. It takes a while, so -short and the race detector (CI runs the
// tests again without it) skip it; BenchmarkReadLines runs as many.
func TestMillionEvents(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a million events: not with -short or -race")
	}
	const n = 1_000_000
	data, payloads := newGenerator(42, 5000).write(t, n, 0)
	tally, err := New(Options{Changes: allChanges})
	if err != nil {
		t.Fatal(err)
	}
	if err := tally.ReadLines(bytes.NewReader(data), "record"); err != nil {
		t.Fatal(err)
	}
	r := tally.Report()
	checkAgainstDirect(t, r, payloads, allChanges)
	var refused int64
	for _, c := range r.Changes {
		refused += c.Refused
	}
	t.Logf("%d events, %d bad lines, %d refusals over %d changes agree with the direct count", r.Events, r.Bad.NotJSON+r.Bad.NotDecided, refused, len(r.Changes))
}

// TestDecideAgainAgreesByHand checks the verdict of every change on every
// exchange shape the generator makes, one by one, so that a disagreement
// names the exchange.
func TestDecideAgainAgreesByHand(t *testing.T) {
	g := newGenerator(7, 3)
	seen := map[verdictKey]bool{}
	for range 20000 {
		p := g.exchange()
		if p.Outcome != "accepted" {
			continue
		}
		for _, c := range allChanges {
			if c.Protocol != p.Protocol {
				continue
			}
			key := verdictKey{p.Version, p.Requested + " " + c.String(), p.Floor}
			if seen[key] {
				continue
			}
			seen[key] = true
			ct, err := newChangeTally(c)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ct.decide(&p), refusedDirectly(c, &p); got != want {
				t.Errorf("%s on %s requested %q settled %q floor %q: decided again refused=%v, by hand %v", c, p.Protocol, p.Requested, p.Version, p.Floor, got, want)
			}
		}
	}
	if len(seen) < 40 {
		t.Errorf("only %d distinct exchanges and changes: the generator is too narrow", len(seen))
	}
}

func TestDecisionSubjectIsAuthenticated(t *testing.T) {
	if !(policy.Policy{}).IsAuthenticated(decisionSubject) {
		t.Fatal("the subject exchanges are decided again for is not authenticated, so no downgrade would survive")
	}
}
