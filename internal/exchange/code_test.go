package exchange

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestMayHoldCode holds the prefilter to every spelling of a code a JSON
// reader takes (it must never miss one) and to the answers that cannot
// hold it (it must let them pass unread).
func TestMayHoldCode(t *testing.T) {
	for _, c := range []struct {
		answer string
		code   int
		want   bool
	}{
		{`{"error":{"code":-32022}}`, -32022, true},
		{`{"error":{"code":-32022.0}}`, -32022, true},
		{`{"error":{"code":-3.2022e4}}`, -32022, true},
		{`{"error":{"code":-320.22E2}}`, -32022, true},
		{`{"error":{"code":-320220e-1}}`, -32022, true},
		{`{"error":{"code":-0.032022e6}}`, -32022, true},
		{`{"error":{"code":-32021.99999999999999999}}`, -32022, true}, // a float64 reader's -32022
		{`{"error":{"code":-3.202199999999999999e4}}`, -32022, true},
		{`{"error":{"code":-32009}}`, -32009, true},
		{`{"error":{"code":-32009}}`, 32009, true}, // the sign is not the code's spelling
		{`{"error":{"code":-32009}}`, -32022, false},
		{`{"error":{"code":-3.20.22e4}}`, -32022, false}, // two points: no number
		{`{"error":{"code":-3202}}`, -32022, false},
		{`{"error":{"code":-32021}}`, -32022, false},
		{`{"error":{"code":-32021.8}}`, -32022, false}, // too far below to round to it
		{`{"result":{"text":"3 2022"}}`, -32022, false},
		{`{"result":{}}`, -32022, false},
		{``, -32022, false},
		{`3202`, -32022, false}, // the digits run out
	} {
		if got := MayHoldCode([]byte(c.answer), c.code); got != c.want {
			t.Errorf("MayHoldCode(%s, %d) = %v, want %v", c.answer, c.code, got, c.want)
		}
	}
}

// FuzzMayHoldCode is the prefilter against a full read: whenever a JSON
// reader finds a number equal to the code anywhere in the answer, the
// prefilter said the answer may hold it.
func FuzzMayHoldCode(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no"}}`,
		`[{"error":{"code":-3.2022e4}},{"result":{}}]`,
		`{"error":{"code":-32009.000}}`,
		`{"result":{"n":320.22e2}}`,
		`{"error":{"code":-32008.99999999999999999}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		for {
			tok, err := d.ReadToken()
			if err != nil {
				return // the end, or where the answer stops being JSON
			}
			if tok.Kind() != '0' {
				continue
			}
			for _, code := range []int{-32022, -32009} {
				if f, _ := tok.Float(); (f == float64(code) || f == float64(-code)) && !MayHoldCode(b, code) {
					t.Fatalf("%s holds %v, which is %d, and MayHoldCode said it cannot", b, tok, code)
				}
			}
		}
	})
}
