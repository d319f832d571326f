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
//     result and numbers its round: it will not seal round maxRounds+1,
//     answering the same error instead, so a server that seals its state
//     with it never issues more than maxRounds rounds.
//
// maxRounds is 1 to 16, as the facet's mcp.mrtr.maxRounds.
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
// presented by the wrong caller does not burn the right caller's. A state
// opens for ten minutes unless [SealerOptions.TTL] says otherwise, and one
// longer than 4096 bytes is malformed before any work is spent on it.
//
// Exactly one byte sequence opens a state: the MAC part is compared, in
// constant time, with the base64url MAC as the Sealer writes it, never
// decoded (a base64 decoder skips CR and LF, and would let many spellings
// of one state through).
//
// Keys (each at least 32 bytes) rotate: the first key seals, every key
// opens ([Sealer.SetKeys]), so states issued before a rotation stay good
// until they expire. Nonces are kept by a [NonceStore], which Open gives
// the opened claims and which fails closed: any error it returns refuses
// the state. Without one, a Sealer keeps its own, in memory and bounded
// ([SealerOptions.NonceCapacity], 100,000 nonces by default): it refuses
// new states ([ErrNonceStoreFull]) rather than forget a live nonce, keeps
// each principal to a share of it (by default a hundredth), forgets
// expired nonces in expiry order, and reads the Sealer's clock.
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
	"fmt"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// The bounds of mcp.mrtr.maxRounds.
const (
	minRounds = 1
	maxRounds = 16
)

// inRange returns an error unless n is a maxRounds of 1 to 16.
func inRange(what string, n int) error {
	if n < minRounds || n > maxRounds {
		return fmt.Errorf("mrtr: %s %d is outside %d–%d", what, n, minRounds, maxRounds)
	}
	return nil
}

// Guard counts the rounds of one logical MRTR invocation on the client
// side. It is not safe for concurrent use: one invocation's rounds happen
// one after another. The zero Guard allows no round at all, so that a
// forgotten bound fails closed.
type Guard struct {
	max, seen int
}

// NewGuard returns a Guard for maxRounds rounds, 1 to 16: the facet's
// mcp.mrtr.maxRounds. (A facet without mrtr gives no bound, and a client
// must not guess one.)
func NewGuard(maxRounds int) (*Guard, error) {
	if err := inRange("maxRounds", maxRounds); err != nil {
		return nil, err
	}
	return &Guard{max: maxRounds}, nil
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
	if resultType != "input_required" {
		return false, nil
	}
	if err := g.Next(); err != nil {
		return false, err
	}
	return true, nil
}

// Next records one input_required result that the caller's SDK has read
// already (the go-sdk's CallToolResult.NeedsInput, say), and returns what
// Observe would: nil while the round may be retried, and from round
// maxRounds+1 on the mcp_mrtr_rounds_exceeded error, after which the retry
// must not be sent.
func (g *Guard) Next() error {
	g.seen++
	if g.seen <= g.max {
		return nil
	}
	return roundsExceeded(g.seen, g.max)
}

// roundsExceeded is the mcp_mrtr_rounds_exceeded error of round round,
// past max: what a client answers instead of retrying, and a server
// instead of issuing the round.
func roundsExceeded(round, max int) *wperrors.Error {
	return &wperrors.Error{
		Code:    wperrors.MCPRoundsExceeded,
		Message: fmt.Sprintf("MCP tool result needed %d rounds; at most %d are allowed", round, max),
		Details: map[string]any{"rounds": round, "maxRounds": max},
	}
}
