package events

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// TypeNegotiationDecided is the event type a negotiation outcome is
// recorded under, on a run's log or as a durable host event.
const TypeNegotiationDecided = "negotiation.decided"

// Outcome is the closed outcome enum of negotiation.decided. A downgrade is
// recorded as accepted with a version that differs from requested (RFC 0242).
type Outcome string

// The outcomes the schema admits.
const (
	Accepted Outcome = "accepted"
	Refused  Outcome = "refused"
)

// Reason is the closed reason enum of negotiation.decided.
type Reason string

// The reasons the schema admits.
const (
	ReasonOK              Reason = "ok"
	ReasonBelowFloor      Reason = "below-floor"
	ReasonUnauthenticated Reason = "unauthenticated"
	ReasonUnsupported     Reason = "unsupported"
)

// Valid reports whether r is one of the four reasons.
func (r Reason) Valid() bool {
	switch r {
	case ReasonOK, ReasonBelowFloor, ReasonUnauthenticated, ReasonUnsupported:
		return true
	}
	return false
}

// NegotiationDecided is the payload of a negotiation.decided event: the
// v2 schema's closed negotiationDecided object plus RFC 0242's optional
// requested. It is content-free by construction: the peer appears only as
// the SHA-256 digest of its origin.
//
// Its JSON keys follow the reference host's order: protocol, outcome,
// version, requested, reason, floor, peerDigest, at.
type NegotiationDecided struct {
	Protocol facets.Protocol `json:"protocol"`
	Outcome  Outcome         `json:"outcome"`
	// Version is the version decided; empty when refused.
	Version string `json:"version,omitzero"`
	// Requested is the version the requesting side named, when it named a
	// well-formed one.
	Requested string `json:"requested,omitzero"`
	Reason    Reason `json:"reason,omitzero"`
	// Floor is the advertised minimum version.
	Floor string `json:"floor,omitzero"`
	// PeerDigest is [PeerDigest] of the peer URL; empty when no peer URL was
	// known (an inbound request names none).
	PeerDigest string `json:"peerDigest,omitzero"`
	// At is when the decision was taken, written as RFC 3339.
	At time.Time `json:"at"`
}

// ErrInvalidPayload is wrapped by every error [NegotiationDecided.Validate]
// and its UnmarshalJSON return.
var ErrInvalidPayload = errors.New("invalid negotiation.decided payload")

// Validate checks p against the negotiationDecided schema and the rules the
// schema leaves to prose: version present exactly when accepted, and of the
// protocol's grammar, as is requested. Every problem is reported, joined.
func (p *NegotiationDecided) Validate() error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if !p.Protocol.Valid() {
		bad("protocol %q is not a2a or mcp", p.Protocol)
	}
	switch p.Outcome {
	case Accepted:
		if p.Version == "" {
			bad("version is required when the outcome is accepted")
		}
	case Refused:
		if p.Version != "" {
			bad("version %q must be absent when the outcome is refused", p.Version)
		}
	default:
		bad("outcome %q is not accepted or refused", p.Outcome)
	}
	if p.Protocol.Valid() {
		for _, f := range [...]struct{ name, value string }{{"version", p.Version}, {"requested", p.Requested}, {"floor", p.Floor}} {
			if f.value == "" {
				continue
			}
			if _, err := facets.ParseVersion(p.Protocol, f.value); err != nil {
				bad("%s: %v", f.name, err)
			}
		}
	}
	if p.Reason != "" && !p.Reason.Valid() {
		bad("reason %q is not ok, below-floor, unauthenticated or unsupported", p.Reason)
	}
	if p.PeerDigest != "" && !isDigest(p.PeerDigest) {
		bad("peerDigest %q is not 64 lowercase hex characters", p.PeerDigest)
	}
	if p.At.IsZero() {
		bad("at is required")
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidPayload, strings.Join(problems, "; "))
}

func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// UnmarshalJSON reads a payload strictly, with the module's strict reader:
// the object is closed, so a key that is not exactly one of the schema's
// is an error, as is a repeated one, a value that is not a string, or
// anything after the object; and the result must pass Validate.
func (p *NegotiationDecided) UnmarshalJSON(data []byte) error {
	r := strictjson.NewReader(data, 1)
	var decoded NegotiationDecided
	err := readPayload(r, &decoded)
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	if err := decoded.Validate(); err != nil {
		return err
	}
	*p = decoded
	return nil
}

// readPayload reads the payload object, every value of which is a string.
// It does not validate what it read.
func readPayload(r *strictjson.Reader, p *NegotiationDecided) error {
	strs := [...]struct {
		key string
		dst *string
	}{
		{"protocol", (*string)(&p.Protocol)}, {"outcome", (*string)(&p.Outcome)}, {"version", &p.Version},
		{"requested", &p.Requested}, {"reason", (*string)(&p.Reason)}, {"floor", &p.Floor}, {"peerDigest", &p.PeerDigest},
	}
	return r.Object(func(key string) error {
		for _, f := range strs {
			if f.key == key {
				s, err := r.String()
				*f.dst = s
				return err
			}
		}
		if key != "at" {
			return fmt.Errorf("unknown field %q", key)
		}
		s, err := r.String()
		if err != nil {
			return err
		}
		// As time.Time reads JSON: RFC 3339, strictly.
		if err := p.At.UnmarshalText([]byte(s)); err != nil {
			return fmt.Errorf("at: %w", err)
		}
		return nil
	})
}
