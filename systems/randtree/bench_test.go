package randtree_test

import (
	"runtime/debug"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/walk"
)

// BenchmarkWalk8 is walk throughput on RandTree with 8 nodes, the liveness
// property (single-tree) evaluated after every step: simulator steps/s on
// one goroutine.
func BenchmarkWalk8(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	_, m, err := randtree.System.Model(livecheck.Config{Nodes: 8})
	if err != nil {
		b.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		b.Fatal(err)
	}
	s0, _ := w.Initial()
	live := func(s *sim.State) bool { return randtree.SingleTree.IsLive(s) }
	wt := walk.DefaultWeights
	wk := walk.New(w, live, &wt, 1)
	b.ReportAllocs()
	var steps, lives int64
	for i := 0; b.Loop(); i++ {
		wk.Reseed(uint64(i))
		// Walks do not stop at the live state: the tree keeps probing and
		// the walk keeps stepping, as a walk from the periphery of a
		// prefix search does.
		r, err := wk.Walk(s0, 10000, false, false)
		if err != nil {
			b.Fatal(err)
		}
		steps += int64(r.Steps)
		if r.LiveAt >= 0 {
			lives++
		}
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(lives)/float64(b.N), "live-fraction")
}

// BenchmarkCheckRT3 is the time for the default check of RandTree with 4
// nodes and RT3 to report its critical transition.
func BenchmarkCheckRT3(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	for b.Loop() {
		res, err := livecheck.Check(&randtree.System, livecheck.Options{Config: livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}})
		if err != nil || res.Verdict != livecheck.LivenessViolation || res.Critical == nil {
			b.Fatal(err, res.Verdict)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
}
