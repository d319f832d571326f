package tracectxtest_test

import (
	"context"
	"fmt"

	"github.com/wopneg/wopneg/internal/tracectx/tracectxtest"
)

// An adapter's test runs every row through its outbound requests and
// checks that each carrier holds WantParent and WantState; here, what the
// hook of three rows hands.
func Example() {
	for _, c := range tracectxtest.Cases[:3] {
		hook := c.Hook()
		if hook == nil {
			fmt.Printf("%s: no hook\n", c.Name)
			continue
		}
		parent, state := hook(context.Background())
		fmt.Printf("%s: %s %q, want %q\n", c.Name, parent, state, c.WantState)
	}
	// Output:
	// nil hook: no hook
	// valid, with tracestate: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 "vendor=x,other=y", want "vendor=x,other=y"
	// valid, no tracestate: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 "", want ""
}
