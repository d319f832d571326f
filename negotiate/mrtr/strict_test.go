package mrtr_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// TestObserveStrict (issue 8 item 6): Observe reads a result as the SDKs
// do, exact-case keys, and refuses what they would not agree on.
func TestObserveStrict(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64)
	for _, c := range []struct {
		result string
		retry  bool
		err    string // "" for none
	}{
		{`{"resultType":"input_required","ResultType":"complete"}`, true, ""},
		{`{"ResultType":"input_required"}`, false, ""},
		{`{"resulttype":"input_required","resultType":"complete"}`, false, ""},
		{`{"content":[{"type":"text","text":"resultType"}],"resultType":"input_required"}`, true, ""},
		{` {"resultType":"input_required"}` + "\n", true, ""},
		{`{"resultType":"task"}`, false, ""},
		{`{"resultType":"input_required","resultType":"complete"}`, false, `mrtr: the result is not a JSON object with a string resultType: the key "resultType" appears twice`},
		{`{"resultType":"complete"} {}`, false, "mrtr: the result is not a JSON object with a string resultType: "},
		{`{"resultType":null}`, false, "mrtr: the result is not a JSON object with a string resultType: resultType: "},
		{`{"resultType":"input_required","x":` + deep + `}`, false, "nested deeper than 64 levels"},
		{`"input_required"`, false, "mrtr: the result is not a JSON object with a string resultType: "},
		{``, false, "mrtr: the result is not a JSON object with a string resultType: "},
	} {
		g, _ := mrtr.NewGuard(4)
		retry, err := g.Observe([]byte(c.result))
		if retry != c.retry || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: retry %t, %v; want %t, %q", c.result, retry, err, c.retry, c.err)
		}
		if want := map[bool]int{true: 1}[c.retry]; g.Rounds() != want {
			t.Errorf("%s: %d rounds counted", c.result, g.Rounds())
		}
	}
}

// referenceDigest is Digest as encoding/json alone would compute it: the
// arguments into an any (numbers as written), written back sorted.
func referenceDigest(name string, args []byte) (string, error) {
	canon := []byte("null")
	if len(args) > 0 {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", err
		}
		if _, err := dec.Token(); err != io.EOF {
			return "", errors.New("more than one value")
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return "", err
		}
		canon = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), canon...))
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// TestDigestStrict (issue 8 item 6): the arguments are read strictly, and
// what is read gives the digest encoding/json's canonical form gives.
func TestDigestStrict(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, bad := range []string{
		`{"a":1,"a":2}`,
		`{"x":[{"b":true,"b":true}]}`,
		nest(65),
		`{"a":1} x`,
		`[1,]`,
		"\"\xff\"",
	} {
		if d, err := mrtr.Digest("echo", json.RawMessage(bad)); err == nil || !strings.HasPrefix(err.Error(), "mrtr: the arguments are not strict JSON: ") {
			t.Errorf("Digest(%q) = %s, %v", bad, d, err)
		}
	}
	for _, good := range []string{
		`null`, `true`, `false`, `0`, `-1.50e+3`, `""`, `[]`, `{}`, nest(64),
		`{"A":1,"a":2}`,
		`{"z":[1,{"y":null,"x":[]}],"a":"<&>\u2028é\"\\\n"}`,
		` [ "b" , "a" , 1 , 1.0 , true , null ] `,
	} {
		got, err := mrtr.Digest("echo", json.RawMessage(good))
		want, werr := referenceDigest("echo", []byte(good))
		if err != nil || werr != nil || got != want {
			t.Errorf("Digest(%q) = %s, %v; encoding/json: %s, %v", good, got, err, want, werr)
		}
	}
}

// FuzzObserve holds Observe to never panicking, and to counting a round
// exactly when the result is one JSON object whose member resultType, in
// exactly that case and once, is "input_required".
func FuzzObserve(f *testing.F) {
	for _, s := range []string{
		`{"resultType":"input_required"}`, `{"resultType":"complete"}`, `{"ResultType":"input_required"}`,
		`{"resultType":"input_required","ResultType":"complete"}`, `{"resultType":"input_required","resultType":"x"}`,
		`{"resultType":"input_required"} x`, `{"a":[[[{}]]],"resultType":"input_required"}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		g, _ := mrtr.NewGuard(16)
		retry, err := g.Observe(result)
		if err != nil {
			if retry || g.Rounds() != 0 {
				t.Fatalf("%q: an error, and a round counted", result)
			}
			return
		}
		// What Observe read, encoding/json reads too; its resultType, had
		// keys been exact, is the one Observe saw.
		var members map[string]json.RawMessage
		if err := json.Unmarshal(result, &members); err != nil {
			t.Fatalf("%q: Observe read it, encoding/json did not: %v", result, err)
		}
		var rt string
		if raw, ok := members["resultType"]; ok {
			if err := json.Unmarshal(raw, &rt); err != nil {
				t.Fatalf("%q: resultType %s is not a string", result, raw)
			}
		}
		if retry != (rt == "input_required") || g.Rounds() != map[bool]int{true: 1}[retry] {
			t.Fatalf("%q: retry %t, %d rounds", result, retry, g.Rounds())
		}
	})
}

// FuzzDigest holds Digest to never panicking, and to giving, for every
// argument it accepts, the digest of encoding/json's canonical form.
func FuzzDigest(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.50,"<x>"],"a":{"d":null,"c":true}}`, `{"a":1,"a":2}`, `[[[]]]`, `"\u2028"`, `1e400`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		got, err := mrtr.Digest("tool", args)
		if err != nil {
			return
		}
		if want, err := referenceDigest("tool", args); err != nil || got != want {
			t.Fatalf("%q: %s; encoding/json: %s, %v", args, got, want, err)
		}
	})
}
