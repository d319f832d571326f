package negotiatetest

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/vectors"
	"github.com/wopneg/wopneg/policy"
)

//go:embed wire/*.json
var wireFiles embed.FS

// wireSource is where RunWire reads the wire vectors: the embedded files,
// or in the package's own tests a set that does not load.
var wireSource fs.FS = wireFiles

// wireToken is the bearer token of an authenticated wire vector's request
// when WireOptions.Bearer is empty.
const wireToken = "negotiatetest"

// wireNow is the clock of the policy RunWire hands the builder.
var wireNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// maxWireAnswer bounds how much of an answer the kit reads for JSON-RPC
// error codes: a handler under test is outside input too.
const maxWireAnswer = 1 << 20

// WireOptions says how the host [RunWire] checks serves the protocols.
// The zero WireOptions is a host that serves both, A2A's JSON-RPC binding
// at /a2a and MCP at /mcp, and authenticates the bearer token
// "negotiatetest".
type WireOptions struct {
	// Endpoints maps each protocol the host serves to the path it serves
	// it at (on A2A, its JSON-RPC binding); only those protocols' vectors
	// run, and the facet set the host is built from advertises only those.
	// Nil means both, at /a2a and /mcp; an empty path is that protocol's
	// default. A path must start with "/". A protocol other than a2a or
	// mcp, or a map naming none, fails the run: a kit that runs no vector
	// checks nothing.
	Endpoints map[facets.Protocol]string
	// Bearer is the token an authenticated vector's request carries, as
	// "Authorization: Bearer <Bearer>"; empty means "negotiatetest". It
	// must be visible ASCII without spaces.
	Bearer string
	// Facets is the facet set the host advertises, as it advertises it.
	// Empty, the kit runs its shipped vectors, building the host from
	// facets of its own (A2A 0.3 and 1.0, MCP 2025-06-18 to 2026-07-28,
	// and 2025-03-26 for the batch vectors). Set, it says which protocols
	// the host serves (Endpoints, when given, must name the same ones),
	// every vector is derived from it (see [RunWire]) and the host is
	// built from it: a host that cannot serve another facet, such as an
	// A2A 1.0 host without 0.3, is checked on what it advertises. Its
	// refreshedAt is replaced by the day of the kit's clock, so a facet
	// that leaves it empty, as a host may, is taken as it is.
	Facets facets.Set
}

// RunWire checks a host's own HTTP handler against the wire vectors: A2A
// JSON-RPC and MCP streamable-HTTP requests, each sent the way
// net/http/httptest sends one (in process, no network), with the answer
// the wire must carry and the negotiation.decided event the host must
// have recorded. On each protocol they cover the preferred version
// accepted, an authenticated downgrade served, an anonymous one refused,
// a version below the floor, one not offered, and no version header (A2A
// reads it as 0.3, A2A §3.6.2; MCP as 2025-03-26); on MCP also a header
// that disagrees with the body and JSON-RPC batches, which only 2025-03-26
// has.
//
// Given the host's own facets (WireOptions.Facets), the kit derives the
// vectors from them: the preferred version; the newest version offered
// below it and at or above the floor, asked for authenticated and
// anonymously (no such vectors when there is none); the newest release
// below the floor (none when the floor is the first release); a version
// newer than any offered; no version header; on A2A a malformed version;
// on MCP the header-body mismatch when the preferred revision is
// 2026-07-28 or later, and the batches at the revisions the facet serves.
// What each must get is what the rules decide for the facet.
//
// opts, at most one, says which protocols the host serves, at which
// paths, and the bearer token it accepts (see [WireOptions]); without it
// the host serves both at /a2a and /mcp and accepts "negotiatetest". Only
// the protocols it serves are checked, so an MCP-only host runs the MCP
// vectors alone.
//
// For every vector, RunWire calls build with a copy of the facet set the
// vector names (advertising the protocols the host serves), a policy
// whose clock is fixed (otherwise the zero Policy: the reference rules),
// and a fresh events.Sink; build returns the host's handler as it is
// deployed — its authentication, router and SDK, with the module's
// middleware inside, compiled from the set and policy and recording to
// the sink. RunWire then sends the vector's request to it:
//
//   - every request is a POST to the protocol's path (/a2a and /mcp by
//     default), so the handler must route that path to the endpoint;
//   - a vector's caller is authenticated or anonymous. An authenticated
//     request carries "Authorization: Bearer " and the token, and nothing
//     else identifies it; the handler's authentication must resolve that
//     token, and only that one, to a valid Subject (any issuer, tenant
//     and id the host likes) that its policy counts as authenticated, and
//     a request without it to no Subject. A host whose callers prove
//     themselves another way (a client certificate, a session) maps the
//     token in the test's configuration of that layer.
//
// and checks, reporting every difference with the vector's name:
//
//   - the HTTP status;
//   - the version header the vector names (A2A-Version on A2A), exactly;
//   - the JSON-RPC error code of a refusal (-32009 on A2A; -32022,
//     -32020 or -32600 on MCP); an acceptance must be served: its answer
//     (read as JSON, or as an event stream of JSON) must hold a JSON-RPC
//     result and no error at all, so a host whose record accepts a
//     version its server answers -32601 (method not found) to fails;
//   - exactly one event recorded, whose protocol, outcome, version,
//     requested version, reason and floor are the vector's.
//
// Every failure names the rule the host broke.
//
// With a *testing.T every vector is a subtest named after it; with any
// other testing.TB the vectors run in turn and every failure is reported
// through t.Errorf, prefixed with the vector's name. A build error fails
// the vector, and options RunWire cannot use fail the run.
func RunWire(t testing.TB, build func(set facets.Set, p policy.Policy, sink events.Sink) (http.Handler, error), opts ...WireOptions) {
	t.Helper()
	h, err := hostOf(opts)
	if err != nil {
		t.Errorf("negotiatetest: %v", err)
		return
	}
	vs, err := h.vectors()
	if err != nil {
		t.Errorf("negotiatetest: loading the wire vectors: %v", err)
		return
	}
	tt, sub := t.(*testing.T)
	for _, v := range vs {
		if h.paths[v.Protocol] == "" {
			continue
		}
		if sub {
			tt.Run(v.Name, func(t *testing.T) {
				if err := v.check(build, h); err != nil {
					t.Errorf("%s (%s):\n%v", v.Name, v.Source, err)
				}
			})
			continue
		}
		if err := v.check(build, h); err != nil {
			t.Errorf("%s (%s):\n%v", v.Name, v.Source, err)
		}
	}
}

