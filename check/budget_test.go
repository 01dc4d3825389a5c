package check_test

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/randtree"
)

// Options{} has the command's time budget, as its doc says; NoTimeLimit
// (any negative Time) is none. A shard has none, and refuses one.
func TestTimeBudgetDefaults(t *testing.T) {
	shard := search.Shard{Index: 0, Count: 2}
	for _, tc := range []struct {
		opts check.Options
		want time.Duration
	}{
		{check.Options{}, 60 * time.Second},
		{check.Options{Time: 5 * time.Second}, 5 * time.Second},
		{check.Options{Time: check.NoTimeLimit}, check.NoTimeLimit},
		{check.Options{Time: -time.Second}, check.NoTimeLimit},
		{check.Options{Shard: shard}, check.NoTimeLimit},
	} {
		o := tc.opts
		o.Fill(&lcr.System)
		if o.Time != tc.want {
			t.Errorf("%+v: Time %v, want %v", tc.opts.Time, o.Time, tc.want)
		}
	}
	cfg := protocol.Config{Nodes: 3}
	if _, err := check.Check(&lcr.System, check.Options{Config: cfg, Shard: shard}); err != nil {
		t.Errorf("a shard with no budget: %v", err)
	}
	_, err := check.Check(&lcr.System, check.Options{Config: cfg, Shard: shard, Time: time.Minute})
	if want := "a shard runs without a time budget, so that its result does not depend on the machine"; err == nil || err.Error() != want {
		t.Errorf("a shard with a budget: %v, want %s", err, want)
	}
}

