package main

import (
	"net/http"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate/seams"
)

// hostMounts are the handlers a host with cfg serves beside MCP: A2A, the
// event log, and the seams when cfg.Seams.
func hostMounts(cfg config, log events.Log) []Mount {
	extra := append(mounts[:len(mounts):len(mounts)], mountEventLog(log))
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
