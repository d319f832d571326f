package facets

import (
	"fmt"
	"time"
)

// RefreshWindow is the refresh SLA of RFC 0175 §D.4: an advertisement
// must have been re-checked against upstream within the last 90 days. Its
// refreshedAt may also lie at most one day in the future (the
// conformance suite's tolerance for clock skew).
const RefreshWindow = 90 * 24 * time.Hour

// refreshLeeway is how far in the future a refreshedAt may lie.
const refreshLeeway = 24 * time.Hour

// CheckRefresh checks the refresh SLA of one advertised facet against the
// caller's clock: refreshedAt (read as midnight UTC, as the conformance
// suite reads it) must be no more than [RefreshWindow] before now and no
// more than one day after it. Both bounds are inclusive. A breach is a
// [*Violation] at "<protocol>.refreshedAt" of rule "refresh-stale",
// "refresh-future", or "date" when refreshedAt is not a real date.
func CheckRefresh(a Advertised, now time.Time) error {
	return asError(refreshViolations(a, now))
}

// refreshViolations is CheckRefresh as a list.
func refreshViolations(a Advertised, now time.Time) []Violation {
	path := string(a.Protocol) + ".refreshedAt"
	day, err := parseDate(a.RefreshedAt)
	if err != nil {
		return []Violation{{path, "date", fmt.Sprintf("%q is not a date YYYY-MM-DD: %v", a.RefreshedAt, err)}}
	}
	age := now.Sub(day)
	if age > RefreshWindow {
		return []Violation{{path, "refresh-stale", fmt.Sprintf(
			"refreshedAt %s is %d days old: the 90-day refresh window closed at %s (RFC 0175 §D.4)",
			a.RefreshedAt, int(age/(24*time.Hour)), day.Add(RefreshWindow).Format(time.RFC3339))}}
	}
	if age < -refreshLeeway {
		return []Violation{{path, "refresh-future", fmt.Sprintf(
			"refreshedAt %s is more than one day after now (%s)", a.RefreshedAt, clockText(now))}}
	}
	return nil
}

// clockText shows now as a date when it is a midnight UTC, and as an RFC
// 3339 time otherwise.
func clockText(now time.Time) string {
	now = now.UTC()
	if now.Equal(now.Truncate(24 * time.Hour)) {
		return now.Format(time.DateOnly)
	}
	return now.Format(time.RFC3339)
}
