package search_test

import (
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/paxos"
	"github.com/livecheck/livecheck/systems/randtree"
)

// countBits counts the bits of any run of a bit set.
func TestCountBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	set := make([]uint64, 9)
	for i := range set {
		set[i] = r.Uint64()
	}
	set[4] = 0
	set[5] = ^uint64(0)
	for range 2000 {
		lo := r.IntN(64 * len(set))
		hi := lo + r.IntN(64*len(set)-lo+1)
		want := 0
		for i := lo; i < hi; i++ {
			want += int(set[i>>6] >> (i & 63) & 1)
		}
		if got := search.CountBits(set, lo, hi); got != want {
			t.Fatalf("bits %d to %d: %d, want %d", lo, hi, got, want)
		}
	}
	if n := search.CountBits(set, 0, 64*len(set)); n != 64+bits.OnesCount64(set[0])+bits.OnesCount64(set[1])+bits.OnesCount64(set[2])+bits.OnesCount64(set[3])+
		bits.OnesCount64(set[6])+bits.OnesCount64(set[7])+bits.OnesCount64(set[8]) {
		t.Fatalf("the whole set: %d", n)
	}
}

// A level's new states merged on several goroutines (mergeNew) make the
// search that mergeLevel's loop makes: the same states, tree (the
// periphery's paths), sleep sets, keys, closed dead region, verdict and
// violation's path, on 1 and 3 workers, with levels of tens of thousands
// of states; with the edges for closed dead regions kept (the bound
// passed within a level, or never), and not (bound 0).
func TestMergeInParallelSame(t *testing.T) {
	defer search.SetMergeInParallel(search.SetMergeInParallel(true))
	defer search.SetMaxDeadEdges(search.SetMaxDeadEdges(0))
	paxos3x2 := livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}}
	rt3 := livecheck.Config{Nodes: 3, Bugs: []string{"RT3"}}
	const all = 1 << 20
	for _, tc := range []struct {
		name  string
		sys   *livecheck.System
		cfg   livecheck.Config
		opts  search.Options
		bound int  // maxDeadEdges
		dead  bool // a closed dead region is found
	}{
		{"paxos 3x2 unreduced", &paxos.System, paxos3x2, search.Options{Depth: 12}, 0, false},
		{"paxos 3x2 sleep sets", &paxos.System, paxos3x2, search.Options{Depth: 13, Reduce: true}, all, false},
		{"paxos 3x2 max states", &paxos.System, paxos3x2, search.Options{Depth: 15, MaxStates: 30000}, all, false},
		{"paxos 3x2 keys", &paxos.System, paxos3x2, search.Options{Depth: 12, Fingerprints: true}, 0, false},
		{"paxos quorum=1", &paxos.System, livecheck.Config{Nodes: 3, Bugs: []string{"quorum=1"}, Params: map[string]string{"proposers": "2"}}, search.Options{Depth: 14}, all, false},
		{"lcr 8 sleep sets", &lcr.System, livecheck.Config{Nodes: 8}, search.Options{Depth: 100, Reduce: true}, all, false},
		{"randtree 4", &randtree.System, livecheck.Config{Nodes: 4}, search.Options{Depth: 12}, all, false},
		{"randtree RT3", &randtree.System, rt3, search.Options{Depth: 15}, all, true},
		{"randtree RT3 bound passed", &randtree.System, rt3, search.Options{Depth: 15}, 30000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			search.SetMaxDeadEdges(tc.bound)
			var big int64
			for _, w := range []int{1, 3} {
				search.SetMergeInParallel(false)
				loop := search1(t, tc.sys, tc.cfg, tc.opts, w)
				search.SetMergeInParallel(true)
				par := search1(t, tc.sys, tc.cfg, tc.opts, w)
				if !reflect.DeepEqual(loop.stats, par.stats) || !reflect.DeepEqual(loop.pairs, par.pairs) || loop.res.Dead != par.res.Dead ||
					loop.res.Complete != par.res.Complete || loop.res.Exhausted != par.res.Exhausted || !reflect.DeepEqual(loop.res.Fingerprints, par.res.Fingerprints) {
					t.Fatalf("%d workers: merged in a loop %+v dead %x\nin parallel %+v dead %x", w, loop.stats, loop.res.Dead, par.stats, par.res.Dead)
				}
				if v, u := loop.res.Violation, par.res.Violation; (v == nil) != (u == nil) || v != nil && (v.Property != u.Property || v.Path.Hash() != u.Path.Hash()) {
					t.Fatalf("%d workers: violation %v in a loop, %v in parallel", w, v, u)
				}
				if (par.res.Dead != 0) != tc.dead {
					t.Fatalf("%d workers: closed dead region %x, want one: %v", w, par.res.Dead, tc.dead)
				}
				big = max(big, par.stats.States)
			}
			if big < 1<<14 {
				t.Errorf("%d states: too few for levels that merge on several goroutines", big)
			}
		})
	}
}
