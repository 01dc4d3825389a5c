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

// Replay re-executes a path from the initial state on a system's
// configuration, checking every property on the way, and says what
// violation it reaches. It stops at the first safety violation or handler
// panic. A path whose steps cannot be applied exactly is an error wrapping
// ErrNoReplay. For a system whose nodes choose in their first Init, use
// ReplayFrom.
func Replay(sys *System, cfg Config, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return check.Replay(sys, cfg, p, timeout)
}

// ReplayFrom is Replay from the initial state that init names: the values
// the nodes' first Init calls' Choose calls return, node 0's first
// (Result.Init, a trace's init). Choices that do not fit those calls
// exactly (out of range, too few, too many) are an error wrapping
// ErrNoReplay, at step 0.
func ReplayFrom(sys *System, cfg Config, init []int, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return check.ReplayFrom(sys, cfg, init, p, timeout)
}

// ConfigOf returns the configuration a trace was made with. A trace
// counts failures; a failure it allows none of is None in the Config, so
// that no default replaces it.
func ConfigOf(t *reports.Trace) Config { return check.ConfigOf(t) }

// Prefixes makes live prefixes of a system by biased random walks with
// every failure (resets, drops, socket errors, duplications) disabled.
func Prefixes(sys *System, opts PrefixOptions) (Config, []LivePrefix, error) {
	return check.Prefixes(sys, opts)
}
