package search_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/systems/transport"
)

// TestChunkOf checks how levels are cut into chunks: at least 64 of them,
// or as many of 16 states as the level fills, and none over 256 states
// (a candidate's parent is a byte).
func TestChunkOf(t *testing.T) {
	for _, tc := range []struct{ n, size, chunks int }{
		{1, 16, 1},
		{16, 16, 1},
		{17, 16, 2},
		{100, 16, 7},
		{1024, 16, 64},
		{1025, 16, 65},
		{5000, 78, 65},
		{16384, 256, 64},
		{16385, 256, 65},
		{1 << 20, 256, 4096},
	} {
		size := search.ChunkOf(tc.n)
		if chunks := (tc.n + size - 1) / size; size != tc.size || chunks != tc.chunks {
			t.Errorf("a level of %d states: chunks of %d states, %d of them; want %d, %d", tc.n, size, chunks, tc.size, tc.chunks)
		}
	}
	for n := 1; n <= 1<<15; n++ {
		size := search.ChunkOf(n)
		chunks := (n + size - 1) / size
		if size < 1 || size > 256 || chunks < min(64, (n+15)/16) {
			t.Fatalf("a level of %d states: %d chunks of %d", n, chunks, size)
		}
	}
}

// TestParentsKept checks the parents a level keeps for the next
// (parentsPer): transport's levels are about as wide as the states a
// level keeps, with about one new state each, so that the new states not
// kept are mostly one step from a kept parent, where without parents
// the workers' chains made each again in three or four steps. The
// search is the same with and without them, on 1 worker and on 3.
func TestParentsKept(t *testing.T) {
	cfg := livecheck.Config{Nodes: 2}
	opts := search.Options{Depth: 30}
	defer search.SetParentsPer(search.SetParentsPer(0))
	none := search1(t, &transport.System, cfg, opts, 1)
	search.SetParentsPer(2)
	one := search1(t, &transport.System, cfg, opts, 1)
	three := search1(t, &transport.System, cfg, opts, 3)
	if !reflect.DeepEqual(none.stats, one.stats) || !reflect.DeepEqual(one.stats, three.stats) || !slices.Equal(none.pairs, one.pairs) || !slices.Equal(one.pairs, three.pairs) {
		t.Fatalf("without parents: %+v\nwith, 1 worker: %+v\nwith, 3 workers: %+v", none.stats, one.stats, three.stats)
	}
	rn, r1 := none.res.Stats.Remade, one.res.Stats.Remade
	t.Logf("%d states; steps made again: %d without parents, %d with (1 worker), %d (3 workers)", one.stats.States, rn, r1, three.res.Stats.Remade)
	if r1*3 > rn || r1 == 0 {
		t.Errorf("steps made again: %d with parents kept, %d without; want a third or less, and some", r1, rn)
	}
}

// TestKeepMoreWhenReplaying: past the largest level that keeps parents
// (16,384 states, from depth 49 on), transport's search made each state
// again in 4 to 8 steps; once a level makes more than replaysToKeepMore
// steps again a state, the search keeps twice the states and parents.
// The search is the same with and without it, on 1 worker and on 2, and
// makes far fewer steps again.
func TestKeepMoreWhenReplaying(t *testing.T) {
	opts := search.Options{Depth: 54}
	defer search.SetReplaysToKeepMore(search.SetReplaysToKeepMore(1 << 40))
	never := search1(t, &transport.System, livecheck.Config{}, opts, 1)
	search.SetReplaysToKeepMore(4)
	one := search1(t, &transport.System, livecheck.Config{}, opts, 1)
	two := search1(t, &transport.System, livecheck.Config{}, opts, 2)
	if !reflect.DeepEqual(never.stats, one.stats) || !reflect.DeepEqual(one.stats, two.stats) || !slices.Equal(never.pairs, one.pairs) || !slices.Equal(one.pairs, two.pairs) {
		t.Fatalf("never keeping more: %+v\nkeeping more, 1 worker: %+v\n2 workers: %+v", never.stats, one.stats, two.stats)
	}
	rn, r1 := never.res.Stats.Remade, one.res.Stats.Remade
	t.Logf("%d states; steps made again: %d never keeping more, %d keeping more (1 worker), %d (2 workers)", one.stats.States, rn, r1, two.res.Stats.Remade)
	if r1*3 > rn*2 || r1 == 0 {
		t.Errorf("steps made again: %d keeping more, %d never; want two thirds or less, and some", r1, rn)
	}
}
