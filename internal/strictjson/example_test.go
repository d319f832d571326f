package strictjson_test

import (
	"fmt"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// encoding/json would fill Issuer from "ISSUER"; a closed schema would not.
func ExampleDecode() {
	var s struct {
		Issuer string `json:"issuer"`
	}
	fmt.Println(strictjson.Decode([]byte(`{"issuer": "https://idp.example"}`), &s), s.Issuer)
	fmt.Println(strictjson.Decode([]byte(`{"ISSUER": "https://evil.example"}`), &s))
	// Output:
	// <nil> https://idp.example
	// unknown field "ISSUER" (field names are case-sensitive: did you mean "issuer"?)
}
