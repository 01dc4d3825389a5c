package livecheck_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
)

// checkEvidence checks sys and tests the evidence its critical transition
// rests on, independently of the check: the state before the reported
// step reaches a live state (the nearest live path, which shares the path
// up to there, replays to one), and from the state after it the stated
// test, run again with another seed, finds no live state.
func checkEvidence(sys *livecheck.System, opts livecheck.Options) error {
	res, err := livecheck.Check(sys, opts)
	if err != nil {
		return err
	}
	cx := res.Critical
	if res.Verdict != livecheck.LivenessViolation || cx == nil || cx.Case != critical.C1 {
		return fmt.Errorf("%s of %q (%s), want a liveness violation with a critical transition", res.Verdict, res.Property, res.Message)
	}
	if cx.LiveStep != cx.Step-1 || cx.Dead == nil || cx.Alive == nil || !cx.Alive.Live || cx.Dead.Live {
		return fmt.Errorf("critical step %d, live step %d, evidence dead %+v alive %+v", cx.Step, cx.LiveStep, cx.Dead, cx.Alive)
	}
	for i := range cx.LiveStep {
		if cx.LivePath[i].Event != res.Path[i].Event {
			return fmt.Errorf("the live path leaves the dead one at step %d, before step %d", i+1, cx.Step)
		}
	}
	live, err := livecheck.Replay(sys, res.Config, cx.LivePath, 0)
	if err != nil || !live.Live {
		return fmt.Errorf("the live path from step %d does not replay to a live state (%v)", cx.LiveStep, err)
	}
	// The dead test: a full search, or both a search and DeadWalks walks.
	if d := cx.Dead; !d.SearchAll && (d.Walks != critical.DeadWalks || d.SearchStates != critical.DeadStates) {
		return fmt.Errorf("after step %d: %+v is not the dead test", cx.Step, d)
	}
	after, err := livecheck.Replay(sys, res.Config, res.Path[:cx.Step], 0)
	if err != nil {
		return err
	}
	if err := after.TestEnd(check.DeadTest{States: cx.Dead.SearchStates, Walks: critical.DeadWalks, WalkDepth: cx.Dead.WalkDepth, Seed: 77}); err != nil {
		return err
	}
	if after.End.Live {
		return fmt.Errorf("after step %d (%s): the dead test with another seed recovers in %d steps (by walk %v)", cx.Step, cx.EventText, len(after.End.Path), after.End.ByWalk)
	}
	return nil
}

// Every liveness bug's critical transition, by evidence rather than by
// event name. With -short: LCR's ignore-early and RT10 seed 8, with walks
// of 1,000 steps to keep it quick (the evidence is of the same kind as at
// the default depth). Without -short (CI) it adds RT3 and partition-forget
// at the default walk depth; LIVECHECK_SLOW_TESTS=1 also runs RT10 over
// seeds 1 to 20 at the default walk depth (minutes).
func TestCriticalEvidence(t *testing.T) {
	all := map[string]string{"peers": "all"}
	type tc struct {
		name string
		sys  *livecheck.System
		cfg  livecheck.Config
		seed int64
	}
	cases := []tc{{"lcr ignore-early", &lcr.System, livecheck.Config{Bugs: []string{"ignore-early"}}, 1}}
	seeds, depth := []int64{8}, 1000
	if !testing.Short() {
		cases = append(cases,
			tc{"randtree RT3", &randtree.System, livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}, 1},
			tc{"ring partition-forget", &ring.System, livecheck.Config{Nodes: 4, Bugs: []string{"partition-forget"}, Budget: sim.Budget{Errors: 1}}, 1})
	}
	if os.Getenv("LIVECHECK_SLOW_TESTS") != "" {
		seeds, depth = nil, 0
		for s := int64(1); s <= 20; s++ {
			seeds = append(seeds, s)
		}
	}
	for _, s := range seeds {
		cases = append(cases, tc{fmt.Sprintf("randtree RT10 seed %d", s), &randtree.System, livecheck.Config{Nodes: 4, Bugs: []string{"RT10"}, Params: all}, s})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(cases))
	sem := make(chan struct{}, 2) // a sweep's checks, two at a time
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = checkEvidence(c.sys, livecheck.Options{Time: livecheck.NoTimeLimit, Config: c.cfg, Seed: c.seed, WalkDepth: depth})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", cases[i].name, err)
		}
	}
}
