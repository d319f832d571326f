package mrtr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/negotiate/mrtr"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func key(id string, b byte) mrtr.Key { return mrtr.Key{ID: id, Secret: bytes.Repeat([]byte{b}, 32)} }

var binding = mrtr.Binding{
	Principal: "https://idp.example|u-42", Tenant: "acme", RunID: "acme/run-0123456789abcdef",
	InterruptID: "int-1", RequestDigest: "d",
}

// clock is a settable clock shared by a Sealer and its nonce store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newSealer(t *testing.T, c *clock, maxRounds int, keys ...mrtr.Key) *mrtr.Sealer {
	t.Helper()
	s, err := mrtr.NewSealer(mrtr.SealerOptions{
		Keys: keys, MaxRounds: maxRounds, Now: c.now,
		NonceCapacity: 16, NoncesPerPrincipal: 16,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGuard(t *testing.T) {
	g, err := mrtr.NewGuard(4)
	if err != nil {
		t.Fatal(err)
	}
	input := []byte(`{"resultType":"input_required","inputRequests":{"a":{}},"requestState":"x"}`)
	// Rounds 1 to 4 may be retried (digest A12).
	for round := 1; round <= 4; round++ {
		retry, err := g.Observe(input)
		if !retry || err != nil || g.Rounds() != round {
			t.Fatalf("round %d: retry %t, %v, rounds %d", round, retry, err, g.Rounds())
		}
	}
	// Round 5 is refused: 422, details {rounds: 5, maxRounds: 4} (A11).
	retry, err := g.Observe(input)
	var we *wperrors.Error
	if retry || !errors.As(err, &we) || we.Code != wperrors.MCPRoundsExceeded || we.Code.HTTPStatus() != 422 ||
		we.Details["rounds"] != 5 || we.Details["maxRounds"] != 4 {
		t.Fatalf("round 5: retry %t, %#v", retry, err)
	}
	if err.Error() != "mcp_mrtr_rounds_exceeded: MCP tool result needed 5 rounds; at most 4 are allowed" {
		t.Errorf("%q", err)
	}

	g, _ = mrtr.NewGuard(1)
	for _, c := range []struct {
		result string
		retry  bool
		err    bool
	}{
		{`{"resultType":"complete","content":[]}`, false, false},
		{`{"content":[]}`, false, false},
		{`{"resultType":7}`, false, true},
		{`[]`, false, true},
		{`{"resultType":"input_required"}`, true, false},
	} {
		retry, err := g.Observe([]byte(c.result))
		if retry != c.retry || (err != nil) != c.err {
			t.Errorf("%s: retry %t, %v", c.result, retry, err)
		}
	}
	if err := g.Next(); err == nil || g.Rounds() != 2 {
		t.Errorf("Next after round 1 of 1: %v, %d rounds", err, g.Rounds())
	}
	if g.MaxRounds() != 1 {
		t.Errorf("MaxRounds %d", g.MaxRounds())
	}

	for _, bad := range []int{0, 17} {
		if _, err := mrtr.NewGuard(bad); err == nil {
			t.Errorf("NewGuard(%d) succeeded", bad)
		}
	}
	for _, good := range []int{1, 16} {
		if g, err := mrtr.NewGuard(good); err != nil || g.MaxRounds() != good || g.Rounds() != 0 {
			t.Errorf("NewGuard(%d): %v", good, err)
		}
	}
	if _, err := mrtr.NewGuard(17); err == nil || err.Error() != "mrtr: maxRounds 17 is outside 1–16" {
		t.Errorf("NewGuard(17): %v", err)
	}
}

// TestZeroGuard: a Guard made without a bound allows no round, so that a
// forgotten bound fails closed.
func TestZeroGuard(t *testing.T) {
	var g mrtr.Guard
	err := g.Next()
	var we *wperrors.Error
	if !errors.As(err, &we) || we.Code != wperrors.MCPRoundsExceeded || we.Details["rounds"] != 1 || we.Details["maxRounds"] != 0 {
		t.Errorf("Next on the zero Guard: %v", err)
	}
}

func TestSealOpen(t *testing.T) {
	c := &clock{t: t0}
	s := newSealer(t, c, 4, key("k1", 1))
	state, err := s.Seal(binding, 1)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(state, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(head)
	var claims map[string]any
	_ = json.Unmarshal(raw, &claims)
	if len(claims) != 9 || claims["v"] != 1.0 || claims["p"] != binding.Principal || claims["t"] != "acme" ||
		claims["r"] != binding.RunID || claims["i"] != "int-1" || claims["d"] != "d" || claims["n"] != 1.0 ||
		claims["e"] != float64(t0.Add(mrtr.DefaultTTL).UnixMilli()) || len(claims["j"].(string)) != 22 {
		t.Errorf("claims %v", claims)
	}

	got, err := s.Open(context.Background(), state, binding)
	if err != nil {
		t.Fatal(err)
	}
	if got.Round != 1 || got.Binding != binding || !got.ExpiresAt.Equal(t0.Add(mrtr.DefaultTTL)) || got.Nonce != claims["j"] {
		t.Errorf("claims %+v", got)
	}
	// A second use fails.
	if _, err := s.Open(context.Background(), state, binding); !errors.Is(err, mrtr.ErrReplayed) {
		t.Errorf("second Open: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	c := &clock{t: t0}
	s := newSealer(t, c, 2, key("k1", 1))
	other := newSealer(t, c, 2, key("k9", 9))
	fresh := func() string {
		st, err := s.Seal(binding, 1)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Signed with the right key: only the claims are wrong.
	signed := func(head string) string { return head + "." + sign(key("k1", 1).Secret, head) }
	forge := func(claims string) string { return signed(base64.RawURLEncoding.EncodeToString([]byte(claims))) }
	with := func(f func(*mrtr.Binding)) mrtr.Binding { b := binding; f(&b); return b }
	exp := t0.Add(time.Hour).UnixMilli()
	claims := func(n int, e int64, j string) string {
		b, _ := json.Marshal(map[string]any{"v": 1, "p": binding.Principal, "t": "acme", "r": binding.RunID, "i": "int-1", "d": "d", "n": n, "e": e, "j": j})
		return string(b)
	}
	cases := []struct {
		name    string
		state   string
		binding mrtr.Binding
		want    error
		claim   string
	}{
		{"another host's key", func() string { st, _ := other.Seal(binding, 1); return st }(), binding, mrtr.ErrSignature, ""},
		{"a flipped claim byte", func() string { st := fresh(); return "f" + st[1:] }(), binding, mrtr.ErrSignature, ""},
		{"no MAC", strings.Split(fresh(), ".")[0], binding, mrtr.ErrMalformed, ""},
		{"three parts", fresh() + ".x", binding, mrtr.ErrMalformed, ""},
		{"a MAC not base64url", strings.Split(fresh(), ".")[0] + ".+/==", binding, mrtr.ErrSignature, ""},
		{"claims not base64url", signed("e30!"), binding, mrtr.ErrMalformed, ""},
		{"claims not JSON", forge("{"), binding, mrtr.ErrMalformed, ""},
		{"too long", strings.Repeat("a", mrtr.MaxStateBytes+1), binding, mrtr.ErrMalformed, ""},
		{"as long as may be", strings.Repeat("a", mrtr.MaxStateBytes-2) + ".a", binding, mrtr.ErrSignature, ""},
		{"another principal", fresh(), with(func(b *mrtr.Binding) { b.Principal = "https://idp.example|u-43" }), mrtr.ErrBinding, "principal"},
		{"another tenant", fresh(), with(func(b *mrtr.Binding) { b.Tenant = "globex" }), mrtr.ErrBinding, "tenant"},
		{"another run", fresh(), with(func(b *mrtr.Binding) { b.RunID = "acme/run-fedcba9876543210" }), mrtr.ErrBinding, "run"},
		{"another interrupt", fresh(), with(func(b *mrtr.Binding) { b.InterruptID = "int-2" }), mrtr.ErrBinding, "interrupt"},
		{"another request", fresh(), with(func(b *mrtr.Binding) { b.RequestDigest = "e" }), mrtr.ErrBinding, "request"},
		{"round 0", forge(claims(0, exp, "n0")), binding, mrtr.ErrMalformed, ""},
		// Sealed before the bound was lowered to 2: round 3 is past it.
		{"round past the bound", forge(claims(3, exp, "n3")), binding, wperrors.MCPRoundsExceeded, ""},
		{"expired", forge(claims(1, t0.UnixMilli(), "n1")), binding, mrtr.ErrExpired, ""},
		{"an unknown claim", forge(`{"v":1,"p":"x","t":"acme","r":"r","i":"i","d":"d","n":1,"e":1,"j":"j","admin":true}`), binding, mrtr.ErrMalformed, ""},
		{"a repeated claim", forge(`{"v":1,"p":"x","p":"y","t":"acme","r":"r","i":"i","d":"d","n":1,"e":1,"j":"j"}`), binding, mrtr.ErrMalformed, ""},
		{"version 2", forge(`{"v":2,"p":"x","t":"acme","r":"r","i":"i","d":"d","n":1,"e":1,"j":"j"}`), binding, mrtr.ErrMalformed, ""},
		{"no nonce", forge(claims(1, exp, "")), binding, mrtr.ErrMalformed, ""},
		{"a round not an integer", forge(strings.Replace(claims(1, exp, "n"), `"n":1`, `"n":1.0`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a round in exponent form", forge(strings.Replace(claims(1, exp, "n"), `"n":1`, `"n":1e0`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a round as a string", forge(strings.Replace(claims(1, exp, "n"), `"n":1`, `"n":"1"`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a version out of range", forge(strings.Replace(claims(1, exp, "n"), `"v":1`, `"v":99999999999999999999`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a null principal", forge(strings.Replace(claims(1, exp, "n"), `"p":"https://idp.example|u-42"`, `"p":null`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a principal as a number", forge(strings.Replace(claims(1, exp, "n"), `"p":"https://idp.example|u-42"`, `"p":7`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a nested claim", forge(strings.Replace(claims(1, exp, "n"), `"j":"n"`, `"j":{"n":1}`, 1)), binding, mrtr.ErrMalformed, ""},
		{"claims in an array", forge("[" + claims(1, exp, "n") + "]"), binding, mrtr.ErrMalformed, ""},
		{"bytes after the claims", forge(claims(1, exp, "n") + " {}"), binding, mrtr.ErrMalformed, ""},
		{"a key in another case", forge(strings.Replace(claims(1, exp, "n"), `"j":"n"`, `"J":"n"`, 1)), binding, mrtr.ErrMalformed, ""},
		{"a MAC one character short", func() string { st := fresh(); return st[:len(st)-1] }(), binding, mrtr.ErrSignature, ""},
		{"a MAC one character long", fresh() + "A", binding, mrtr.ErrSignature, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Open(context.Background(), c.state, c.binding)
			if !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v", err, c.want)
			}
			if c.claim != "" && err.Error() != "mrtr: requestState is bound to another "+c.claim {
				t.Errorf("%v, want the %s named", err, c.claim)
			}
		})
	}
	// A state refused for its binding was not consumed: its owner opens it.
	st := fresh()
	if _, err := s.Open(context.Background(), st, with(func(b *mrtr.Binding) { b.Tenant = "globex" })); !errors.Is(err, mrtr.ErrBinding) {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), st, binding); err != nil {
		t.Errorf("the owner could not open a state a stranger presented: %v", err)
	}
	// Expiry: good until the TTL, not at it.
	st = fresh()
	c.add(mrtr.DefaultTTL)
	if _, err := s.Open(context.Background(), st, binding); !errors.Is(err, mrtr.ErrExpired) {
		t.Errorf("at the TTL: %v", err)
	}
}

func sign(secret []byte, head string) string {
	return base64.RawURLEncoding.EncodeToString(macOf(secret, head))
}

// TestRounds: a server that seals with the Sealer never issues round
// maxRounds+1.
func TestRounds(t *testing.T) {
	c := &clock{t: t0}
	s := newSealer(t, c, 3, key("k1", 1))
	round := 1
	for ; round <= 3; round++ {
		st, err := s.Seal(binding, round)
		if err != nil {
			t.Fatal(err)
		}
		opened, err := s.Open(context.Background(), st, binding)
		if err != nil || opened.Round != round {
			t.Fatalf("round %d opened as %d: %v", round, opened.Round, err)
		}
		round = opened.Round
	}
	_, err := s.Seal(binding, round)
	var we *wperrors.Error
	if !errors.As(err, &we) || we.Code != wperrors.MCPRoundsExceeded || we.Details["rounds"] != 4 || we.Details["maxRounds"] != 3 {
		t.Errorf("Seal after round 3: %v", err)
	}
	if _, err := s.Seal(binding, 0); err == nil {
		t.Error("Seal(0) succeeded")
	}
	if _, err := s.Seal(mrtr.Binding{}, 1); err == nil || err.Error() != "mrtr: Binding.Principal is empty; a state bound to nothing binds nothing" {
		t.Errorf("empty binding: %v", err)
	}
}

// TestRotation: states sealed with an old key open while it is kept, and
// stop opening once it is dropped; new states use the new key.
func TestRotation(t *testing.T) {
	c := &clock{t: t0}
	s := newSealer(t, c, 4, key("old", 1))
	old, _ := s.Seal(binding, 1)
	old2, _ := s.Seal(binding, 1)
	if err := s.SetKeys([]mrtr.Key{key("new", 2), key("old", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), old, binding); err != nil {
		t.Errorf("old state after rotation: %v", err)
	}
	fresh, _ := s.Seal(binding, 1)
	only := newSealer(t, c, 4, key("new", 2))
	if _, err := only.Open(context.Background(), fresh, binding); err != nil {
		t.Errorf("a new state is not sealed with the new key: %v", err)
	}
	if err := s.SetKeys([]mrtr.Key{key("new", 2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), old2, binding); !errors.Is(err, mrtr.ErrSignature) {
		t.Errorf("old state after the old key was dropped: %v", err)
	}
	for _, bad := range [][]mrtr.Key{nil, {{ID: "short", Secret: []byte("x")}}, {key("a", 1), key("a", 2)}} {
		if err := s.SetKeys(bad); err == nil {
			t.Errorf("SetKeys(%v) succeeded", bad)
		}
	}
}

// TestZeroSealer: a Sealer not made by NewSealer fails closed.
func TestZeroSealer(t *testing.T) {
	var s mrtr.Sealer
	if st, err := s.Seal(binding, 1); st != "" || !errors.Is(err, wperrors.MCPRoundsExceeded) {
		t.Errorf("Seal: %q %v", st, err)
	}
	st, _ := newSealer(t, &clock{t: t0}, 4, key("k", 1)).Seal(binding, 1)
	if _, err := s.Open(context.Background(), st, binding); !errors.Is(err, mrtr.ErrSignature) {
		t.Errorf("Open: %v", err)
	}
}

func TestSealerOptions(t *testing.T) {
	for _, c := range []struct {
		opts mrtr.SealerOptions
		want string
	}{
		{mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}}, "mrtr: SealerOptions.MaxRounds 0 is outside 1–16"},
		{mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 17}, "mrtr: SealerOptions.MaxRounds 17 is outside 1–16"},
		{mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 4, TTL: -time.Second}, "mrtr: SealerOptions.TTL -1s is negative"},
		{mrtr.SealerOptions{MaxRounds: 4}, "mrtr: no keys; a Sealer needs one to seal with"},
		{mrtr.SealerOptions{Keys: []mrtr.Key{{ID: "k", Secret: make([]byte, 31)}}, MaxRounds: 4}, `mrtr: key "k" has 31 bytes; want at least 32`},
	} {
		if _, err := mrtr.NewSealer(c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	for _, rounds := range []int{1, 4, 16} {
		s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: rounds})
		if err != nil || s.MaxRounds() != rounds {
			t.Fatal(rounds, err)
		}
	}
}

func TestDigest(t *testing.T) {
	a, err := mrtr.Digest("echo", json.RawMessage(`{"b": [1, 2.50, "<x>"], "a": {"d": null, "c": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mrtr.Digest("echo", json.RawMessage(`{"a":{"c":true,"d":null},"b":[1,2.50,"<x>"]}`))
	if a != b {
		t.Errorf("key order or spacing changed the digest: %s %s", a, b)
	}
	// sha256("echo\n" + canonical) in base64url, computed outside Go.
	if want := "cshhUJmOwVxSYVuDIccYdbDK5-au3kPnxkpTDTyfr8k"; a != want {
		t.Errorf("digest %s, want %s", a, want)
	}
	for _, other := range []struct{ name, args string }{{"echo2", `{"a":{"c":true,"d":null},"b":[1,2.50,"<x>"]}`}, {"echo", `{"a":{"c":true,"d":null},"b":[1,2.5,"<x>"]}`}} {
		if d, _ := mrtr.Digest(other.name, json.RawMessage(other.args)); d == a {
			t.Errorf("%s %s gave the same digest", other.name, other.args)
		}
	}
	n, err := mrtr.Digest("echo", nil)
	if null, _ := mrtr.Digest("echo", json.RawMessage("null")); err != nil || n == a || n != null {
		t.Errorf("no arguments: %s, %v; null: %s", n, err, null)
	}
	if empty, err := mrtr.Digest("echo", json.RawMessage{}); err != nil || empty != n {
		t.Errorf("empty arguments: %s, %v; want %s", empty, err, n)
	}
	for _, bad := range []string{`{`, `{} {}`, `{}}`} {
		if _, err := mrtr.Digest("echo", json.RawMessage(bad)); err == nil {
			t.Errorf("Digest(%q) succeeded", bad)
		}
	}
}

// OnRefuse sees every refusal of Open, with the error Open returns, and
// nothing of a state that opens: the hook a host counts refusals with.
func TestOnRefuse(t *testing.T) {
	c := &clock{t: t0}
	var refused []error
	s, err := mrtr.NewSealer(mrtr.SealerOptions{
		Keys: []mrtr.Key{key("k1", 1)}, MaxRounds: 4, Now: c.now,
		NonceCapacity: 16, NoncesPerPrincipal: 16,
		OnRefuse: func(err error) { refused = append(refused, err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	state, err := s.Seal(binding, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Open(ctx, state, binding); err != nil {
		t.Fatal(err)
	}
	if len(refused) != 0 {
		t.Fatalf("OnRefuse called for a state that opened: %v", refused)
	}
	_, replay := s.Open(ctx, state, binding)
	_, forged := s.Open(ctx, state+"x", binding)
	want := []error{replay, forged}
	if len(refused) != 2 || refused[0] != want[0] || refused[1] != want[1] {
		t.Fatalf("OnRefuse got %v, want %v", refused, want)
	}
	if !errors.Is(refused[0], mrtr.ErrReplayed) || !errors.Is(refused[1], mrtr.ErrSignature) {
		t.Errorf("OnRefuse got %v, want a replay then a bad signature", refused)
	}
}
