//go:build !(linux && amd64)

package policy

import "time"

// wallClock is time.Now in UTC: elsewhere than linux/amd64 the standard
// library's clock is the fastest wall clock Go can read portably.
func wallClock() time.Time { return time.Now().UTC() }
