package vectors_test

import (
	"fmt"
	"slices"

	"github.com/wopneg/wopneg/internal/vectors"
	"github.com/wopneg/wopneg/negotiate"
)

// ExampleShipped lists how many shipped vectors there are of each kind.
func ExampleShipped() {
	vs, err := vectors.Shipped()
	if err != nil {
		fmt.Println(err)
		return
	}
	count := map[string]int{}
	for _, v := range vs {
		kind := v.Kind
		if kind == "" {
			kind = vectors.KindDecide
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

// ExampleVector_Check runs one vector by hand, against the pure and the
// compiled decision.
func ExampleVector_Check() {
	vs, err := vectors.Shipped()
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
		fmt.Println("compiled:", v.Check(vectors.Compiled) == nil)
	}
	// Output:
	// table-c/C3-unauthenticated-downgrade - digest table C3 (offers [1.1], unauthenticated: refused unauthenticated)
	// library: true
	// compiled: true
}
