package check_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/randtree"
)

// An interrupt that comes while the critical-transition search runs (its
// probes and dead tests, millions of steps at large walk depths) ends it:
// the check is inconclusive, says it was interrupted there, and reports no
// violation it did not finish showing. Options.Interrupted flips on the
// third time it is asked after the critical search began, which is from
// inside the search: the main world asks every sim.StopEvery steps.
func TestInterruptDuringCriticalSearch(t *testing.T) {
	var mu sync.Mutex
	critical, asked := false, 0
	opts := check.Options{
		Config:  protocol.Config{Nodes: 4, Bugs: []string{"RT3"}},
		Workers: 1,
		Progress: func(p check.Progress) {
			mu.Lock()
			defer mu.Unlock()
			critical = critical || p.Phase == "critical"
		},
		Interrupted: func() bool {
			mu.Lock()
			defer mu.Unlock()
			if critical {
				asked++
			}
			return asked >= 3
		},
	}
	res, err := check.Check(&randtree.System, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !critical {
		t.Fatalf("no progress of phase critical: %s %s", res.Verdict, res.Message)
	}
	if res.Verdict != check.Inconclusive || !res.Interrupted || res.Path != nil || res.Critical != nil {
		t.Fatalf("interrupted during the critical search: %s (interrupted %v, path of %d steps), want inconclusive, interrupted, no path: %s",
			res.Verdict, res.Interrupted, len(res.Path), res.Message)
	}
	if want := "the check was interrupted during the critical-transition search of a path of "; !strings.HasPrefix(res.Message, want) {
		t.Fatalf("message %q, want it to begin %q", res.Message, want)
	}
	t.Logf("%s; Interrupted asked %d times after the critical search began", res.Message, asked)
}
