package search

import "testing"

// postponeGraph.cyclic on small graphs given as each state's steps, in
// blocks as chunks hand them over: a step to a state not in the graph is
// on no cycle; a step to itself is one.
func TestPostponeGraphCyclic(t *testing.T) {
	type node struct {
		fp    uint64
		steps []uint64
	}
	for _, tc := range []struct {
		name   string
		blocks [][]node
		want   bool
	}{
		{"empty", nil, false},
		{"chain", [][]node{{{1, []uint64{2}}, {2, []uint64{3}}}, {{3, []uint64{4}}}}, false},
		{"diamond", [][]node{{{1, []uint64{2, 3}}, {2, []uint64{4}}, {3, []uint64{4}}}, {{4, nil}}}, false},
		{"back to a state that took every event", [][]node{{{1, []uint64{2}}}, {{2, []uint64{3}}}}, false},
		{"self", [][]node{{{1, []uint64{2}}, {2, []uint64{2}}}}, true},
		{"two", [][]node{{{1, []uint64{2}}}, {{2, []uint64{9, 1}}}}, true},
		{"across blocks", [][]node{{{1, []uint64{2}}, {5, []uint64{6}}}, {{2, []uint64{3}}}, {{3, []uint64{7, 1}}}}, true},
		{"a state twice", [][]node{{{1, nil}}, {{1, nil}}}, true},
	} {
		var pg postponeGraph
		for _, b := range tc.blocks {
			var c chunk
			for _, n := range b {
				c.psrc = append(c.psrc, n.fp)
				c.pdst = append(c.pdst, n.steps...)
				c.pend = append(c.pend, uint32(len(c.pdst)))
			}
			pg.add(&c)
			if c.psrc != nil || c.pdst != nil {
				t.Fatalf("%s: add left the chunk its slices", tc.name)
			}
		}
		if got := pg.cyclic(); got != tc.want {
			t.Errorf("%s: cyclic %v, want %v", tc.name, got, tc.want)
		}
		if pg.checked != pg.edges || pg.due() {
			t.Errorf("%s: checked %d of %d steps, due %v after a look", tc.name, pg.checked, pg.edges, pg.due())
		}
	}
}
