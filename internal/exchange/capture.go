package exchange

import (
	"cmp"
	"net/http"
)

// Capture is the ResponseWriter of the adapters' start-up checks: an
// answer written in process and never sent, of which it keeps the head,
// the status and up to its limit of the body.
type Capture struct {
	header http.Header
	status int
	// Body is what was kept of the body; Over says more was written.
	Body  []byte
	Over  bool
	limit int64
}

// NewCapture returns a Capture that keeps up to limit bytes of the body.
func NewCapture(limit int64) *Capture { return &Capture{header: http.Header{}, limit: limit} }

// Header is the head of the answer.
func (c *Capture) Header() http.Header { return c.header }

// WriteHeader keeps the first final status.
func (c *Capture) WriteHeader(status int) {
	if c.status == 0 && status >= 200 {
		c.status = status
	}
}

// Write keeps p, up to the limit, and reports it all written.
func (c *Capture) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	n := len(p)
	if room := c.limit - int64(len(c.Body)); int64(n) > room {
		c.Over = true
		p = p[:max(room, 0)]
	}
	c.Body = append(c.Body, p...)
	return n, nil
}

// Flush lets a streaming handler flush; what it wrote is kept already.
func (*Capture) Flush() {}

// Status is the status written, 200 when none was (as net/http answers).
func (c *Capture) Status() int { return cmp.Or(c.status, http.StatusOK) }
