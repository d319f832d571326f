package mrtr

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

// Errors of [Sealer.Open]. Each refusal wraps exactly one of them, so a
// server can tell a replay from a forgery with errors.Is; all of them are
// answered to the client the same way (the reference host uses JSON-RPC
// -32602), so that the answer says nothing about which check failed.
var (
	// ErrMalformed: not two parts, too long, or claims that are not the
	// closed claims object.
	ErrMalformed = errors.New("mrtr: requestState is malformed")
	// ErrSignature: the second part is not, byte for byte, the unpadded
	// base64url MAC of the first made by a key the Sealer holds.
	ErrSignature = errors.New("mrtr: requestState was not sealed by this host")
	// ErrExpired: the state is past its expiry.
	ErrExpired = errors.New("mrtr: requestState has expired")
	// ErrBinding: the state was issued for another principal, tenant, run,
	// interrupt or request; [BindingError] names which.
	ErrBinding = errors.New("mrtr: requestState is bound to another request")
	// ErrRound: the state's round is outside 1 to the Sealer's maxRounds.
	ErrRound = errors.New("mrtr: requestState names a round out of bounds")
	// ErrReplayed: the state was opened before.
	ErrReplayed = errors.New("mrtr: requestState was used before")
)

// BindingError names the claim that does not match.
type BindingError struct {
	// Claim is "principal", "tenant", "run", "interrupt" or "request".
	Claim string
}

// Error names the claim, and nothing of its value.
func (e *BindingError) Error() string {
	return "mrtr: requestState is bound to another " + e.Claim
}

// Unwrap returns ErrBinding.
func (e *BindingError) Unwrap() error { return ErrBinding }

// Binding is what a requestState is bound to: who asked, in which tenant,
// for which run and interrupt, and which request.
type Binding struct {
	// Principal identifies the caller, as the host resolved it (for
	// example the Subject's issuer and subjectId); it must not be empty.
	Principal string
	// Tenant is the caller's tenant; it must not be empty.
	Tenant string
	// RunID is the run the interrupt belongs to; it must not be empty.
	RunID string
	// InterruptID is the interrupt the input requests answer; it must not
	// be empty.
	InterruptID string
	// RequestDigest is [Digest] of the request; it must not be empty.
	RequestDigest string
}

func (b Binding) check() error {
	for _, f := range [...]struct{ name, v string }{
		{"Principal", b.Principal}, {"Tenant", b.Tenant}, {"RunID", b.RunID}, {"InterruptID", b.InterruptID}, {"RequestDigest", b.RequestDigest},
	} {
		if f.v == "" {
			return fmt.Errorf("mrtr: Binding.%s is empty; a state bound to nothing binds nothing", f.name)
		}
	}
	return nil
}

// Claims are what an opened requestState says.
type Claims struct {
	Binding
	// Round is the round the state was issued for: the Nth input_required
	// result of the invocation carries round N.
	Round int
	// ExpiresAt is when the state stops opening.
	ExpiresAt time.Time
	// Nonce makes the state single-use.
	Nonce string
}

// claimsJSON is the wire form of the claims: short keys, as the reference
// host's, with the tenant kept apart from the principal and the round
// added.
type claimsJSON struct {
	V int    `json:"v"`
	P string `json:"p"`
	T string `json:"t"`
	R string `json:"r"`
	I string `json:"i"`
	D string `json:"d"`
	N int    `json:"n"`
	E int64  `json:"e"`
	J string `json:"j"`
}

// Key is one HMAC key of a Sealer.
type Key struct {
	// ID names the key in logs; the state does not carry it.
	ID string
	// Secret is at least MinKeyBytes random bytes.
	Secret []byte
}

// MinKeyBytes is the shortest key a Sealer accepts: the output size of
// SHA-256, below which HMAC-SHA-256 is weaker than it needs to be.
const MinKeyBytes = 32

// DefaultTTL is how long a requestState opens when SealerOptions.TTL is
// zero: ten minutes, as the reference host.
const DefaultTTL = 10 * time.Minute

// MaxStateBytes bounds a requestState that Open reads; a longer one is
// malformed before any work is spent on it.
const MaxStateBytes = 4096

