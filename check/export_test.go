package check

import "time"

// WithClock returns o with the check's time budget read on clock, so
// that a test can spend the budget where it chooses, not where a busy
// machine does.
func WithClock(o Options, clock func() time.Time) Options {
	o.clock = clock
	return o
}

// WithStepCost returns o with every simulator step of the critical
// search taken to cost d, whatever the clock says, so that a test can
// make a cheap system as slow as it likes.
func WithStepCost(o Options, d time.Duration) Options {
	o.stepCost = d
	return o
}
