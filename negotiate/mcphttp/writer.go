package mcphttp

import "net/http"

// sessionRecorder watches the wrapped handler's answer to an accepted
// initialize: when the answer succeeds and names a session, the session's
// negotiation is remembered before the header leaves, so that it is in
// place before the client can send the session's next request.
type sessionRecorder struct {
	http.ResponseWriter
	h       *handler
	session session
	done    bool
}

func (s *sessionRecorder) WriteHeader(status int) {
	s.observe(status)
	s.ResponseWriter.WriteHeader(status)
}

func (s *sessionRecorder) Write(p []byte) (int, error) {
	s.observe(http.StatusOK)
	return s.ResponseWriter.Write(p)
}

// Flush sends what was written; server-sent events depend on it.
func (s *sessionRecorder) Flush() {
	s.observe(http.StatusOK)
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *sessionRecorder) observe(status int) {
	if s.done || status < 200 {
		return // informational answers come before the real one
	}
	s.done = true
	if status > 299 {
		return
	}
	vs := s.Header()[headerSessionID]
	if len(vs) != 1 || vs[0] == "" {
		return
	}
	// When the store cannot take it (full of identified callers' sessions
	// and this one anonymous), the session's next request is answered 404
	// and its client initializes again.
	s.h.sessions.put(vs[0], s.session)
}

// deleteRecorder forgets a session once the wrapped handler has ended it.
type deleteRecorder struct {
	http.ResponseWriter
	h    *handler
	id   string
	done bool
}

func (d *deleteRecorder) WriteHeader(status int) {
	d.observe(status)
	d.ResponseWriter.WriteHeader(status)
}

func (d *deleteRecorder) Write(p []byte) (int, error) {
	d.observe(http.StatusOK)
	return d.ResponseWriter.Write(p)
}

// Flush sends what was written.
func (d *deleteRecorder) Flush() {
	d.observe(http.StatusOK)
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (d *deleteRecorder) Unwrap() http.ResponseWriter { return d.ResponseWriter }

func (d *deleteRecorder) observe(status int) {
	if d.done || status < 200 {
		return
	}
	d.done = true
	// 404 too: the server no longer knows the session.
	if status >= 200 && status <= 299 || status == http.StatusNotFound {
		d.h.sessions.remove(d.id)
	}
}