// wireHost is how the host under test serves, as RunWire's options say:
// the path of each protocol it serves, and the Authorization header of an
// authenticated request.
type wireHost struct {
	paths         map[facets.Protocol]string
	authorization string
	// set is the host's own facets, dated, or the zero Set.
	set facets.Set
}

// vectors returns the vectors to run: derived from the host's own
// facets, or the shipped ones.
func (h wireHost) vectors() ([]wireVector, error) {
	ps := h.set.Protocols()
	if len(ps) == 0 {
		return loadWire(wireSource, "wire")
	}
	var vs []wireVector
	for _, p := range ps {
		adv, _ := h.set.Lookup(p)
		vs = append(vs, deriveWire(h.set, adv)...)
	}
	return vs, nil
}

// hostOf reads RunWire's options, refusing what it cannot use.
func hostOf(opts []WireOptions) (wireHost, error) {
	var o WireOptions
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		return wireHost{}, fmt.Errorf("RunWire takes at most one WireOptions, got %d", len(opts))
	}
	if strings.ContainsFunc(o.Bearer, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return wireHost{}, fmt.Errorf("WireOptions.Bearer %q: want visible ASCII without spaces", o.Bearer)
	}
	h := wireHost{paths: map[facets.Protocol]string{}, authorization: "Bearer " + cmp.Or(o.Bearer, wireToken)}
	if served := o.Facets.Protocols(); len(served) > 0 {
		return h.own(o)
	}
	if o.Endpoints == nil {
		maps.Copy(h.paths, endpoints)
		return h, nil
	}
	for p, path := range o.Endpoints {
		if endpoints[p] == "" {
			return wireHost{}, fmt.Errorf("WireOptions.Endpoints: %q is not a protocol the vectors cover (a2a, mcp)", p)
		}
		path = cmp.Or(path, endpoints[p])
		if !strings.HasPrefix(path, "/") {
			return wireHost{}, fmt.Errorf("WireOptions.Endpoints[%s]: path %q does not start with \"/\"", p, path)
		}
		h.paths[p] = path
	}
	if len(h.paths) == 0 {
		return wireHost{}, errors.New("WireOptions.Endpoints names no protocol, so no vector would run")
	}
	return h, nil
}

// own completes h for a host that gave its own facets: they must be
// valid but for refreshedAt, and the protocols they advertise are the
// ones it serves, at Endpoints' paths or the defaults.
func (h wireHost) own(o WireOptions) (wireHost, error) {
	h.set = dateFacets(o.Facets)
	if err := h.set.Validate(); err != nil {
		return wireHost{}, fmt.Errorf("WireOptions.Facets: %w", err)
	}
	served := h.set.Protocols()
	for p := range o.Endpoints {
		if !slices.Contains(served, p) {
			return wireHost{}, fmt.Errorf("WireOptions.Endpoints serves %q, which WireOptions.Facets does not advertise", p)
		}
	}
	for _, p := range served {
		path, listed := o.Endpoints[p]
		if o.Endpoints != nil && !listed {
			return wireHost{}, fmt.Errorf("WireOptions.Facets advertises %s, which WireOptions.Endpoints does not serve", p)
		}
		path = cmp.Or(path, endpoints[p])
		if !strings.HasPrefix(path, "/") {
			return wireHost{}, fmt.Errorf("WireOptions.Endpoints[%s]: path %q does not start with \"/\"", p, path)
		}
		h.paths[p] = path
	}
	return h, nil
}

