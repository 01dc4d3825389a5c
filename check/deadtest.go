package check

import (
	"cmp"
	"fmt"
	"time"

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
	// Weights are the walks' (nil: DeadWeights of the system's).
	Weights *walk.Weights
}

// The dead test has a strength of its own: the flags that shape the
// exploration (--walk-depth, --weights, --escalations) never lower it,
// and neither does a trace file that replay reads. A state is called dead
// only by a search of at least critical.DeadStates states, then at least
// critical.DeadWalks walks of at least DeadWalkDepth steps, with
// DeadWeights, which give every enabled event a chance: a walk of 20
// steps, or one that never delivers a message, shows nothing about a
// correct protocol. The caps bound what replay takes from a file: no
// check writes more, so that a damaged file cannot make replay cost more
// than the check's own dead test did, nor run for ever.
const (
	DeadWalkDepth    = DefaultWalkDepth
	MaxDeadStates    = critical.DeadStates
	MaxDeadWalks     = critical.DeadWalks
	MaxDeadWalkDepth = 10_000_000
)

// DeadWeights are the weights of every dead test's walks: the system's
// (walk.DefaultWeights where it has none), whatever the check's walks
// use, and each kind that weighs nothing there weighs what it does in
// walk.DefaultWeights, so that every enabled event has a chance.
func DeadWeights(system *walk.Weights) walk.Weights {
	wt := walk.DefaultWeights
	if system != nil {
		wt = *system
	}
	for k := range wt {
		if !(wt[k] > 0) {
			wt[k] = walk.DefaultWeights[k]
		}
	}
	return wt
}

// deadSeed tags the seed of the dead test of a check's last state: it
// comes from the check's seed alone, not from which suspect it was.
const deadSeed = 0xdead

// endTest is the dead test of the end of a dead path, for a check whose
// walks are depth steps long: as long as those, but never shorter than
// the floor, nor longer than the cap.
func (c *checker) endTest(depth int) DeadTest {
	wt := DeadWeights(c.m.Weights)
	return DeadTest{States: critical.DeadStates, Walks: critical.DeadWalks, WalkDepth: min(max(depth, DeadWalkDepth), MaxDeadWalkDepth),
		Seed: walk.Seed(uint64(c.opts.Seed), deadSeed), Weights: &wt}
}

// test is d as critical runs it; a system's weights (nil: none) stand in
// for d's when it has none, as DeadWeights makes them.
func (d DeadTest) test(system *walk.Weights) critical.Test {
	wt := DeadWeights(system)
	if d.Weights != nil {
		wt = *d.Weights
	}
	return critical.Test{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Chooser: &wt, Seed: d.Seed}
}

// Weaker says whether d is weaker than the floor of every dead test: a
// trace that records it shows no more than that.
func (d DeadTest) Weaker() bool {
	return d.States < critical.DeadStates || d.Walks < critical.DeadWalks || d.WalkDepth < DeadWalkDepth
}

// String says d's size in words: "a search of 20,000 states, then 300
// walks of 5,000 steps".
func (d DeadTest) String() string {
	return fmt.Sprintf("a search of %s, then %s of %s", reports.Count(d.States, "state"), reports.Count(d.Walks, "walk"), reports.Count(d.WalkDepth, "step"))
}

// floorTest is the floor of every dead test, as a DeadTest.
var floorTest = DeadTest{States: critical.DeadStates, Walks: critical.DeadWalks, WalkDepth: DeadWalkDepth}

// DeadTestOf returns the dead test replay runs from the end of trace t:
// the one t records, raised to the floor of every dead test, with the
// system's DeadWeights (system: its weights, nil for none) and the
// recorded seed; for a trace that records none, the one a check with the
// trace's seed runs at the default walk depth. Recorded values past the
// caps are an error: no check writes them.
func DeadTestOf(t *reports.Trace, system *walk.Weights) (DeadTest, error) {
	wt := DeadWeights(system)
	d := floorTest
	d.Seed, d.Weights = walk.Seed(uint64(t.Seed), deadSeed), &wt
	td := t.DeadTest
	if td == nil {
		return d, nil
	}
	if td.States < 0 || td.Walks < 1 || td.WalkDepth < 1 {
		return DeadTest{}, fmt.Errorf("dead_test: walks and walk_depth must be at least 1 and search_states at least 0")
	}
	for _, f := range []struct {
		name     string
		val, max int
	}{{"search_states", td.States, MaxDeadStates}, {"walks", td.Walks, MaxDeadWalks}, {"walk_depth", td.WalkDepth, MaxDeadWalkDepth}} {
		if f.val > f.max {
			return DeadTest{}, fmt.Errorf("dead_test: %s %s is more than any check runs (at most %s): the file is damaged",
				f.name, reports.Thousands(f.val), reports.Thousands(f.max))
		}
	}
	if td.Weights != "" {
		// Read, so that a damaged file is refused; the walks use the
		// system's DeadWeights all the same.
		if _, err := walk.ParseWeights(td.Weights, walk.DefaultWeights); err != nil {
			return DeadTest{}, fmt.Errorf("dead_test: %v", err)
		}
	}
	d.States, d.Walks, d.WalkDepth = max(td.States, d.States), max(td.Walks, d.Walks), max(td.WalkDepth, d.WalkDepth)
	d.Seed = td.Seed
	return d, nil
}

// recordedTest is the dead test t records as it is written, floor or no
// floor (zero if it records none).
func recordedTest(t *reports.Trace) DeadTest {
	if td := t.DeadTest; td != nil {
		return DeadTest{States: td.States, Walks: td.Walks, WalkDepth: td.WalkDepth, Seed: td.Seed}
	}
	return DeadTest{}
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
	// The trace records the dead test replay runs (its search sees the
	// whole region again); the check's own evidence is the search's.
	c.res.startEnd = &Critical{End: &critical.Evidence{SearchAll: true, SearchStates: int(sr.Stats.States), SearchDepth: sr.Stats.MaxDepth},
		EndTest: c.endTest(c.opts.WalkDepth), endFP: end.Fingerprint()}
	return nil
}

