package tracectx_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wopneg/wopneg/internal/tracectx"
)

// The host's hook hands a traceparent and a tracestate; the tracestate
// here is malformed (an uppercase key), so only the traceparent goes on.
func ExampleFrom() {
	hook := func(context.Context) (string, string) {
		return "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "Vendor=x"
	}
	tc := tracectx.From(context.Background(), hook)
	h := http.Header{}
	tc.SetHeader(h)
	fmt.Println(h.Get("traceparent"), h.Get("tracestate") == "")
	fmt.Println(tc.Members())
	// Output:
	// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 true
	// "traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
}
