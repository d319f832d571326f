package cli

import (
	"flag"
	"fmt"
	"io"

	vec "github.com/wopneg/wopneg/internal/vectors"
	"github.com/wopneg/wopneg/negotiate"
)

// vectors runs every shipped vector through the pure and the compiled
// decision and ends with the line "N passed, N failed".
func vectors(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vectors", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "list every vector, not only failures")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	vs, err := vec.Shipped()
	if err != nil {
		return fail(stderr, 2, err)
	}
	return checkVectors(vs, *verbose, stdout)
}

// checkVectors runs vs and reports them on stdout: exit 0 when every one
// passes, 1 otherwise.
func checkVectors(vs []vec.Vector, verbose bool, stdout io.Writer) int {
	deciders := []struct {
		name   string
		decide vec.DecideFunc
	}{{"Decide", negotiate.Decide}, {"Negotiator", vec.Compiled}}
	passed, failed := 0, 0
	for _, v := range vs {
		var problems []string
		for _, d := range deciders {
			if err := v.Check(d.decide); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", d.name, err))
			}
		}
		if len(problems) == 0 {
			passed++
			if verbose {
				fmt.Fprintf(stdout, "ok    %s\n", v.Name)
			}
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL  %s (%s)\n", v.Name, v.Source)
		for _, p := range problems {
			fmt.Fprintf(stdout, "      %s\n", p)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
