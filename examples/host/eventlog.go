package main

import (
	"net/http"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate/seams"
)

// hostMounts are the handlers a host with cfg serves beside MCP: A2A, the
// discovery document, the event log, and the seams when cfg.Seams.
func hostMounts(cfg config, log events.Log) []Mount {
	extra := append(mounts[:len(mounts):len(mounts)], mountDiscovery(cfg.Seams), mountEventLog(log))
	if cfg.Seams {
		extra = append(extra, mountSeams)
	}
	return extra
}

// mountDiscovery serves the host's v2 discovery document at
// /.well-known/openwop: its facets as stable, seam-gated records, with the
// agent card and MCP endpoint it serves inbound, and conformance.seamsProfile
// only when the seams are mounted. hostEvents.types[] lists
// negotiation.decided as durable only when the host's sink is
// (events.Durable: with -pg, acknowledged), and as ephemeral otherwise:
// events on stdout and in memory do not outlive a crash. Its refreshedAt
// is the host's Refresher's, checked again daily while the host serves.
func mountDiscovery(withSeams bool) Mount {
	return func(mux *http.ServeMux, env Env) error {
		set := env.Negotiator.Facets()
		record := facets.Record{Status: "stable", Since: "2.0", Witness: "seam-gated"}
		d := facets.Discovery{ProtocolVersions: []string{"2.0"}, PreferredVersion: "2.0", Seams: withSeams}
		if durable, ok := env.Sink.(events.Durable); !ok || !durable.Durable() {
			d.HostEvents = []facets.HostEvent{{Type: "negotiation.decided", Delivery: "ephemeral"}}
		}
		if set.A2A != nil {
			a := *set.A2A
			a.Record, a.AgentCardURL = record, env.BaseURL+"/.well-known/agent-card.json"
			d.A2A = &a
		}
		if set.MCP != nil {
			m := *set.MCP
			m.Record, m.ServerURLs = record, []string{env.BaseURL + "/mcp"}
			d.MCP = &m
		}
		h, err := facets.NewHandler(d, env.Refresher)
		if err != nil {
			return err
		}
		env.Background(h.Run)
		mux.Handle(facets.WellKnownPath, h)
		return nil
	}
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
// call any URL its caller names, so a production host never does. They
// reach loopback, where the conformance suite runs its fake peers beside
// the host; private and metadata addresses stay refused.
func mountSeams(mux *http.ServeMux, env Env) error {
	mux.Handle(seams.Prefix+"/", &seams.Handler{Negotiator: env.Negotiator, Sink: env.Sink, Subject: env.Subject, AllowLoopback: true})
	return nil
}
