package exchange_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/wopneg/wopneg/internal/exchange"
)

// TestCapture: the head, the first final status (200 when none is
// written) and the body up to the limit are kept; every write reports
// all its bytes written, so the handler never sees a short write.
func TestCapture(t *testing.T) {
	c := exchange.NewCapture(5)
	if c.Status() != http.StatusOK {
		t.Errorf("Status of nothing written = %d, want 200", c.Status())
	}
	c.Header().Set("Content-Type", "application/json")
	c.WriteHeader(http.StatusContinue)
	c.WriteHeader(http.StatusNotFound)
	c.WriteHeader(http.StatusTeapot)
	for _, p := range []string{"abc", "de", "fgh"} {
		if n, err := io.WriteString(c, p); n != len(p) || err != nil {
			t.Errorf("Write(%q) = %d, %v; want all of it", p, n, err)
		}
	}
	c.Flush()
	if string(c.Body) != "abcde" || !c.Over || c.Status() != http.StatusNotFound || c.Header().Get("Content-Type") != "application/json" {
		t.Errorf("kept %q over %t status %d head %v; want abcde, over, 404, the head", c.Body, c.Over, c.Status(), c.Header())
	}
	ok := exchange.NewCapture(1)
	ok.WriteHeader(http.StatusOK)
	ok.WriteHeader(http.StatusNotFound)
	if ok.Status() != http.StatusOK {
		t.Errorf("Status after 200, then 404 = %d, want the first, 200", ok.Status())
	}
	exact := exchange.NewCapture(3)
	_, _ = io.WriteString(exact, "abc")
	if string(exact.Body) != "abc" || exact.Over || exact.Status() != http.StatusOK {
		t.Errorf("kept %q over %t status %d; want abc, not over, 200", exact.Body, exact.Over, exact.Status())
	}
	none := exchange.NewCapture(0)
	_, _ = io.WriteString(none, "x")
	if len(none.Body) != 0 || !none.Over {
		t.Errorf("a zero limit kept %q over %t; want nothing, over", none.Body, none.Over)
	}
}