// wireFile is one file of wire vectors: the facet sets its vectors name,
// and the vectors.
type wireFile struct {
	Facets  map[string]facets.Set `json:"facets"`
	Vectors []wireVector          `json:"vectors"`
}

// wireVector is one request and what the host must answer and record.
type wireVector struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Facets names the facet set the handler is built from.
	Facets string `json:"facets"`
	// Protocol is a2a or mcp: where the request goes, and the event's
	// protocol.
	Protocol facets.Protocol `json:"protocol"`
	// Authenticated sends the kit's bearer token.
	Authenticated bool `json:"authenticated,omitzero"`
	// Header holds the request's headers, one value each.
	Header map[string]string `json:"header,omitzero"`
	// Body is the request's JSON body.
	Body jsontext.Value `json:"body"`
	Want wireWant       `json:"want"`

	set facets.Set
}

// wireWant is what a wire vector expects.
type wireWant struct {
	// Status is the HTTP status of the answer.
	Status int `json:"status"`
	// Error is the JSON-RPC error code of a refusal; 0 for an acceptance,
	// whose answer must carry no refusal code.
	Error int `json:"error,omitzero"`
	// Header holds response headers to match exactly, one value each.
	Header map[string]string `json:"header,omitzero"`
	// Event is the one negotiation.decided the host must record.
	Event *wireEvent `json:"event"`
}

// wireEvent is the recorded payload a vector expects; the floor is the
// facet's own, and the protocol the vector's.
type wireEvent struct {
	Outcome   string `json:"outcome"`
	Version   string `json:"version,omitzero"`
	Requested string `json:"requested,omitzero"`
	Reason    string `json:"reason"`
}

// refusalCodes are the JSON-RPC codes of a version refusal, per protocol:
// an accepted request's answer must carry none of them.
var refusalCodes = map[facets.Protocol][]int{
	facets.ProtocolA2A: {-32009},
	facets.ProtocolMCP: {-32022, -32020, -32600},
}

// endpoints are the paths the kit sends each protocol's requests to by
// default.
var endpoints = map[facets.Protocol]string{facets.ProtocolA2A: "/a2a", facets.ProtocolMCP: "/mcp"}

// loadWire reads every *.json file of wire vectors in dir of fsys, each
// vector named "file/name", and refuses a vector that could not fail.
func loadWire(fsys fs.FS, dir string) ([]wireVector, error) {
	return vectors.LoadFiles(fsys, dir,
		func(f *wireFile) []wireVector { return f.Vectors },
		func(v *wireVector) *string { return &v.Name },
		func(f *wireFile, v *wireVector) error {
			set, ok := f.Facets[v.Facets]
			if !ok {
				return fmt.Errorf("no facet set named %q", v.Facets)
			}
			v.set = set
			return v.complete()
		})
}

