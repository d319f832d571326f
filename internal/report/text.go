package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wopneg/wopneg/facets"
)

// ReadNames reads the names of peers from the output of `wopneg digest`:
// one "<64 hex digest>  <name>" per line (the name is the origin the
// digest hashes, or anything the host calls the peer). Lines that
// `wopneg digest` wrote as "error: …" and blank lines are passed over;
// any other line is an error naming its line number.
func ReadNames(r io.Reader) (map[string]string, error) {
	names := map[string]string{}
	lines := bufio.NewScanner(r)
	lines.Buffer(nil, MaxLine)
	for n := 1; lines.Scan(); n++ {
		line := strings.TrimRight(lines.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "error: ") {
			continue
		}
		digest, name, ok := strings.Cut(line, "  ")
		name = strings.TrimSpace(name)
		if !ok || !isDigest(digest) || name == "" {
			return nil, fmt.Errorf("names, line %d: not \"<64 lowercase hex digest>  <name>\", as wopneg digest prints", n)
		}
		names[digest] = name
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("names: %w", err)
	}
	return names, nil
}

func isDigest(s string) bool { return (&reader{}).validDigest(s) && s != "" }

// Name sets the Name of every affected peer names knows.
func (r *Report) Name(names map[string]string) {
	for i := range r.Changes {
		for j := range r.Changes[i].Affected {
			a := &r.Changes[i].Affected[j]
			a.Name = names[a.Peer]
		}
	}
}

// MaxShown is how many bad lines and affected peers the text report lists;
// --json lists every affected peer.
const MaxShown = 20

// WriteText writes r for a terminal.
func WriteText(w io.Writer, r Report) error {
	out := &errWriter{w: w}
	out.printf("%d events in %d lines", r.Events, r.Lines)
	if bad := r.Bad.NotJSON + r.Bad.NotDecided; bad > 0 {
		out.printf("; %d bad: %d not JSON, %d not negotiation.decided", bad, r.Bad.NotJSON, r.Bad.NotDecided)
	}
	out.printf("\n")
	for i, b := range r.Bad.Lines {
		if i == MaxShown {
			out.printf("  … %d more bad lines (--json names the first %d)\n", r.Bad.NotJSON+r.Bad.NotDecided-MaxShown, MaxBadLines)
			break
		}
		out.printf("  %s:%d: %s\n", b.Source, b.Line, b.Problem)
	}
	for _, p := range r.Protocols {
		out.printf("\n%s: %s\n", p.Protocol, summary(p.Counts))
		out.printf("  requested   %s\n", byVersion(p.Protocol, p.Requested))
		out.printf("  settled     %s\n", byVersion(p.Protocol, p.Settled))
		if len(p.Refusals) > 0 {
			out.printf("  refusals    %s\n", byCount(p.Refusals))
		}
		out.printf("  legacy      %s leaves the v1 tree on %s: %d exchanges settled at it, %d peers\n",
			p.Legacy.Version, p.Legacy.Leaves, p.Legacy.Exchanges, p.Legacy.Peers)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  %s\texchanges\taccepted\trefused\tdowngrades\tpeers\tsettled\n", r.Period)
		for _, pc := range p.Periods {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%s\n", periodName(r.Period, pc.Start), pc.Exchanges, pc.Accepted, pc.Refused, pc.Downgrades, pc.Peers, byVersion(p.Protocol, pc.Settled))
		}
		out.err = cmp.Or(out.err, tw.Flush())
	}
	for _, c := range r.Changes {
		out.printf("\n%s: refuses %d of %d accepted exchanges (%d were refused already), %d peers",
			c.Change, c.Refused, c.Considered, c.AlreadyRefused, c.Peers)
		if c.WithoutPeer > 0 {
			out.printf(" and %d exchanges with no peer recorded", c.WithoutPeer)
		}
		out.printf("\n")
		if c.Sunset != nil {
			out.printf("  %s %s leaves the v1 tree on %s; %d exchanges of %d peers settled at it\n", c.Protocol, c.Sunset.Version, c.Sunset.Leaves, c.Sunset.Exchanges, c.Sunset.Peers)
		}
		if len(c.Periods) > 0 {
			parts := make([]string, len(c.Periods))
			for i, pr := range c.Periods {
				parts[i] = periodName(r.Period, pr.Start) + " " + strconv.FormatInt(pr.Refused, 10)
			}
			out.printf("  %-12s%s\n", "by "+string(r.Period), strings.Join(parts, ", "))
		}
		if len(c.Affected) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  peer\texchanges\tlast seen\n")
		for i, a := range c.Affected {
			if i == MaxShown {
				fmt.Fprintf(tw, "  … %d more peers (--json lists them all)\t\t\n", len(c.Affected)-MaxShown)
				break
			}
			peer := a.Peer
			if a.Name != "" {
				peer += " " + a.Name
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", peer, a.Exchanges, a.LastSeen.UTC().Format(time.RFC3339))
		}
		out.err = cmp.Or(out.err, tw.Flush())
	}
	return out.err
}

// summary is one protocol's totals on one line.
func summary(c Counts) string {
	s := fmt.Sprintf("%d exchanges, %d accepted (%d downgrades), %d refused, %d peers", c.Exchanges, c.Accepted, c.Downgrades, c.Refused, c.Peers)
	if c.WithoutPeer > 0 {
		s += fmt.Sprintf(" (%d exchanges name none)", c.WithoutPeer)
	}
	return s + ", " + c.First.UTC().Format(time.RFC3339) + " to " + c.Last.UTC().Format(time.RFC3339)
}

// byVersion lists counts by version, the newest first and "none" last.
func byVersion(p facets.Protocol, m map[string]int64) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		va, errA := facets.ParseVersion(p, a)
		vb, errB := facets.ParseVersion(p, b)
		if errA != nil || errB != nil { // "none" last
			return cmp.Compare(a, b)
		}
		return vb.Compare(va)
	})
	return list(keys, m)
}

// byCount lists counts, the largest first.
func byCount(m map[string]int64) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	return list(keys, m)
}

func list(keys []string, m map[string]int64) string {
	if len(keys) == 0 {
		return "-"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, ", ")
}

// periodName writes the period starting at start: 2026-11 for a month,
// 2026-11-30 for a day or the Monday of a week.
func periodName(p Period, start time.Time) string {
	if p == Month {
		return start.Format("2006-01")
	}
	return start.Format(time.DateOnly)
}

// errWriter keeps the first error of its writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
