// Package conform runs the OpenWOP v2 interop conformance scenarios — RFC
// 0175's eight and RFC 0242's negotiation-decided-inbound — against a
// running host, as `wopneg conform` does: it reads the host's discovery
// document, drives the host's invoke seams (spec/v1/host-sample-test-seams.md
// §22/§23 under the openwop-conformance-seams-v2 profile) toward its own fake
// A2A peer and fake MCP server on loopback, reads the host's event log
// (GET /runs/{runId}/events/poll) and host event stream (GET /host/events),
// and judges what it saw as the scenarios of conformance/src/scenarios/v2-*
// in openwop/openwop do.
//
// It is never vacuous, by construction: every row settles through
// verdict.Leg.Settle, which cannot pass a row that made no wire assertion; a
// seam leg whose fake received no request is blocked, never passed; and a
// host whose floor equals its preferred version has negotiation-authenticated
// blocked, because no unauthenticated downgrade (§D.1) can be offered to it.
// Where the suite's checks are looser than the specification the runner
// adds the missing leg, and says so at the check: a positive control for
// §D.1 and for the MRTR ceiling, and a floor-refusal exchange the host must
// settle by asking the peer.
//
// Every response the runner reads is size-capped and every request it
// sends has a timeout.
package conform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/wopneg/wopneg/internal/conform/verdict"
)

// The scenarios, in the order the report lists them.
const (
	scNoTransport   = "v2-no-transport-advertisement"
	scLegacy        = "v2-legacy-profiles-absent"
	scEmitted       = "v2-negotiation-decided-emitted"
	scFloor         = "v2-minimum-version-refused"
	scAuthenticated = "v2-negotiation-authenticated"
	scRefresh       = "v2-refresh-sla"
	scRounds        = "v2-mrtr-rounds-ceiling"
	scThreatModel   = "v2-threat-model-template"
	scInbound       = "v2-negotiation-decided-inbound"
)

// Defaults of Options.
const (
	DefaultTimeout time.Duration = 15_000_000_000 // 15 s
	DefaultStream  time.Duration = 3_000_000_000  // 3 s
)

// Options configures Run.
type Options struct {
	// Base is the host's base URL, such as http://127.0.0.1:8080.
	Base string
	// Token is the bearer token the runner authenticates with, sent to the
	// host's own origin only. Without it the legs that need an
	// authenticated caller are blocked.
	Token string
	// Client sends the runner's requests; nil is a fresh client. Its
	// Timeout should be zero: the runner bounds each request itself, and
	// the event stream is read for Stream.
	Client *http.Client
	// Timeout bounds each request; zero is DefaultTimeout.
	Timeout time.Duration
	// Stream is how long the host event stream is watched for a record;
	// zero is DefaultStream.
	Stream time.Duration
	// Now is the clock the refresh SLA is judged by; nil is time.Now.
	Now func() time.Time
}

// Report is what a run found: one Result per row, in scenario order.
type Report struct {
	Base    string           `json:"base"`
	Results []verdict.Result `json:"results"`
}

// Counts returns how many rows came out with each verdict.
func (r Report) Counts() map[verdict.Verdict]int {
	n := map[verdict.Verdict]int{verdict.Pass: 0, verdict.Fail: 0, verdict.Blocked: 0, verdict.Inapplicable: 0}
	for _, res := range r.Results {
		n[res.Verdict()]++
	}
	return n
}

// ErrBase is returned for a base URL that is not an absolute http(s) URL.
var ErrBase = errors.New("conform: the host's base URL must be an absolute http or https URL")

// runner holds one run's state.
type runner struct {
	c      *hostClient
	now    time.Time
	stream time.Duration
	doc    map[string]any
	// docErr is why discovery could not be read, or "".
	docErr string
}

// Run runs every scenario against the host at o.Base and returns the
// report. It fails only for invalid options; a host that cannot be reached
// gets a report of blocked rows.
func Run(ctx context.Context, o Options) (Report, error) {
	base, err := url.Parse(o.Base)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return Report{}, ErrBase
	}
	r := &runner{c: &hostClient{base: base, token: o.Token, hc: o.Client, timeout: o.Timeout}, stream: o.Stream}
	if r.c.hc == nil {
		r.c.hc = &http.Client{}
	}
	if r.c.timeout <= 0 {
		r.c.timeout = DefaultTimeout
	}
	if r.stream <= 0 {
		r.stream = DefaultStream
	}
	r.now = time.Now()
	if o.Now != nil {
		r.now = o.Now()
	}
	r.discover(ctx)
	rep := Report{Base: base.String()}
	for _, sc := range []func(context.Context) []verdict.Result{
		r.noTransport, r.legacyProfiles, r.emitted, r.floorRefused, r.authenticated,
		r.refreshSLA, r.rounds, r.threatModel, r.inbound,
	} {
		rep.Results = append(rep.Results, sc(ctx)...)
	}
	return rep, nil
}

// discover reads the host's discovery document.
func (r *runner) discover(ctx context.Context) {
	a := r.c.do(ctx, http.MethodGet, "/.well-known/openwop", nil, nil)
	if a.Err != nil {
		r.docErr = "discovery unreachable: " + a.Err.Error()
		return
	}
	if a.Status != http.StatusOK || a.JSON == nil {
		r.docErr = fmt.Sprintf("GET /.well-known/openwop answered %d without a JSON object", a.Status)
		return
	}
	r.doc = a.JSON
}

// settle settles legs in order.
func settle(legs ...*verdict.Leg) []verdict.Result {
	out := make([]verdict.Result, len(legs))
	for i, l := range legs {
		out[i] = l.Settle()
	}
	return out
}

// gateDoc blocks legs when discovery could not be read.
func (r *runner) gateDoc(legs ...*verdict.Leg) bool {
	if r.docErr == "" {
		return true
	}
	for _, l := range legs {
		l.Block(r.docErr)
	}
	return false
}

// threatModel reports v2-threat-model-template: the suite's test runs the
// specification repository's corpus gate (scripts/check-threat-model-
// template.mjs over SECURITY/threat-model-*.md) and reads nothing from a
// host, so no host can pass or fail it.
func (r *runner) threatModel(context.Context) []verdict.Result {
	l := verdict.New(scThreatModel, "openwop.requirement.0173.threat-model-template")
	l.Inapplicable("the suite's test checks the specification repository's SECURITY/threat-model-*.md sections, not a host")
	return settle(l)
}
