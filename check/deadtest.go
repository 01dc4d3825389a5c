package check

import (
	"fmt"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// A DeadTest is the test that showed the last state of a liveness
// violation dead (critical.Recovers): a breadth-first search of States
// states, then Walks walks of WalkDepth steps. A trace records it, and
// replay runs it again from the trace's last state.
type DeadTest struct {
	States, Walks, WalkDepth int
	Seed                     uint64
	// Weights are the walks' (nil: the system's, or walk.DefaultWeights).
	Weights *walk.Weights
}

// deadSeed tags the seed of the dead test of a check's last state: it
// comes from the check's seed alone, not from which suspect it was.
const deadSeed = 0xdead

// endTest is the dead test of the end of a dead path, for a check whose
// walks are depth steps long.
func (c *checker) endTest(depth int) DeadTest {
	wt := *c.weights
	return DeadTest{States: critical.DeadStates, Walks: critical.DeadWalks, WalkDepth: depth,
		Seed: walk.Seed(uint64(c.opts.Seed), deadSeed), Weights: &wt}
}

// test is d as critical runs it; weights stand in for d's when it has none.
func (d DeadTest) test(weights *walk.Weights) critical.Test {
	if d.Weights != nil {
		weights = d.Weights
	}
	wt := walk.DefaultWeights
	if weights != nil {
		wt = *weights
	}
	return critical.Test{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Chooser: &wt, Seed: d.Seed}
}

// DeadTestOf returns the dead test a trace records, or for a trace that
// records none, the one a check with the trace's seed and the default walk
// depth runs.
func DeadTestOf(t *reports.Trace) (DeadTest, error) {
	if d := t.DeadTest; d != nil {
		if d.States < 0 || d.Walks < 1 || d.WalkDepth < 1 {
			return DeadTest{}, fmt.Errorf("dead_test: walks and walk_depth must be at least 1 and search_states at least 0")
		}
		dt := DeadTest{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Seed: d.Seed}
		if d.Weights != "" {
			wt, err := walk.ParseWeights(d.Weights, walk.DefaultWeights)
			if err != nil {
				return DeadTest{}, fmt.Errorf("dead_test: %v", err)
			}
			dt.Weights = &wt
		}
		return dt, nil
	}
	return DeadTest{States: critical.DeadStates, Walks: critical.DeadWalks, WalkDepth: DefaultWalkDepth,
		Seed: walk.Seed(uint64(t.Seed), deadSeed)}, nil
}

func (d DeadTest) trace() *reports.TraceDeadTest {
	td := &reports.TraceDeadTest{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Seed: d.Seed}
	if d.Weights != nil {
		td.Weights = d.Weights.String()
	}
	return td
}

// deadEvidence backs a closed dead region found without walks (which
// would run the dead test) with a search from the end of p: every state
// reachable from there, none of them live. The replay of the trace
// checks it as it checks a dead test's.
func (c *checker) deadEvidence(init []int, p sim.Path, sopts search.Options) error {
	end, err := c.runPath(c.fullInit(init), c.startOf(init), p, 0, len(p))
	if err != nil {
		return err
	}
	sopts.Start, sopts.Starts, sopts.Target, sopts.Progress = end, nil, 0, nil
	sopts.Shard, sopts.Fingerprints, sopts.Stop = search.Shard{}, false, c.stop
	c.during = "the search that shows the closed region of dead states it found dead"
	// The search's paths start at the end of p: the watchdog is told so.
	c.phase, c.searchFrom, c.searchFromInit = phaseSearch, p, init
	defer func() { c.searchFrom, c.searchFromInit = nil, nil }()
	sr, err := search.Global(c.w, sopts)
	if err != nil {
		return err
	}
	if !sr.Exhausted && c.stop() {
		return sim.ErrStopped
	}
	if !sr.Exhausted || sr.Stats.Live != 0 || sr.Violation != nil {
		return fmt.Errorf("internal error: the dead region the search found is not dead when searched again (%d states, %d live, exhausted %v)",
			sr.Stats.States, sr.Stats.Live, sr.Exhausted)
	}
	c.res.startEnd = &Critical{End: &critical.Evidence{SearchAll: true, SearchStates: int(sr.Stats.States), SearchDepth: sr.Stats.MaxDepth},
		endFP: end.Fingerprint()}
	return nil
}
