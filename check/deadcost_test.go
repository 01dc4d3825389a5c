package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/randtree"
)

// A dead test the time budget cannot pay for is cut to fit it, and then
// calls nothing dead: RT3, whose critical step a check with the floor's
// dead tests names (step 23, C1), is only a suspect when each step is
// made to cost a millisecond (a clock that stands still, so that nothing
// but the cost cuts). The cut is the same on every run: the budget left
// and the step's cost decide it, and the report gives the --dead-test
// that runs it again, which says the same (fixed by the option, not by
// the budget).
func TestDeadTestCutToFitIsNoProof(t *testing.T) {
	cfg := protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}
	still := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return still }
	base := check.WithClock(check.Options{Config: cfg, Time: time.Minute, Workers: 2}, clock)

	// A step of a nanosecond: the floor fits, RT3 is dead after step 23.
	res, err := check.Check(&randtree.System, check.WithStepCost(base, time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.LivenessViolation || res.Critical == nil || res.Critical.Step != 23 || res.Live.DeadCut != nil {
		t.Fatalf("cheap steps: %s (%s), cut %+v; want a liveness violation at step 23 with the floor's dead test", res.Verdict, res.Message, res.Live.DeadCut)
	}

	// A step of a millisecond: three floor tests would take hours.
	res, err = check.Check(&randtree.System, check.WithStepCost(base, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Live.DeadCut
	if res.Verdict != check.Inconclusive || res.Critical != nil || d == nil || d.Fixed || d.StepCost != time.Millisecond {
		t.Fatalf("slow steps: %s (%s), cut %+v; want inconclusive, a suspect, with dead tests cut to fit", res.Verdict, res.Message, d)
	}
	if d.Walks != 5 || d.States != 382 || d.Flag() != "--dead-test 382,5" {
		t.Errorf("cut to %d states and %d walks (%s), want 382 and 5", d.States, d.Walks, d.Flag())
	}
	for _, w := range []string{
		"a suspect: the path of 5,010 steps that never became live has its critical step probably at step 23 (timer join at 2): after it, 0 of 5 walks of 5,000 steps reach single-tree",
		"the dead test was cut to fit the time budget (",
		"at 1ms a step): a search of 382 states, then 5 walks, where the floor of every dead test is a search of 20,000 states, then 300 walks; --dead-test 382,5 runs the same test again",
	} {
		if !strings.Contains(res.Message, w) {
			t.Errorf("no %q in\n%s", w, res.Message)
		}
	}

	// The same test, fixed by the options, with no budget: the same
	// suspect, said as asked for.
	fixed, err := check.Check(&randtree.System, check.Options{Config: cfg, Time: check.NoTimeLimit, DeadStates: d.States, DeadWalks: d.Walks})
	if err != nil {
		t.Fatal(err)
	}
	if fd := fixed.Live.DeadCut; fixed.Verdict != check.Inconclusive || fd == nil || !fd.Fixed || fd.States != d.States || fd.Walks != d.Walks ||
		fixed.Live.CutSuspect != res.Live.CutSuspect {
		t.Errorf("fixed: %s (%s), cut %+v; want the suspect %q", fixed.Verdict, fixed.Message, fd, res.Live.CutSuspect)
	}
}

// A dead test below the floor that the options ask for never calls a
// state dead, however small or large below it; at the floor, it does.
func TestDeadTestBelowFloorIsNoProof(t *testing.T) {
	cfg := protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}
	for _, tc := range []struct {
		states, walks int
		want          check.Verdict
	}{
		{1, 1, check.Inconclusive},
		{20_000, 299, check.Inconclusive},
		{20_000, 300, check.LivenessViolation},
	} {
		res, err := check.Check(&randtree.System, check.Options{Config: cfg, Time: check.NoTimeLimit, DeadStates: tc.states, DeadWalks: tc.walks})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want || (res.Live.DeadCut != nil) != (tc.want == check.Inconclusive) {
			t.Errorf("--dead-test %d,%d: %s (%s), cut %+v; want %s", tc.states, tc.walks, res.Verdict, res.Message, res.Live.DeadCut, tc.want)
		}
	}
	_, err := check.Check(&randtree.System, check.Options{Config: cfg, DeadStates: 20_001})
	if want := "the dead test (--dead-test 20001,0) must search 1 to 20,000 states, then take 1 to 300 walks: the floor of every dead test is the most a check runs"; err == nil || err.Error() != want {
		t.Errorf("a dead test past the floor: %v, want %s", err, want)
	}
}
