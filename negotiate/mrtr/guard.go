// Package mrtr bounds MCP multi-round-trip requests (MRTR, RFC 0175 §E.1):
// a tool call, prompt or resource read that answers input_required, and is
// retried with the input until it completes.
//
// Both sides are bounded by the facet's mcp.mrtr.maxRounds:
//
//   - As client, a [Guard] counts the input_required results of one
//     logical invocation and refuses round maxRounds+1 before its retry is
//     sent, with mcp_mrtr_rounds_exceeded (HTTP 422, details
//     {rounds, maxRounds}). The initial request and all its retries are
//     one invocation: the server sees at most maxRounds+1 requests.
//   - As server, a [Sealer] issues the requestState of each input_required
//     result and numbers its round: it will not seal round maxRounds+1, so
//     a server that seals its state with it never issues more than
//     maxRounds rounds.
//
// # requestState
//
// A requestState is base64url(JSON claims) "." base64url(HMAC-SHA-256 of
// the first part), without padding, as the reference host writes it. The
// claims bind the state to the principal and tenant it was issued to, the
// run and interrupt it belongs to, a digest of the request ([Digest]: the
// tool, prompt or resource and its arguments), its round, an expiry and a
// nonce. [Sealer.Open] checks the MAC in constant time against every key
// it holds, then every claim, and consumes the nonce last, so that a
// second use of the same state fails ([ErrReplayed]) while a state
// presented by the wrong caller does not burn the right caller's.
//
// Exactly one byte sequence opens a state: the MAC part is compared, in
// constant time, with the base64url MAC as the Sealer writes it, never
// decoded (a base64 decoder skips CR and LF, and would let many spellings
// of one state through).
//
// Keys rotate: the first key seals, every key opens ([Sealer.SetKeys]), so
// states issued before a rotation stay good until they expire. Nonces are
// kept by a [NonceStore], which Open gives the opened claims and which
// fails closed: any error it returns refuses the state. [MemoryNonces] is
// a bounded in-memory one that refuses new states rather than forget a
// live nonce, keeps each principal to a share of it (by default a
// hundredth), forgets expired nonces in expiry order, and reads the
// Sealer's clock.
//
// # Stricter readings
//
// Every JSON this package reads, it reads with the module's one strict
// reader: keys in exact case, a repeated key refused, nothing after the
// value, nesting at most 64 deep. So [Guard.Observe] counts
// {"resultType":"input_required","ResultType":"complete"} as a round, as
// the SDKs do, refuses a result whose resultType is null (not a string)
// or repeated, and [Digest] refuses arguments with a repeated key (their
// meaning differs between readers) rather than digest one reading of them.
package mrtr

import (
	"errors"
	"fmt"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/negotiate"
)

// The resultType values of MCP 2026-07-28 results.
const (
	ResultInputRequired = "input_required"
	ResultComplete      = "complete"
)

// Guard counts the rounds of one logical MRTR invocation on the client
// side. It is not safe for concurrent use: one invocation's rounds happen
// one after another.
type Guard struct {
	rounds *negotiate.Rounds
}

// NewGuard returns a Guard for maxRounds rounds, 1 to 16.
func NewGuard(maxRounds int) (*Guard, error) {
	r, err := negotiate.NewRounds(maxRounds)
	if err != nil {
		return nil, fmt.Errorf("mrtr: %w", err)
	}
	return &Guard{rounds: r}, nil
}

// GuardFor returns a Guard for the server's advertised mcp facet: its
// mrtr.maxRounds. A facet without mrtr has no rounds to give, and is an
// error, since a client must not guess a bound.
func GuardFor(f *facets.MCP) (*Guard, error) {
	if f == nil || f.MRTR == nil {
		return nil, errors.New("mrtr: the mcp facet has no mrtr.maxRounds")
	}
	return NewGuard(f.MRTR.MaxRounds)
}

// Observe reads the result of one request of the invocation (the JSON
// result object) and says whether to retry: true for an input_required
// result whose round may be retried. From round maxRounds+1 on it returns
// false and an mcp_mrtr_rounds_exceeded error (HTTP 422, details
// {rounds, maxRounds}), and the retry must not be sent.
//
// The result is read strictly, as an SDK reads it: the key is exactly
// "resultType" ("ResultType" is another member, and ignored), and a
// result that is not one JSON object, that repeats a key, that nests
// deeper than 64 levels, or whose resultType is not a string (null
// included) is an error: a guard that cannot read a result cannot count
// it. A result without resultType is complete (servers before 2026-07-28
// send none).
func (g *Guard) Observe(result []byte) (retry bool, err error) {
	var resultType string
	r := strictjson.NewReader(result, 0)
	err = r.Object(func(key string) error {
		if key != "resultType" {
			return nil
		}
		var err error
		resultType, err = r.String()
		return err
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return false, fmt.Errorf("mrtr: the result is not a JSON object with a string resultType: %w", err)
	}
	if resultType != ResultInputRequired {
		return false, nil
	}
	if err := g.rounds.Next(); err != nil {
		return false, err
	}
	return true, nil
}

// Next records one input_required result that the caller's SDK has read
// already (the go-sdk's CallToolResult.NeedsInput, say), and returns what
// Observe would: nil while the round may be retried, and from round
// maxRounds+1 on the mcp_mrtr_rounds_exceeded error, after which the retry
// must not be sent.
func (g *Guard) Next() error { return g.rounds.Next() }

// Rounds returns how many input_required results the guard has seen.
func (g *Guard) Rounds() int { return g.rounds.Seen() }

// MaxRounds returns the guard's bound.
func (g *Guard) MaxRounds() int { return g.rounds.Max() }

// roundsExceeded is the error a server answers instead of issuing round
// round, past max.
func roundsExceeded(round, max int) *wperrors.Error {
	return &wperrors.Error{
		Code:    wperrors.MCPRoundsExceeded,
		Message: fmt.Sprintf("MCP tool result needed %d rounds; at most %d are allowed", round, max),
		Details: map[string]any{"rounds": round, "maxRounds": max},
	}
}
