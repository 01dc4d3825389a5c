package search

import (
	"fmt"
	"sync"

	"github.com/livecheck/livecheck/sim"
)

// The search keeps no state off the path it works on. Every state it
// found is a node of the tree of first discoveries: its parent and the
// step from the parent, 8 bytes in all. A state is made again when it is
// needed by replaying the steps from the start state (MaceMC keeps its
// states small the same way). A step is the index of its event in the
// parent's enabled events, which are in a stable order, and the choices
// its handlers made, interned.

// A node is a state of the tree: its parent's index, with the state's
// liveness in the top bit, and the step from the parent.
type node struct {
	parent uint32
	ev     uint16 // index of the event in the parent's enabled events
	tape   uint16 // the choices the step made, in the tape table (0: none)
}

const (
	liveBit  = 1 << 31
	maxNodes = liveBit - 1
	// nodeBlock nodes are allocated at a time, so that the tree grows
	// without copying; the first block starts at firstBlock nodes and
	// doubles, so that a small search does not pay for a large block.
	nodeBlockBits = 16
	nodeBlock     = 1 << nodeBlockBits
	firstBlock    = 1 << 10
	maxEvents     = 1<<16 - 1
	maxTapes      = 1<<16 - 1
)

func (n *node) live() bool     { return n.parent&liveBit != 0 }
func (n *node) parentIdx() int { return int(n.parent &^ liveBit) }
func newNode(parent int, ev, tape int, live bool) node {
	p := uint32(parent)
	if live {
		p |= liveBit
	}
	return node{parent: p, ev: uint16(ev), tape: uint16(tape)}
}

// A tree holds the nodes level by level: levels[d] is the index of the
// first node at depth d.
type tree struct {
	blocks [][]node
	n      int
	levels []int
	tapes  *tapeTable
	por    bool // the search lists observers' events last (observersLast)
	// starts are the roots: node i < len(starts) is initial state
	// starts[i], its own parent.
	starts []sim.Start
}

// root says whether node i is an initial state.
func (t *tree) root(i int) bool { return i < len(t.starts) }

// addRoot adds an initial state; every root comes before any other node.
func (t *tree) addRoot(st sim.Start, live bool) int {
	t.starts = append(t.starts, st)
	return t.add(newNode(t.n, 0, 0, live))
}

func (t *tree) at(i int) *node { return &t.blocks[i>>nodeBlockBits][i&(nodeBlock-1)] }

func (t *tree) add(n node) int {
	i := t.grow(1)
	*t.at(i) = n
	return i
}

// grow adds n nodes, their values to be set (at), and returns the index
// of the first: the blocks a run of adds would make.
func (t *tree) grow(n int) int {
	first, end := t.n, t.n+n
	for t.n < end {
		b := t.n >> nodeBlockBits
		switch {
		case b == len(t.blocks):
			size := nodeBlock
			if b == 0 {
				size = firstBlock
			}
			t.blocks = append(t.blocks, make([]node, size))
		case b == 0 && t.n == len(t.blocks[0]):
			t.blocks[0] = append(make([]node, 0, 2*t.n), t.blocks[0]...)[:2*t.n]
		}
		lim := (b + 1) << nodeBlockBits
		if b == 0 {
			lim = len(t.blocks[0])
		}
		t.n = min(end, lim)
	}
	return first
}

// truncate drops the nodes from n on: a level the search did not finish.
func (t *tree) truncate(n int) {
	t.n = n
	t.blocks = t.blocks[:(n+nodeBlock-1)>>nodeBlockBits]
}

// depth returns the depth of node i.
func (t *tree) depth(i int) int {
	d := 0
	for !t.root(i) {
		i = t.at(i).parentIdx()
		d++
	}
	return d
}

// bytes is the memory the tree holds.
func (t *tree) bytes() int64 {
	var n int64
	for _, b := range t.blocks {
		n += int64(len(b))
	}
	return n * 8
}

// replay makes node i's state again on w and returns it with its path
// from its initial state, and the choices of the first Init calls that
// build that one. trail, when not nil, is told each step before it runs,
// for a watchdog on w.
func (t *tree) replay(w *sim.World, i int, trail *Trail) (sim.Path, *sim.State, []int, error) {
	chain := make([]int, t.depth(i)+1)
	for k := len(chain) - 1; k >= 0; k-- {
		chain[k] = i
		i = t.at(i).parentIdx()
	}
	path := make(sim.Path, 0, len(chain)-1)
	st := t.starts[chain[0]]
	s, init := st.State, st.Init
	var evs, scratch []sim.Event
	for _, j := range chain[1:] {
		n := t.at(j)
		evs = w.Enabled(s, evs[:0])
		if t.por {
			observersLast(w, evs, &scratch)
		}
		if int(n.ev) >= len(evs) {
			return path, s, init, fmt.Errorf("internal error: the search's step %d does not replay (event %d of %d)", len(path)+1, n.ev, len(evs))
		}
		ev, tape := evs[n.ev], t.tapes.get(int(n.tape))
		if trail != nil {
			trail.Init, trail.Path, trail.Event, trail.Tape, trail.tree = init, path, ev, tape, nil
		}
		next, err := w.Apply(s, ev, tape)
		if err != nil {
			return path, s, init, &sim.StepError{Index: len(path), Event: ev, Err: err}
		}
		path = append(path, sim.Step{Event: ev, Choices: append([]int(nil), w.Last().Choices...)})
		s = next
	}
	return path, s, init, nil
}

// A tapeTable interns the choices steps made, for the workers together.
// Most steps make none (id 0); the distinct tapes of a system are few.
type tapeTable struct {
	mu   sync.Mutex
	ids  map[string]int
	list [][]int
}

func newTapeTable() *tapeTable {
	return &tapeTable{ids: map[string]int{}, list: [][]int{nil}}
}

func (t *tapeTable) get(id int) []int {
	if id == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.list[id]
}

// tapeCache is a worker's own view of the table, so that interning a tape
// it has seen takes no lock.
type tapeCache struct {
	t   *tapeTable
	ids map[string]int
	key []byte
}

func (c *tapeCache) intern(choices []int) (int, error) {
	if len(choices) == 0 {
		return 0, nil
	}
	c.key = c.key[:0]
	for _, v := range choices {
		c.key = append(c.key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	if id, ok := c.ids[string(c.key)]; ok {
		return id, nil
	}
	t := c.t
	t.mu.Lock()
	id, ok := t.ids[string(c.key)]
	if !ok {
		if len(t.list) > maxTapes {
			t.mu.Unlock()
			return 0, fmt.Errorf("the handlers made more than %d distinct sequences of choices: too many for the search to keep", maxTapes)
		}
		id = len(t.list)
		t.list = append(t.list, append([]int(nil), choices...))
		t.ids[string(c.key)] = id
	}
	t.mu.Unlock()
	c.ids[string(c.key)] = id
	return id, nil
}
