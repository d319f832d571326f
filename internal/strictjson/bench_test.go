package strictjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// benchBodies are the bodies the strict reader is measured on against
// encoding/json: a typical MCP 2026-07-28 stateless tools/call (about 300
// bytes), an A2A SendMessage, and a facet set.
var benchBodies = []struct {
	name string
	data string
	into func() any
}{
	{"mcp-tools-call", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"negotiate protocol versions","limit":10,"filters":{"lang":"en","since":"2026-01-01"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p-7f3a"}}}`,
		func() any { return new(toolsCall) }},
	{"a2a-send-message", `{"jsonrpc":"2.0","id":"req-1","method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"ping"}]}}}`,
		func() any { return new(map[string]any) }},
	{"facet-set", `{"a2a":{"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-09-18"},"mcp":{"revisions":["2025-11-25","2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2025-11-25","refreshedAt":"2026-09-18","mrtr":{"maxRounds":4}}}`,
		func() any { return new(map[string]any) }},
}

type toolsCall struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Method  string `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
		Task      json.RawMessage `json:"task"`
	} `json:"params"`
}

// BenchmarkBodies reads each body with the strict reader (Decode into a Go
// value, and walks of a Reader, released after each) and with
// encoding/json (Unmarshal into the same value, and a walk of its Decoder's
// tokens).
func BenchmarkBodies(b *testing.B) {
	for _, body := range benchBodies {
		data := []byte(body.data)
		b.Run(body.name+"/strictjson.Decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Decode(data, body.into()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(body.name+"/encoding-json.Unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := json.Unmarshal(data, body.into()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(body.name+"/strictjson.Reader.Skip", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(data, 0)
				if err := r.Skip(); err != nil || r.End() != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
		b.Run(body.name+"/strictjson.Reader.Object", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(data, 0)
				if err := r.Object(func(string) error { return nil }); err != nil || r.End() != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
		b.Run(body.name+"/encoding-json.Decoder.Token", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(data))
				for {
					if _, err := dec.Token(); err != nil {
						break
					}
				}
			}
		})
	}
}