// A budget too large for any clock (a library caller's math.MaxInt64/2, 146 years) is
// as good as none: the search's share of it does not overflow into a
// deadline already past.
func TestHugeTimeBudget(t *testing.T) {
	res, err := check.Check(&lcr.System, check.Options{Config: protocol.Config{Nodes: 3}, Time: time.Duration(math.MaxInt64 / 2)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.OK || !res.Complete {
		t.Fatalf("%s (%s), complete %v; want ok and complete", res.Verdict, res.Message, res.Complete)
	}
}

// A minimum depth past the depth bound is refused, in one line that names
// both flags.
func TestMinDepthPastTheBound(t *testing.T) {
	_, err := check.Check(&lcr.System, check.Options{Config: protocol.Config{Nodes: 3}, Depth: 3, MinDepth: 4})
	if want := "the minimum depth (--min-depth 4) must be between 1 and the depth bound (--depth 3)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// A violation fails a check whatever cut its search short: RT3, whose
// 2-node space holds a closed region of dead states within 6 steps, and
// whose 4-node walks never recover, is a liveness violation when a state
// budget cuts its search, and so is the same check asked for less depth.
func TestCutSearchStillFindsViolations(t *testing.T) {
	for _, tc := range []struct {
		nodes, maxStates int
		dead             bool // the search's closed dead region, not walks, shows it
	}{
		{2, 60, true},
		{4, 200, false},
	} {
		res, err := check.Check(&randtree.System, check.Options{Config: protocol.Config{Nodes: tc.nodes, Bugs: []string{"RT3"}}, MaxStates: tc.maxStates, Time: check.NoTimeLimit})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != check.LivenessViolation || res.Complete || res.Cut != "max-states" {
			t.Fatalf("RT3, %d nodes, %d states: %s (complete %v, cut %q): %s", tc.nodes, tc.maxStates, res.Verdict, res.Complete, res.Cut, res.Message)
		}
		if dead := res.Live.Walks == 0; dead != tc.dead {
			t.Errorf("RT3, %d nodes: found by the closed dead region %v (%d walks), want %v: %s", tc.nodes, dead, res.Live.Walks, tc.dead, res.Message)
		}
		t.Logf("RT3, %d nodes, cut at depth %d: %s", tc.nodes, res.Covered, res.Message)
	}
}

// spendAt is a clock that stands still until the check reports progress
// of phase, then jumps an hour on: the time budget runs out there, at the
// same point on any machine.
func spendAt(o check.Options, phase string) check.Options {
	start := time.Now()
	var spent atomic.Bool
	o.Progress = func(p check.Progress) {
		if p.Phase == phase {
			spent.Store(true)
		}
	}
	return check.WithClock(o, func() time.Time {
		if spent.Load() {
			return start.Add(time.Hour)
		}
		return start
	})
}

// A time budget that runs out during the walks from the periphery, with
// nothing found, passes the check on the walks it took, and says how
// many: after a search complete to its bound, and after one its budget
// cut short. (The walks report progress every 64 walks: the budget runs
// out after the 64th.)
func TestWalksCutByTheBudgetPass(t *testing.T) {
	cfg := protocol.Config{Nodes: 4}
	for _, tc := range []struct {
		name     string
		opts     check.Options
		complete bool
		want     string
	}{
		{"complete", check.Options{Config: cfg, Depth: 6, Time: time.Minute}, true,
			"no violation to depth 6, complete to depth 6: every state within 6 steps explored (510 states); walks from 64 of the 260 states at depth 6 that are not live reached a live state before the walks' seven eighths of the time budget (--time 1m0s) ran out; the others were not walked from"},
		{"cut", check.Options{Config: cfg, Depth: 10, MaxStates: 2000, Time: time.Minute}, false,
			"no violation to depth 8, complete to depth 8: every state within 8 steps explored (1,883 states); walks from 64 of the 894 states at depth 8 that are not live reached a live state before the walks' seven eighths of the time budget (--time 1m0s) ran out; the others were not walked from; not to the depth bound 10: depth 9 would pass the limit of 2,000 states (--max-states) (--min-depth K fails a check that cannot complete depth K)"},
	} {
		res, err := check.Check(&randtree.System, spendAt(tc.opts, "walks"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != check.OK || res.Complete != tc.complete || !res.Live.WalksCut || res.Live.Walks != 64 || res.Message != tc.want {
			t.Errorf("%s: %s, complete %v, walks cut %v after %d walks: %q\nwant ok, complete %v, walks cut after 64: %q",
				tc.name, res.Verdict, res.Complete, res.Live.WalksCut, res.Live.Walks, res.Message, tc.complete, tc.want)
		}
	}
}

// A time budget that runs out while the search expands a level keeps
// what it expanded of it, and a closed dead region it then finds is dead:
// the check searches the region again before it reports it, and fails
// with an internal error if it is not. The clock jumps 50 s on after its
// nth reading, past the search's three quarters of the minute's budget
// but not past the rest (which the dead region's path and test take), at
// the same point of a check on one worker on any machine; some n stop
// the search within a level.
func TestStoppedWithinALevelDeadRegionsAreDead(t *testing.T) {
	within, dead := 0, 0
	for _, nodes := range []int{2, 3} {
		for n := 1; n <= 60; n++ {
			o := check.Options{Config: protocol.Config{Nodes: nodes, Bugs: []string{"RT3"}}, Workers: 1, Depth: 30, Time: time.Minute, NoWalks: true}
			start, reads := time.Now(), 0
			res, err := check.Check(&randtree.System, check.WithClock(o, func() time.Time {
				if reads++; reads > n {
					return start.Add(50 * time.Second)
				}
				return start
			}))
			if err != nil {
				t.Fatalf("RT3, %d nodes, stopped after %d readings: %v", nodes, n, err)
			}
			if res.Stats.Beyond > 0 {
				within++
				if res.Verdict == check.LivenessViolation {
					dead++
				}
			}
		}
	}
	if within == 0 || dead == 0 {
		t.Fatalf("%d checks stopped within a level, %d of them found a dead region: the test shows nothing", within, dead)
	}
	t.Logf("%d checks stopped within a level, %d of them found a dead region", within, dead)
}
