package livecheck

import (
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// Check runs a system through the pipeline: exhaustive search to the
// depth bound, checking safety on every state; a biased random walk from
// each state at the bound that is not live; and, for a walk that never
// becomes live, the critical-transition search. It reports the first
// violation. The error is for bad configurations and failures of the
// tool, never for a violation.
func Check(sys *System, opts Options) (*Result, error) { return check.Check(sys, opts) }

// Replay runs path p from the initial state of sys in configuration cfg
// and says what it reaches. A path that does not replay is an error
// wrapping ErrNoReplay.
func Replay(sys *System, cfg Config, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return check.Replay(sys, cfg, p, timeout)
}

// ReplayFrom is Replay from the initial state that the choices init of
// the first Init handlers give.
func ReplayFrom(sys *System, cfg Config, init []int, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return check.ReplayFrom(sys, cfg, init, p, timeout)
}

// ConfigOf returns the configuration a trace file records.
func ConfigOf(t *reports.Trace) Config { return check.ConfigOf(t) }

// Prefixes runs walks of sys with failures disabled until it is live, and
// returns the configuration and the live prefixes found.
func Prefixes(sys *System, opts PrefixOptions) (Config, []LivePrefix, error) {
	return check.Prefixes(sys, opts)
}
