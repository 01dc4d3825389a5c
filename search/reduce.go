package search

import "github.com/livecheck/livecheck/sim"

// Sleep sets (Godefroid), the reduction of Options.Reduce.
//
// Two events are independent when they are handled by different nodes
// and neither is a failure: a delivery, a timer or an application call
// reads and writes the state of its own node only, takes its own message
// off the network and adds the messages it sends. Such a pair can happen
// in either order from a state where both are enabled, neither disables
// the other, and both orders end in the same state. (Taking a message
// off the head of one queue and adding one at the tail of another, or of
// the same non-empty queue, commute; opening a connection by sending is
// adding to a set.) A failure uses the shared failure budget, and a
// reset or a broken connection changes what is in flight to and from
// other nodes: failures are independent of nothing. So is a crash (it
// disables every event of its node, and on streams takes what is in
// flight to it), and so are the events a node down makes possible: its
// restart (a Reset) and the free socket errors of its connections. A
// local event never changes which nodes are down, and a node down has
// no local event (no delivery, timer or call), so two local events of
// nodes up commute as before; one that sends to a node down only adds
// to the network, as any send does.
//
// A state's sleep set holds events that need not be taken from it: after
// the search takes event a from state s, it takes b (b after a in s's
// order, a and b independent) and reaches s·b, where a is asleep, since
// s·b·a = s·a·b is reached from s·a at the same depth. Asleep events
// stay asleep across independent events and wake at a dependent one.
//
// Sleep sets prune transitions, never states: every state within the
// depth bound is still found, at its least depth. For each sequence of
// events, the order that takes the events in the earliest order the
// search lists them is never pruned, and every state along it is at its
// least depth (a shorter way to one of them would be a shorter way to the
// end). The breadth-first search meets a state from several parents of
// the same level and keeps the intersection of their sleep sets, so it
// takes from it at least what any one of those ways would; a state met
// again at a later level was already expanded at its least depth. So the
// states, their depths, the violations and the periphery are those of
// the search without reduction; only the transition count drops. Paths
// are shortest either way, but may take other, equally short, orders.
//
// A sleep set is a bit mask over the state's enabled events in the order
// World.Enabled lists them: an event asleep in s is still enabled in
// every state it is carried to. Events past the 64th are never put to
// sleep, which only prunes less.

// With symmetry reduction (sim.Spec.Symmetry) a state stands for all its
// renamings: the search keeps the first state of a level with a given key
// and drops the others. A renaming of the kept state that is not the same
// state has its enabled events in another order and under other names, so
// its sleep set cannot be intersected with the kept one's: the kept state
// then gets an empty sleep set (global.conc) and takes every event, which takes at least
// what the renaming would have (renamed), so the argument above holds for
// the renaming classes.

