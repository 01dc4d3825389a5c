package search_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/paxos"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
)

// A search split into shards (Options.Shard) covers the unsplit search
// exactly: the union of the shards' fingerprint sets is the unsplit
// search's set, the union of their peripheries holds its periphery, each
// shard's counts add up to more (the levels before the split, and states
// below it that two shards reach), a violation is found at the same
// least depth, and a shard's result does not depend on the number of
// workers. With sleep sets too: a step a shard's sleep set spares leads
// to a state reached at the same depth from the same parent's other
// successors, which are in the same shard, or, at the split level, from
// a state all shards share.
func TestShardsCoverTheSearch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sys   *livecheck.System
		cfg   livecheck.Config
		depth int
		split int
	}{
		{"paxos 3x2", &paxos.System, livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}}, 10, 0},
		{"paxos 3x2 quorum=1", &paxos.System, livecheck.Config{Nodes: 3, Bugs: []string{"quorum=1"}, Params: map[string]string{"proposers": "2"}}, 14, 0},
		{"paxos split 2x2", &paxos.System, livecheck.Config{Nodes: 5, Params: map[string]string{"proposers": "2", "roles": "split"}}, 100, 0},
		{"lcr 5", &lcr.System, livecheck.Config{Nodes: 5}, 100, 0},
		{"lcr 5 split at 3", &lcr.System, livecheck.Config{Nodes: 5}, 100, 3},
		{"randtree 3 peers=all", &randtree.System, livecheck.Config{Nodes: 3, Params: map[string]string{"peers": "all"}}, 9, 0},
		{"randtree 3 reset", &randtree.System, livecheck.Config{Nodes: 3, Budget: sim.Budget{Resets: 1}}, 8, 0},
		{"randtree RT3 2 nodes", &randtree.System, livecheck.Config{Nodes: 2, Bugs: []string{"RT3"}}, 20, 0},
		{"ring 3 reset at the bound", &ring.System, livecheck.Config{Nodes: 3, Budget: sim.Budget{Resets: 1, Errors: livecheck.None}}, 4, 0},
	} {
		for _, reduce := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s reduce=%v", tc.name, reduce), func(t *testing.T) {
				opts := search.Options{Depth: tc.depth, Reduce: reduce, Fingerprints: true}
				whole := search1(t, tc.sys, tc.cfg, opts, 1)
				if int64(len(whole.res.Fingerprints)) != whole.stats.States {
					t.Fatalf("%d fingerprints for %d states", len(whole.res.Fingerprints), whole.stats.States)
				}
				const n = 3
				var union, periphery []uint64
				var sum int64
				least := -1
				exhausted := true
				for i := range n {
					o := opts
					o.Shard = search.Shard{Index: i, Count: n, SplitDepth: tc.split}
					sh := search1(t, tc.sys, tc.cfg, o, 1)
					if i == 1 {
						sh3 := search1(t, tc.sys, tc.cfg, o, 3)
						if !reflect.DeepEqual(sh.stats, sh3.stats) || !reflect.DeepEqual(sh.pairs, sh3.pairs) || sh.res.SplitDepth != sh3.res.SplitDepth {
							t.Fatalf("shard %d/%d: 1 worker %+v, 3 workers %+v", i, n, sh.stats, sh3.stats)
						}
					}
					if tc.split > 0 && sh.res.Violation == nil && sh.res.SplitDepth != tc.split {
						t.Fatalf("shard %d split at depth %d, not %d", i, sh.res.SplitDepth, tc.split)
					}
					if sh.res.Violation != nil && (least < 0 || len(sh.res.Violation.Path) < least) {
						least = len(sh.res.Violation.Path)
					}
					// A closed dead region a shard finds is dead: the shard
					// counts the states it did not see the future of
					// (another shard's, or reached only through one) as
					// live.
					if sh.res.Dead != 0 && whole.res.Dead == 0 {
						t.Fatalf("shard %d finds a closed dead region (%x), the unsplit search none", i, sh.res.Dead)
					}
					union = append(union, sh.res.Fingerprints...)
					periphery = append(periphery, sh.periphery...)
					sum += sh.stats.States
					if whole.res.Violation == nil && !sh.res.Complete {
						t.Fatalf("shard %d: not complete", i)
					}
					exhausted = exhausted && sh.res.Exhausted
					t.Logf("shard %d/%d: split at depth %d (%d states left to the others), %d states, %d periphery", i, n, sh.res.SplitDepth, sh.res.Foreign, sh.stats.States, sh.stats.Periphery)
				}
				if v := whole.res.Violation; v != nil {
					if least != len(v.Path) {
						t.Fatalf("the shards' shortest violation has %d steps, the unsplit search's %d", least, len(v.Path))
					}
					return
				}
				if least >= 0 {
					t.Fatalf("a shard found a violation the unsplit search did not")
				}
				if exhausted != whole.res.Exhausted {
					t.Fatalf("every shard exhausted: %v; the unsplit search exhausted: %v", exhausted, whole.res.Exhausted)
				}
				union = sortedSet(union)
				if !slices.Equal(union, whole.res.Fingerprints) {
					t.Fatalf("the union of the shards' fingerprints has %d states, the unsplit search %d", len(union), len(whole.res.Fingerprints))
				}
				if sum < int64(len(union)) {
					t.Fatalf("the shards' counts add up to %d, less than their union %d", sum, len(union))
				}
				// A state may be at the bound in a shard that reaches it only
				// the long way round, and nearer in the unsplit search: the
				// shards' peripheries hold the unsplit search's, and may hold
				// more, which walks then start from too.
				periphery = sortedSet(periphery)
				for _, fp := range whole.periphery {
					if _, ok := slices.BinarySearch(periphery, fp); !ok {
						t.Fatalf("periphery state %x of the unsplit search is in no shard's periphery", fp)
					}
				}
				t.Logf("%d states unsplit; the shards' union %d, their sum %d", whole.stats.States, len(union), sum)
			})
		}
	}
}

// sortedSet sorts fps and drops repeats.
func sortedSet(fps []uint64) []uint64 {
	slices.Sort(fps)
	return slices.Compact(fps)
}
