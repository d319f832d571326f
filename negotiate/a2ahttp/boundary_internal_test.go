package a2ahttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/a2aversion"
)

// TestLeadingComma: a list that starts with a comma is two values, never
// one malformed one.
func TestLeadingComma(t *testing.T) {
	got := readVersion(http.Header{"A2a-Version": {",1.0"}}, "", false)
	if got.Problem != a2aversion.Multiple || got.Count != 2 {
		t.Errorf("%+v", got)
	}
}

// TestBounds pins the bound of a refused body at its edge: a body of at
// most MaxBodyBytes is read and its id echoed; one byte more, declared or
// not, is answered null.
func TestBounds(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":"req-7"}`
	m := &Middleware{maxBody: int64(len(body))}
	if got := string(m.requestID(httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body)))); got != `"req-7"` {
		t.Errorf("at the bound: %s", got)
	}
	m.maxBody++
	if got := string(m.requestID(httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body)))); got != `"req-7"` {
		t.Errorf("within the bound: %s", got)
	}
	m.maxBody -= 2
	if got := string(m.requestID(httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body)))); got != "null" {
		t.Errorf("over the bound: %s", got)
	}
	r := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body[:len(body)-1]))
	r.ContentLength = int64(len(body))
	if got := string(m.requestID(r)); got != "null" {
		t.Errorf("declared over the bound: %s", got)
	}
}
