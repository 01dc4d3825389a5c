package check

import (
	"errors"
	"fmt"
	"time"

	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// runLocal is local model checking of the safety properties.
func (c *checker) runLocal() error {
	res := c.res
	c.phase = phaseLocal
	c.clock.to(phLocal)
	lopts := search.LocalOptions{Rounds: c.opts.Rounds, MaxVerify: c.opts.MaxVerify, Properties: c.m.Properties, Stop: c.stop, Fits: c.mem.fits,
		Workers: c.localWorkers()}
	if c.opts.Progress != nil {
		lopts.Progress = func(l search.LocalStats) {
			c.opts.Progress(Progress{Phase: "local", Stats: search.Stats{States: int64(l.TotalNodeStates), Transitions: l.Transitions}})
		}
	}
	lr, err := search.Local(c.w, lopts)
	if err != nil {
		return err
	}
	res.Local = &lr.Stats
	res.Complete, res.Exhausted = lr.Complete, lr.Complete
	res.Stats = search.Stats{States: int64(lr.Stats.TotalNodeStates), Transitions: lr.Stats.Transitions, Elapsed: lr.Stats.Elapsed}
	if v := lr.Violation; v != nil {
		res.Verdict, res.Property, res.Message, res.Path, res.Init = SafetyViolation, v.Property, v.Message, v.Path, v.Init
		if pe := c.propertyError(v.Property, v.Init, v.Path); pe != nil {
			res.Verdict, res.Message = PropertyError, pe.Error()
		}
		return nil
	}
	if !lr.Complete {
		res.Verdict = Inconclusive
		res.Interrupted = c.interrupted()
		if !res.Interrupted {
			res.Message = localInconclusive(lr)
		}
	}
	return nil
}

// localWorkers makes the worlds on which local mode verifies candidates
// beside the main world, one fewer than the workers, each watched for
// handlers that hang: a hang there is one in a replay from the initial
// state, reported as the main world's are in local mode.
func (c *checker) localWorkers() []*sim.World {
	var out []*sim.World
	for range c.opts.Workers - 1 {
		w, err := sim.NewWorld(c.m.Spec)
		if err != nil {
			panic(err) // the spec was valid for the main world
		}
		w.Recheck = c.w.Recheck
		w.Guard = c.watch.add(func() hang {
			ev, choices, from := w.Current()
			return hang{local: from, event: ev, choices: choices}
		})
		out = append(out, w)
	}
	return out
}

// localInconclusive says why local mode's result is not complete, and
// what it covered.
func localInconclusive(lr *search.LocalResult) string {
	l := lr.Stats
	switch {
	case lr.Stopped:
		return fmt.Sprintf("local mode stopped at %d node states in round %d", l.TotalNodeStates, l.Rounds)
	case lr.HeldBack:
		return fmt.Sprintf("the round bound still held steps back after round %d: local mode covered every node state reachable under the local rules up to round %d (at most %d timers, driver calls and repeated deliveries per node on the first path to each state), not every reachable one; raise --rounds",
			l.Rounds, l.Rounds, l.Rounds)
	case lr.Refused > 0:
		return fmt.Sprintf("local mode explored every node state reachable without failures, but its search for real runs to %d preliminary violations met %d runs the simulator refused (a property that reads more than the node states, or a handler that is not deterministic?), so they are neither reported nor ruled out (try --mode global)",
			l.Preliminary-l.Refuted, lr.Refused)
	default:
		return fmt.Sprintf("local mode explored every node state reachable without failures and found %d preliminary violations, %d refuted by message summaries; the search for a real run to the others ran out of its budget, so they are neither reported nor ruled out (raise --max-verify, or try --mode global)",
			l.Preliminary, l.Refuted)
	}
}

// confirmLocal runs a step of local mode again on the node state it
// started from, in a fresh world.
func (c *checker) confirmLocal(h *hang, allow time.Duration) (bool, error) {
	w, err := sim.NewWorld(c.m.Spec)
	if err != nil {
		return false, err
	}
	w.Stop = c.stop
	stuck, err := guarded(w, allow, func() hang { return hang{} }, func() error {
		_, err := w.Apply(h.local, h.event, h.choices)
		return err
	})
	if errors.Is(err, sim.ErrStopped) {
		return false, err
	}
	if stuck == nil {
		return false, nil // returned, or failed: either way not a hang
	}
	h.text = c.w.Describe(h.local, h.event)
	return true, err
}
