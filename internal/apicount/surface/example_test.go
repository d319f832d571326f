package surface_test

import (
	"fmt"
	"os"

	"github.com/wopneg/wopneg/internal/apicount/surface"
)

// Main counts the packages under the current directory, here this package's
// own: one exported name, Main. With -max 1 the total is at the limit, which
// passes.
func ExampleMain() {
	code := surface.Main([]string{"-v", "-max", "1"}, os.Stdout, os.Stderr)
	fmt.Println("exit", code)
	// Output:
	// .                            1
	//     Main
	// total                        1
	// exit 0
}
