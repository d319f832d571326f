package mrtr

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wopneg/wopneg/internal/strictjson"
)

// Errors of [Sealer.Open]. Each refusal wraps exactly one of them, or is
// the mcp_mrtr_rounds_exceeded error of a round past the Sealer's bound,
// or the error of the [NonceStore] ([ErrNonceStoreFull], a database's),
// so a server can tell a replay from a forgery with errors.Is; all of them
// are answered to the client the same way (the reference host uses
// JSON-RPC -32602), so that the answer says nothing about which check
// failed.
var (
	// ErrMalformed: not two parts, too long, or claims that are not the
	// closed claims object of version 1, with a nonce and a round of at
	// least 1.
	ErrMalformed = errors.New("mrtr: requestState is malformed")
	// ErrSignature: the second part is not, byte for byte, the unpadded
	// base64url MAC of the first made by a key the Sealer holds.
	ErrSignature = errors.New("mrtr: requestState was not sealed by this host")
	// ErrExpired: the state is past its expiry.
	ErrExpired = errors.New("mrtr: requestState has expired")
	// ErrBinding: the state was issued for another principal, tenant, run,
	// interrupt or request; the refusal's text names which ("mrtr:
	// requestState is bound to another principal"), and nothing of its
	// value.
	ErrBinding = errors.New("mrtr: requestState is bound to another request")
	// ErrReplayed: the state was opened before.
	ErrReplayed = errors.New("mrtr: requestState was used before")
)

// bindingError is the refusal of a state bound to another principal,
// tenant, run, interrupt or request: it names the claim.
type bindingError string

func (e bindingError) Error() string { return "mrtr: requestState is bound to another " + string(e) }
func (bindingError) Unwrap() error   { return ErrBinding }

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
	V int64  `json:"v"`
	P string `json:"p"`
	T string `json:"t"`
	R string `json:"r"`
	I string `json:"i"`
	D string `json:"d"`
	N int64  `json:"n"`
	E int64  `json:"e"`
	J string `json:"j"`
}

// Key is one HMAC key of a Sealer.
type Key struct {
	// ID names the key in errors; the state does not carry it.
	ID string
	// Secret is at least 32 random bytes (the output size of SHA-256,
	// below which HMAC-SHA-256 is weaker than it needs to be).
	Secret []byte
}

const (
	// minKeyBytes is the shortest Key.Secret a Sealer accepts.
	minKeyBytes = 32
	// defaultTTL is how long a requestState opens when SealerOptions.TTL
	// is zero: ten minutes, as the reference host.
	defaultTTL = 10 * time.Minute
	// maxStateBytes bounds a requestState that Open reads; a longer one is
	// malformed before any work is spent on it.
	maxStateBytes = 4096
	// macBytes is the length of a state's second part: the unpadded
	// base64url of an HMAC-SHA-256.
	macBytes = 43
)

// SealerOptions configures a [Sealer].
type SealerOptions struct {
	// Keys are the HMAC keys: Keys[0] seals, every key opens. At least one
	// is required; IDs must be distinct.
	Keys []Key
	// MaxRounds is the facet's mcp.mrtr.maxRounds, 1 to 16: the Sealer
	// seals no later round.
	MaxRounds int
	// TTL is how long a state opens; zero means ten minutes.
	TTL time.Duration
	// Nonces keeps the nonces of opened states. Nil means a store of the
	// Sealer's own, in memory, on the Sealer's clock and bounded by
	// NonceCapacity and NoncesPerPrincipal; a host with several replicas
	// gives them a shared store.
	Nonces NonceStore
	// NonceCapacity bounds the Sealer's own store (when Nonces is nil):
	// how many unexpired nonces it holds before it refuses new states with
	// ErrNonceStoreFull. Zero or less means 100,000.
	NonceCapacity int
	// NoncesPerPrincipal is how many of those one principal of a tenant
	// may hold (Binding.Principal within Binding.Tenant), so that one
	// caller cannot fill the store for everyone. Zero or less
	// means a hundredth of NonceCapacity; it is at least 1 and at most
	// NonceCapacity.
	NoncesPerPrincipal int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnRefuse, when set, is called with the error of every state Open
	// refuses, before Open returns it: the metrics hook through which a
	// host counts refusals by kind (errors.Is against the Err values),
	// since a burst of ErrSignature after a key rotation or of ErrReplayed
	// across replicas is what an operator must see. It runs on the request
	// path: keep it to a counter increment.
	OnRefuse func(error)
}

