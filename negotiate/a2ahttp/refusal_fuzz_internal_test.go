package a2ahttp

import (
	"strings"
	"testing"
)

// FuzzRefusalSays: whatever a peer answers, reading what its refusal
// lists neither panics nor hangs, and lists only trimmed, non-empty
// elements of a comma-separated list.
func FuzzRefusalSays(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"1.1, 1.0"}}]}}`,
		`{"error":{"code":400,"details":[{"metadata":{"supportedVersions":" , 1.0 ,"}}]}}`,
		"data: {\"error\":{\"data\":{\"metadata\":{\"supportedVersions\":\"0.3\"}}}}\n\n",
		`{"metadata":{"supportedVersions":"1.0","supportedVersions":"2.0"}}`,
		`{"a":[[[{"metadata":{"supportedVersions":1}}]]]`,
		`not json {`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		for _, v := range refusalSays(answer) {
			if v == "" || v != trimOWS(v) || strings.Contains(v, ",") {
				t.Fatalf("listed %q of %q", v, answer)
			}
		}
	})
}