// complete refuses a vector that asserts nothing, or less than its kind
// needs: every vector names a status and an event; a refusal names its
// JSON-RPC code and an acceptance its version.
func (v *wireVector) complete() error {
	var missing []string
	need := func(ok bool, what string) {
		if !ok {
			missing = append(missing, what)
		}
	}
	need(endpoints[v.Protocol] != "", "protocol a2a or mcp")
	_, advertised := v.set.Lookup(v.Protocol)
	need(advertised, "a facet set advertising the protocol")
	need(v.Body.IsValid(), "a JSON body")
	need(v.Want.Status != 0, "want.status")
	need(v.Want.Event != nil, "want.event")
	if e := v.Want.Event; e != nil {
		refused := e.Outcome == "refused"
		need(refused || e.Outcome == "accepted", "want.event.outcome accepted or refused")
		need(e.Reason != "", "want.event.reason")
		need(refused == (e.Version == ""), "want.event.version exactly when accepted")
		need(refused == (v.Want.Error != 0), "want.error exactly when refused")
	}
	if len(missing) > 0 {
		return fmt.Errorf("vacuous or inconsistent: needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// check builds the handler, sends the request and returns every way the
// answer and the record differ from the vector's; nil when they match.
func (v *wireVector) check(build func(facets.Set, policy.Policy, events.Sink) (http.Handler, error), host wireHost) error {
	rec := &Recorder{}
	set := v.set.Clone()
	if host.paths[facets.ProtocolA2A] == "" {
		set.A2A = nil
	}
	if host.paths[facets.ProtocolMCP] == "" {
		set.MCP = nil
	}
	h, err := build(set, policy.Policy{Now: func() time.Time { return wireNow }}, rec)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if h == nil {
		return errors.New("build returned a nil handler")
	}
	path := host.paths[v.Protocol]
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(v.Body))
	r.Header.Set("Content-Type", "application/json")
	for k, val := range v.Header {
		r.Header.Set(k, val)
	}
	if v.Authenticated {
		r.Header.Set("Authorization", host.authorization)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)

	c := &wireChecker{}
	want := v.Want
	c.eq("status", w.Code, want.Status)
	if w.Code == http.StatusNotFound && want.Status != http.StatusNotFound {
		c.failf("the host serves nothing at %s: route %s there, or say in WireOptions.Endpoints where the host serves it, or that it does not", path, v.Protocol)
	}
	for k, val := range want.Header {
		if got := strings.Join(w.Header().Values(k), ", "); got != val {
			c.failf("header %s = %q, want %q: the answer names the version decided, and no other", k, got, val)
		}
	}
	codes, results := rpcReplies(w.Body.Bytes())
	if want.Error != 0 {
		if !slices.Contains(codes, want.Error) {
			c.failf("JSON-RPC error codes %v, want %d", codes, want.Error)
		}
	} else {
		for _, code := range codes {
			if slices.Contains(refusalCodes[v.Protocol], code) {
				c.failf("accepted, but the answer carries the refusal code %d", code)
			}
		}
		if e := want.Event; e != nil && (len(codes) > 0 || results == 0) {
			c.failf("not served: %s at %s must be answered with a JSON-RPC result, and the server behind the middleware answered %s; a host serves every version its record accepts: serve %s, or leave it out of the facet",
				v.Protocol, e.Version, served(codes), e.Version)
		}
	}
	v.checkEvent(c, rec.Events())
	if len(c.errs) > 0 {
		c.errs = append(c.errs, fmt.Errorf("answer: %d %s", w.Code, truncateAnswer(w.Body.Bytes())))
	}
	return errors.Join(c.errs...)
}

// checkEvent checks that exactly the vector's event was recorded.
func (v *wireVector) checkEvent(c *wireChecker, recorded []events.Event) {
	if len(recorded) != 1 {
		c.failf("recorded %d events, want exactly one: every exchange is recorded once, with the decision made for it", len(recorded))
		if len(recorded) == 0 {
			return
		}
	}
	got, want := recorded[0].Payload, v.Want.Event
	adv, _ := v.set.Lookup(v.Protocol)
	c.eq("event.protocol", got.Protocol, v.Protocol)
	c.eq("event.outcome", got.Outcome, want.Outcome)
	c.eq("event.version", got.Version, want.Version)
	c.eq("event.requested", got.Requested, want.Requested)
	c.eq("event.reason", got.Reason, want.Reason)
	c.eq("event.floor", got.Floor, adv.Floor)
}

// wireChecker gathers the differences of one vector.
type wireChecker struct{ errs []error }

func (c *wireChecker) eq(what string, got, want any) {
	if got != want {
		c.errs = append(c.errs, fmt.Errorf("%s = %#v, want %#v", what, got, want))
	}
}

func (c *wireChecker) failf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// rpcReplies returns the error codes of the JSON-RPC responses in an
// answer, and how many carry a result: a JSON object or batch array, or
// an event stream whose data lines hold them. What it cannot read holds
// neither.
func rpcReplies(body []byte) (codes []int, results int) {
	body = body[:min(len(body), maxWireAnswer)]
	for _, msg := range rpcMessages(body) {
		var m struct {
			Result jsontext.Value `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		if m.Error != nil {
			codes = append(codes, m.Error.Code)
		} else if m.Result != nil {
			results++
		}
	}
	return codes, results
}

// served says what an answer that is no success held.
func served(codes []int) string {
	if len(codes) == 0 {
		return "no JSON-RPC result"
	}
	return fmt.Sprintf("JSON-RPC error %v", codes)
}

// rpcMessages splits an answer into JSON-RPC messages: the members of a
// batch, the object itself, or the data lines of an event stream.
func rpcMessages(body []byte) []jsontext.Value {
	body = bytes.TrimSpace(body)
	if !jsontext.Value(body).IsValid() {
		var msgs []jsontext.Value
		for line := range bytes.Lines(body) {
			if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				msgs = append(msgs, rpcMessages(data)...)
			}
		}
		return msgs
	}
	var batch []jsontext.Value
	if json.Unmarshal(body, &batch) == nil {
		return batch
	}
	return []jsontext.Value{body}
}

// truncateAnswer shows the head of an answer in a failure.
func truncateAnswer(body []byte) string {
	const max = 512
	if len(body) > max {
		return string(body[:max]) + "..."
	}
	return string(body)
}
