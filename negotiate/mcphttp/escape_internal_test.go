package mcphttp

import "testing"

// TestIsIdentifier holds the characters an error path spells as .name at
// each edge of their ranges: the ones just outside are quoted.
func TestIsIdentifier(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "z": true, "A": true, "Z": true, "_": true, "a0": true, "a9": true, "_meta": true,
		"": false, "0a": false, "9": false, "`": false, "{": false, "@": false, "[": false,
		"a/": false, "a:": false, "a-b": false, "io.modelcontextprotocol/protocolVersion": false,
	} {
		if got := isIdentifier(s); got != want {
			t.Errorf("isIdentifier(%q) = %v, want %v", s, got, want)
		}
	}
}

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