// SealerOptions configures a [Sealer].
type SealerOptions struct {
	// Keys are the HMAC keys: Keys[0] seals, every key opens. At least one
	// is required; IDs must be distinct.
	Keys []Key
	// MaxRounds is the facet's mcp.mrtr.maxRounds, 1 to 16: the Sealer
	// seals no later round.
	MaxRounds int
	// TTL is how long a state opens; zero means DefaultTTL.
	TTL time.Duration
	// Nonces keeps the nonces of opened states. Nil means a
	// NewMemoryNonces(DefaultNonceCapacity, 0) of the Sealer's own, on the
	// Sealer's clock; a host with several replicas gives them a shared
	// store.
	Nonces NonceStore
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Sealer seals and opens requestStates. It is safe for concurrent use.
type Sealer struct {
	keys      atomic.Pointer[[]Key]
	maxRounds int
	ttl       time.Duration
	nonces    NonceStore
	now       func() time.Time
}

// NewSealer checks opts and returns a Sealer.
func NewSealer(opts SealerOptions) (*Sealer, error) {
	if opts.MaxRounds < negotiate.MinRounds || opts.MaxRounds > negotiate.MaxRounds {
		return nil, fmt.Errorf("mrtr: SealerOptions.MaxRounds %d is outside %d–%d", opts.MaxRounds, negotiate.MinRounds, negotiate.MaxRounds)
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("mrtr: SealerOptions.TTL %v is negative", opts.TTL)
	}
	s := &Sealer{maxRounds: opts.MaxRounds, ttl: opts.TTL, nonces: opts.Nonces, now: opts.Now}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.nonces == nil {
		// One clock: a store that judged expiry by another could forget a
		// nonce whose state this Sealer still opens.
		s.nonces = NewMemoryNonces(DefaultNonceCapacity, 0).WithClock(s.now)
	}
	if err := s.SetKeys(opts.Keys); err != nil {
		return nil, err
	}
	return s, nil
}

// SetKeys replaces the keys: keys[0] seals from now on, and every key in
// keys opens. Rotate by putting the new key first and keeping the old ones
// until the states they sealed have expired (the TTL).
func (s *Sealer) SetKeys(keys []Key) error {
	if len(keys) == 0 {
		return errors.New("mrtr: no keys; a Sealer needs one to seal with")
	}
	own := make([]Key, len(keys))
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if len(k.Secret) < MinKeyBytes {
			return fmt.Errorf("mrtr: key %q has %d bytes; want at least %d", k.ID, len(k.Secret), MinKeyBytes)
		}
		if seen[k.ID] {
			return fmt.Errorf("mrtr: key id %q appears twice", k.ID)
		}
		seen[k.ID] = true
		own[i] = Key{ID: k.ID, Secret: bytes.Clone(k.Secret)}
	}
	s.keys.Store(&own)
	return nil
}

// MaxRounds returns the Sealer's bound.
func (s *Sealer) MaxRounds() int { return s.maxRounds }

