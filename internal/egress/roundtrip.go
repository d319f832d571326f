package egress

import (
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// RoundTrip sends req through rt and returns its answer, or an [*Error]
// of the failure's kind (Unreachable, Timeout, HangUp, Canceled, or the
// policy's Denied), as [Do] tells them apart. Unlike Do it applies no rule
// to the answer (its status, a redirect, its body's bound): it is the
// transport of a stamped call, whose answer is the caller's to read.
func RoundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	return send(req, rt.RoundTrip)
}

// send sends req with do, noting whether the request had a connection to
// the peer when it failed, and returns do's answer, or the [*Error] of its
// failure, as [failed] tells them apart.
func send(req *http.Request, do func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	var connected atomic.Bool
	resp, err := do(req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GetConn: func(string) { connected.Store(false) },
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})))
	if err != nil {
		return nil, failed(err, Where(req.URL), connected.Load())
	}
	return resp, nil
}
