package sim

import (
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// The step cache: a handler is a function of its node's state and its
// input (Recheck checks it), so a node in a state it was in before, given
// the same event with the same choices, does again what it did then. An
// exhaustive search meets the same node state with the same event over and
// over, in every combination of the other nodes' states: in etcd raft with
// 3 nodes to depth 9, 4,269 distinct (node, event, choices) among 338,817
// handler runs. The cache keeps, per world (and, with SharedCache, for
// every worker of a search), what such a run left: the
// node's new slot (its state, which no one changes once a step has made
// it, its timers and fingerprints), the messages it sent and the choices it
// made; a step that finds its run there puts them into the new state
// instead of copying the node, running the handler and hashing the result.
//
// It serves the steps of Apply only, and only where the run depends on
// nothing else: no Chooser (a walk's choices past the tape are its own),
// not Strict or Record (a replay runs every handler, and reports its
// lines), not a local step, and each run it records left the state's rare
// parts as they were (periodic timers, nodes down: stateExt) and failed
// in no way. Recheck's second run bypasses it, so that a handler that is
// not deterministic is still found. What the cache returns is what the
// handler would do, by the node's fingerprint: the search treats equal
// fingerprints as equal states already.
//
// A step may run more than one handler: a socket error runs both ends'
// Error, a send a partition refuses on a stream runs the sender's Error
// after the handler that sent it, a reset its peers'. Each run is a key
// of its own: the node's slot before it, its input (the step's event for
// the step's first handler; an Error's node and peer, whatever step ran
// it), and the choices left on the tape when it began. A run is recorded
// only where nothing else in the step touched its node (the node's
// fingerprint before it is then its slot's, and its slot after it the
// step's), and answered only where no draw of the step was cut before it
// (see cutDraws). Before, only steps of one handler were: on ring 4
// unreduced to depth 14, 472,235 socket errors ran both handlers every
// time, 944,470 of the search's 3.3M handler runs.
//
// A stacked node is served as a plain one: its slot's fingerprint is its
// layers', the handler the world runs is the stack's, and what the layers
// hand each other stays within the run. It was left out at first, and
// then every step of transport's search ran its layers: the reduced
// search to depth 52, 291,206 states, took 2.55 s on one worker, and
// with the cache 0.95 s (2026-11-29), the same states.
type stepCache struct {
	// m holds the entries by their key's hash (stepKey.hash): a map of
	// small keys a step looks up without hashing an event's strings
	// (etcd raft's search spent 16% of its time on the lookup of the
	// whole key). An entry holds its key: two keys of one hash are told
	// apart, and the later replaces the earlier.
	m map[uint64]*stepEntry
	// runs are the step's handler runs that looked the cache up and
	// missed: apply records them when it ends (stepRecord).
	runs []stepRun
}

// A stepRun is a handler run of the step under way that the cache
// missed: its key, and what it added to the step's sends, choices and
// bounds (from one offset to the other).
type stepRun struct {
	key  stepKey
	hash uint64
	tape []int // the choices left on the step's tape when it began
	node NodeID
	// sent, choices and bounds are offsets in World.last's lists: where
	// the run's began and ended.
	sent, choices, bounds [2]int
	// cut is the run's draw cut (World.drawCut) past its first choice,
	// 0 for none.
	cut int
	// done says the run returned; a later handler of the same node
	// clears it, the slot the step ends with being no longer this run's.
	done bool
}

type stepKey struct {
	fp   uint64 // the node's slot before the step
	ev   Event
	tape uint64 // hash of the choices given
}

// hash returns a hash of k for the caches' maps.
func (k *stepKey) hash() uint64 {
	ev := &k.ev
	h := mix(k.fp, k.tape)
	h = mix(h, uint64(ev.Kind)|uint64(uint32(ev.Node))<<8|uint64(uint32(ev.Peer))<<40)
	h = mix(h, ev.Msg^uint64(ev.Call)*0x9e3779b97f4a7c15)
	if ev.Timer != "" {
		h = mix(h, xxhash.Sum64String(ev.Timer))
	}
	return h
}

type stepEntry struct {
	key  stepKey
	tape []int
	// sl is the node's slot after the run, the node state the run made;
	// same says instead that the run left the slot as it was.
	sl              slot
	same            bool
	sent            []Envelope
	choices, bounds []int
	// cut is the draw cut the run made (stepRun.cut), which the handlers
	// after it in the step see.
	cut int
}

// maxStepCache bounds the entries a world's cache holds; past it, it
// starts afresh. Each holds a node state, which is most of its size.
const maxStepCache = 1 << 14

// stepCacheable says whether invoke may answer the handler h of node id
// from the cache: the step's first handler, or an Error, on a node state
// that has a fingerprint and that no handler of the step touched yet, in
// a world whose runs the cache can stand in for.
func (w *World) stepCacheable(s *State, id NodeID, h handler) bool {
	if w.NoStepCache || w.Chooser != nil || w.Strict || w.Record || w.localStep || w.rechecking || w.drawCut != 0 {
		return false
	}
	switch h {
	case receiveH, timerH, appH:
		if w.invokes != 1 {
			return false
		}
	case errorH:
	default:
		return false
	}
	sl := &s.nodes[id]
	if sl.fp == 0 || w.touched[id] {
		return false
	}
	return true
}

// stepLookup answers handler h of node id of s (peer is an Error's) from
// the cache if it can; on a miss it starts a record of the run, which
// invoke ends (stepRan).
func (w *World) stepLookup(s *State, id NodeID, h handler, peer NodeID) bool {
	c := &w.cache
	off := min(len(w.last.Choices), len(w.tape))
	tape := w.tape[off:]
	key := stepKey{fp: s.nodes[id].fp, ev: w.last.Event, tape: tapeHash(tape)}
	if h == errorH {
		// An Error's input is its peer, whichever step runs it.
		key.ev = Event{Kind: SocketError, Node: id, Peer: peer}
	}
	hash := key.hash()
	e := c.m[hash]
	if e != nil && e.key != key {
		e = nil
	}
	if e == nil && w.SharedCache != nil {
		if e = w.SharedCache.get(hash, &key); e != nil {
			c.put(hash, e)
		}
	}
	if e != nil && slices.Equal(e.tape, tape) {
		if !e.same {
			s.nodes[id] = e.sl
			w.ownTime[id] = false // the timers are the entry's: a change copies them
		}
		if e.cut > 0 {
			w.drawCut = len(w.last.Choices) + e.cut
		}
		w.last.Choices = append(w.last.Choices, e.choices...)
		w.last.Bounds = append(w.last.Bounds, e.bounds...)
		if h == errorH {
			w.last.Errors++
		}
		for i := range e.sent {
			w.post(s, e.sent[i])
		}
		return true
	}
	c.runs = append(c.runs, stepRun{key: key, hash: hash, tape: tape, node: id,
		sent: [2]int{len(w.last.Sent)}, choices: [2]int{len(w.last.Choices)}, bounds: [2]int{len(w.last.Bounds)}})
	return false
}

// stepStart says that a handler of node id starts: a run of the cache
// recorded earlier in the step on the same node no longer ends with the
// slot the step makes.
func (w *World) stepStart(id NodeID) {
	for i := range w.cache.runs {
		if r := &w.cache.runs[i]; r.node == id {
			r.done = false
			r.node = -1
		}
	}
}

// stepRan ends the record of the step's last run, which returned.
func (w *World) stepRan() {
	r := &w.cache.runs[len(w.cache.runs)-1]
	r.sent[1], r.choices[1], r.bounds[1] = len(w.last.Sent), len(w.last.Choices), len(w.last.Bounds)
	if w.drawCut != 0 {
		r.cut = w.drawCut - r.choices[0]
	}
	r.done = r.node >= 0
}

// stepRecord records, after apply made n from s, the runs stepLookup
// missed.
func (w *World) stepRecord(s, n *State) {
	c := &w.cache
	runs := c.runs
	c.runs = c.runs[:0]
	if w.tapeErr != nil || n.ext != s.ext {
		return
	}
	for i := range runs {
		w.stepRecordRun(s, n, &runs[i])
	}
}

func (w *World) stepRecordRun(s, n *State, r *stepRun) {
	id := r.node
	if !r.done || id >= 64 || n.nodes[id].fp == 0 {
		return
	}
	e := &stepEntry{
		key:     r.key,
		tape:    slices.Clone(r.tape),
		sent:    slices.Clone(w.last.Sent[r.sent[0]:r.sent[1]]),
		choices: slices.Clone(w.last.Choices[r.choices[0]:r.choices[1]]),
		bounds:  slices.Clone(w.last.Bounds[r.bounds[0]:r.bounds[1]]),
		cut:     r.cut,
	}
	bit := uint64(1) << uint(id)
	switch a, b := &n.nodes[id], &s.nodes[id]; {
	case n.fresh&bit != 0:
		// The node state the step made is the entry's now: no later
		// step may reuse it (Discard).
		e.sl = *a
		n.fresh &^= bit
	case r.key.fp == b.fp && a.fp == b.fp && ifaceData(a.node) == ifaceData(b.node) && slices.Equal(a.timers, b.timers):
		// The slot as it was (World.unchanged): its node is s's, or an
		// earlier state's, which may go back to the spares once those
		// states are dropped, so the entry does not hold it. (A slot the
		// step's cache answered before the run is not s's: the run that
		// went back to s's changed it.)
		e.same = true
	default:
		return
	}
	c := &w.cache
	c.put(r.hash, e)
	if w.SharedCache != nil {
		w.SharedCache.put(r.hash, e)
	}
}

// put adds e to the world's own cache, which starts afresh when full.
func (c *stepCache) put(h uint64, e *stepEntry) {
	if c.m == nil || len(c.m) >= maxStepCache {
		c.m = make(map[uint64]*stepEntry, 1024)
	}
	c.m[h] = e
}

// A SharedStepCache is a step cache worlds of one spec share: a world
// looks in it when its own cache misses, and adds to it what it
// records. An entry is never changed once made (its node state is no
// world's to reuse), so worlds on other goroutines may all use it.
type SharedStepCache struct {
	mu sync.Mutex
	m  map[uint64]*stepEntry // by stepKey.hash, as stepCache.m
}

// NewSharedStepCache returns an empty cache for worlds to share.
func NewSharedStepCache() *SharedStepCache { return &SharedStepCache{} }

func (sc *SharedStepCache) get(h uint64, k *stepKey) *stepEntry {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if e := sc.m[h]; e != nil && e.key == *k {
		return e
	}
	return nil
}

func (sc *SharedStepCache) put(h uint64, e *stepEntry) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.m == nil || len(sc.m) >= 4*maxStepCache {
		sc.m = make(map[uint64]*stepEntry, 1024)
	}
	sc.m[h] = e
}

// tapeHash is a hash of the choices tape (FNV-1a of its values): tapes
// that collide share a key, and the entry's own tape tells them apart.
func tapeHash(tape []int) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, v := range tape {
		h = (h ^ uint64(v)) * 0x100000001b3
	}
	return h
}
