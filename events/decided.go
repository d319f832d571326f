package events

import (
	"fmt"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/strictjson"
)

// The reasons the negotiationDecided schema admits, the values of
// [NegotiationDecided].Reason.
const (
	ReasonOK              = "ok"
	ReasonBelowFloor      = "below-floor"
	ReasonUnauthenticated = "unauthenticated"
	ReasonUnsupported     = "unsupported"
)

// NegotiationDecided is the payload of a negotiation.decided event: the
// v2 schema's closed negotiationDecided object plus RFC 0242's optional
// requested. It is content-free by construction: the peer appears only as
// the SHA-256 digest of its origin.
//
// Its JSON keys follow the reference host's order: protocol, outcome,
// version, requested, reason, floor, peerDigest, at.
type NegotiationDecided struct {
	Protocol facets.Protocol `json:"protocol"`
	// Outcome is "accepted" or "refused"; a downgrade is accepted, at a
	// version other than the one requested.
	Outcome string `json:"outcome"`
	// Version is the version decided; empty when refused.
	Version string `json:"version,omitzero"`
	// Requested is the version the requesting side named, when it named a
	// well-formed one.
	Requested string `json:"requested,omitzero"`
	// Reason is one of the Reason constants, or empty.
	Reason string `json:"reason,omitzero"`
	// Floor is the advertised minimum version.
	Floor string `json:"floor,omitzero"`
	// PeerDigest is [PeerDigest] of the peer URL; empty when no peer URL was
	// known (an inbound request names none).
	PeerDigest string `json:"peerDigest,omitzero"`
	// At is when the decision was taken, written as RFC 3339.
	At time.Time `json:"at"`
}

// Validate checks p against the negotiationDecided schema and the rules the
// schema leaves to prose: version present exactly when accepted, and of the
// protocol's grammar, as are requested and floor. It reports every problem,
// each as a [*FieldError] naming the payload's field ("version"), joined
// with errors.Join.
func (p *NegotiationDecided) Validate() error { return joinErrs(p.problems(nil, "")) }

// problems appends what is wrong with p to errs, each field named with
// prefix before it.
func (p *NegotiationDecided) problems(errs []error, prefix string) []error {
	protocolOK := p.Protocol.Valid()
	if !protocolOK {
		errs = fieldErr(errs, prefix+"protocol", quoteTrunc(string(p.Protocol))+" is not a2a or mcp")
	}
	if p.Outcome == outcomeAccepted {
		if p.Version == "" {
			errs = fieldErr(errs, prefix+"version", "is required when the outcome is accepted")
		}
	} else if p.Outcome == outcomeRefused {
		if p.Version != "" {
			errs = fieldErr(errs, prefix+"version", quoteTrunc(p.Version)+" must be absent when the outcome is refused")
		}
	} else {
		errs = fieldErr(errs, prefix+"outcome", quoteTrunc(p.Outcome)+" is not accepted or refused")
	}
	if protocolOK {
		errs = versionProblem(errs, prefix, "version", p.Protocol, p.Version)
		errs = versionProblem(errs, prefix, "requested", p.Protocol, p.Requested)
		errs = versionProblem(errs, prefix, "floor", p.Protocol, p.Floor)
	}
	if p.Reason != "" && !validReason(p.Reason) {
		errs = fieldErr(errs, prefix+"reason", quoteTrunc(p.Reason)+" is not ok, below-floor, unauthenticated or unsupported")
	}
	if p.PeerDigest != "" && !isDigest(p.PeerDigest) {
		errs = fieldErr(errs, prefix+"peerDigest", quoteTrunc(p.PeerDigest)+" is not 64 lowercase hex characters")
	}
	if p.At.IsZero() {
		errs = fieldErr(errs, prefix+"at", "is required")
	}
	return errs
}

// The outcomes the schema admits.
const (
	outcomeAccepted = "accepted"
	outcomeRefused  = "refused"
)

// versionProblem appends the error of a version that is set and is not
// of protocol's grammar.
func versionProblem(errs []error, prefix, field string, protocol facets.Protocol, v string) []error {
	if v == "" {
		return errs
	}
	if _, err := facets.ParseVersion(protocol, v); err != nil {
		return fieldErr(errs, prefix+field, err.Error())
	}
	return errs
}

// validReason reports whether r is one of the four reasons.
func validReason(r string) bool {
	return r == ReasonOK || r == ReasonBelowFloor || r == ReasonUnauthenticated || r == ReasonUnsupported
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
// anything after the object; and the result must pass Validate. Every
// error is a [*FieldError].
func (p *NegotiationDecided) UnmarshalJSON(data []byte) error {
	r := strictjson.NewReader(data, 1)
	var decoded NegotiationDecided
	err := readPayload(r, &decoded)
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return &FieldError{Field: "payload", Reason: err.Error()}
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
		{"protocol", (*string)(&p.Protocol)}, {"outcome", &p.Outcome}, {"version", &p.Version},
		{"requested", &p.Requested}, {"reason", &p.Reason}, {"floor", &p.Floor}, {"peerDigest", &p.PeerDigest},
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
