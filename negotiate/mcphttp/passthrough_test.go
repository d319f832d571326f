package mcphttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/policy"
)

// jsonText draws JSON text of every kind, with random whitespace, escapes
// and characters outside ASCII, so that a body reaching the server changed
// in any byte would show.
func jsonText(depth int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		ws := rapid.SampledFrom([]string{"", " ", "\n", "\t", " \r\n "})
		kind := rapid.IntRange(0, 6).Draw(t, "kind")
		if depth <= 0 && kind >= 5 {
			kind = 0
		}
		switch kind {
		case 0:
			return jsonString().Draw(t, "string")
		case 1:
			return strconv.FormatFloat(rapid.Float64().Draw(t, "number"), 'g', -1, 64)
		case 2:
			return strconv.Itoa(rapid.Int().Draw(t, "int"))
		case 3:
			return rapid.SampledFrom([]string{"true", "false", "null"}).Draw(t, "literal")
		case 4:
			return `"` + rapid.SampledFrom([]string{`\u00e9`, `\"`, `\\`, `\/`, `\n`, `\ud83d\ude00`, `\u0000`}).Draw(t, "escape") + `"`
		case 5:
			n := rapid.IntRange(0, 4).Draw(t, "len")
			parts := make([]string, n)
			for i := range parts {
				parts[i] = ws.Draw(t, "ws") + jsonText(depth-1).Draw(t, "item") + ws.Draw(t, "ws")
			}
			return "[" + strings.Join(parts, ",") + "]"
		default:
			n := rapid.IntRange(0, 4).Draw(t, "len")
			parts := make([]string, n)
			for i := range parts {
				// Keys the middleware does not read, so they never collide
				// with one it does, under any case.
				key := `"k` + strconv.Itoa(i) + rapid.StringMatching(`[a-z\x{e9}\x{1f600} ]{0,6}`).Draw(t, "key") + `"`
				parts[i] = ws.Draw(t, "ws") + key + ws.Draw(t, "ws") + ":" + ws.Draw(t, "ws") + jsonText(depth-1).Draw(t, "value")
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
	})
}

func jsonString() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		b, _ := json.Marshal(rapid.String().Draw(t, "s"))
		return string(b)
	})
}

// TestPassthroughIsByteExact sends random 2026-07-28-era and legacy bodies
// through the middleware and checks that the wrapped handler reads exactly
// the bytes the client sent.
func TestPassthroughIsByteExact(t *testing.T) {
	r := newRig(t, wideFacets(), policy.Policy{}, false, nil)
	rapid.Check(t, func(t *rapid.T) {
		ws := rapid.SampledFrom([]string{"", " ", "\n  "})
		method := rapid.SampledFrom([]string{"tools/list", "tools/call", "prompts/get", "resources/read", "ping", "x/é"}).Draw(t, "method")
		stateless := rapid.Bool().Draw(t, "stateless")
		rev := "2025-11-25"
		if stateless {
			rev = "2026-07-28"
		}
		members := []string{
			`"jsonrpc"` + ws.Draw(t, "ws") + `:"2.0"`,
			`"id":` + rapid.SampledFrom([]string{"1", `"a\"b"`, "-0.5e3", `"é"`}).Draw(t, "id"),
			`"method":` + mustJSON(method),
		}
		params := []string{}
		for i := rapid.IntRange(0, 3).Draw(t, "extra"); i > 0; i-- {
			params = append(params, `"arg`+strconv.Itoa(i)+`":`+jsonText(3).Draw(t, "arg"))
		}
		name := rapid.StringMatching(`[a-z\x{e9}]{1,8}`).Draw(t, "name")
		switch method {
		case "tools/call", "prompts/get":
			params = append(params, `"name":`+mustJSON(name))
		case "resources/read":
			params = append(params, `"uri":`+mustJSON("file:///"+name))
		}
		if stateless {
			params = append(params, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+ws.Draw(t, "ws")+`"k":`+jsonText(2).Draw(t, "meta")+`}`)
		}
		params = rapid.Permutation(params).Draw(t, "order")
		members = append(members, `"params":{`+strings.Join(params, ","+ws.Draw(t, "ws"))+`}`)
		body := ws.Draw(t, "lead") + "{" + strings.Join(rapid.Permutation(members).Draw(t, "members"), ",") + "}" + ws.Draw(t, "trail")

		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set(mcphttp.HeaderProtocolVersion, rev)
		req.Header.Set("Authorization", "Bearer user")
		if stateless {
			req.Header.Set(mcphttp.HeaderMethod, method)
			if method == "tools/call" || method == "prompts/get" || method == "resources/read" {
				v := name
				if method == "resources/read" {
					v = "file:///" + name
				}
				// Outside ASCII the header carries base64, as SEP-2243 says.
				if strings.ContainsFunc(v, func(r rune) bool { return r > 0x7e }) {
					v = "=?base64?" + b64(v) + "?="
				}
				req.Header.Set(mcphttp.HeaderName, v)
			}
		}
		w := httptest.NewRecorder()
		before, _ := r.server.received()
		r.h.ServeHTTP(w, req)
		after, _ := r.server.received()
		if len(after) != len(before)+1 {
			t.Fatalf("not forwarded: %d %s\nbody %s", w.Code, w.Body, body)
		}
		if got := string(after[len(after)-1]); got != body {
			t.Fatalf("forwarded\n%q\nwant\n%q", got, body)
		}
	})
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzServeHTTP sends any body and headers through the middleware: it must
// never panic, and whatever reaches the wrapped handler is the body sent,
// byte for byte, except an initialize's counter-offered protocolVersion.
func FuzzServeHTTP(f *testing.F) {
	for _, b := range []string{
		stateless("2026-07-28", "2026-07-28").body, initialize("2025-06-18"), initialize("2025-11-25"),
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]`, `{`, `{"method":"x","Method":"y"}`,
	} {
		f.Add([]byte(b), "2026-07-28", "tools/list", "")
		f.Add([]byte(b), "2025-11-25", "", "Bearer user")
	}
	r := newRig(f, legacyFacets(), policy.Policy{}, true, func(o *mcphttp.Options) { o.MaxBodyBytes = 4096 })
	f.Fuzz(func(t *testing.T, body []byte, version, method, auth string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(string(body)))
		req.Header[mcphttp.HeaderProtocolVersion] = []string{version}
		req.Header[mcphttp.HeaderMethod] = []string{method}
		req.Header["Authorization"] = []string{auth}
		before, _ := r.server.received()
		w := httptest.NewRecorder()
		r.h.ServeHTTP(w, req)
		after, outcomes := r.server.received()
		if len(after) == len(before) {
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("a refusal that is not JSON: %q", w.Body)
			}
			return
		}
		got, o := after[len(after)-1], outcomes[len(outcomes)-1]
		if o.Err() != nil {
			t.Fatalf("forwarded with outcome %+v", o)
		}
		if string(got) != string(body) && !o.CounterOffered {
			t.Fatalf("forwarded %q, sent %q", got, body)
		}
	})
}
