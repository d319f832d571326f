package facets

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
)

// WellKnownPath is where a host serves its discovery document.
const WellKnownPath = "/.well-known/openwop"

// negotiationDecided is the host event a host serving a protocol inbound
// emits for each inbound exchange (RFC 0242 §B).
var negotiationDecided = HostEvent{Type: "negotiation.decided", Delivery: "durable"}

// Handler serves a host's discovery document, at [WellKnownPath] where
// the host mounts it, with each facet's refreshedAt as its [Refresher]
// last moved it. Make one with [NewHandler]; the zero Handler answers 500
// to every request, so a Handler that was never made serves nothing.
//
// Only a check that passed moves a refreshedAt: while upstream fails, or
// lists an offered version no more, the document goes on saying when the
// facet was last refreshed, so a stale advertisement is visible to every
// reader (and refresh-stale to [Lint] and the conformance suite), never
// served as fresh.
type Handler struct {
	base      Discovery
	refresher *Refresher
	cur       atomic.Pointer[served]
}

// served is what a Handler serves: the facets, and the document's bytes.
type served struct {
	set  Set
	body []byte
}

// NewHandler returns a Handler that serves d, refreshed by r (nil means
// the zero Refresher) once [Handler.Run] runs. d must be a valid document
// ([ParseDiscovery] accepts its JSON form); if it is not, NewHandler
// returns every violation. The Handler keeps a copy: later changes to d
// are not served.
//
// When d serves either protocol inbound — a2a.agentCardUrl, mcp.serverUrls
// or mcp.serverMount present — the document lists
// {"type": "negotiation.decided", "delivery": "durable"} in
// hostEvents.types[] (RFC 0242 §B), added when d does not already list
// negotiation.decided; otherwise it lists only what d does. A host whose
// audit sink is not durable (events.Durable) lists it itself, as
// "ephemeral": the RFC asks for durable, and a host that cannot keep its
// records across a crash says so rather than promise it.
func NewHandler(d Discovery, r *Refresher) (*Handler, error) {
	set := Set{A2A: d.A2A, MCP: d.MCP}.Clone()
	d = Discovery{slices.Clone(d.ProtocolVersions), d.PreferredVersion, d.Seams, slices.Clone(d.HostEvents), set.A2A, set.MCP}
	if inbound(set) && !slices.ContainsFunc(d.HostEvents, func(e HostEvent) bool { return e.Type == negotiationDecided.Type }) {
		d.HostEvents = append(d.HostEvents, negotiationDecided)
	}
	data, _ := d.MarshalJSON() // strings, lists, flags and numbers: it cannot fail
	if _, vs, _ := readDiscovery(data, true); len(vs) > 0 {
		return nil, asError(vs)
	}
	if r == nil {
		r = new(Refresher)
	}
	h := &Handler{base: d, refresher: r}
	h.cur.Store(&served{set, data})
	return h, nil
}

// inbound reports whether s serves a protocol inbound.
func inbound(s Set) bool {
	return s.A2A != nil && s.A2A.AgentCardURL != "" || s.MCP != nil && (s.MCP.ServerURLs != nil || s.MCP.ServerMount != nil)
}

// ServeHTTP answers GET and HEAD with the document as application/json;
// other methods get 405 with an Allow header.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cur := h.cur.Load()
	if cur == nil {
		http.Error(w, "facets: Handler not made by NewHandler", http.StatusInternalServerError)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(cur.body)))
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method == http.MethodGet {
		_, _ = w.Write(cur.body)
	}
}

// Run checks the served facets with the Handler's Refresher at once and
// then on its schedule, until ctx is done, and serves each facet's new
// refreshedAt from the moment its check passes. It starts no goroutine:
// a host runs it with `go` and stops it by cancelling ctx, and Run then
// returns ctx's error. It returns at once when the Refresher's Interval
// or WarnBefore is out of range. The Refresher's Logger hears of every
// failed check and of a closing window. Run one Run at a time.
func (h *Handler) Run(ctx context.Context) error {
	if h.cur.Load() == nil {
		return errors.New("facets: Handler not made by NewHandler")
	}
	return h.refresher.run(ctx, func() Set { return h.cur.Load().set }, h.publish)
}

// publish serves the facets of a check that refreshed any.
func (h *Handler) publish(rep Report, _ error) {
	if len(rep.Refreshed) == 0 {
		return
	}
	d := h.base
	d.A2A, d.MCP = rep.Set.A2A, rep.Set.MCP
	data, _ := d.MarshalJSON() // it marshalled in NewHandler, and only dates changed
	h.cur.Store(&served{rep.Set, data})
}
