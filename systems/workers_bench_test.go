package systems_test

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems"
)

// twoWorkerSizes are the configuration and depth each bundled system is
// searched at by BenchmarkTwoWorkers, as the command's --nodes, its
// parameters and --depth give them. They were chosen so that one worker
// takes 2 to 10 s on a 2-core machine (docs/figures.md has the times
// they come from). LCR is searched with 10 nodes both unreduced and with
// the default reductions: 11 nodes unreduced takes about 15 s a search.
var twoWorkerSizes = map[string]struct {
	cfg   livecheck.Config
	depth int
	// reduced is the depth with the default reductions, where it is
	// deeper than depth (0: depth).
	reduced int
}{
	"lcr":       {livecheck.Config{Nodes: 10}, 1000, 0},
	"paxos":     {livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}}, 18, 0},
	"randtree":  {livecheck.Config{}, 18, 19},
	"ring":      {livecheck.Config{Nodes: 4}, 14, 0},
	"overcast":  {livecheck.Config{}, 29, 30},
	"transport": {livecheck.Config{}, 64, 0},
	"onepaxos":  {livecheck.Config{}, 24, 0},
	"etcdraft":  {livecheck.Config{}, 11, 12},
	"kvstore":   {livecheck.Config{}, 15, 0},
	"etcdkv":    {livecheck.Config{}, 11, 12},
}

// shortDepth is the depth every system is searched to under -short: deep
// enough to give both workers states to share, shallow enough that the
// whole benchmark runs in seconds, to show that it works.
const shortDepth = 4

// BenchmarkTwoWorkers reports how much faster 2 workers run the
// exhaustive search of each bundled system than one, unreduced
// (reduce=none) and with the default reductions (reduce=default). Each
// search is the one `livecheck check SYS --no-walks --time 0 --depth D
// [--reduce none] --workers W` runs, at the size twoWorkerSizes gives.
// Each round runs the search on 1 worker, then on 2, and fails unless
// both give the same verdict and the same counts of states and
// transitions. It reports the ratio of their summed times ("speedup") and
// the time of each search on average. On a machine whose cores other
// work shares, run a few rounds (-benchtime 3x), so that a change of load
// weighs on both. With -short, every system is searched to depth 4
// only. To run one system, anchor its name: -bench 'TwoWorkers/^paxos$/'
// (paxos alone matches onepaxos too).
func BenchmarkTwoWorkers(b *testing.B) {
	// The collector at GOGC=400, as in the other benchmarks; the command
	// paces it by the heap instead (check.AdaptiveGC), so its times differ.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	for _, sys := range systems.All() {
		size, ok := twoWorkerSizes[sys.Name]
		if !ok {
			b.Fatalf("twoWorkerSizes has no size for %s: give it one at which one worker takes 2 to 10 s", sys.Name)
		}
		for _, reduce := range []string{"none", "default"} {
			depth := size.depth
			if reduce == "default" && size.reduced > 0 {
				depth = size.reduced
			}
			if testing.Short() {
				depth = shortDepth
			}
			b.Run(sys.Name+"/reduce="+reduce, func(b *testing.B) {
				opts := livecheck.Options{Config: size.cfg, Depth: depth, Time: livecheck.NoTimeLimit, NoWalks: true}
				if reduce == "none" {
					opts.Reduce = "none"
				}
				// One check first, untimed: the first use of a node type
				// builds its plans (hashing, copying), a cost of the
				// process, not of a search. A few thousand states do it.
				warm := opts
				warm.MaxStates = 1 << 12
				if _, err := livecheck.Check(sys, warm); err != nil {
					b.Fatal(err)
				}
				var took [3]time.Duration
				for b.Loop() {
					var one *livecheck.Result
					for _, workers := range []int{1, 2} {
						opts.Workers = workers
						// Each search starts with the heap of the one
						// before handed back to the system, as in a
						// process of its own: otherwise the second search
						// of a round finds its memory mapped already and
						// the first pays for both.
						b.StopTimer()
						debug.FreeOSMemory()
						b.StartTimer()
						start := time.Now()
						res, err := livecheck.Check(sys, opts)
						took[workers] += time.Since(start)
						if err != nil {
							b.Fatalf("%d workers: %v", workers, err)
						}
						// A search cut short (by the memory budget) would
						// measure less than the whole bound.
						if !res.Complete {
							b.Fatalf("%d workers: the search ended at depth %d of %d (%s)", workers, res.Covered, depth, res.Cut)
						}
						if one == nil {
							one = res
							continue
						}
						if res.Verdict != one.Verdict || res.Stats.States != one.Stats.States || res.Stats.Transitions != one.Stats.Transitions {
							b.Fatalf("2 workers: %s, %d states, %d transitions; 1 worker: %s, %d states, %d transitions",
								res.Verdict, res.Stats.States, res.Stats.Transitions, one.Verdict, one.Stats.States, one.Stats.Transitions)
						}
					}
				}
				b.ReportMetric(took[1].Seconds()/took[2].Seconds(), "speedup")
				b.ReportMetric(took[1].Seconds()/float64(b.N), "s/search-1-worker")
				b.ReportMetric(took[2].Seconds()/float64(b.N), "s/search-2-workers")
			})
		}
	}
}
