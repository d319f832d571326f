package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

type inner struct {
	B string `json:"b"`
}

type closed struct {
	A      string `json:"a"`
	Hidden string `json:"-"`
	inner
	N     int               `json:"n,omitzero"`
	Q     int               `json:"q,string"`
	L     []string          `json:"l"`
	M     map[string]bool   `json:"m"`
	P     *inner            `json:"p"`
	Any   any               `json:"any"`
	Bytes []byte            `json:"bytes"`
	At    time.Time         `json:"at"`
	Arr   [2]int            `json:"arr"`
	F     float64           `json:"f"`
	U     uint8             `json:"u"`
	Raw   json.RawMessage   `json:"raw"`
	Deep  map[string]*inner `json:"deep"`
	Plain string
}

// A null that is the whole document is refused for a scalar as one inside
// an object is: the Reader notes a null wherever it stands.
func TestDecodeNullAlone(t *testing.T) {
	var s string
	if err := Decode([]byte(" null "), &s); err == nil || err.Error() != "want a string, got null" {
		t.Errorf("null into a string: %v", err)
	}
	var n *int
	if err := Decode([]byte("null"), &n); err != nil || n != nil {
		t.Errorf("null into a pointer: %v, %v", err, n)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in   string
		want closed
		err  string // the whole error; empty for success
	}{
		{`{"a":"x","b":"y","n":2}`, closed{A: "x", inner: inner{"y"}, N: 2}, ""},
		{` {"a":"x"} `, closed{A: "x"}, ""},
		{`{}`, closed{}, ""},
		{`{"q":"7","Plain":"p"}`, closed{Q: 7, Plain: "p"}, ""},
		{`{"l":["x","y"],"m":{"k":true},"p":{"b":"z"},"arr":[1,2],"f":1.5,"u":255}`,
			closed{L: []string{"x", "y"}, M: map[string]bool{"k": true}, P: &inner{"z"}, Arr: [2]int{1, 2}, F: 1.5, U: 255}, ""},
		{`{"bytes":"AQI=","at":"2026-11-30T00:00:00Z"}`, closed{Bytes: []byte{1, 2}, At: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}, ""},
		{`{"l":null,"m":null,"p":null,"any":null,"deep":{"k":null}}`, closed{Deep: map[string]*inner{"k": nil}}, ""},
		{`{"A":"x"}`, closed{}, `unknown field "A" (field names are case-sensitive: did you mean "a"?)`},
		{`{"plain":"x"}`, closed{}, `unknown field "plain" (field names are case-sensitive: did you mean "Plain"?)`},
		{`{"a":"x","a":"y"}`, closed{}, `the key "a" appears twice`},
		{`{"Hidden":"x"}`, closed{}, `unknown field "Hidden"`},
		{`{"inner":{}}`, closed{}, `unknown field "inner"`},
		{`{"p":{"B":"x"}}`, closed{}, `p: unknown field "B" (field names are case-sensitive: did you mean "b"?)`},
		{`{"Arrr":[]}`, closed{}, `unknown field "Arrr" (did you mean "arr"?)`},
		{`{"zzz":[]}`, closed{}, `unknown field "zzz"`},
		{`{"B":"x"}`, closed{}, `unknown field "B" (field names are case-sensitive: did you mean "b"?)`}, // b is the embedded struct's
		{`{"byte":""}`, closed{}, `unknown field "byte" (did you mean "bytes"?)`},
		{`{"deeep":{}}`, closed{}, `unknown field "deeep" (did you mean "deep"?)`},
		{`{"deep":{"k":{"b":"x","b":"y"}}}`, closed{}, `deep.k: the key "b" appears twice`},
		{`{"any":[{},{"k":1,"k":2}]}`, closed{}, `any[1]: the key "k" appears twice`},
		{`{"any":{"0":{"k":1,"k":2}}}`, closed{}, `any["0"]: the key "k" appears twice`},
		{`{"m":{"k":true,"k":false}}`, closed{}, `m: the key "k" appears twice`},
		{`["a"]`, closed{}, "want an object, got an array"},
		{`"a"`, closed{}, "want an object, got a string"},
		{`3`, closed{}, "want an object, got a number"},
		{`true`, closed{}, "want an object, got a boolean"},
		{`{"a":1}`, closed{}, "a: want a string, got a number"},
		{`{"a":null}`, closed{}, "a: want a string, got null"},
		{`{"n":"1"}`, closed{}, "n: want a number, got a string"},
		{`{"q":7}`, closed{}, "q: want a string, got a number"},
		{`{"l":[1]}`, closed{}, "l[0]: want a string, got a number"},
		{`{"l":{}}`, closed{}, "l: want an array, got an object"},
		{`{"m":[]}`, closed{}, "m: want an object, got an array"},
		{`{"arr":{}}`, closed{}, "arr: want an array, got an object"},
		{`{"bytes":[1]}`, closed{}, "bytes: want a string, got an array"},
		{`{"u":256}`, closed{}, "u: number 256 is out of range"},
		{`{"u":-1}`, closed{}, "u: want a non-negative integer, got -1"},
		{`{"f":1e400}`, closed{}, "f: number 1e400 is out of range"},
		{`{"any":-1e400}`, closed{}, "any: number -1e400 is out of range"},
		{`{"n":1.5}`, closed{}, "n: want an integer, got 1.5"},
		{`{"arr":[1]}`, closed{}, "arr: too few array elements"},
		{`{"arr":[1,2,3]}`, closed{}, "arr: too many array elements"},
		{`{"raw":{"k":1,"k":2}}`, closed{}, `raw: the key "k" appears twice`},
		{`{"s":"\ud800"}`, closed{}, "s: invalid surrogate pair `\\ud800\"}` in string"},
		{`{"at":"yesterday"}`, closed{}, `at: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{`{"a":"x"} {}`, closed{}, "data after the JSON value"},
		{`{"a":"x"} }`, closed{}, "data after the JSON value"},
		{`{"a":"x"},`, closed{}, "data after the JSON value"},
		{`{"a":`, closed{}, "a: unexpected end of JSON input"},
		{``, closed{}, "unexpected end of JSON input"},
		{`{"a":"x",}`, closed{}, "invalid character ',' looking for beginning of value"},
		{`{"a" "x"}`, closed{}, "a: invalid character '\"' after object name (expecting ':')"},
		{"{\"a\":\"\xff\"}", closed{}, "a: invalid UTF-8 in string"},
		{"{\"\xff\":1}", closed{}, "invalid UTF-8 in string"},
		{"{\"any\":{\"x\":\"\xff\"}}", closed{}, "any.x: invalid UTF-8 in string"},
		{`{"a":x}`, closed{}, "a: invalid character 'x' looking for beginning of value"},
	}
	for _, tt := range tests {
		var got closed
		err := Decode([]byte(tt.in), &got)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Decode(%s): %v", tt.in, err)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("Decode(%s) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && !reflect.DeepEqual(got, tt.want):
			t.Errorf("Decode(%s) = %+v, want %+v", tt.in, got, tt.want)
		case tt.err != "":
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("Decode(%s) error is %T, want *Error", tt.in, err)
			}
		}
	}
}

// JSON v2 reads null as the zero value of an object, array or pointer
// (encoding/json left the target unchanged).
func TestDecodeNullIsZero(t *testing.T) {
	v := closed{A: "dropped", P: &inner{"x"}}
	if err := Decode([]byte(" null "), &v); err != nil || v.A != "" || v.P != nil {
		t.Errorf("Decode(null) = %v, value %+v; want nil and the zero value", err, v)
	}
	v = closed{P: &inner{"x"}}
	if err := Decode([]byte(`{"p":null}`), &v); err != nil || v.P != nil {
		t.Errorf(`Decode({"p":null}) = %v, value %+v; want nil and no P`, err, v)
	}
}

// A value Decode refuses leaves the target as it was, even where JSON v2
// had begun to fill it.
func TestDecodeErrorLeavesValue(t *testing.T) {
	for _, in := range []string{`{"a":"x","a":"y"}`, `{"a":"x","n":"1"}`, `{"a":"x","zz":1}`, `{"a":"x","u":256}`} {
		v := closed{A: "kept", N: 7}
		if err := Decode([]byte(in), &v); err == nil || v.A != "kept" || v.N != 7 {
			t.Errorf("Decode(%s) = %v, value %+v; want an error and the value unchanged", in, err, v)
		}
	}
	var m map[string]any
	if err := Decode([]byte(`{"id":1,"id":2}`), &m); err == nil || m != nil {
		t.Errorf("Decode into a nil map = %v, %v; want an error and no map", err, m)
	}
}

func TestDecodeNeedsPointer(t *testing.T) {
	var v closed
	for _, target := range []any{v, (*closed)(nil), nil} {
		if err := Decode([]byte(`{}`), target); err == nil || !strings.HasPrefix(err.Error(), "strictjson: Value needs a non-nil pointer") {
			t.Errorf("Decode into %T: error = %v", target, err)
		}
	}
}

// nested has its own UnmarshalJSON that reads strictly, as the module's
// closed types do: its errors come back with the outer path in front.
type nested struct{ V string }

func (n *nested) UnmarshalJSON(data []byte) error {
	var raw struct {
		V string `json:"v"`
	}
	if err := Decode(data, &raw); err != nil {
		return err
	}
	n.V = raw.V
	return nil
}

type outer struct {
	In  nested   `json:"in"`
	Ins []nested `json:"ins"`
}

func TestDecodeNestedUnmarshaler(t *testing.T) {
	var o outer
	if err := Decode([]byte(`{"in":{"v":"a"},"ins":[{"v":"b"}]}`), &o); err != nil || o.In.V != "a" || o.Ins[0].V != "b" {
		t.Fatalf("Decode = %v, %+v", err, o)
	}
	for in, want := range map[string]string{
		`{"in":{"V":"a"}}`:          `in: unknown field "V" (field names are case-sensitive: did you mean "v"?)`,
		`{"ins":[{},{"v":1}]}`:      `ins[1].v: want a string, got a number`,
		`{"ins":[{},{"v":"1"}],}`:   "invalid character ',' looking for beginning of value",
		`{"in":{"v":"a","v":"b"}}`:  `in: the key "v" appears twice`,
		`{"ins":[{"v":"a"} , 3 ]}`:  `ins[1]: want an object, got a number`,
		`{"in":{"v":"a"},"in":{}} `: `the key "in" appears twice`,
	} {
		err := Decode([]byte(in), &o)
		if err == nil || err.Error() != want {
			t.Errorf("Decode(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestErrorOffsets(t *testing.T) {
	for in, want := range map[string]int{
		`{"a":1}`:         5,
		`{"a":"x"}  x`:    11,
		`{"A":1}`:         1,
		`{"a":"x","a":1}`: 9,
		`[1,`:             3,
		`{"p":{"b":7}}`:   10,
	} {
		var e *Error
		var v closed
		if err := Decode([]byte(in), &v); !errors.As(err, &e) || e.Offset != want {
			t.Errorf("Decode(%s) = %#v, want offset %d", in, err, want)
		}
	}
}

func TestDepth(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
	}
	var v any
	if err := Decode(deep(MaxDepth), &v); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	// Into any or a struct, the error names the container past the bound.
	want := strings.TrimSuffix(strings.Repeat("a.", MaxDepth), ".") + ": nested deeper than 64 levels"
	if err := Decode(deep(MaxDepth+1), &v); err == nil || err.Error() != want {
		t.Errorf("depth %d: %v", MaxDepth+1, err)
	}
	type chain struct {
		A *chain `json:"a"`
	}
	var c chain
	err := Decode(deep(MaxDepth+1), &c)
	if err == nil || err.Error() != want {
		t.Errorf("depth %d into a struct chain: %v", MaxDepth+1, err)
	}
	// A chain far beyond the bound is refused at the bound: the Reader
	// never reads past it (the offset says where it stopped).
	var e *Error
	if err := Decode(deep(8000), &v); !errors.As(err, &e) || e.Offset != 5*MaxDepth {
		t.Errorf("depth 8000: %#v", err)
	}
	r := NewReader([]byte(`[[[1]]]`), 2)
	if err := r.Skip(); err == nil || err.Error() != "[0][0]: nested deeper than 2 levels" {
		t.Errorf("Skip past maxDepth 2: %v", err)
	}
	r = NewReader([]byte(`[[[1]]]`), 2)
	err = r.Array(func(int) error { return r.Array(func(int) error { return r.Array(nil) }) })
	if err == nil || err.Error() != "[0][0]: nested deeper than 2 levels" {
		t.Errorf("Array past maxDepth 2: %v", err)
	}
	// A container where an object's name belongs, past the bound, is
	// named by the object's path (FuzzAgreesWithLegacy found this).
	for _, in := range []string{`{"": {   "": {{`, `{"": {"": {"x":1, {`} {
		if err := NewReader([]byte(in), 3).Skip(); err == nil || err.Error() != `[""][""]: nested deeper than 3 levels` {
			t.Errorf("Skip(%s) past maxDepth 3: %v", in, err)
		}
	}
	if err := NewReader([]byte(`[[1]]`), 2).Skip(); err != nil {
		t.Errorf("Skip at maxDepth 2: %v", err)
	}
}

func TestReaderWalk(t *testing.T) {
	data := []byte(` {"jsonrpc":"2.0","id":7,"params":{"_meta":{"io.x/v":"2026-07-28"},"ok":true,"list":[1,"two",null,{"k":[]}]}} `)
	r := NewReader(data, 0)
	var got []string
	var meta []byte
	err := r.Object(func(key string) error {
		got = append(got, "key "+key+" at "+r.Path())
		switch key {
		case "jsonrpc":
			s, err := r.String()
			got = append(got, "string "+s)
			return err
		case "id":
			n, err := r.Number()
			got = append(got, "number "+n.String())
			return err
		}
		return r.Object(func(key string) error {
			switch key {
			case "_meta":
				var err error
				meta, err = r.Raw()
				return err
			case "ok":
				b, err := r.Bool()
				got = append(got, "bool "+strconv.FormatBool(b)+" at "+r.Path())
				return err
			}
			return r.Array(func(i int) error {
				k, err := r.Next()
				got = append(got, r.Path()+" is "+k.String())
				if k == Object {
					return r.Object(func(string) error { got = append(got, "at "+r.Path()); return nil })
				}
				return err // unread: skipped
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"key jsonrpc at jsonrpc", "string 2.0", "key id at id", "number 7", "key params at params",
		"bool true at params.ok",
		"params.list[0] is a number", "params.list[1] is a string", "params.list[2] is null",
		"params.list[3] is an object", "at params.list[3].k",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walk:\n got %q\nwant %q", got, want)
	}
	if string(meta) != `{"io.x/v":"2026-07-28"}` {
		t.Errorf("Raw = %s", meta)
	}
	if r.Offset() != len(data)-1 {
		t.Errorf("Offset = %d, want %d", r.Offset(), len(data)-1)
	}
	if r.Path() != "" {
		t.Errorf("Path after the walk = %q", r.Path())
	}
}

func TestReaderKindErrors(t *testing.T) {
	r := NewReader([]byte(`{"a":[1]}`), 0)
	if _, err := r.String(); err == nil || err.Error() != "want a string, got an object" {
		t.Errorf("String on an object: %v", err)
	}
	if _, err := r.Number(); err == nil || err.Error() != "want a number, got an object" {
		t.Errorf("Number on an object: %v", err)
	}
	if _, err := r.Bool(); err == nil || err.Error() != "want a boolean, got an object" {
		t.Errorf("Bool on an object: %v", err)
	}
	if err := r.Array(nil); err == nil || err.Error() != "want an array, got an object" {
		t.Errorf("Array on an object: %v", err)
	}
	// Nothing was consumed by the failed reads.
	err := r.Object(func(key string) error {
		return r.Object(nil)
	})
	if err == nil || err.Error() != "a: want an object, got an array" {
		t.Errorf("Object on an array: %v", err)
	}
	for in, want := range map[string]string{
		`  `:    "unexpected end of JSON input",
		`}`:     "invalid character '}' looking for beginning of value",
		`tru`:   "unexpected end of JSON input",
		`-`:     "unexpected end of JSON input",
		`"\u"`:  "invalid escape sequence `\\u\"` in string",
		`[1 2]`: "invalid character '2' after array element (expecting ',' or ']')",
	} {
		if err := NewReader([]byte(in), 0).Skip(); err == nil || err.Error() != want {
			t.Errorf("Skip(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := NewReader([]byte("\"\xff\""), 0).String(); err == nil || err.Error() != "invalid UTF-8 in string" {
		t.Errorf("String of invalid UTF-8: %v", err)
	}
	if _, err := NewReader([]byte(`tru`), 0).Bool(); err == nil {
		t.Error("Bool(tru): no error")
	}
	if _, err := NewReader([]byte(`-x`), 0).Number(); err == nil {
		t.Error("Number(-x): no error")
	}
}

func TestCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	r := NewReader([]byte(`{"a":1,"b":2}`), 0)
	if err := r.Object(func(string) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Object: err %v after %d calls", err, calls)
	}
	calls = 0
	r = NewReader([]byte(`[1,2]`), 0)
	if err := r.Array(func(int) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Array: err %v after %d calls", err, calls)
	}
}

func TestManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 20 {
		b.WriteString(`"k` + strconv.Itoa(i) + `":1,`)
	}
	ok := b.String() + `"last":1}`
	var m map[string]int
	if err := Decode([]byte(ok), &m); err != nil || len(m) != 21 {
		t.Errorf("21 keys: %v, %d", err, len(m))
	}
	for _, dup := range []string{"k0", "k7", "k8", "k15", "k16", "k19"} {
		err := Decode([]byte(b.String()+`"`+dup+`":2}`), &m)
		if err == nil || err.Error() != `the key "`+dup+`" appears twice` {
			t.Errorf("repeated %s: %v", dup, err)
		}
	}
}

func TestPath(t *testing.T) {
	r := NewReader(nil, 0)
	r.path = []step{{key: "params", index: -1}, {key: "_meta", index: -1}, {key: "io.x/y", index: -1}, {index: 3}, {key: "A1", index: -1}, {key: "1a", index: -1}, {key: "", index: -1}}
	if got, want := r.Path(), `params._meta["io.x/y"][3].A1["1a"][""]`; got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
	r.path = []step{{index: 0}, {key: "a", index: -1}}
	if got := r.Path(); got != "[0].a" {
		t.Errorf("Path = %s", got)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{0: "nothing", Object: "an object", Array: "an array", String: "a string",
		Number: "a number", Bool: "a boolean", Null: "null", 7: "Kind(7)"} {
		if k.String() != want {
			t.Errorf("Kind(%d) = %q, want %q", k, k.String(), want)
		}
	}
}

// walk reads any document generically, as a caller of Reader would.
func walk(r *Reader) (any, error) {
	k, err := r.Next()
	if err != nil {
		return nil, err
	}
	switch k {
	case Object:
		m := map[string]any{}
		err := r.Object(func(key string) error {
			v, err := walk(r)
			m[key] = v
			return err
		})
		return m, err
	case Array:
		l := []any{}
		err := r.Array(func(int) error {
			v, err := walk(r)
			l = append(l, v)
			return err
		})
		return l, err
	case String:
		return r.String()
	case Number:
		// encoding/json with UseNumber, which the tree is compared with,
		// gives a json.Number.
		n, err := r.Number()
		return json.Number(n), err
	case Bool:
		return r.Bool()
	}
	return nil, r.Skip()
}

// FuzzReader checks the Reader against encoding/json: whatever it accepts,
// encoding/json accepts with the same value, and Raw returns the bytes of
// that value exactly.
func FuzzReader(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null,true,{"b":-1.5e3}]}`, `[]`, `"\u00e9"`, `{"a":1,"a":2}`, `{"A":1,"a":2}`,
		` 1 `, `[1,]`, `{"a":"x"} }`, `"\ud800"`, "\"\xff\"", `[[[[[[[[[]]]]]]]]]`} {
		f.Add([]byte(s))
	}
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(data, 8)
		got, err := walk(r)
		if err == nil {
			err = r.End()
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil {
			if _, e := dec.Token(); e == nil {
				stdErr = errors.New("trailing data")
			}
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			return
		}
		if stdErr != nil {
			t.Fatalf("Reader accepted %q, encoding/json refused: %v", data, stdErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Reader read %#v, encoding/json %#v", got, want)
		}
		raw, err := NewReader(data, 8).Raw()
		if err != nil || !bytes.Equal(bytes.TrimSpace(data), raw) {
			t.Fatalf("Raw = %q, %v", raw, err)
		}
	})
}

// FuzzDecode checks Decode into a struct against encoding/json: when both
// accept, they decode the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":"x","l":["y"],"p":{"b":"z"},"n":3,"q":"4"}`, `{"A":"x"}`, `null`, `{"m":{"k":true}}`} {
		f.Add([]byte(s))
	}
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want closed
		if err := Decode(data, &got); err != nil {
			return
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("Decode accepted %q, encoding/json refused: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode %+v, encoding/json %+v", got, want)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"a":"x","b":"y","n":2,"l":["p","q"],"p":{"b":"z"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var v closed
		if err := Decode(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSiblingsAtTheBound(t *testing.T) {
	// Leaving a container gives its level back: siblings at the bound are fine.
	r := NewReader([]byte(`[[1],[2],{"a":1},{}]`), 2)
	err := r.Array(func(i int) error {
		if k, _ := r.Next(); k == Object {
			return r.Object(nil)
		}
		return r.Array(nil)
	})
	if err != nil {
		t.Error(err)
	}
	if err := NewReader([]byte(`[[1],[2],[[3]]]`), 2).Skip(); err == nil || err.Error() != "[2][0]: nested deeper than 2 levels" {
		t.Errorf("Skip: %v", err)
	}
}

func TestEmptyContainersAreRead(t *testing.T) {
	// fn that reads an empty object or array has read the member: nothing
	// after it may be skipped in its place.
	var keys []string
	r := NewReader([]byte(`{"a":{},"b":[],"c":1}`), 0)
	err := r.Object(func(key string) error {
		keys = append(keys, key)
		switch key {
		case "a":
			return r.Object(nil)
		case "b":
			return r.Array(nil)
		}
		return nil
	})
	if err != nil || strings.Join(keys, ",") != "a,b,c" || r.End() != nil {
		t.Errorf("keys %v, err %v, End %v", keys, err, r.End())
	}
}

func TestIdentifierKeys(t *testing.T) {
	for key, want := range map[string]bool{
		"a": true, "z": true, "A": true, "Z": true, "_": true, "a0": true, "a9": true, "aZ_z": true,
		"0": false, "9a": false, "`": false, "{": false, "@": false, "[": false, "/": false, ":": false,
		"a`": false, "a{": false, "a@": false, "a[": false, "a/": false, "a:": false, "a-b": false, "": false,
	} {
		if got := isIdentifier(key); got != want {
			t.Errorf("isIdentifier(%q) = %v", key, got)
		}
	}
}

func TestNestedErrorOffsets(t *testing.T) {
	var e *Error
	var o outer
	if err := Decode([]byte(`{"ins":[{}, {"v":1}]}`), &o); !errors.As(err, &e) || e.Offset != 17 || e.Path != "ins[1].v" {
		t.Errorf("nested: %#v", err)
	}
	var c closed
	if err := Decode([]byte(`{"a":"x", "u":256}`), &c); !errors.As(err, &e) || e.Offset != 14 || e.Path != "u" {
		t.Errorf("out of range: %#v", err)
	}
	if err := Decode([]byte(`{"a":"x", "at":"x"}`), &c); !errors.As(err, &e) || e.Offset != 15 || e.Path != "at" {
		t.Errorf("foreign UnmarshalJSON: %#v", err)
	}
}

// BenchmarkUnmarshal is encoding/json alone on BenchmarkDecode's input: the
// price of strictness is the difference.
func BenchmarkUnmarshal(b *testing.B) {
	data := []byte(`{"a":"x","b":"y","n":2,"l":["p","q"],"p":{"b":"z"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var v closed
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSuggest: a near miss of a known name gets that name (issue 21 item
// 5), the nearest when several are near; an unrelated key gets none.
func TestSuggest(t *testing.T) {
	a2a := []string{"versions", "preferredVersion", "minimumVersion", "refreshedAt", "profiles", "agentCardUrl", "streaming"}
	mcp := []string{"revisions", "preferredVersion", "minimumRevision", "refreshedAt", "serverUrls", "client"}
	for _, tc := range []struct {
		key   string
		known []string
		want  string
	}{
		{"preferedVersion", a2a, ` (did you mean "preferredVersion"?)`},
		{"minimumRevision", a2a, ` (did you mean "minimumVersion"?)`},
		{"minimumVersion", mcp, ` (did you mean "minimumRevision"?)`},
		{"serverUrl", mcp, ` (did you mean "serverUrls"?)`},
		{"serverURLs", mcp, ` (field names are case-sensitive: did you mean "serverUrls"?)`},
		{"verisons", a2a, ` (did you mean "versions"?)`},      // two letters swapped: one edit
		{"refreshdAt", a2a, ` (did you mean "refreshedAt"?)`}, // one letter dropped
		{"revision", mcp, ` (did you mean "revisions"?)`},
		{"clients", mcp, ` (did you mean "client"?)`},
		{"cli", mcp, ""}, // three letters off a six-letter name is no near miss
		{"x", a2a, ""},
		{"supported", a2a, ""},
		{"", a2a, ""},
		{"a", []string{"b", "ab"}, ` (did you mean "b"?)`},            // the first of the nearest
		{"abcd", []string{"abxy", "abcx"}, ` (did you mean "abcx"?)`}, // the nearest, not the first
	} {
		if got := Suggest(tc.key, tc.known); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"ab", "ba", 1}, {"abc", "acb", 1}, {"abc", "abc", 0},
		{"kitten", "sitting", 3}, {"ca", "abc", 3}, {"revision", "version", 3}, {"abcdef", "badcfe", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

// A Reader given back and taken again reads its new data from the start,
// at its new bound, with a path of its own.
func TestReleaseAndReuse(t *testing.T) {
	r := NewReader([]byte(`{"a":[[1]]}`), 0)
	err := r.Object(func(string) error { return r.Array(func(int) error { return errors.New("stop") }) })
	if err == nil || r.Path() != "a[0]" {
		t.Fatalf("first walk: %v at %q", err, r.Path())
	}
	r.Release()
	for range 3 {
		r = NewReader([]byte(` [[2]] `), 1)
		if r.Path() != "" || r.Offset() != 0 {
			t.Fatalf("reused Reader at %q, offset %d", r.Path(), r.Offset())
		}
		if err := r.Skip(); err == nil || err.Error() != "[0]: nested deeper than 1 levels" {
			t.Fatalf("reused Reader: %v", err)
		}
		r.Release()
	}
	r = NewReader([]byte(`"x"`), 0)
	if s, err := r.String(); err != nil || s != "x" || r.End() != nil {
		t.Fatalf("reused Reader read %q, %v", s, err)
	}
}

// A syntax error inside a member the Reader skips is named at the path
// below the member, which the Reader's own path begins.
func TestSyntaxErrorPathInsideSkip(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":[1 2]}`:             "a: invalid character '2' after array element (expecting ',' or ']')",
		`{"a":{"b":[1,{"c" 1}]}}`: `a.b[1].c: invalid character '1' after object name (expecting ':')`,
		`[0,{"k":tru}]`:           "[1].k: invalid character '}' in literal true (expecting 'e')",
	} {
		r := NewReader([]byte(in), 0)
		var err error
		if k, _ := r.Next(); k == Object {
			err = r.Object(nil)
		} else {
			err = r.Array(nil)
		}
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// A number beyond float64 is read by the Reader as written: only a Go
// value that cannot hold it refuses it.
func TestHugeNumberAsWritten(t *testing.T) {
	r := NewReader([]byte(`{"n":1e400,"m":123456789012345678901234567890}`), 0)
	var got []string
	err := r.Object(func(string) error {
		n, err := r.Number()
		got = append(got, string(n))
		return err
	})
	if err != nil || strings.Join(got, " ") != "1e400 123456789012345678901234567890" {
		t.Errorf("read %q, %v", got, err)
	}
}

// TestPointerPath: a place in a document read with a Decoder of one's own
// is named as the Reader names it: indexes, identifiers joined by dots,
// other keys quoted.
func TestPointerPath(t *testing.T) {
	d := jsontext.NewDecoder(strings.NewReader(`[{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":[true,{"x":2}]}}}]`))
	for {
		tok, err := d.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind() == '0' {
			break
		}
	}
	want := `[0].params._meta["io.modelcontextprotocol/protocolVersion"][1].x`
	if got := PointerPath(d.StackPointer(), d); got != want {
		t.Errorf("PointerPath(%s) = %s, want %s", d.StackPointer(), got, want)
	}
}

// TestPointerPathPastTheStack: an error inside a value the Decoder read
// whole points deeper than the Decoder stands; its place is named, an
// array's element where the token is a number, and nothing panics.
func TestPointerPathPastTheStack(t *testing.T) {
	d := jsontext.NewDecoder(strings.NewReader(`{"id":[{"a":1,"a":2}],"result":{}}`))
	if _, err := d.ReadToken(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadToken(); err != nil { // "id"
		t.Fatal(err)
	}
	_, err := d.ReadValue()
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		t.Fatalf("ReadValue: %v, want a repeated name", err)
	}
	if got, want := PointerPath(se.JSONPointer, d), "id[0].a"; got != want {
		t.Errorf("PointerPath(%s) = %s, want %s", se.JSONPointer, got, want)
	}
	// Where the decoder stands, its own kind names the level: a key that
	// is a number stays a key.
	d = jsontext.NewDecoder(strings.NewReader(`{"0":[{"a":1,"a":2}]}`))
	for range 2 {
		if _, err := d.ReadToken(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err = d.ReadValue(); !errors.As(err, &se) {
		t.Fatalf("ReadValue: %v, want a repeated name", err)
	}
	if got, want := PointerPath(se.JSONPointer, d), `["0"][0].a`; got != want {
		t.Errorf("PointerPath(%s) = %s, want %s", se.JSONPointer, got, want)
	}
}

// TestQuoteKey: a path or an error shows at most 64 bytes of a key,
// cut at a character boundary, so that a document's writer cannot fill
// the log an error reaches; a long key is shown quoted in a path, even
// one that would be an identifier.
func TestQuoteKey(t *testing.T) {
	long := strings.Repeat("k", 64)
	for key, want := range map[string]string{
		"issuer":              `"issuer"`,
		long:                  `"` + long + `"`,
		long + "x":            `"` + long + `"...`,
		long[:63] + "é":       `"` + long[:63] + `"...`, // é's first byte would be the 64th
		long[:62] + "é" + "x": `"` + long[:62] + `é"...`,
		// No reader of the module hands on invalid UTF-8, but a key of
		// nothing but continuation bytes is cut to nothing, not past it.
		strings.Repeat("\x80", 65): `""...`,
	} {
		if got := QuoteKey(key); got != want {
			t.Errorf("QuoteKey(%.70q) = %s, want %s", key, got, want)
		}
	}
	if got, want := pathOf([]step{{key: long, index: -1}, {key: long + "x", index: -1}}), long+`["`+long+`"...]`; got != want {
		t.Errorf("pathOf = %s, want %s", got, want)
	}
}
