package seams_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/wopneg/wopneg/negotiate/seams"
)

// BenchmarkInvokeMCP is one MCP seam exchange over loopback: the seam's
// request, server/discover, the recorded decision, one tools/call.
func BenchmarkInvokeMCP(b *testing.B) {
	r := newRig(b, testFacets())
	server := newFakeMCP(b, "2026-07-28")
	raw, _ := json.Marshal(map[string]any{"serverUrl": server.srv.URL})
	b.ReportAllocs()
	for range b.N {
		req, _ := http.NewRequest("POST", r.srv.URL+seams.Prefix+"/sample/mcp/invoke", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer acme")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
}
