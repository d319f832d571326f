package policy

import "errors"

// MaxActorDepth is maxActorDepth, for the tests.
const MaxActorDepth = maxActorDepth

// Valid and Anonymous are the unexported walks, for the tests.
func (s *Subject) Valid() bool     { return s.valid() }
func (s *Subject) Anonymous() bool { return s.anonymous() }

// DefaultAuthenticated is the zero Policy's IsAuthenticated.
func DefaultAuthenticated(s *Subject) bool { return Policy{}.IsAuthenticated(s) }

// Problems lists the violations err reports, in order: nil when err is nil,
// and nil for an error that is not Validate's or UnmarshalJSON's.
func Problems(err error) []SubjectError {
	var many subjectErrors
	if errors.As(err, &many) {
		out := make([]SubjectError, len(many))
		for i, e := range many {
			out[i] = *e
		}
		return out
	}
	var one *SubjectError
	if errors.As(err, &one) {
		return []SubjectError{*one}
	}
	return nil
}
