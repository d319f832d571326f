package mcphttp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/internal/tracectx"
)

var fuzzBodies = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{}}]`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"grüße","arguments":{"a":[1,{"b":"\u0000"}]}}}`,
	`{"\u006dethod":"x","METHOD":"y"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","paramſ":{}}`,
	`{"method":"a","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":1,"io.modelcontextprotocol/protocolVersion":"2"}}}`,
	`[]`, `[1]`, `"x"`, `{`, ``, ` {"a" : [ ] } `,
}

// FuzzScanBody holds the body scan to three things on any input: it never
// panics; what it accepts is valid JSON; and what it reads of a message
// (method, params.protocolVersion, the _meta revision, name, uri) is what
// encoding/json, the parser of mcp-go, reads of it, since the keys a
// case-folding or last-key-wins parser would read otherwise are refused.
func FuzzScanBody(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var messages []message
		_, err := scanBody(data, 8, func(m *message) error {
			messages = append(messages, *m)
			return nil
		}, nil)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if len(messages) == 0 || len(messages) > 8 {
			t.Fatalf("accepted %q with %d messages", data, len(messages))
		}
		for _, m := range messages {
			for _, s := range []span{m.obj, m.params, m.meta, m.protocolVersionAt} {
				if s.start < 0 || s.end > len(data) || s.start > s.end {
					t.Fatalf("span %+v outside %d bytes", s, len(data))
				}
			}
			if m.id != nil && !json.Valid(m.id) {
				t.Fatalf("id %q is not JSON", m.id)
			}
			obj := data[m.obj.start:m.obj.end]
			var std struct {
				Method *string `json:"method"`
				Params *struct {
					ProtocolVersion *string         `json:"protocolVersion"`
					Name            *string         `json:"name"`
					URI             *string         `json:"uri"`
					Meta            json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(obj, &std) != nil {
				continue // a member of another type than the struct's; not comparable
			}
			if (std.Method != nil) != m.hasMethod || std.Method != nil && *std.Method != m.method {
				t.Fatalf("method: scanned %t %q, encoding/json %v in %q", m.hasMethod, m.method, std.Method, obj)
			}
			if std.Params == nil {
				continue
			}
			if p := std.Params.ProtocolVersion; p != nil && (!m.protocolVersionStr || *p != m.protocolVersion) {
				t.Fatalf("protocolVersion: scanned %q, encoding/json %q in %q", m.protocolVersion, *p, obj)
			}
			if m.protocolVersionStr && string(data[m.protocolVersionAt.start:m.protocolVersionAt.end]) != mustQuoteJSON(t, data[m.protocolVersionAt.start:m.protocolVersionAt.end], m.protocolVersion) {
				t.Fatalf("protocolVersion span %+v does not hold %q in %q", m.protocolVersionAt, m.protocolVersion, data)
			}
			if p := std.Params.Name; p != nil && (!m.nameStr || *p != m.name) {
				t.Fatalf("name: scanned %q, encoding/json %q in %q", m.name, *p, obj)
			}
			if p := std.Params.URI; p != nil && (!m.uriStr || *p != m.uri) {
				t.Fatalf("uri: scanned %q, encoding/json %q in %q", m.uri, *p, obj)
			}
			var meta map[string]any
			if json.Unmarshal(std.Params.Meta, &meta) == nil && meta != nil {
				v, ok := meta[MetaProtocolVersion]
				s, isString := v.(string)
				if ok != m.hasMetaVersion || isString != m.metaVersionStr || s != m.metaVersion {
					t.Fatalf("_meta revision: scanned %t %q, encoding/json %v in %q", m.hasMetaVersion, m.metaVersion, v, obj)
				}
			}
		}
	})
}

// mustQuoteJSON returns raw when it is the JSON string of s, so that a
// span check compares equal exactly when the span holds that string.
func mustQuoteJSON(t *testing.T, raw []byte, s string) string {
	t.Helper()
	var got string
	if json.Unmarshal(raw, &got) != nil || got != s {
		return "not " + string(raw)
	}
	return string(raw)
}

// FuzzHeaders holds header reading to never panicking, and to never
// returning a revision or method that holds a list.
func FuzzHeaders(f *testing.F) {
	f.Add("2026-07-28", "tools/call", "=?base64?ZWNobw==?=", "abc", "")
	f.Add("2026-07-28, 2025-06-18", "", "", "", "2025-06-18")
	f.Add("", "a", "=?base64?***?=", "a b", "")
	f.Fuzz(func(t *testing.T, version, method, name, session, second string) {
		h := http.Header{}
		for k, v := range map[string]string{HeaderProtocolVersion: version, HeaderMethod: method, HeaderName: name, HeaderSessionID: session} {
			if v != "" {
				h[k] = []string{v}
			}
		}
		if second != "" {
			h[HeaderProtocolVersion] = append(h[HeaderProtocolVersion], second)
		}
		rh, err := readHeaders(h)
		if err != nil {
			return
		}
		if strings.Contains(rh.version, ",") || strings.Contains(rh.method, ",") {
			t.Fatalf("read a list: %+v", rh)
		}
		if len(h[HeaderProtocolVersion]) > 1 {
			t.Fatalf("read one of %q", h[HeaderProtocolVersion])
		}
	})
}

// FuzzStampBody holds the Transport's stamping to its promise on any body:
// either it refuses, or what it sends is valid JSON in which every request
// declares the negotiated revision in _meta and nothing else changed.
func FuzzStampBody(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	tr := &Transport{revision: "2026-07-28", stateless: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, _, err := tr.stampBody(data, tracectx.Context{})
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("stamped %q into invalid JSON %q", data, out)
		}
		_, err = scanBody(out, 0, func(m *message) error {
			if m.isRequest() && (!m.metaVersionStr || m.metaVersion != "2026-07-28") {
				t.Fatalf("request in %q left without the revision", out)
			}
			return nil
		}, nil)
		if err != nil {
			t.Fatalf("stamped %q into %q, which does not scan: %v", data, out, err)
		}
		// Stamping again changes nothing: it only inserts, and only once.
		again, _, _, err := tr.stampBody(out, tracectx.Context{})
		if err != nil || string(again) != string(out) {
			t.Fatalf("stamping %q again gave %q, %v", out, again, err)
		}
	})
}
