package check

import "time"

// WithClock returns o with the check's time budget read on clock, so
// that a test can spend the budget where it chooses, not where a busy
// machine does.
func WithClock(o Options, clock func() time.Time) Options {
	o.clock = clock
	return o
}