// Seal issues the requestState of round round of the invocation b names.
// Round maxRounds+1 is refused with mcp_mrtr_rounds_exceeded (HTTP 422,
// details {rounds, maxRounds}): the server answers that instead of another
// input_required result.
func (s *Sealer) Seal(b Binding, round int) (string, error) {
	if err := b.check(); err != nil {
		return "", err
	}
	if round > s.maxRounds {
		return "", roundsExceeded(round, s.maxRounds)
	}
	if round < 1 {
		return "", fmt.Errorf("mrtr: round %d; rounds start at 1", round)
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	claims, err := json.Marshal(claimsJSON{
		V: 1, P: b.Principal, T: b.Tenant, R: b.RunID, I: b.InterruptID, D: b.RequestDigest,
		N: round, E: s.now().Add(s.ttl).UnixMilli(), J: base64.RawURLEncoding.EncodeToString(nonce),
	})
	if err != nil {
		return "", err
	}
	head := base64.RawURLEncoding.EncodeToString(claims)
	key := (*s.keys.Load())[0]
	return head + "." + base64.RawURLEncoding.EncodeToString(mac(key.Secret, head)), nil
}

// Next returns the round after the one whose state was opened (round 1
// when prev is nil, the first input_required of an invocation), or
// mcp_mrtr_rounds_exceeded when that round is past the bound.
func (s *Sealer) Next(prev *Claims) (int, error) {
	round := 1
	if prev != nil {
		round = prev.Round + 1
	}
	if round > s.maxRounds {
		return 0, roundsExceeded(round, s.maxRounds)
	}
	return round, nil
}

// Open checks a requestState against the binding of the request that
// echoed it, and consumes it. It checks, in order: the shape and size; the
// MAC, in constant time, against every key; the claims, strictly; every
// binding; the round; the expiry; and last the nonce, so that a refused
// state is never consumed. Each refusal wraps one of the Err values, or is
// the error of the NonceStore (ErrNonceStoreFull, a database's), which
// refuses the state as surely.
func (s *Sealer) Open(ctx context.Context, state string, b Binding) (Claims, error) {
	if err := b.check(); err != nil {
		return Claims{}, err
	}
	if len(state) > MaxStateBytes {
		return Claims{}, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxStateBytes)
	}
	head, sig, ok := strings.Cut(state, ".")
	if !ok || strings.Contains(sig, ".") {
		return Claims{}, fmt.Errorf("%w: want two parts", ErrMalformed)
	}
	verified := false
	for _, k := range *s.keys.Load() {
		// The MAC is compared as written, so that exactly one spelling of
		// a state opens (a base64 decoder would skip CR and LF). Every key
		// is tried, found or not, so the time taken does not say which key
		// (or whether any) matched.
		if hmac.Equal([]byte(sig), []byte(base64.RawURLEncoding.EncodeToString(mac(k.Secret, head)))) {
			verified = true
		}
	}
	if !verified {
		return Claims{}, ErrSignature
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(head)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: the claims are not base64url", ErrMalformed)
	}
	var c claimsJSON
	if err := strictjson.Decode(raw, &c); err != nil || c.V != 1 {
		return Claims{}, fmt.Errorf("%w: the claims are not version 1 claims", ErrMalformed)
	}
	for _, f := range [...]struct{ claim, got, want string }{
		{"principal", c.P, b.Principal}, {"tenant", c.T, b.Tenant}, {"run", c.R, b.RunID},
		{"interrupt", c.I, b.InterruptID}, {"request", c.D, b.RequestDigest},
	} {
		if f.got != f.want {
			return Claims{}, &BindingError{Claim: f.claim}
		}
	}
	if c.N < 1 || c.N > s.maxRounds {
		return Claims{}, fmt.Errorf("%w: round %d of at most %d", ErrRound, c.N, s.maxRounds)
	}
	expires := time.UnixMilli(c.E)
	if !s.now().Before(expires) {
		return Claims{}, ErrExpired
	}
	if c.J == "" {
		return Claims{}, fmt.Errorf("%w: no nonce", ErrMalformed)
	}
	claims := Claims{Binding: b, Round: c.N, ExpiresAt: expires.UTC(), Nonce: c.J}
	if err := s.nonces.Consume(ctx, claims); err != nil {
		return Claims{}, err
	}
	return claims, nil
}

func mac(key []byte, head string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head))
	return m.Sum(nil)
}

// Digest is the request digest a requestState is bound to: base64url,
// unpadded, of SHA-256 over the request's name (tool, prompt or resource),
// a newline, and its arguments in canonical JSON (keys sorted, no
// insignificant space, numbers as written), so that the same arguments in
// another key order or spacing give the same digest and any other
// arguments do not. The arguments are read strictly: anything but one
// JSON value, a key repeated in an object, or nesting deeper than 64
// levels is an error. Nil arguments are the JSON null.
func Digest(name string, arguments json.RawMessage) (string, error) {
	canon := []byte("null")
	if len(arguments) > 0 {
		r := strictjson.NewReader(arguments, 0)
		v, err := tree(r)
		if err == nil {
			err = r.End()
		}
		if err != nil {
			return "", fmt.Errorf("mrtr: the arguments are not strict JSON: %w", err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return "", err
		}
		canon = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n'})
	h.Write(canon)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)), nil
}

// tree reads the next value of r as encoding/json would decode it into an
// any, numbers kept as written; encoding/json writes it back with its keys
// sorted.
func tree(r *strictjson.Reader) (any, error) {
	kind, err := r.Next()
	if err != nil {
		return nil, err
	}
	switch kind {
	case strictjson.Object:
		m := map[string]any{}
		return m, r.Object(func(key string) error {
			v, err := tree(r)
			m[key] = v
			return err
		})
	case strictjson.Array:
		a := []any{}
		err := r.Array(func(int) error {
			v, err := tree(r)
			a = append(a, v)
			return err
		})
		return a, err
	case strictjson.String:
		return r.String()
	case strictjson.Number:
		return r.Number()
	case strictjson.Bool:
		return r.Bool()
	}
	return nil, r.Skip() // null
}
