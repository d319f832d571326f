package mcphttp

import "testing"

// TestEscapedFromTheFirstByte reads a member name and a string value
// whose first character is an escape, as a JSON-RPC client reads them:
// "\u006dethod" is method and "\u0074ools/call" is tools/call.
func TestEscapedFromTheFirstByte(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"\u006dethod":"\u0074ools/call","params":{}}`
	var method string
	var has bool
	if _, err := scanBody([]byte(body), 0, func(m *message) error {
		method, has = m.method, m.hasMethod
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if !has || method != "tools/call" {
		t.Errorf("method = %q (there: %v), want tools/call", method, has)
	}
}
