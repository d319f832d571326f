package negotiatetest_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// ExampleVectors lists how many shipped vectors there are of each kind.
func ExampleVectors() {
	vs, err := negotiatetest.Vectors()
	if err != nil {
		fmt.Println(err)
		return
	}
	count := map[string]int{}
	for _, v := range vs {
		kind := v.Kind
		if kind == "" {
			kind = negotiatetest.KindDecide
		}
		count[kind]++
	}
	kinds := make([]string, 0, len(count))
	for k := range count {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Printf("%-8s %3d\n", k, count[k])
	}
	fmt.Printf("%-8s %3d\n", "total", len(vs))
	// Output:
	// decide   138
	// digest    61
	// refresh   21
	// rounds     8
	// subject   44
	// total    272
}

// ExampleRun shows how a host runs every shipped vector against its own
// decision from a test of its own. The function below is a test: put it in
// a _test.go file of the host and pass the host's DecideFunc (here the
// library's, negotiate.Decide).
func ExampleRun() {
	TestNegotiationVectors := func(t *testing.T) {
		negotiatetest.Run(t, negotiate.Decide)
	}
	_ = TestNegotiationVectors
}

// ExampleVector_Check runs one vector by hand, against a decide function
// that is not the library's: a host's middleware, say.
func ExampleVector_Check() {
	vs, err := negotiatetest.Vectors()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range vs {
		if v.Name != "table-c/C3-unauthenticated-downgrade" {
			continue
		}
		fmt.Println(v.Name, "-", v.Source)
		fmt.Println("library:", v.Check(negotiate.Decide) == nil)
		fmt.Println("compiled:", v.Check(negotiatetest.Compiled) == nil)
	}
	// Output:
	// table-c/C3-unauthenticated-downgrade - digest table C3 (offers [1.1], unauthenticated: refused unauthenticated)
	// library: true
	// compiled: true
}