// Observer postponement (Options.Observers), a persistent-set reduction.
//
// Observers (sim.Spec.Observers) never send, and with datagrams and no
// failures an event is a delivery, timer or call at one node. Let T be
// the enabled events of the other nodes in a state s, when there are
// some. T is persistent: along any run from s that takes no event of T,
// every event is an observer's (the other nodes' events not yet enabled
// need a message, and only the other nodes send; their timers and calls
// are enabled already, so in T), and an observer's event is independent
// of every event of T (see above). The events of T are invisible: they
// change no observer's state, and the safety and reachability
// properties read only the observers (the spec's promise). A search
// that takes only T in s, and all events where T is empty, therefore
// reaches every state of observers (with some state of the others) that
// the full search reaches, provided no observer event is postponed
// forever around a cycle of T events: every cycle of the reduced graph
// (the persistent sets' steps, before sleep sets prune them) must have a
// state that takes every event. Two ways meet that proviso.
//
// The graph's, first (global.optimistic): every state with events of
// the others postpones, and its steps of the others, asleep ones too
// (each costs a step), are kept as edges between keys (postponeGraph,
// 8 bytes a step and 12 a state). When the search ends, and during it
// each time the graph has doubled, a topological sort (Kahn's) looks
// for a cycle among the postponing states. None: the proviso holds
// for every state the search expanded, and the result stands. One: the
// search starts again from nothing under the levels' proviso (the
// result says so, Stats.ProvisoRerun). A violation found before either
// is reported as it is: its path is a run, whatever the proviso. Split
// Paxos 2 x 5, whose reduced graph has no cycle (the sort finds none),
// has 628,646 classes under the graph's proviso and 7,385,794 under the
// levels': there a step that goes back is most often one of two ways of
// different lengths to a state, not a cycle, and each made its state
// take every event, the learner's deliveries among them, whose states
// then multiplied. A search sliced into shards (Options.Shard) sees only its
// own part of the graph, and takes the levels' proviso.
//
// The levels': s takes every event when an event of T (asleep or not)
// leads back to a state of its own level or an earlier one; a cycle of
// the reduced graph has such a step, since breadth-first depths cannot
// rise all the way around it. Looking at asleep events costs a step
// each, and is needed only once some step goes back: an asleep event
// of s that leads to an old state X was taken, from a state of the same
// level, on the way sleep sets keep (s·b·a = s·a·b), and that step
// reaches X too. So the search checks asleep events only from the first
// level where any step reached an old state (global.cyclic), which it
// then expands again before merging it.
//
// Either way every violation of such a property is found, and so is
// every quiescent state (one with no event), but not all at
// their fewest steps: an observer's step may come later on the reduced
// path. Sleep sets work on top of it as usual: the events are listed
// with T first, in the order the search takes them, so what was taken
// before an event is what is listed before it. Closed dead regions are
// not sought (an event left out leads to states the search never saw):
// walks judge liveness.

// observersLast reorders evs in place so that the observers' events come
// after the others' (each part in its order), with scratch as room. The
// events before the first observer's, and a list already in that order,
// are not moved: an event is 56 bytes, and a list is ordered once per
// state expanded and once per new state.
func observersLast(w *sim.World, evs []sim.Event, scratch *[]sim.Event) {
	n := 0
	for n < len(evs) && !w.Observer(evs[n].Node) {
		n++
	}
	m := n
	for m < len(evs) && w.Observer(evs[m].Node) {
		m++
	}
	if m == len(evs) {
		return
	}
	*scratch = append((*scratch)[:0], evs[n:m]...)
	for _, ev := range evs[m:] {
		if w.Observer(ev.Node) {
			*scratch = append(*scratch, ev)
		} else {
			evs[n] = ev
			n++
		}
	}
	copy(evs[n:], *scratch)
}

// enabled lists the events enabled in s in the search's order: World's,
// or with observer postponement the observers' last.
func (k *worker) enabled(s *sim.State, buf []sim.Event) []sim.Event {
	evs := k.w.Enabled(s, buf)
	if k.g.por {
		observersLast(k.w, evs, &k.obsBuf)
	}
	return evs
}

// reachesOld says whether one of the events evs[e] of the state under
// expansion, s, a state of the level under way, for e in slept (with any
// choices), leads to a state of this level or an earlier one: the cycle
// proviso of observer postponement, for the events sleep sets spare. A
// step that fails says yes: s then takes every event.
//
// The answer is whether any step goes back, whatever the order of the
// steps. When one does, it is most often the first event's (on split
// Paxos 2 x 5, 2.43M of the 2.50M states the proviso expands fully),
// so that event is looked up alone, and the others' keys (16M steps
// there for 3.0M states whose steps all go forward) are gathered and
// looked up a batch at a time, their misses of the cache overlapped, as
// expand's are.
func (k *worker) reachesOld(s *sim.State, slept []int) bool {
	evs := k.x.evs
	k.pstates = k.pstates[:0]
	if k.reachesOldSteps(s, evs[slept[0]]) || k.oldKeys() {
		return true
	}
	for _, e := range slept[1:] {
		if k.reachesOldSteps(s, evs[e]) {
			return true
		}
		if len(k.pstates) >= succBatch && k.oldKeys() {
			return true
		}
	}
	return k.oldKeys()
}

