package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	B string `json:"b"`
}

type closed struct {
	A      string `json:"a"`
	Hidden string `json:"-"`
	inner
	N int `json:"n,omitzero"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in      string
		want    closed
		problem string // a part of the error; empty for success
	}{
		{`{"a":"x","b":"y","n":2}`, closed{A: "x", inner: inner{"y"}, N: 2}, ""},
		{` {"a":"x"} `, closed{A: "x"}, ""},
		{`{}`, closed{}, ""},
		{`{"A":"x"}`, closed{}, `unknown field "A"`},
		{`{"a":"x","a":"y"}`, closed{}, `field "a" appears twice`},
		{`{"Hidden":"x"}`, closed{}, `unknown field "Hidden"`},
		{`{"inner":{}}`, closed{}, `unknown field "inner"`},
		{`["a"]`, closed{}, "want a JSON object, got an array"},
		{`"a"`, closed{}, "want a JSON object, got a string"},
		{`3`, closed{}, "want a JSON object, got a number"},
		{`true`, closed{}, "want a JSON object, got a boolean"},
		{`{"a":1}`, closed{}, "cannot unmarshal number"},
		{`{"a":"x"} {}`, closed{}, "data after the JSON object"},
		{`{"a":`, closed{}, "EOF"},
	}
	for _, tt := range tests {
		var got closed
		err := Decode([]byte(tt.in), &got)
		switch {
		case tt.problem == "" && err != nil:
			t.Errorf("Decode(%s): %v", tt.in, err)
		case tt.problem != "" && (err == nil || !strings.Contains(err.Error(), tt.problem)):
			t.Errorf("Decode(%s) error = %v, want one containing %q", tt.in, err, tt.problem)
		case tt.problem == "" && got != tt.want:
			t.Errorf("Decode(%s) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestDecodeNullLeavesValue(t *testing.T) {
	v := closed{A: "kept"}
	if err := Decode([]byte(" null "), &v); err != nil || v.A != "kept" {
		t.Errorf("Decode(null) = %v, value %+v; want nil and the value unchanged", err, v)
	}
}
