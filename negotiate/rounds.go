package negotiate

import (
	"fmt"

	wperrors "github.com/wopneg/wopneg/errors"
)

// The bounds of mcp.mrtr.maxRounds.
const (
	MinRounds = 1
	MaxRounds = 16
)

// Rounds counts the input_required rounds of one logical MCP invocation
// (RFC 0175 §E.1): the first input_required result is round 1, and rounds
// 1 through maxRounds may be retried; round maxRounds+1 is refused before
// its retry is sent.
//
// A Rounds belongs to one invocation and is not safe for concurrent use.
// The zero Rounds allows no round at all, so a forgotten limit fails closed.
type Rounds struct {
	max  int
	seen int
}

// NewRounds returns a counter for maxRounds rounds, which must be 1 to 16
// (use the facet's mcp.mrtr.maxRounds).
func NewRounds(maxRounds int) (*Rounds, error) {
	if maxRounds < MinRounds || maxRounds > MaxRounds {
		return nil, fmt.Errorf("negotiate: maxRounds %d is outside %d–%d", maxRounds, MinRounds, MaxRounds)
	}
	return &Rounds{max: maxRounds}, nil
}

// Next records one more input_required result. It returns nil while the
// round may be retried and, from round maxRounds+1 on, an
// mcp_mrtr_rounds_exceeded error (HTTP 422) with details
// {rounds, maxRounds}; the caller must not send that retry.
func (r *Rounds) Next() error {
	r.seen++
	if r.seen <= r.max {
		return nil
	}
	return &wperrors.Error{
		Code:    wperrors.MCPRoundsExceeded,
		Message: fmt.Sprintf("MCP tool result needed %d rounds; at most %d are allowed", r.seen, r.max),
		Details: map[string]any{"rounds": r.seen, "maxRounds": r.max},
	}
}

// Seen returns how many rounds have been recorded.
func (r *Rounds) Seen() int { return r.seen }

// Max returns the round limit.
func (r *Rounds) Max() int { return r.max }
