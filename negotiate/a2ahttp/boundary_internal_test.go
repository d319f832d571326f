package a2ahttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBounds pins each bound at its edge: a value of exactly the bound is
// within it, one more is not.
func TestBounds(t *testing.T) {
	at, over := strings.Repeat("a", maxQuoted), strings.Repeat("a", maxQuoted+1)
	if got := truncate(at); got != at {
		t.Errorf("truncate of %d bytes: %s", maxQuoted, got)
	}
	if got := truncate(over); got != at+"..." {
		t.Errorf("truncate of %d bytes: %s", maxQuoted+1, got)
	}
	for body, ok := range map[string]bool{"12345": true, "1234": true, "123456": false} {
		got, err := readBounded(strings.NewReader(body), 5)
		if ok != (err == nil) || (ok && string(got) != body) {
			t.Errorf("readBounded(%q, 5) = %q, %v", body, got, err)
		}
	}
}

// TestDigits: isMajorMinor takes 0 to 9 and nothing beside them ('/' and
// ':' are the bytes on either side).
func TestDigits(t *testing.T) {
	for s, want := range map[string]bool{"0.9": true, "9.0": true, "10.19": true, "/.0": false, "1.:": false, "1.": false, ".1": false, "1": false} {
		if got := isMajorMinor(s); got != want {
			t.Errorf("isMajorMinor(%q) = %t", s, got)
		}
	}
}

// TestLeadingComma: a list that starts with a comma is two values, never
// one malformed one.
func TestLeadingComma(t *testing.T) {
	got := readVersion(http.Header{"A2a-Version": {",1.0"}}, "", false)
	if got.problem != problemMultiple || got.count != 2 {
		t.Errorf("%+v", got)
	}
}

// TestRequestIDAtTheBound: a refused body of exactly MaxBodyBytes is read
// and its id echoed; one byte more, declared or not, is answered null.
func TestRequestIDAtTheBound(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":"req-7"}`
	m := &Middleware{maxBody: int64(len(body))}
	if got := string(m.requestID(httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body)))); got != `"req-7"` {
		t.Errorf("at the bound: %s", got)
	}
	m.maxBody--
	if got := string(m.requestID(httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body)))); got != "null" {
		t.Errorf("over the bound: %s", got)
	}
	r := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body[:len(body)-1]))
	r.ContentLength = int64(len(body))
	if got := string(m.requestID(r)); got != "null" {
		t.Errorf("declared over the bound: %s", got)
	}
}
