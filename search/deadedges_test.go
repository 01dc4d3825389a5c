package search_test

import (
	"reflect"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/systems/randtree"
)

// A search keeps at most maxDeadEdges edges to find closed dead regions;
// once a level's edges are sure to pass it, the workers stop keeping
// them and only count them. RandTree with the RT3 bug, 3 nodes, has a
// closed dead region within 14 steps and levels of thousands of states,
// so that a bound passed within a level leaves some of its chunks
// without edges. Whatever the bound, the result is the same on 1, 2 and
// 3 workers, and the region is found exactly when the bound holds every
// edge: the least such bound, found on 1 worker, and one less.
func TestDeadEdgesBound(t *testing.T) {
	cfg := livecheck.Config{Nodes: 3, Bugs: []string{"RT3"}}
	opts := search.Options{Depth: 14}
	whole := search1(t, &randtree.System, cfg, opts, 1)
	if whole.res.Dead == 0 {
		t.Fatal("no closed dead region within 14 steps")
	}
	defer search.SetMaxDeadEdges(search.SetMaxDeadEdges(0))
	dead := func(bound, workers int) searched {
		search.SetMaxDeadEdges(bound)
		return search1(t, &randtree.System, cfg, opts, workers)
	}
	// The least bound that finds it: every edge kept, and the states
	// they leave (the bound counts both).
	lo, hi := 0, int(whole.stats.Transitions+whole.stats.States)
	if dead(hi, 1).res.Dead == 0 {
		t.Fatalf("bound %d, the transitions and states: no closed dead region", hi)
	}
	for lo < hi {
		if mid := (lo + hi) / 2; dead(mid, 1).res.Dead != 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	least := lo
	bounds := []int{0, 1, least / 16, least / 4, least / 2, 3 * least / 4, least - 1, least, least + 1}
	for _, b := range bounds {
		one := dead(b, 1)
		if want := b >= least; (one.res.Dead != 0) != want || want && one.res.Dead != whole.res.Dead {
			t.Errorf("bound %d (least %d): dead %x, want %x: %v", b, least, one.res.Dead, whole.res.Dead, want)
		}
		if !reflect.DeepEqual(one.stats, whole.stats) {
			t.Errorf("bound %d: %+v, unbounded %+v", b, one.stats, whole.stats)
		}
		for _, w := range []int{2, 3} {
			if r := dead(b, w); r.res.Dead != one.res.Dead || !reflect.DeepEqual(r.stats, one.stats) {
				t.Errorf("bound %d, %d workers: dead %x, %+v; 1 worker: %x, %+v", b, w, r.res.Dead, r.stats, one.res.Dead, one.stats)
			}
		}
	}
	t.Logf("least bound %d edges, %d transitions", least, whole.stats.Transitions)
}
