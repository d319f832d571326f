package facets

import (
	"errors"
	"fmt"
	"time"
)

// The refresh SLA of RFC 0175 §D.4: an advertisement must have been
// re-checked against upstream within RefreshWindow, and its refreshedAt
// may lie at most RefreshLeeway in the future (the conformance suite's
// tolerance for clock skew).
const (
	RefreshWindow = 90 * 24 * time.Hour
	RefreshLeeway = 24 * time.Hour
)

// Errors wrapped by [*RefreshError].
var (
	ErrRefreshStale  = errors.New("refreshedAt is older than the 90-day refresh window")
	ErrRefreshFuture = errors.New("refreshedAt is more than one day in the future")
)

// RefreshError reports a facet that breaks the refresh SLA. It wraps
// [ErrRefreshStale], [ErrRefreshFuture] or [ErrMalformedDate].
type RefreshError struct {
	Protocol    Protocol
	RefreshedAt string
	Now         time.Time
	// Age is how long before Now the refreshedAt day began; negative when
	// it lies in the future.
	Age time.Duration
	Err error
}

// Error names the facet, its refreshedAt, the clock and the broken bound.
func (e *RefreshError) Error() string {
	if errors.Is(e.Err, ErrMalformedDate) {
		return fmt.Sprintf("%s.refreshedAt: %v", e.Protocol, e.Err)
	}
	return fmt.Sprintf("%s.refreshedAt %s at %s: %v", e.Protocol, e.RefreshedAt,
		e.Now.UTC().Format(time.RFC3339), e.Err)
}

// Unwrap returns ErrRefreshStale, ErrRefreshFuture or the date's parse error.
func (e *RefreshError) Unwrap() error { return e.Err }

// CheckRefresh checks the refresh SLA of one advertised facet against the
// caller's clock: refreshedAt (read as midnight UTC, as the conformance
// suite reads it) must be no more than [RefreshWindow] before now and no
// more than [RefreshLeeway] after it. Both bounds are inclusive.
func CheckRefresh(a Advertised, now time.Time) error {
	day, err := ParseDate(a.RefreshedAt)
	if err != nil {
		return &RefreshError{Protocol: a.Protocol, RefreshedAt: a.RefreshedAt, Now: now, Err: err}
	}
	age := now.Sub(day)
	if age > RefreshWindow {
		return &RefreshError{a.Protocol, a.RefreshedAt, now, age, ErrRefreshStale}
	}
	if age < -RefreshLeeway {
		return &RefreshError{a.Protocol, a.RefreshedAt, now, age, ErrRefreshFuture}
	}
	return nil
}

// CheckRefresh checks the refresh SLA of every facet in s; see
// [CheckRefresh]. The errors are joined.
func (s Set) CheckRefresh(now time.Time) error {
	var errs []error
	for _, p := range s.Protocols() {
		a, _ := s.Lookup(p)
		if err := CheckRefresh(a, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
