package seams_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/negotiate/seams"
)

// FuzzRequest sends any body to both seams: the answer is a JSON object
// with a status the seams answer with, and a body that is not a valid
// request never reaches the peer.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{`{}`, `{"peerUrl":"PEER"}`, `{"serverUrl":"PEER","tool":"echo","arguments":{"a":1}}`,
		`{"peerUrl":"PEER","peerUrl":"x"}`, `{"serverUrl":"PEER","elicitationAnswer":null}`, `[`, `{"peerUrl":"file:///"}`} {
		f.Add("mcp", seed)
		f.Add("a2a", seed)
	}
	r := newRig(f, testFacets())
	a2a := newFakeA2A(f, "1.1")
	mcp := newFakeMCP(f, "2026-07-28")
	f.Fuzz(func(t *testing.T, proto, body string) {
		if proto != "a2a" && proto != "mcp" {
			return
		}
		peer := a2a.srv.URL
		if proto == "mcp" {
			peer = mcp.srv.URL
		}
		status, out := r.do(t, http.MethodPost, seams.Prefix+"/sample/"+proto+"/invoke", "acme", []byte(strings.ReplaceAll(body, "PEER", peer)))
		if status != 200 && (out["error"] == nil || out["message"] == "") {
			t.Fatalf("%d %v", status, out)
		}
		if status != 200 && status != 400 && status != 413 && status != 422 {
			t.Fatalf("status %d: %v", status, out)
		}
	})
}
