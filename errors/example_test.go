package errors_test

import (
	"encoding/json"
	"errors"
	"fmt"

	wperrors "github.com/wopneg/wopneg/errors"
)

// A refusal travels as the v2 envelope, with the audit run in details, and
// callers test for its class with errors.Is, however it was wrapped.
func ExampleError() {
	refusal := wperrors.New(wperrors.InteropVersionUnsupported, "a2a negotiation refused: below-floor").
		WithDetail("protocol", "a2a").
		WithDetail("requested", "0.3").
		WithDetail("supported", []string{"1.0"}).
		WithDetail("runId", "acme/01JD0000000000000000000000")

	body, err := json.Marshal(refusal)
	if err != nil {
		panic(err)
	}
	fmt.Println(refusal.Code.HTTPStatus(), refusal.Code.Retriable())
	fmt.Println(string(body))

	err = fmt.Errorf("calling peer: %w", refusal)
	fmt.Println(errors.Is(err, wperrors.InteropVersionUnsupported), errors.Is(err, wperrors.MCPRoundsExceeded))
	// Output:
	// 400 false
	// {"error":"interop_version_unsupported","message":"a2a negotiation refused: below-floor","details":{"protocol":"a2a","requested":"0.3","runId":"acme/01JD0000000000000000000000","supported":["1.0"]}}
	// true false
}
