package a2ahttp

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// MaxStampedBodyBytes is maxStampedBodyBytes, for the tests.
const MaxStampedBodyBytes = maxStampedBodyBytes

// roundTripFunc is a RoundTripper of a func.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// StampedRequest returns the request tr sends for req: tr's copy whose
// base keeps it and answers 200 {}.
func StampedRequest(t *testing.T, tr *Transport, req *http.Request) *http.Request {
	t.Helper()
	var sent *http.Request
	c := *tr
	c.base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
	})
	resp, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return sent
}
