package strictjson

import "testing"

// TestSyntax: a document that is not one JSON value is one error naming
// what broke, the byte offset, the input's length and the path, at the
// top level too; blank input says it holds no value.
func TestSyntax(t *testing.T) {
	for _, tc := range []struct {
		in, path, msg string
		offset        int
	}{
		{`{"a": [1, 2]}` + "\n", "", "", 0},
		{"", "", "empty: no JSON value in 0 bytes", 0},
		{"  \n\t", "", "empty: no JSON value in 4 bytes", 4},
		{`{"facets": 1,}`, "", "not JSON: invalid character ',' looking for beginning of value at byte 12 of 14 (at the top level)", 12},
		{`{"now":`, "now", "not JSON: unexpected end of JSON input at byte 7 of 7 (in now)", 7},
		{`{"a": [1, 2 3]}`, "a", "not JSON: invalid character '3' after array element (expecting ',' or ']') at byte 12 of 15 (in a)", 12},
		{`{} x`, "", "not JSON: data after the JSON value at byte 3 of 4 (at the top level)", 3},
	} {
		e := Syntax([]byte(tc.in))
		if tc.msg == "" {
			if e != nil {
				t.Errorf("Syntax(%q) = %v", tc.in, e)
			}
			continue
		}
		if e == nil || e.Path != tc.path || e.Msg != tc.msg || e.Offset != tc.offset {
			t.Errorf("Syntax(%q) = %+v, want path %q, offset %d, %q", tc.in, e, tc.path, tc.offset, tc.msg)
		}
	}
}
