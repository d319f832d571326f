package mcphttp

import "net/http"

// answerWatcher passes the wrapped handler's answer through and shows its
// final status to seen once, before the status line leaves: what seen
// changes is in place before the client can act on the answer.
type answerWatcher struct {
	http.ResponseWriter
	// seen is called with the answer's headers and a status of 200 or
	// more; informational answers come before the real one.
	seen func(header http.Header, status int)
	done bool
}

func (w *answerWatcher) WriteHeader(status int) {
	w.observe(status)
	w.ResponseWriter.WriteHeader(status)
}

func (w *answerWatcher) Write(p []byte) (int, error) {
	w.observe(http.StatusOK)
	return w.ResponseWriter.Write(p)
}

// Flush sends what was written; server-sent events depend on it.
func (w *answerWatcher) Flush() {
	w.observe(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *answerWatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *answerWatcher) observe(status int) {
	if w.done || status < 200 {
		return
	}
	w.done = true
	w.seen(w.Header(), status)
}

// rememberSession returns the seen of an accepted initialize: when the
// answer succeeds and names a session, s is remembered as that session's
// negotiation.
func (h *handler) rememberSession(s session) func(http.Header, int) {
	return func(header http.Header, status int) {
		if status > 299 {
			return
		}
		vs := header[headerSessionID]
		if len(vs) != 1 || vs[0] == "" {
			return
		}
		// When the store cannot take it (full of identified callers'
		// sessions and this one anonymous), the session's next request is
		// answered 404 and its client initializes again.
		h.sessions.put(vs[0], s)
	}
}

// forgetSession returns the seen of a DELETE of session id: the session is
// forgotten once the wrapped handler has ended it, or answered 404 because
// it no longer knows it.
func (h *handler) forgetSession(id string) func(http.Header, int) {
	return func(_ http.Header, status int) {
		if status <= 299 || status == http.StatusNotFound {
			h.sessions.remove(id)
		}
	}
}
