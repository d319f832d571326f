package policy_test

import (
	"testing"
	"time"

	"github.com/wopneg/wopneg/policy"
)

// On linux/amd64 the zero Policy's clock is the wall clock alone, read to
// the microsecond: a stamp lies between the time.Now readings around it,
// the earlier one cut to the microsecond, and has no nanoseconds of its
// own. One time.Now reading in a thousand is a whole microsecond, so three
// in a row would not pass for it.
func TestTimeReadsTheWallClockToTheMicrosecond(t *testing.T) {
	for range 3 {
		before := time.Now()
		got := policy.Policy{}.Time()
		after := time.Now()
		if got.Before(before.Truncate(time.Microsecond)) || got.After(after) {
			t.Fatalf("Time() = %v, want between %v and %v", got, before, after)
		}
		if got.Nanosecond()%int(time.Microsecond) != 0 {
			t.Fatalf("Time() = %v has %d ns beyond the microsecond: not the microsecond wall clock", got, got.Nanosecond()%int(time.Microsecond))
		}
		if got.Location() != time.UTC {
			t.Fatalf("Time() is in %v, want UTC", got.Location())
		}
	}
}