// Sealer seals and opens requestStates. It is safe for concurrent use.
// The zero Sealer seals nothing and opens nothing.
type Sealer struct {
	keys      atomic.Pointer[[]*sealKey]
	maxRounds int
	ttl       time.Duration
	nonces    NonceStore
	now       func() time.Time
	onRefuse  func(error)
}

// sealKey is a Key's secret with the HMAC states made from it, reused from
// one MAC to the next.
type sealKey struct {
	macs sync.Pool // of *macState
}

type macState struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

func newSealKey(secret []byte) *sealKey {
	secret = bytes.Clone(secret)
	k := &sealKey{}
	k.macs.New = func() any { return &macState{h: hmac.New(sha256.New, secret)} }
	return k
}

// mac writes into dst the unpadded base64url HMAC-SHA-256 of head.
func (k *sealKey) mac(dst *[macBytes]byte, head []byte) {
	m := k.macs.Get().(*macState)
	m.h.Reset()
	m.h.Write(head)
	base64.RawURLEncoding.Encode(dst[:], m.h.Sum(m.sum[:0]))
	k.macs.Put(m)
}

// NewSealer checks opts and returns a Sealer.
func NewSealer(opts SealerOptions) (*Sealer, error) {
	if err := inRange("SealerOptions.MaxRounds", opts.MaxRounds); err != nil {
		return nil, err
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("mrtr: SealerOptions.TTL %v is negative", opts.TTL)
	}
	s := &Sealer{maxRounds: opts.MaxRounds, ttl: opts.TTL, nonces: opts.Nonces, now: opts.Now, onRefuse: opts.OnRefuse}
	if s.ttl == 0 {
		s.ttl = defaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.nonces == nil {
		// One clock: a store that judged expiry by another could forget a
		// nonce whose state this Sealer still opens.
		s.nonces = newMemoryNonces(opts.NonceCapacity, opts.NoncesPerPrincipal, s.now)
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
	own := make([]*sealKey, len(keys))
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if len(k.Secret) < minKeyBytes {
			return fmt.Errorf("mrtr: key %q has %d bytes; want at least %d", k.ID, len(k.Secret), minKeyBytes)
		}
		if seen[k.ID] {
			return fmt.Errorf("mrtr: key id %q appears twice", k.ID)
		}
		seen[k.ID] = true
		own[i] = newSealKey(k.Secret)
	}
	s.keys.Store(&own)
	return nil
}

// Seal issues the requestState of round round of the invocation b names:
// round 1 for its first input_required result, and the opened state's
// Round+1 for each after. Round maxRounds+1 is refused with
// mcp_mrtr_rounds_exceeded (HTTP 422, details {rounds, maxRounds}): the
// server answers that instead of another input_required result.
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
		N: int64(round), E: s.now().Add(s.ttl).UnixMilli(), J: base64.RawURLEncoding.EncodeToString(nonce),
	})
	if err != nil {
		return "", err
	}
	head := base64.RawURLEncoding.AppendEncode(nil, claims)
	var sig [macBytes]byte
	(*s.keys.Load())[0].mac(&sig, head)
	return string(append(append(head, '.'), sig[:]...)), nil
}

// Open checks a requestState against the binding of the request that
// echoed it, and consumes it. It checks, in order: the shape and size; the
// MAC, in constant time, against every key; the claims, strictly; every
// binding; the round (one past the Sealer's bound, after the bound was
// lowered, is mcp_mrtr_rounds_exceeded); the expiry; and last the nonce,
// so that a refused state is never consumed. Each refusal wraps one of the
// Err values, or is the rounds error or the error of the NonceStore, which
// refuses the state as surely.
func (s *Sealer) Open(ctx context.Context, state string, b Binding) (Claims, error) {
	c, err := s.open(ctx, state, b)
	if err != nil && s.onRefuse != nil {
		s.onRefuse(err)
	}
	return c, err
}

// openBuf holds a state's bytes while Open reads them: its first part, to
// MAC, and the claims it encodes.
type openBuf struct{ head, claims []byte }

var openBufs = sync.Pool{New: func() any { return new(openBuf) }}

// strictBase64 refuses the non-zero padding bits that would give a claims
// part a second spelling.
var strictBase64 = base64.RawURLEncoding.Strict()

