package main

import (
	"net/http"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/seams"
)

// hostMounts are the handlers a host with cfg serves beside MCP: A2A, the
// event log, the discovery document, and the seams when cfg.Seams.
func hostMounts(cfg config, log events.Log) []Mount {
	extra := append(mounts[:len(mounts):len(mounts)], mountEventLog(log), mountDiscovery(cfg.Seams))
	if cfg.Seams {
		extra = append(extra, mountSeams)
	}
	return extra
}

// mountEventLog serves log, tenant by tenant, to the host's callers:
// GET /runs/{runId}/events/poll and the GET /host/events stream.
func mountEventLog(log events.Log) Mount {
	return func(mux *http.ServeMux, env Env) error {
		h := &events.LogHandler{Log: log, Subject: env.Subject}
		mux.Handle("/runs/", h)
		mux.Handle("/host/events", h)
		return nil
	}
}

// mountSeams serves the conformance invoke seams (negotiate/seams) to the
// host's authenticated callers, recording each exchange's audit run
// through the host's sink. Only -seams mounts them: they make the host
// call any URL its caller names, so a production host never does.
func mountSeams(mux *http.ServeMux, env Env) error {
	mux.Handle(seams.Prefix+"/", &seams.Handler{Negotiator: env.Negotiator, Sink: env.Sink, Subject: env.Subject})
	return nil
}

// mountDiscovery serves the host's discovery document at
// GET /.well-known/openwop (facets.Handler): its facets as v2 records,
// with the URLs of its inbound A2A card and MCP endpoint, so that the
// inbound negotiations are listed as durable host events, and the seams
// profile when the seams are mounted.
func mountDiscovery(withSeams bool) Mount {
	return func(mux *http.ServeMux, env Env) error {
		set := env.Negotiator.Facets()
		rec := facets.Record{Status: "experimental", Since: "2.0", Until: "2.1", Witness: "seam-gated"}
		if set.A2A != nil {
			set.A2A.Record, set.A2A.AgentCardURL = rec, env.BaseURL+"/.well-known/agent-card.json"
		}
		if set.MCP != nil {
			set.MCP.Record, set.MCP.ServerURLs = rec, []string{env.BaseURL + "/mcp"}
		}
		h, err := facets.NewHandler(facets.Discovery{ProtocolVersions: []string{"2.0"}, PreferredVersion: "2.0",
			Seams: withSeams, A2A: set.A2A, MCP: set.MCP}, nil)
		if err != nil {
			return err
		}
		mux.Handle("GET /.well-known/openwop", h)
		return nil
	}
}