// reachesOldSteps takes the steps of ev (with every choice) from s and
// adds the states they make, without their keys when the world has
// symmetry (World.NoKeys), to k.pstates; true if a step fails (the states
// of k.pstates are then given back).
func (k *worker) reachesOldSteps(s *sim.State, ev sim.Event) bool {
	k.ptape = k.ptape[:0]
	for {
		k.trail.Event, k.trail.Tape = ev, k.ptape
		k.w.NoKeys = k.w.Symmetric()
		next, err := k.w.Apply(s, ev, k.ptape)
		k.w.NoKeys = false
		if err != nil {
			k.dropPStates()
			return true
		}
		k.pstates = append(k.pstates, next)
		info := k.w.Last()
		nt, more := sim.NextTape(info.Choices, info.Bounds, k.ptape)
		if !more {
			return false
		}
		k.ptape = nt
	}
}

// oldKeys says whether a state of k.pstates is in the visited set, and
// gives them back. It reads their entries in the key cache, works out
// their keys, reads their slots in the visited set, then looks them up:
// each pass has its misses of the cache in flight at once.
func (k *worker) oldKeys() bool {
	v := k.g.visited
	k.pkeys = k.pstateKeys(k.pkeys[:0])
	var sink uint64
	for _, key := range k.pkeys {
		sink += v.touch(key)
	}
	k.sink += sink
	for _, key := range k.pkeys {
		if v.has(key) {
			return true
		}
	}
	return false
}

// pstateKeys appends the keys of the states of k.pstates to keys, and
// gives the states back. It reads their entries in the key cache before
// it works out the keys, so that the misses of the cache overlap.
func (k *worker) pstateKeys(keys []uint64) []uint64 {
	var sink uint64
	for _, st := range k.pstates {
		sink += k.w.TouchKey(st)
	}
	k.sink += sink
	for _, st := range k.pstates {
		keys = append(keys, k.w.Key(st))
	}
	k.dropPStates()
	return keys
}

// sleptSteps takes the steps of the asleep events evs[e] of the state
// under expansion s, for e in slept (with every choice), and adds the
// keys they lead to to c.pdst: the postponing state's edges that sleep
// sets spared (global.optimistic). True if a step fails.
func (k *worker) sleptSteps(c *chunk, s *sim.State, slept []int) bool {
	evs := k.x.evs
	k.pstates = k.pstates[:0]
	for _, e := range slept {
		if k.reachesOldSteps(s, evs[e]) {
			return true
		}
		if len(k.pstates) >= succBatch {
			c.pdst = k.pstateKeys(c.pdst)
		}
	}
	c.pdst = k.pstateKeys(c.pdst)
	return false
}

// A postponeGraph is the graph of the states that postponed observer
// events in a search with global.optimistic: each such state's key and
// the keys its steps of the other nodes lead to, asleep ones included
// (the persistent sets' steps, before sleep sets prune them), level by
// level as the chunks made them.
type postponeGraph struct {
	src   [][]uint64 // blocks of states, a chunk's each
	end   [][]uint32 // where each state's steps end in its block of dst
	dst   [][]uint64
	nodes int // states in all blocks
	edges int // steps in all blocks
	// checked is the steps there were at the last look for a cycle.
	checked int
}

// add takes over c's states and steps (c makes new slices).
func (pg *postponeGraph) add(c *chunk) {
	if len(c.psrc) == 0 {
		return
	}
	pg.src = append(pg.src, c.psrc)
	pg.end = append(pg.end, c.pend)
	pg.dst = append(pg.dst, c.pdst)
	pg.nodes += len(c.psrc)
	pg.edges += len(c.pdst)
	c.psrc, c.pend, c.pdst = nil, nil, nil
}

func (pg *postponeGraph) bytes() int64 {
	return int64(pg.nodes)*12 + int64(pg.edges)*8
}

