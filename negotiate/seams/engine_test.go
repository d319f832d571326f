package seams_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestSeamsReadAnswersAsClients is the seams' own run of their columns of
// the engine's table (internal/exchange's TestEveryPlaceKeepsEveryGuarantee),
// with what the table does not check: the peer's runtime refusal,
// gzip-coded, after a byte-order mark, or in a batch split after '[', is
// read as its clients read it and recorded after the acceptance, on the
// run the answer names, for the same peer.
func TestSeamsReadAnswersAsClients(t *testing.T) {
	refusals := map[string]string{
		"a2a": `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no"}}`,
		"mcp": `{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`,
	}
	writes := map[string]func(w http.ResponseWriter, refusal string){
		"gzip": func(w http.ResponseWriter, refusal string) {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = io.WriteString(zw, refusal)
			_ = zw.Close()
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(b.Bytes())
		},
		"bom": func(w http.ResponseWriter, refusal string) { _, _ = io.WriteString(w, "\xEF\xBB\xBF"+refusal) },
		"split batch": func(w http.ResponseWriter, refusal string) {
			_, _ = io.WriteString(w, "[")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, refusal+"]")
		},
	}
	for name, write := range writes {
		for proto, refusal := range refusals {
			peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.Method == http.MethodGet:
					_, _ = io.WriteString(w, `{"supportedInterfaces":[{"url":"http://`+r.Host+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.1"}]}`)
				case r.Header.Get("Mcp-Method") == "server/discover":
					_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`)
				default:
					write(w, refusal)
				}
			}))
			r := newRig(t, testFacets())
			key := map[string]string{"a2a": "peerUrl", "mcp": "serverUrl"}[proto]
			status, body := r.call(t, proto, "acme", map[string]any{key: peer.URL})
			peer.Close()
			if status != 400 || body["error"] != "interop_version_unsupported" {
				t.Errorf("%s, %s: %d %v", proto, name, status, body)
				continue
			}
			if evs := r.runEvents(t, runOf(body)); len(evs) != 2 || evs[0]["outcome"] != "accepted" || evs[1]["outcome"] != "refused" || evs[1]["peerDigest"] != evs[0]["peerDigest"] {
				t.Errorf("%s, %s: run %v, want accepted then refused", proto, name, evs)
			}
		}
	}
}
