package check_test

import (
	"runtime"
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

// called says whether a function whose name has name is on the stack.
func called(name string) bool {
	pcs := make([]uintptr, 64)
	fr := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := fr.Next()
		if strings.Contains(f.Function, name) {
			return true
		}
		if !more {
			return false
		}
	}
}

// Every phase after the search asks Options.Interrupted: here it says so
// the first time a phase asks. Stopped in the walks, the critical search,
// a probe, a dead test or the replay that confirms the violation, the
// check is inconclusive and says where it was; stopped while it shortens
// the path of a violation it confirmed, it reports the violation, not
// shortened.
func TestInterruptInEveryPhase(t *testing.T) {
	for _, tc := range []struct {
		in, during string // a function of the phase; what the report says
	}{
		{"check.(*checker).walkPeriphery", "the walks"},
		{"critical.Search", "the critical-transition search of a path of 5,010 steps"},
		{"critical.(*searcher).probe", "the critical-transition search of a path of 5,010 steps"},
		{"critical.(*searcher).test", "the critical-transition search of a path of 5,010 steps"},
		{"check.replayEach", "the replay that confirms the liveness violation it found"},
		{"check.shorten", ""},
	} {
		var mu sync.Mutex
		asked := false
		res, err := check.Check(&randtree.System, check.Options{Config: protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}, Time: check.NoTimeLimit,
			Interrupted: func() bool {
				mu.Lock()
				defer mu.Unlock()
				asked = asked || called(tc.in)
				return asked
			}})
		if err != nil {
			t.Fatal(err)
		}
		if !asked {
			t.Errorf("%s never asked whether to stop (renamed? this test names it)", tc.in)
			continue
		}
		if tc.during == "" {
			if res.Verdict != check.LivenessViolation || res.Critical == nil || res.Shortened != nil {
				t.Errorf("stopped in %s: %s (shortened %v), want the violation, not shortened: %s", tc.in, res.Verdict, res.Shortened != nil, res.Message)
			}
			continue
		}
		if want := "the check was interrupted during " + tc.during; res.Verdict != check.Inconclusive || !res.Interrupted || !strings.HasPrefix(res.Message, want) {
			t.Errorf("stopped in %s: %s: %s\nwant inconclusive: %s...", tc.in, res.Verdict, res.Message, want)
		}
	}
}
