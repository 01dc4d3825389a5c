package check_test

import (
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/randtree"
)

// Reproduces of a liveness violation runs the dead test itself where the
// caller ran none (TestEnd, Confirm): it cannot be called in the wrong
// order. The path the check reports reproduces; the same path cut before
// its critical step does not, since the dead test finds its way back.
func TestReproducesRunsTheDeadTest(t *testing.T) {
	res, err := check.Check(&randtree.System, check.Options{Config: protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}, Time: check.NoTimeLimit})
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != check.LivenessViolation || cx == nil {
		t.Fatalf("RT3: %s %s", res.Verdict, res.Message)
	}
	for _, tc := range []struct {
		steps int
		want  bool
	}{{len(res.Path), true}, {cx.Step - 1, false}} {
		rep, err := check.ReplayFrom(&randtree.System, res.Config, res.Init, res.Path[:tc.steps], 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Reproduces(check.LivenessViolation, res.Property); got != tc.want || rep.End == nil {
			t.Errorf("the first %d steps of the path: Reproduces %v (dead test run: %v), want %v", tc.steps, got, rep.End != nil, tc.want)
		}
	}
}
