package check

import (
	"time"

	"github.com/livecheck/livecheck/protocol"
)

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

// Shorten shortens the dead path of res, a check's result, on workers
// worlds, as the check does, with the default allowance for a handler.
func Shorten(sys *protocol.System, res *Result, workers int) *Shortened {
	return shorten(sys, res.Config, res, ConfirmAllowance(DefaultHandlerTimeout), workers, func() bool { return false })
}
