package a2ahttp

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzRefusalSays: whatever a peer answers, reading what its refusal
// lists neither panics nor hangs, lists only trimmed, non-empty elements
// of a comma-separated list, and lists what walkRefusal, a recursive
// reading of the same value, lists.
func FuzzRefusalSays(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"1.1, 1.0"}}]}}`,
		`{"error":{"code":400,"details":[{"metadata":{"supportedVersions":" , 1.0 ,"}}]}}`,
		"data: {\"error\":{\"data\":{\"metadata\":{\"supportedVersions\":\"0.3\"}}}}\n\n",
		`{"metadata":{"supportedVersions":"1.0","supportedVersions":"2.0"}}`,
		`{"a":[[[{"metadata":{"supportedVersions":1}}]]]`,
		`{"supportedVersions":"1.1","error":{"data":[{"supportedVersions":"1.0","x":{"metadata":["supportedVersions","0.3"]}}]}}`,
		`{"metadata":{"supportedVersions":{"supportedVersions":"3"}},"metadata":{"supportedVersions":"4"}} {"metadata":{"supportedVersions":"5"}}`,
		`not json {`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		got := refusalSays(answer)
		for _, v := range got {
			if v == "" || v != trimOWS(v) || strings.Contains(v, ",") {
				t.Fatalf("listed %q of %q", v, answer)
			}
		}
		if want := walkRefusal(answer); !slices.Equal(got, want) {
			t.Fatalf("refusalSays(%q) = %q, the walk lists %q", answer, got, want)
		}
	})
}

// walkRefusal is refusalSays written as a recursive walk over the first
// value from the first '{': each value is read knowing the name of the
// member it is, and a string member supportedVersions of a member
// metadata lists its elements. It stops where the value breaks.
func walkRefusal(answer []byte) []string {
	start := bytes.IndexByte(answer, '{')
	if start < 0 {
		return nil
	}
	var offered []string
	d := jsontext.NewDecoder(bytes.NewReader(answer[start:]), lenient...)
	var walk func(parent, name string) error
	walk = func(parent, name string) error {
		tok, err := d.ReadToken()
		if err != nil {
			return err
		}
		switch tok.Kind() {
		case '"':
			if parent == "metadata" && name == "supportedVersions" {
				for elem := range strings.SplitSeq(tok.String(), ",") {
					if elem = trimOWS(elem); elem != "" {
						offered = append(offered, elem)
					}
				}
			}
			return nil
		case '{':
			for d.PeekKind() != '}' {
				member, err := d.ReadToken()
				if err != nil {
					return err
				}
				if err := walk(name, member.String()); err != nil {
					return err
				}
			}
		case '[':
			for d.PeekKind() != ']' {
				if err := walk(name, ""); err != nil {
					return err
				}
			}
		default:
			return nil
		}
		_, err = d.ReadToken() // the closing brace or bracket
		return err
	}
	_ = walk("", "")
	return offered
}
