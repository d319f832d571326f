package a2aversion_test

import (
	"fmt"

	"github.com/wopneg/wopneg/internal/a2aversion"
)

// A call that names no version asks for 0.3; two values are refused,
// never chosen among.
func ExampleRead() {
	none := a2aversion.Read(nil).Call()
	two := a2aversion.Read([]string{"1.0", "0.3"}).Call()
	fmt.Println(none.Version, none.Implied)
	fmt.Println(two.Problem == a2aversion.Multiple, two.Raw())
	// Output:
	// 0.3 true
	// true 1.0, 0.3
}