// atFloor says whether ev, what a dead test saw from a state it found
// no way back from, is evidence of the floor's strength: every state
// reachable from there searched, or the floor's walks, each of the
// floor's length, after a search that ran to the floor's bound.
func atFloor(ev *critical.Evidence) bool {
	if ev == nil || ev.Live {
		return false
	}
	return ev.SearchAll || ev.Walks >= critical.DeadWalks && ev.WalkDepth >= DeadWalkDepth &&
		(ev.SearchStates >= critical.DeadStates || ev.SearchDepth >= DeadWalkDepth)
}

// A DeadCut is the size of a check's dead tests where it is below the
// floor of every dead test (a search of critical.DeadStates states, then
// critical.DeadWalks walks): Options.DeadStates and DeadWalks asked for
// it (Fixed), or the time budget could not pay for the floor. Such a test
// calls nothing dead: a path it finds no way back from is a suspect (case
// C2), and the check is inconclusive. The walks are as long as the
// floor's, or the check's walks if longer.
type DeadCut struct {
	States, Walks int
	Fixed         bool
	// StepCost is what a simulator step of the critical search cost when
	// the size was decided (before the first dead test), and Left the time
	// budget left then: the floor's dead tests would have needed more.
	StepCost, Left time.Duration
}

// Flag is the --dead-test that runs the same dead tests again.
func (d *DeadCut) Flag() string { return fmt.Sprintf("--dead-test %d,%d", d.States, d.Walks) }

// String says the cut and why, in words.
func (d *DeadCut) String() string {
	size := fmt.Sprintf("a search of %s, then %s", reports.Count(d.States, "state"), reports.Count(d.Walks, "walk"))
	floor := fmt.Sprintf("the floor of every dead test is a search of %s, then %s", reports.Count(critical.DeadStates, "state"), reports.Count(critical.DeadWalks, "walk"))
	if d.Fixed {
		return fmt.Sprintf("the dead test %s asked for (%s) is below the floor (%s), so it calls nothing dead", d.Flag(), size, floor)
	}
	return fmt.Sprintf("the dead test was cut to fit the time budget (%s left before the first one, at %s a step): %s, where %s; %s runs the same test again (with --time 0 and nothing else cut, the same result), --time 0 alone the floor",
		d.Left.Round(100*time.Millisecond), d.StepCost.Round(100*time.Nanosecond), size, floor, d.Flag())
}

// deadTestsPaid is how many dead tests of the floor's size the time left
// must pay for when a check's first dead test is due: the path's end's
// and the critical step's, the least a critical step takes. (Those the
// dead test overturns, steps the probes called dead that recover, mostly
// end at a walk that recovers; where they do not, the budget stops the
// critical search, which is then inconclusive and says so.)
const deadTestsPaid = 2

// costSample is the fewest steps the critical search must have taken for
// what they cost to size the dead tests by: with fewer (a probe's search
// saw every state, say), the floor runs.
const costSample = 10_000

// afford sizes the dead tests of the critical search begun at since
// (critical.Options.Afford): the size is decided once a check, at its
// first dead test, so that one --dead-test runs them all again.
func (c *checker) afford(since time.Time) func(critical.Test, int64) critical.Test {
	return func(t critical.Test, steps int64) critical.Test {
		if !c.deadSized {
			c.deadSized = true
			c.deadCut = c.sizeDead(t, steps, c.now().Sub(since))
			c.res.Live.DeadCut = c.deadCut
		}
		if d := c.deadCut; d != nil {
			t.States, t.Walks = min(t.States, d.States), min(t.Walks, d.Walks)
		}
		return t
	}
}

// sizeDead decides the size of the check's dead tests, t the floor's,
// when the critical search has taken steps in spent: nil for the floor.
// Where the options fix no size and a time budget is set, the floor runs
// if the time left pays for deadTestsPaid tests at what a step cost so
// far; otherwise the tests are cut in proportion, to fit.
func (c *checker) sizeDead(t critical.Test, steps int64, spent time.Duration) *DeadCut {
	o := c.opts
	if o.DeadStates > 0 || o.DeadWalks > 0 {
		d := &DeadCut{States: cmp.Or(o.DeadStates, t.States), Walks: cmp.Or(o.DeadWalks, t.Walks), Fixed: true}
		if d.States >= t.States && d.Walks >= t.Walks {
			return nil
		}
		return d
	}
	if c.deadline.IsZero() {
		return nil
	}
	cost := o.stepCost
	if cost == 0 {
		// A test that reads the budget on a clock of its own gives the
		// step's cost too: its clock measures no cost.
		if steps < costSample || o.clock != nil {
			return nil
		}
		cost = spent / time.Duration(steps)
	}
	left := c.deadline.Sub(c.now())
	// A breadth-first search takes a step for each event enabled in each
	// state it expands: as many as the check's own search took a state.
	fan := 1.0
	if st := c.res.Stats; st.States > 0 {
		fan = max(1, float64(st.Transitions+st.Slept)/float64(st.States))
	}
	need := deadTestsPaid * (float64(t.States)*fan + float64(t.Walks)*float64(t.WalkDepth)) * float64(cost)
	if need <= float64(left) {
		return nil
	}
	f := max(0, float64(left)) / need
	return &DeadCut{States: max(1, int(float64(t.States)*f)), Walks: max(1, int(float64(t.Walks)*f)), StepCost: cost, Left: max(0, left)}
}
