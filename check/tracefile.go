package check

import (
	"errors"
	"fmt"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// ReplayTrace is what every reader of a trace file does before it shows
// anything of it (replay, report, debug, check --from, merge): it
// replays trace t on system sys, under t's configuration and from the
// initial state t names, and confirms that the replay shows what t
// records (Confirm). each, if not nil, sees every state of the path as
// ReplayEach shows them.
//
// The error says why the trace is refused: its system, path, result or
// property are not this system's; its path does not replay; it replays
// to something else (a *NotReproducedError); it goes on past the
// violation it records; or the steps it names for people (the critical
// step, the prefix length) are not its path's. Rep is nil where nothing
// could be replayed.
func ReplayTrace(sys *protocol.System, t *reports.Trace, timeout time.Duration, each func(step int, s *sim.State, info *sim.StepInfo)) (*Replayed, error) {
	return ReplayTraceStopping(sys, t, timeout, each, nil)
}

// ReplayTraceStopping is ReplayTrace that asks stop, as ReplayStopping
// does, whether to end: a replay or dead test it ends is an error
// wrapping sim.ErrStopped.
func ReplayTraceStopping(sys *protocol.System, t *reports.Trace, timeout time.Duration, each func(step int, s *sim.State, info *sim.StepInfo), stop func() bool) (*Replayed, error) {
	if t.System != sys.Name {
		return nil, fmt.Errorf("the trace is of system %s, not %s", t.System, sys.Name)
	}
	p, err := reports.Path(t.Steps)
	if err != nil {
		return nil, err
	}
	var fpErr error
	if t.HasFingerprints() {
		each = compareFingerprints(t, each, &fpErr)
	}
	rep, err := replayEach(sys, ConfigOf(t), t.Init, p, timeout, each, stop, false)
	if err != nil {
		return nil, err
	}
	if fpErr != nil {
		return rep, fpErr
	}
	ok, err := rep.Confirm(t)
	if err != nil {
		return rep, err
	}
	if !ok {
		reached := rep.Reached(t)
		if v := Verdict(t.Result); (v == Live || v == PrefixResult) && rep.Verdict == OK && !rep.Live {
			reached = "a final state that is not live"
		}
		if Verdict(t.Result) == RunResult && rep.Verdict == OK && rep.Live {
			reached = "a final state that is live"
		}
		return rep, &NotReproducedError{Recorded: Recorded(t), Reached: reached}
	}
	// The replay stops at the violation: steps after it would be read
	// by no one, and could be anything.
	if rep.Verdict != OK && len(rep.Steps) < len(p) {
		return rep, fmt.Errorf("the path goes on for %s after the %s of %s at step %d: a trace ends at its violation",
			reports.Count(len(p)-len(rep.Steps), "step"), rep.Verdict, rep.Property, len(rep.Steps))
	}
	// What the trace says for people must be of its path too: the
	// views draw and name these steps.
	if c := t.Critical; c != nil {
		switch {
		case c.Step < 1 || c.Step > len(p):
			return rep, fmt.Errorf("its critical step %d is not a step of its path (1 to %d)", c.Step, len(p))
		case c.LiveStep < 0 || c.LiveStep >= c.Step:
			return rep, fmt.Errorf("its critical live_step %d is not a step before its critical step %d (0 to %d)", c.LiveStep, c.Step, c.Step-1)
		}
	}
	if t.PrefixLength < 0 || t.PrefixLength > len(p) {
		return rep, fmt.Errorf("its prefix_length %d is not a length of its path (0 to %d)", t.PrefixLength, len(p))
	}
	return rep, nil
}

// A NotReproducedError is a trace that replays, but to something else
// than it records: the readers refuse it.
type NotReproducedError struct {
	Recorded string // what the trace records: Recorded
	Reached  string // what the replay reached: Replayed.Reached
}

func (e *NotReproducedError) Error() string {
	return fmt.Sprintf("does not replay: it records %s, but replaying it gives %s", e.Recorded, e.Reached)
}

// TraceError is err, why a reader refuses trace file, as every reader
// says it: "FILE does not replay: it records ...", or "FILE: ERR".
func TraceError(file string, err error) error {
	var nr *NotReproducedError
	if errors.As(err, &nr) {
		return fmt.Errorf("%s %w", file, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// compareFingerprints wraps each to compare, at every step, the state
// of the step's node with the fingerprint a real run's trace records
// for it (livecheck trace), and the nodes' states after their first
// Init with InitFP; *mismatch gets the first difference: the handler
// depends on something outside its state and inputs.
func compareFingerprints(t *reports.Trace, each func(step int, s *sim.State, info *sim.StepInfo), mismatch *error) func(step int, s *sim.State, info *sim.StepInfo) {
	check := func(step int, id sim.NodeID, want string, s *sim.State) {
		if *mismatch != nil || want == "" || int(id) >= s.N() {
			return
		}
		if got := fmt.Sprintf("%016x", sim.Fingerprint(s.Node(id))); got != want {
			at := "its first Init"
			if step > 0 {
				at = fmt.Sprintf("step %d (%s)", step, t.Steps[step-1].Text)
			}
			*mismatch = fmt.Errorf("%w: node %d's state after %s is not the one the run logged (fingerprint %s, the simulator's %s): its handler depends on something outside its state and inputs",
				ErrNoReplay, id, at, want, got)
		}
	}
	return func(step int, s *sim.State, info *sim.StepInfo) {
		if step == 0 {
			for i, fp := range t.InitFP {
				check(0, sim.NodeID(i), fp, s)
			}
		} else if step <= len(t.Steps) {
			check(step, sim.NodeID(t.Steps[step-1].Node), t.Steps[step-1].FP, s)
		}
		if each != nil {
			each(step, s, info)
		}
	}
}
