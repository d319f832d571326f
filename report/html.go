package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/report"
)

// WriteHTML writes r as one HTML page that needs nothing else to open:
// per protocol, a chart of the versions settled over the periods (and the
// refusals) and the counts; per change, a chart of what it refuses in
// each period against what it keeps, and the peers it refuses. The charts
// are drawn by gonum.org/v1/plot as SVG, inline in the page.
func WriteHTML(w io.Writer, r report.Report) error {
	page := htmlPage{Report: r}
	for _, p := range r.Protocols {
		svg, err := versionsChart(r.Period, p)
		if err != nil {
			return err
		}
		page.Versions = append(page.Versions, svg)
	}
	for _, c := range r.Changes {
		svg, err := changeChart(r, c)
		if err != nil {
			return err
		}
		page.ChangeCharts = append(page.ChangeCharts, svg)
	}
	return pageTemplate.Execute(w, page)
}

type htmlPage struct {
	report.Report
	// Versions are the charts of Protocols, ChangeCharts those of
	// Changes, in order.
	Versions, ChangeCharts []template.HTML
}

// chartWidth and chartHeight are the size of every chart.
const (
	chartWidth  = 26 * vg.Centimeter
	chartHeight = 9 * vg.Centimeter
)

// versionsChart stacks, per period, the exchanges settled at each version
// (newest on top) and the refused ones.
func versionsChart(period report.Period, p report.Protocol) (template.HTML, error) {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: exchanges per %s, by version settled", p.Protocol, period)
	pl.Y.Label.Text = "exchanges"
	names := periodNames(period, p.Periods)
	series := versionsOldestFirst(p.Protocol, p.Settled)
	var below *plotter.BarChart
	for i, v := range series {
		values := make(plotter.Values, len(p.Periods))
		for j, pc := range p.Periods {
			values[j] = float64(pc.Settled[v])
		}
		if err := stack(pl, &below, values, plotutil.Color(i), v); err != nil {
			return "", err
		}
	}
	refused := make(plotter.Values, len(p.Periods))
	for j, pc := range p.Periods {
		refused[j] = float64(pc.Refused)
	}
	if err := stack(pl, &below, refused, color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}, "refused"); err != nil {
		return "", err
	}
	pl.NominalX(names...)
	pl.Legend.Top = true
	return svg(pl)
}

// changeChart stacks, per period, the accepted exchanges a change keeps
// and those it refuses.
func changeChart(r report.Report, c report.ChangeReport) (template.HTML, error) {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: accepted exchanges per %s it keeps and refuses", c.Change, r.Period)
	pl.Y.Label.Text = "exchanges"
	var periods []report.PeriodCounts
	for _, p := range r.Protocols {
		if p.Protocol == c.Protocol {
			periods = p.Periods
		}
	}
	refusedAt := map[time.Time]int64{}
	for _, pr := range c.Periods {
		refusedAt[pr.Start] = pr.Refused
	}
	kept, refused := make(plotter.Values, len(periods)), make(plotter.Values, len(periods))
	for i, pc := range periods {
		refused[i] = float64(refusedAt[pc.Start])
		kept[i] = float64(pc.Accepted) - refused[i]
	}
	var below *plotter.BarChart
	if err := stack(pl, &below, kept, color.RGBA{R: 0x4c, G: 0x8c, B: 0x4a, A: 0xff}, "kept"); err != nil {
		return "", err
	}
	if err := stack(pl, &below, refused, color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}, "refused"); err != nil {
		return "", err
	}
	pl.NominalX(periodNames(r.Period, periods)...)
	pl.Legend.Top = true
	return svg(pl)
}

// stack adds a bar chart of values on top of *below, and makes it the
// new *below.
func stack(pl *plot.Plot, below **plotter.BarChart, values plotter.Values, c color.Color, name string) error {
	if len(values) == 0 {
		return nil
	}
	bars, err := plotter.NewBarChart(values, vg.Points(18))
	if err != nil {
		return err
	}
	bars.LineStyle.Width = 0
	bars.Color = c
	if *below != nil {
		bars.StackOn(*below)
	}
	pl.Add(bars)
	pl.Legend.Add(name, bars)
	*below = bars
	return nil
}

// versionsOldestFirst returns the versions counted in m, oldest first.
func versionsOldestFirst(p facets.Protocol, m map[string]int64) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return facets.MustParseVersion(p, a).Compare(facets.MustParseVersion(p, b))
	})
}

