package lcr_test

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/lcr"
)

func check(t testing.TB, nodes int, bugs ...string) *livecheck.Result {
	t.Helper()
	res, err := livecheck.Check(&lcr.System, livecheck.Options{
		Time:   livecheck.NoTimeLimit,
		Config: livecheck.Config{Nodes: nodes, Bugs: bugs},
		Depth:  64,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The correct LCR's state space, pinned: a change in these numbers changes
// what the search explores and must be explained. Without reduction the
// transitions are Spin's (bench/spin/lcr.pml) less one, the edge into the
// initial state that Spin counts; sleep sets take fewer, to the same states.
func TestCorrectStateCounts(t *testing.T) {
	for _, tc := range []struct {
		nodes          int
		states         int64
		all, reduced   int64
		maxDepth, live int
	}{
		{3, 84, 167, 128, 11, 21},
		{4, 324, 855, 555, 15, 63},
		{5, 1188, 3915, 2183, 19, 189},
	} {
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			for run, reduce := range []string{"none", "sleep", "sleep"} { // and stable across runs
				transitions := tc.reduced
				if run == 0 {
					transitions = tc.all
				}
				res, err := livecheck.Check(&lcr.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: livecheck.Config{Nodes: tc.nodes}, Depth: 64, Reduce: reduce})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != livecheck.OK || !res.Exhausted || !res.Complete {
					t.Fatalf("verdict %s (%s), exhausted %v: want ok over the whole space", res.Verdict, res.Message, res.Exhausted)
				}
				st := res.Stats
				if st.States != tc.states || st.Transitions != transitions || st.MaxDepth != tc.maxDepth || st.Live != int64(tc.live) {
					t.Fatalf("--reduce %s: states %d transitions %d max depth %d live %d; want %d %d %d %d",
						reduce, st.States, st.Transitions, st.MaxDepth, st.Live, tc.states, transitions, tc.maxDepth, tc.live)
				}
			}
		})
	}
}

func TestNoDiscardFound(t *testing.T) {
	for _, tc := range []struct {
		nodes, pathLen int
	}{{3, 8}, {4, 10}, {5, 12}} { // the shortest paths: the check shortens what the search finds first
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			res := check(t, tc.nodes, "no-discard")
			if res.Verdict != livecheck.SafetyViolation || res.Property != "one-leader" {
				t.Fatalf("got %s of %q, want a safety violation of one-leader", res.Verdict, res.Property)
			}
			if len(res.Path) != tc.pathLen {
				t.Errorf("path of %d steps, want %d", len(res.Path), tc.pathLen)
			}
			rep, err := livecheck.Replay(&lcr.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != livecheck.SafetyViolation || rep.Property != "one-leader" || rep.Message != res.Message {
				t.Fatalf("replay reached %s of %q (%s); want the search's %q", rep.Verdict, rep.Property, rep.Message, res.Message)
			}
			if len(rep.Steps) != len(res.Path) {
				t.Errorf("replay stopped after %d steps, the path has %d", len(rep.Steps), len(res.Path))
			}
		})
	}
}

func TestTamperedPathDoesNotReplay(t *testing.T) {
	res := check(t, 4, "no-discard")
	for name, tamper := range map[string]func(p sim.Path){
		"other message": func(p sim.Path) { p[1].Event.Msg ^= 1 },
		"other node":    func(p sim.Path) { p[1].Event.Node = 3 },
		"extra choice":  func(p sim.Path) { p[0].Choices = []int{0} },
		"node out of range": func(p sim.Path) {
			p[2].Event.Node = 9
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := res.Path.Clone()
			tamper(p)
			_, err := livecheck.Replay(&lcr.System, res.Config, p, 0)
			if !errors.Is(err, livecheck.ErrNoReplay) {
				t.Fatalf("got %v, want ErrNoReplay", err)
			}
		})
	}
	// Cut short, the path replays but no longer reaches the violation.
	rep, err := livecheck.Replay(&lcr.System, res.Config, res.Path[:len(res.Path)-1], 0)
	if err != nil || rep.Verdict != livecheck.OK {
		t.Fatalf("a shortened path gives %v, %v; want no violation", rep, err)
	}
}

func TestIDs(t *testing.T) {
	// The ids change which node wins, not the correctness.
	for _, ids := range []string{"1,2,3,4", "4,3,2,1", "2,4,1,3"} {
		res, err := livecheck.Check(&lcr.System, livecheck.Options{
			Time:   livecheck.NoTimeLimit,
			Config: livecheck.Config{Nodes: 4, Params: map[string]string{"ids": ids}},
			Depth:  64,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK || !res.Exhausted {
			t.Errorf("ids %s: %s (%s)", ids, res.Verdict, res.Message)
		}
	}
	for _, bad := range []string{"1,2,3", "1,1,2,3", "a,b,c,d", "0,1,2,3"} {
		_, err := livecheck.Check(&lcr.System, livecheck.Options{
			Time:   livecheck.NoTimeLimit,
			Config: livecheck.Config{Nodes: 4, Params: map[string]string{"ids": bad}},
		})
		if err == nil {
			t.Errorf("ids %q accepted", bad)
		}
	}
}

// BenchmarkSearchLCR5 is the exhaustive search of the correct LCR with 5
// nodes: states/s, transitions/s and allocations per state.
//
// The CLI runs with the garbage collector at GOGC=400 (a checker's heap is
// mostly its visited set); the benchmark does the same.
func BenchmarkSearchLCR5(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ReportAllocs()
	var states, trans int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		res := check(b, 5)
		states += res.Stats.States
		trans += res.Stats.Transitions
	}
	runtime.ReadMemStats(&after)
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(states)/sec, "states/s")
	b.ReportMetric(float64(trans)/sec, "transitions/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(states), "allocs/state")
}