func (s *Sealer) open(ctx context.Context, state string, b Binding) (Claims, error) {
	if err := b.check(); err != nil {
		return Claims{}, err
	}
	if len(state) > maxStateBytes {
		return Claims{}, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxStateBytes)
	}
	head, sig, ok := strings.Cut(state, ".")
	if !ok || strings.Contains(sig, ".") {
		return Claims{}, fmt.Errorf("%w: want two parts", ErrMalformed)
	}
	buf := openBufs.Get().(*openBuf)
	defer openBufs.Put(buf)
	buf.head = append(buf.head[:0], head...)
	// The MAC is compared as written, so that exactly one spelling of a
	// state opens (a base64 decoder would skip CR and LF). Every key is
	// tried, found or not, so the time taken does not say which key (or
	// whether any) matched.
	var got, want [macBytes]byte
	n := copy(got[:], sig)
	verified := 0
	keys := s.keys.Load()
	if keys == nil {
		return Claims{}, ErrSignature // the zero Sealer holds no key
	}
	for _, k := range *keys {
		k.mac(&want, buf.head)
		verified |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	if verified == 0 || n != len(sig) || n != macBytes {
		return Claims{}, ErrSignature
	}
	buf.claims = slices.Grow(buf.claims[:0], strictBase64.DecodedLen(len(buf.head)))
	n, err := strictBase64.Decode(buf.claims[:cap(buf.claims)], buf.head)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: the claims are not base64url", ErrMalformed)
	}
	c, err := readClaims(buf.claims[:n])
	if err != nil || c.V != 1 {
		return Claims{}, fmt.Errorf("%w: the claims are not version 1 claims", ErrMalformed)
	}
	for _, f := range [...]struct{ claim, got, want string }{
		{"principal", c.P, b.Principal}, {"tenant", c.T, b.Tenant}, {"run", c.R, b.RunID},
		{"interrupt", c.I, b.InterruptID}, {"request", c.D, b.RequestDigest},
	} {
		if f.got != f.want {
			return Claims{}, bindingError(f.claim)
		}
	}
	if c.N < 1 {
		return Claims{}, fmt.Errorf("%w: round %d", ErrMalformed, c.N)
	}
	if c.N > int64(s.maxRounds) {
		return Claims{}, roundsExceeded(int(c.N), s.maxRounds)
	}
	expires := time.UnixMilli(c.E)
	if !s.now().Before(expires) {
		return Claims{}, ErrExpired
	}
	if c.J == "" {
		return Claims{}, fmt.Errorf("%w: no nonce", ErrMalformed)
	}
	claims := Claims{Binding: b, Round: int(c.N), ExpiresAt: expires.UTC(), Nonce: c.J}
	if err := s.nonces.Consume(ctx, claims); err != nil {
		return Claims{}, err
	}
	return claims, nil
}

// readClaims reads the claims strictly, in one walk: an object of the
// claimsJSON keys, each at most once and of its type (strings, and
// integers as encoding/json reads them into an int), and nothing else.
func readClaims(data []byte) (claimsJSON, error) {
	var c claimsJSON
	strs := [...]struct {
		key string
		to  *string
	}{{"p", &c.P}, {"t", &c.T}, {"r", &c.R}, {"i", &c.I}, {"d", &c.D}, {"j", &c.J}}
	ints := [...]struct {
		key string
		to  *int64
	}{{"v", &c.V}, {"n", &c.N}, {"e", &c.E}}
	r := strictjson.NewReader(data, 1)
	err := r.Object(func(key string) error {
		for _, f := range strs {
			if f.key == key {
				v, err := r.String()
				*f.to = v
				return err
			}
		}
		for _, f := range ints {
			if f.key == key {
				v, err := r.Number()
				if err == nil {
					*f.to, err = strconv.ParseInt(string(v), 10, 64)
				}
				return err
			}
		}
		return errors.New("unknown claim")
	})
	if err == nil {
		err = r.End()
	}
	return c, err
}

// Digest is the request digest a requestState is bound to: base64url,
// unpadded, of SHA-256 over the request's name (tool, prompt or resource),
// a newline, and its arguments in canonical JSON (keys sorted, no
// insignificant space, numbers as written), so that the same arguments in
// another key order or spacing give the same digest and any other
// arguments do not. The arguments are read strictly: anything but one
// JSON value, a key repeated in an object, or nesting deeper than 64
// levels is an error. Nil arguments are the JSON null.
func Digest(name string, arguments []byte) (string, error) {
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