// due says whether the graph has grown enough since its last look for a
// cycle to look again during the search: by its size then, and by a
// million steps, so that the looks cost at most about as much as one
// look at the end. A cycle found early spares the rest of a search that
// must start again.
func (pg *postponeGraph) due() bool {
	return pg.edges-pg.checked >= max(pg.checked, 1<<20)
}

// cyclic says whether the graph has a cycle: some states, each a step of
// the others from the next, around. A step to a state not in the graph (a
// state that took every event, one not expanded yet, or one that did not
// postpone) is on no cycle of it. It peels off states with no step into
// them from a state left (Kahn's algorithm): a cycle is what is never
// peeled.
func (pg *postponeGraph) cyclic() bool {
	pg.checked = pg.edges
	if pg.nodes == 0 {
		return false
	}
	ids := make(map[uint64]int32, pg.nodes)
	for _, b := range pg.src {
		for _, fp := range b {
			if _, ok := ids[fp]; ok {
				// A state expanded twice, which the search never
				// does: not a graph to judge, so say it may cycle
				// (the search starts again under the other proviso).
				return true
			}
			ids[fp] = int32(len(ids))
		}
	}
	// to[first[v]:first[v+1]] are the states in the graph that v's steps
	// lead to.
	first := make([]int32, 0, pg.nodes+1)
	to := make([]int32, 0, pg.edges)
	in := make([]int32, pg.nodes)
	for bi, b := range pg.src {
		from := uint32(0)
		for j := range b {
			first = append(first, int32(len(to)))
			for _, fp := range pg.dst[bi][from:pg.end[bi][j]] {
				if v, ok := ids[fp]; ok {
					to = append(to, v)
					in[v]++
				}
			}
			from = pg.end[bi][j]
		}
	}
	first = append(first, int32(len(to)))
	queue := make([]int32, 0, pg.nodes)
	for v, n := range in {
		if n == 0 {
			queue = append(queue, int32(v))
		}
	}
	for q := 0; q < len(queue); q++ {
		v := queue[q]
		for _, u := range to[first[v]:first[v+1]] {
			if in[u]--; in[u] == 0 {
				queue = append(queue, u)
			}
		}
	}
	return len(queue) < pg.nodes
}

// dropPStates gives the states of k.pstates back to the world.
func (k *worker) dropPStates() {
	for _, st := range k.pstates {
		if k.evBufOf == st {
			k.evBufOf = nil
		}
		k.w.Discard(st)
	}
	k.pstates = k.pstates[:0]
}

// nextSleepNeeded says whether the states found in the level under way
// need sleep sets: with reduction, unless they are at the depth bound.
func (g *global) nextSleepNeeded() bool {
	return g.opts.Reduce && g.depth+1 < g.opts.Depth
}

// independent says whether a and b commute: see above.
func independent(a, b sim.Event) bool {
	return a.Node != b.Node && localKind(a.Kind) && localKind(b.Kind)
}

func localKind(k sim.Kind) bool {
	return k == sim.Deliver || k == sim.Timer || k == sim.App
}

// sleepSet returns the sleep set of next, the state event evs[e] led to
// from a state whose events are evs and whose sleep set is asleep: the
// events asleep there or taken before evs[e], that are independent of it.
func (k *worker) sleepSet(next *sim.State, evs []sim.Event, e int, asleep uint64) uint64 {
	ev := evs[e]
	if !localKind(ev.Kind) {
		return 0
	}
	var z uint64
	listed := false
	for j := range evs {
		if j == e || j > e && (j >= 64 || asleep&(1<<j) == 0) {
			continue
		}
		x := &evs[j]
		if !independent(*x, ev) {
			continue
		}
		if !listed {
			// classify has listed them already when next is not live
			if k.evBufOf != next {
				k.evBuf, k.evBufOf = k.enabled(next, k.evBuf[:0]), next
			}
			listed = true
		}
		for at := range min(len(k.evBuf), 64) {
			if k.evBuf[at] == *x {
				z |= 1 << at
				break
			}
		}
	}
	return z
}
