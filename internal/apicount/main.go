// Command apicount counts the exported identifiers of the module's packages
// (functions, types, methods, interface methods, variables and constants;
// not struct fields), so that the size of the surface is a number CI checks.
// Test files, package main, internal packages and the examples module are
// not part of the surface and are not counted.
//
// Usage, from the module root:
//
//	go run ./internal/apicount [-max N] [-v]
//
// It prints one line per package and the total, with -v every name too, and
// exits 1 when the total is over -max. The work is done by package
// [github.com/wopneg/wopneg/internal/apicount/surface], so that its tests
// are the package's own.
package main

import (
	"os"

	"github.com/wopneg/wopneg/internal/apicount/surface"
)

func main() {
	os.Exit(surface.Main(os.Args[1:], os.Stdout, os.Stderr))
}