// periodNames names each period as the text report does.
func periodNames(period report.Period, periods []report.PeriodCounts) []string {
	names := make([]string, len(periods))
	for i, pc := range periods {
		names[i] = pc.Start.Format(time.DateOnly)
		if period == report.Month {
			names[i] = pc.Start.Format("2006-01")
		}
	}
	return names
}

// countTicks marks whole numbers only: an axis of exchanges has no 2.5.
type countTicks struct{}

// Ticks returns gonum's default ticks between lo and hi that are whole
// numbers, labelled without a fraction.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	return out
}

// svg draws pl as an SVG element, for inline use.
func svg(pl *plot.Plot) (template.HTML, error) {
	pl.Y.Tick.Marker = countTicks{}
	w, err := pl.WriterTo(chartWidth, chartHeight, "svg")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return "", err
	}
	// The drawing is gonum's own SVG, with no input text in it but the
	// version names, periods and change names the report validated; the
	// XML declaration has no place inside HTML.
	b := buf.Bytes()
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return template.HTML(b), nil
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"date": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"list": func(m map[string]int64) []entry { return entries(m) },
	"add":  func(a, b int64) int64 { return a + b },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>wopneg report</title>
<style>
body { font-family: sans-serif; margin: 1.5em 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
td, th { padding: .15em .8em; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; }
.mono { font-family: monospace; }
.note { color: #666; font-size: .9em; }
svg { display: block; }
</style>
</head>
<body>
<h1>wopneg report</h1>
<p>{{.Events}} negotiation.decided events in {{.Lines}} lines{{with add .Bad.NotJSON .Bad.NotDecided}}; {{.}} bad{{end}}. Periods: UTC {{.Period}}s. Peers are shown by digest.</p>
{{range $i, $p := .Protocols}}
<h2>{{$p.Protocol}}</h2>
<p>{{$p.Exchanges}} exchanges from {{date $p.First}} to {{date $p.Last}}: {{$p.Accepted}} accepted ({{$p.Downgrades}} downgrades), {{$p.Refused}} refused; {{$p.Peers}} peers{{if $p.WithoutPeer}}, {{$p.WithoutPeer}} exchanges naming none{{end}}.
Legacy {{$p.Legacy.Version}} leaves the v1 tree on {{$p.Legacy.Leaves}}: {{$p.Legacy.Exchanges}} exchanges settled at it, {{$p.Legacy.Peers}} peers.</p>
{{index $.Versions $i}}
<table>
<tr><th>requested</th>{{range list $p.Requested}}<td>{{.Key}}: {{.Count}}</td>{{end}}</tr>
<tr><th>settled</th>{{range list $p.Settled}}<td>{{.Key}}: {{.Count}}</td>{{end}}</tr>
<tr><th>refusals</th>{{range list $p.Refusals}}<td>{{.Key}}: {{.Count}}</td>{{end}}</tr>
</table>
{{end}}
{{range $i, $c := .Changes}}
<h2>{{$c.Change}}</h2>
<p>Refuses {{$c.Refused}} of {{$c.Considered}} accepted exchanges ({{$c.AlreadyRefused}} were refused already): {{$c.Peers}} peers{{if $c.WithoutPeer}} and {{$c.WithoutPeer}} exchanges naming none{{end}}.
{{with $c.Sunset}}{{$c.Protocol}} {{.Version}} leaves the v1 tree on {{.Leaves}}; {{.Exchanges}} exchanges of {{.Peers}} peers settled at it.{{end}}</p>
{{index $.ChangeCharts $i}}
{{if $c.Affected}}<table>
<tr><th>peer</th><th>exchanges</th><th>last seen</th></tr>
{{range $c.Affected}}<tr><td><span class="mono">{{.Peer}}</span>{{with .Name}} {{.}}{{end}}</td><td>{{.Exchanges}}</td><td>{{date .LastSeen}}</td></tr>
{{end}}</table>{{end}}
{{end}}
{{with .Bad.Lines}}<h2>Bad lines</h2>
<table>{{range .}}<tr><td>{{.Source}}:{{.Line}}</td><td style="text-align:left">{{.Problem}}</td></tr>
{{end}}</table>{{end}}
<p class="note">Each change is judged by deciding every accepted exchange of the record again with the module's decision, against the facet the change leaves; the peer is taken to speak the version it settled at.</p>
</body>
</html>
`))

type entry struct {
	Key   string
	Count int64
}

// entries lists m by key.
func entries(m map[string]int64) []entry {
	var out []entry
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, entry{k, m[k]})
	}
	return out
}
