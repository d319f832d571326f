package mrtr

import (
	"testing"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// FuzzReadClaims holds the one-walk reader of the claims to what
// strictjson.Decode, the reflective reader it replaced, makes of the same
// bytes: the same claims or, both, an error.
func FuzzReadClaims(f *testing.F) {
	for _, seed := range []string{
		`{"v":1,"p":"p","t":"t","r":"r","i":"i","d":"d","n":2,"e":1764417600000,"j":"n"}`,
		`{"v":1,"n":1.0}`, `{"n":1e0}`, `{"e":-0}`, `{"v":99999999999999999999}`, `{"p":null}`,
		`{"p":"a","p":"b"}`, `{"P":"a"}`, `{"x":1}`, `[]`, `{"p":"\u00e9\n"}`, `{"j":{"n":1}}`, `{} {}`, `{"n":true}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readClaims(data)
		var want claimsJSON
		wantErr := strictjson.Decode(data, &want)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: readClaims %v, Decode %v", data, err, wantErr)
		}
		if err == nil && got != want {
			t.Fatalf("%q: readClaims %+v, Decode %+v", data, got, want)
		}
	})
}
