package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortGroupsStable checks sortGroups' insertion sort against the
// stable sort it replaced, on random sort keys with many ties (both keys
// drawn from a few values), groups of 2 to 8 members: the same orders and
// the same runs of members alike.
func TestSortGroupsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 29))
	for round := range 2000 {
		n := 2 + r.IntN(7)
		groups := [][]NodeID{{}, {}}
		nodes := 1 + 2*n
		perm := r.Perm(nodes)
		for i := range n {
			groups[0] = append(groups[0], NodeID(perm[i]))
			groups[1] = append(groups[1], NodeID(perm[n+i]))
		}
		y := newSymmetry(&Spec{Nodes: nodes, Symmetry: groups})
		for i := range nodes {
			y.sk[i], y.ref[i] = uint64(r.IntN(3)), uint64(r.IntN(3))
		}
		y.sortGroups()
		var want []block
		for gi, g := range y.groups {
			order := slices.Clone(g)
			less := func(a, b NodeID) int {
				if c := cmp.Compare(y.sk[a], y.sk[b]); c != 0 {
					return c
				}
				return cmp.Compare(y.ref[a], y.ref[b])
			}
			slices.SortStableFunc(order, less)
			if !slices.Equal(order, y.orders[gi]) {
				t.Fatalf("round %d, group %d: order %v, want %v", round, gi, y.orders[gi], order)
			}
			for lo := 0; lo < len(order); {
				hi := lo + 1
				for hi < len(order) && less(order[hi], order[lo]) == 0 {
					hi++
				}
				if hi-lo > 1 {
					want = append(want, block{gi, lo, hi})
				}
				lo = hi
			}
		}
		if !slices.Equal(want, y.blocks) {
			t.Fatalf("round %d: blocks %v, want %v", round, y.blocks, want)
		}
	}
}
