package search

import (
	"errors"
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/internal/lines"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// Options bound and observe a search. Zero values take the defaults.
type Options struct {
	// Depth is the depth bound: no path is extended past this many steps
	// (default 20).
	Depth int
	// MaxStates ends the search at the level where it finds more than
	// this many distinct states (0: no limit); that level is dropped, so
	// the result covers the levels before it, exactly. A search ended
	// this way is not complete.
	MaxStates int
	// Properties are checked: safety on every new state, liveness to sort
	// out the periphery; reachability properties are evaluated on every
	// new state until one satisfies them.
	Properties []properties.Property
	// Start is the state the search starts from (nil: Starts). Paths in
	// the result start there.
	Start *sim.State
	// Starts are the initial states the search starts from when Start is
	// nil (nil: the world's, World.Starts): level 0 holds each distinct
	// one, and a path in the result starts from the one its Init names.
	Starts []sim.Start
	// Progress, when set, is called about every ProgressEvery
	// transitions, from any worker, never two at a time.
	Progress      func(Stats)
	ProgressEvery int64
	// Trail, when set, always holds the path to the step the first worker
	// (on the world given to Global) is applying, so that a watchdog can
	// say where a handler that never returns was called.
	Trail *Trail
	// Workers are more workers, each with a world of its own (made from
	// the same spec), that expand states in parallel with the first. The
	// result does not depend on how many there are.
	Workers []Worker
	// Stop, when it returns true, ends the search early: the result
	// covers the levels before the one under way, and what the workers
	// expanded of that one (see Stats.Beyond).
	Stop func() bool
	// Target, when not 0, ends the search at the first state with this
	// fingerprint: Result.TargetPath is a shortest path to it.
	Target uint64
	// Reduce prunes transitions with sleep sets (see reduce.go): the
	// search finds the same states at the same depths, the same
	// violations and periphery, with fewer transitions. It is ignored
	// for a world with monitors (sim.Spec.Monitors): a monitor's bit
	// depends on the order of events that sleep sets take to commute.
	Reduce bool
	// Observers postpones the events of the world's observers
	// (sim.Spec.Observers) while other nodes have events to take: a
	// persistent-set reduction (see reduce.go) that keeps every violation
	// of properties that read only observers, for a world with datagrams,
	// no failures and no monitors (ignored otherwise). Its states are
	// fewer, and a violation is found, but not always at its fewest
	// steps; the depth bound counts steps of the reduced search.
	// Stats.Postponed says whether it took effect.
	Observers bool
	// Shard, when its Count is more than 1, makes the search one slice of
	// a search split among Count processes (see Shard).
	Shard Shard
	// Fingerprints keeps the key of every state the search stores, for
	// Result.Fingerprints (8 bytes a state more).
	Fingerprints bool
}

// A Shard is one slice of a search split among Count processes, each
// given its own Index (0 <= Index < Count). Every slice searches the same
// first levels; at the split level each expands only the states whose
// key (the fingerprint the visited set holds) falls to it, key mod Count
// == Index, and goes on from those. The split level is SplitDepth when it
// is not 0, otherwise the first level with at least SplitFactor*Count
// states; it depends only on the level sizes, the same in every slice
// and for any number of workers. Where no level below the depth bound is
// that large, the states at the bound are divided instead (the
// periphery, which the walks start from). A state at the split level is
// expanded by one slice only; a state below it may be reached by
// several, so the slices' counts add up to more than the unsplit
// search's, and the union of their fingerprint sets is the unsplit
// search's set.
type Shard struct {
	Index, Count int
	SplitDepth   int
}

// SplitFactor is how many states per shard the first level must hold to
// be the split level, when Shard.SplitDepth does not name one: enough
// that the slices get shares of about the same size.
const SplitFactor = 8

// owns says whether the shard expands the state with key fp at the split
// level.
func (sh Shard) owns(fp uint64) bool { return fp%uint64(sh.Count) == uint64(sh.Index) }

// A Worker is a world for a worker of the search, and its trail (nil:
// none).
type Worker struct {
	World *sim.World
	Trail *Trail
}

// A Trail is the path to the step a worker is applying.
type Trail struct {
	// Init names the initial state Path starts from (see Violation.Init).
	Init  []int
	Path  sim.Path
	Event sim.Event
	Tape  []int
	// A worker's trail names the state it steps from by its node (at) of
	// the tree: PathTo makes the path to it again. Path is then empty.
	tree *tree
	at   int
	// A worker writes its trail at every step, and the trails of workers
	// made one after the other lie side by side in memory (144 bytes
	// apart: not on cache lines of their own, unlike workers and
	// worlds, whose sizes are multiples of 64 bytes).
	_ [64]byte
}

// PathTo returns the trail's path and the initial state's choices: Path
// and Init, or for a state the trail names by its node in the search's
// tree, the path to it made again on w (a world of the same spec that
// nothing else uses).
func (t *Trail) PathTo(w *sim.World) ([]int, sim.Path, error) {
	if t.tree == nil {
		return t.Init, t.Path.Clone(), nil
	}
	p, _, init, err := t.tree.replay(w, t.at, nil)
	return init, append(p, t.Path...), err
}

// maxDeadEdges bounds the transitions the search keeps to find closed
// dead regions (16 bytes each, and as much again to sort them); past it,
// it finds none. Such regions show in small spaces (a node that lost its
// last timer); at 4M edges they were most of a large search's memory.
var maxDeadEdges = 1 << 20

// maxKept is the most states of the next level the search keeps as they
// are found (global.keepPer): a few thousand states, a few megabytes,
// spare most levels of small searches their replays. More pays little:
// with 32,768 LCR 10 took 1.89 s on 1 worker against 2.04 s, and Paxos
// with every role to depth 18 (last-promise) 5.35 s and 380 MB against
// 4.46 s and 240 MB, its kept states costing the collector more than the
// replays they spare.
//
// A variable only for the cross-check (TestCrossCheckReplays), which
// sets it low so that states are made again on the workers' chains and
// from kept parents.
var maxKept = 1 << 11

// replaysToKeepMore is the steps made again a state of a level past
// which the search keeps twice the states and parents from the next level
// on (global.keepMore). Past the largest level that keeps parents
// (maxParentsLevel), transport's search made its states again from ever
// further up: at depth 64, 7 to 8.5 steps a state in the levels of more
// than 16,384 states, against 0.8 before them, 1.5 times its transitions,
// each a step the cache answers. The other bundled systems stay under 3
// at the depths of their two-worker benchmarks (Overcast 2.96 at 28,
// OnePaxos 2.91 at 23, RandTree 2.23 at 17, kvstore 1.64 at 14), and
// keep what they kept: twice the kept states in every search took
// RandTree's and kvstore's heaps past the collector's scan threshold
// (check/memory.go) and their two workers' searches 4 to 5% longer.
var replaysToKeepMore int64 = 4

// keepMoreIfReplaying sets keepMore once the level just expanded made
// more than replaysToKeepMore steps again a state; it stays set. (The
// workers' replays may differ by a few from one count of workers to
// another, which changes what is kept, never what is found.)
func (g *global) keepMoreIfReplaying() {
	var remade int64
	for _, k := range g.workers {
		remade += k.remade
	}
	if g.lastLevel > 0 && remade-g.remadeMark > replaysToKeepMore*int64(g.lastLevel) {
		g.keepMore = true
	}
	g.remadeMark, g.lastLevel = remade, g.hi-g.lo
}

// parentsPer is how many states a chunk keeps as parents (keepParent),
// as a multiple of keepPer: twice as many as the states it keeps. On
// transport's reduced search to depth 43 (levels of about 3,000 states,
// one new state each), 1,000 parents a level left 214,456 steps made
// again of 457,716, 2,000 parents 98,465 (1.65 s to 1.16 s on one
// worker), and a parent for every state that found one not kept, 74,797;
// but with every parent kept, etcd kv's larger levels took 3.4 s against
// 2.3.
//
// A variable only for the tests, which set it to 0 to keep none.
var parentsPer = 2

// maxParentsLevel is the largest level that keeps parents. In a larger
// one a few states a chunk are kept, which spare little. With no bound,
// Paxos 3 x 2 unreduced to depth 18 (levels up to 500,000 states)
// peaked at 268 MB against 230 MB, in the same time, while the chain's
// states above a kept one went back to the world as shells only; since
// they keep only what they share with it (pinChain), at 232 to 262 MB,
// and etcd kv reduced to depth 11 took 5 to 15% longer.
var maxParentsLevel = 8 * maxKept

// chunkSize is the most states of a level a worker takes at a time
// (chunkOf). A level is cut into chunks by its size alone, the same way
// whatever the number of workers, and the chunks' findings are merged in
// order, so the result does not depend on them.
const chunkSize = 256

// chunkOf is how many states each chunk of a level of n states holds:
// chunkSize, or fewer where the level would have fewer than minChunks
// chunks, but not fewer than minChunk states. A worker that finds no
// chunk left waits for the others to finish theirs: at 256 states a
// chunk, levels of a few thousand states had only a few chunks, and
// levels under 256 states one, expanded by one worker while the others
// waited. On transport's search to depth 43 (levels of 3,000 states or
// so), two workers waited for each other 70 to 90 ms of 1.5 s with
// chunks of 256 states, 35 to 40 ms with at least 64 chunks a level,
// 10 to 15 ms with 256. But a chunk keeps its first new states
// (keepPer), and after those the worker's chain lacks their parents:
// with 256 chunks a level, transport's search made 9% more steps again
// (worker.state: 490,560 against 449,290), with 64, 2% more (457,716).
func chunkOf(n int) int {
	return min(chunkSize, max(minChunk, n/minChunks))
}

const minChunk, minChunks = 16, 64

// A cand's parent is its place in its chunk, a byte.
var _ [256 - chunkSize]struct{}

func (o *Options) fill() {
	if o.Depth <= 0 {
		o.Depth = 20
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 1 << 16
	}
}

// Stats describe a search.
type Stats struct {
	States      int64 // distinct states (fingerprints) seen
	Transitions int64 // steps applied on explored edges (not the replays that make states again)
	// MaxDepth is the depth of the deepest state found; Depth the depth
	// the search finished: every state within Depth steps was explored.
	MaxDepth  int
	Depth     int
	Queue     int           // states of the level under way
	Periphery int           // distinct non-live states at the depth bound (of a stopped search, those it left unexpanded)
	Live      int64         // distinct live states reached
	Elapsed   time.Duration // wall time of the search
	Workers   int
	// Beyond counts the states of depth Depth+1 that a search stopped
	// (Options.Stop) found in the level it had under way, by expanding
	// BeyondFrom of the states at Depth (States counts them). The work
	// of that level is kept, not dropped: a search stopped by a time
	// budget on more workers explores more states, not only when they
	// finish another level.
	Beyond, BeyondFrom int64
	// Slept counts the transitions that sleep sets spared (Options.Reduce).
	Slept int64
	// Postponed counts the observer events left out of states where other
	// nodes' events were taken instead (Options.Observers): when it is not
	// 0, the states are those of the reduced search.
	Postponed int64
	// ProvisoRerun says the search with observer postponement found a
	// cycle of states that postponed observer events, and was run again
	// under the proviso of levels (see reduce.go): the figures are the
	// second search's.
	ProvisoRerun bool
	// Remade counts the steps the workers applied to make states again
	// from their paths (on their chains, or one step from a parent the
	// level before kept), not counted in Transitions. On one worker it is
	// the same from run to run; on more it depends on which worker took
	// which states.
	Remade int64
	// Bytes is the memory the visited set and the tree of paths hold.
	Bytes int64
	// CollisionChance estimates the probability that two distinct states
	// had the same fingerprint, so that one of them was never explored:
	// TLC's estimate, see collisionChance.
	CollisionChance float64
}

// A Violation is a property that failed, with the path from the start state
// that shows it.
type Violation struct {
	Property string
	Kind     properties.Kind
	Message  string
	Path     sim.Path
	// Init is the choices of the first Init calls that build the initial
	// state Path starts from (nil where there is one: the search was
	// given Start, or the first Init calls do not choose).
	Init []int
	// Panic is set when a handler panicked.
	Panic *sim.HandlerPanic
	// PropertyError is set when the property itself panicked.
	PropertyError *properties.Error
}

// PanicProperty names the built-in safety property "no handler panics".
const PanicProperty = "no-panic"

// DeterministicProperty names the built-in safety property "every handler
// is a function of its node state and its input": a step that did
// something else when the world ran it again (World.Recheck) violates it,
// a finding with the path to that step, not a failure of the check.
const DeterministicProperty = "deterministic"

// QuiescentProperty names the liveness violation found when the search
// reaches a state where nothing can happen and the liveness property does
// not hold: no continuation exists, so the state is dead for certain.
const QuiescentProperty = "quiescent"

// QuiescentMessage explains a quiescent violation of the named liveness
// properties.
func QuiescentMessage(notLive []string) string {
	return fmt.Sprintf("no event can happen any more and %s does not hold: the system is stuck for ever", strings.Join(notLive, ", "))
}

// A Frontier state is a state at the depth bound, with its path.
type Frontier struct {
	Path  sim.Path
	Init  []int // as Violation.Init
	State *sim.State
}

// Periphery lists the states at the depth bound that are not live, as
// nodes of the search's tree of paths: At makes one again.
type Periphery struct {
	t     *tree
	nodes []uint32
}

// Len is the number of periphery states.
func (p *Periphery) Len() int {
	if p == nil {
		return 0
	}
	return len(p.nodes)
}

// At makes periphery state i again on w, with its path from the start
// state. Each caller needs a world of its own. trail, when not nil, is
// kept told where the replay is, as Options.Trail is by the search.
func (p *Periphery) At(w *sim.World, i int, trail *Trail) (Frontier, error) {
	path, s, init, err := p.t.replay(w, int(p.nodes[i]), trail)
	return Frontier{Path: path, Init: init, State: s}, err
}

// Remaker returns a Remaker of the periphery's states on w, for one
// goroutine.
//
// Its remaker is written at every state it makes, on a walker's core:
// on cache lines of its own (lines.New), as walkers' remakers are made
// one after the other.
func (p *Periphery) Remaker(w *sim.World) *Remaker {
	r := lines.New[Remaker]()
	r.p, r.w = p, w
	return r
}

// A Remaker makes the periphery's states again on one world, as At does,
// for a caller that asks for many of them, mostly in order (the walks
// from the periphery). It keeps the states on the path to the last one
// it made, so that the next, mostly a cousin of it, is made from their
// deepest common ancestor in a step or two instead of its whole path:
// on Overcast with 4 nodes the replays of At were a fifth of the walks'
// time and half of what they allocated.
type Remaker struct {
	p     *Periphery
	w     *sim.World
	idx   []int        // idx[d]: the tree's node at depth d on the kept path
	chain []*sim.State // chain[d]: its state
	// given[d] says At returned chain[d]: its caller may still hold it (a
	// walk's result and its trail keep the state a walk started from),
	// so it is never given back to the world.
	given []bool
	steps sim.Path // steps[d]: the step from chain[d] to chain[d+1]
	evs   []sim.Event
	tmp   []sim.Event
}

// At makes periphery state i again, as Periphery.At does. The state it
// returns is the Remaker's: the caller may read it and walk from a copy
// of it (World.Own), until the next call. So is the path: the next call
// makes it again in place (Path.Clone keeps it).
func (r *Remaker) At(i int, trail *Trail) (Frontier, error) {
	t := r.p.t
	node := int(r.p.nodes[i])
	d := t.depth(node)
	for len(r.idx) <= d {
		r.idx, r.chain, r.given = append(r.idx, -1), append(r.chain, nil), append(r.given, false)
		r.steps = append(r.steps, sim.Step{})
	}
	// The deepest ancestor the kept path has, anc[l] = node's ancestor
	// at depth l.
	anc := make([]int, d+1)
	for k, j := d, node; k >= 0; k-- {
		anc[k] = j
		if k > 0 {
			j = t.at(j).parentIdx()
		}
	}
	l := d
	for l >= 0 && r.idx[l] != anc[l] {
		l--
	}
	if l < 0 {
		st := t.starts[anc[0]]
		r.drop(0)
		r.idx[0], r.chain[0] = anc[0], st.State
		l = 0
	}
	root := t.starts[anc[0]]
	for m := l + 1; m <= d; m++ {
		n := t.at(anc[m])
		r.evs = r.w.Enabled(r.chain[m-1], r.evs[:0])
		if t.por {
			observersLast(r.w, r.evs, &r.tmp)
		}
		if int(n.ev) >= len(r.evs) {
			return Frontier{}, fmt.Errorf("internal error: the search's step %d does not replay (event %d of %d)", m, n.ev, len(r.evs))
		}
		ev, tape := r.evs[n.ev], t.tapes.get(int(n.tape))
		if trail != nil {
			trail.Init, trail.Path, trail.Event, trail.Tape, trail.tree = root.Init, r.steps[:m-1], ev, tape, nil
		}
		next, err := r.w.Apply(r.chain[m-1], ev, tape)
		if err != nil {
			r.idx[m-1] = -1 // made again next time
			return Frontier{}, &sim.StepError{Index: m - 1, Event: ev, Err: err}
		}
		r.drop(m)
		r.steps[m-1] = sim.Step{Event: ev, Choices: append([]int(nil), r.w.Last().Choices...)}
		r.idx[m], r.chain[m] = anc[m], next
	}
	for m := d + 1; m < len(r.idx) && r.idx[m] >= 0; m++ {
		r.drop(m) // deeper than this one: no longer on the kept path
	}
	r.given[d] = true
	return Frontier{Path: r.steps[:d:d], Init: root.Init, State: r.chain[d]}, nil
}

// drop lets the kept state at depth d go: made by this Remaker (not an
// initial state, which is the tree's) and never returned, its record
// goes back to the world; its node states and network, which states
// made from it may share, stay.
func (r *Remaker) drop(d int) {
	if d > 0 && r.chain[d] != nil && !r.given[d] {
		r.w.DiscardShell(r.chain[d])
	}
	r.idx[d], r.chain[d], r.given[d] = -1, nil, false
}

// Result is what a search found.
type Result struct {
	// Merge is the part of Stats.Elapsed spent between the levels'
	// expansions, deduplicating and adding a level's new states, where
	// fewer goroutines run than there are workers: what keeps the search
	// from scaling with them.
	Merge time.Duration
	// Violation is the first violation found, or nil: a safety violation
	// at the least depth there is one, and among those the first in the
	// search's order; a quiescent state only where no safety violation
	// is as near. Its path is a shortest path to it.
	Violation *Violation
	// Periphery holds the non-live states at the depth bound (at Depth
	// when the search was cut short; for one stopped within a level, the
	// states it left unexpanded, at Depth and Depth+1), each once.
	Periphery *Periphery
	// Complete says the search saw every state reachable within the
	// depth bound: it was not cut short by MaxStates, Stop or a violation.
	Complete bool
	// Exhausted says no path was cut off by the depth bound: the whole
	// reachable state space was explored.
	Exhausted bool
	// Depth is the depth the search finished: every state within Depth
	// steps was explored. It is the bound when Complete.
	Depth int
	// Stopped says Stop ended the search (not MaxStates).
	Stopped bool
	// Dead, when not 0, is the fingerprint of a state that is not live and
	// from which the search saw every reachable state, none of them live
	// and none at the depth bound (at Depth, for a search cut short): dead
	// for certain, though something can always happen (a cycle of states
	// that are not live). Walks from the periphery never start there.
	// Options.Target finds a path to it.
	Dead       uint64
	TargetPath sim.Path
	TargetInit []int // as Violation.Init
	Stats      Stats
	// Sometimes says, for each reachability property in the order of
	// Options.Properties, where the search first reached it.
	Sometimes []Reach
	// Coverage counts the handlers run by the transitions Stats counts
	// (and the initial states' Init calls, when the search built them).
	Coverage coverage.Counter
	// SplitDepth is the level where a sharded search (Options.Shard)
	// divided its states among the shards, -1 where it ended before it
	// split (a violation nearer, or no state left); Foreign counts the
	// states of that level left to the other shards (Stats.States counts
	// them: the search stored them).
	SplitDepth int
	Foreign    int64
	// Fingerprints are the keys of the states the search stored
	// (Stats.States of them), sorted, with Options.Fingerprints.
	Fingerprints []uint64
}

// A Reach is where a reachability property was first reached: Depth is
// the fewest steps from the start state to a state that satisfies it (-1:
// none within what the search explored), Key that state's key, which
// Options.Target finds a path to.
type Reach struct {
	Property string
	Depth    int
	Key      uint64
}

// Global runs a level-by-level breadth-first search over global states
// (node states, network, timers, failure counters) from the start state,
// with a visited set of fingerprints, on 1 + len(opts.Workers) workers.
// It checks the safety properties on every state reachable within the
// depth bound, so a safety violation it reports is one of the nearest;
// the non-live states at the bound are the periphery.
//
// A level is cut into chunks of states that the workers take in turn.
// While they expand it, the visited set is only read; between levels the
// chunks' new states are added to it and to the tree of paths, in chunk
// order. Which state is first found, and how, is thereby the same for any
// number of workers, and so is the result.
//
// The error reports a failure of the tool or of the model (a state that
// cannot be hashed); violations are in the result.
func Global(w *sim.World, opts Options) (*Result, error) {
	opts.fill()
	if len(w.Spec().Monitors) > 0 {
		opts.Reduce = false
	}
	start := time.Now()
	g := newGlobal(w, &opts, start, optimisticProviso)
	res, err := g.run(w)
	if err == nil && g.cycle {
		// The reduced graph has a cycle of postponing states: the search
		// starts again under the proviso of levels (see reduce.go).
		g = newGlobal(w, &opts, start, false)
		res, err = g.run(w)
		if res != nil {
			res.Stats.ProvisoRerun = true
		}
	}
	if res != nil {
		st := &res.Stats
		st.Elapsed = time.Since(start)
		st.CollisionChance = collisionChance(st.States, st.Transitions)
		if g.tree != nil {
			st.Bytes = g.visited.bytes() + g.tree.bytes() + g.graph.bytes()
		}
	}
	return res, err
}

// optimisticProviso says searches with observer postponement look for
// cycles in their reduced graph first (newGlobal): a variable only for
// the tests, which pin the counts of the other proviso too.
var optimisticProviso = true

// newGlobal makes a search of w; optimistic says that, with observer
// postponement, it meets the cycle proviso by looking for cycles in the
// reduced graph rather than by expanding every state a step of which goes
// back (see reduce.go).
func newGlobal(w *sim.World, opts *Options, start time.Time, optimistic bool) *global {
	spec := w.Spec()
	g := &global{opts: opts, res: &Result{SplitDepth: -1}, start: start, conc: opts.Reduce && len(spec.Symmetry) > 0, split: -1}
	g.sharded = opts.Shard.Count > 1
	// A start with a node down has its restart enabled, a failure's end
	// that acts on more than its node: no postponement from there.
	g.por = opts.Observers && len(spec.Observers) > 0 && spec.Transport == sim.Datagram && spec.Budget == (sim.Budget{}) && len(spec.Monitors) == 0 &&
		(opts.Start == nil || opts.Start.DownNodes() == 0)
	// A slice of a search sees only its own part of the graph, where
	// a cycle may pass through the others'.
	g.optimistic = g.por && optimistic && !g.sharded
	for i := range opts.Properties {
		p := &opts.Properties[i]
		switch p.Kind {
		case properties.Safety:
			g.safety = append(g.safety, p)
		case properties.Reachability:
			g.sometimes = append(g.sometimes, p)
			g.res.Sometimes = append(g.res.Sometimes, Reach{Property: p.Name, Depth: -1})
		default:
			g.liveness = append(g.liveness, p)
			g.liveNames = append(g.liveNames, p.Name)
		}
	}
	g.workers = []*worker{g.newWorker(w, opts.Trail)}
	for _, x := range opts.Workers {
		g.workers = append(g.workers, g.newWorker(x.World, x.Trail))
	}
	g.res.Stats.Workers = len(g.workers)
	return g
}

// global is a search under way.
type global struct {
	opts      *Options
	res       *Result
	start     time.Time
	safety    []*properties.Property
	liveness  []*properties.Property
	sometimes []*properties.Property
	liveNames []string
	workers   []*worker
	visited   *shardedSet
	tree      *tree
	tapes     *tapeTable

	// The level under way: its nodes lo to hi, at depth depth.
	lo, hi, depth int
	csize         int // the states of a chunk (chunkOf)
	chunks        []chunk
	ranges        []chunkRange // the chunks left to each worker (expandChunks)
	cut           atomic.Int64 // the first chunk with a finding that ends the search
	stopped       atomic.Bool
	stopMu        sync.Mutex
	transitions   atomic.Int64 // for progress reports
	counted       int64        // what the result reports
	progMu        sync.Mutex
	states, live  atomic.Int64

	// To find closed dead regions (while keepEdges): the transitions out
	// of states that are not live, and the states whose future the search
	// did not see all of (the live ones, the periphery), while there are
	// not too many.
	keepEdges bool
	sources   []source // the states the edges leave, in the order they were expanded
	// edgeBlocks and sourceBlocks hold the levels' edges and sources, each
	// chunk's as it was made: closedDead reads the edges so, and joins
	// the sources (appending them as they came copied them again and
	// again).
	edgeBlocks       [][][2]uint64
	sourceBlocks     [][]source
	nEdges, nSources int
	// levelEdges counts the edges the level's chunks kept so far, as
	// each is done (worker.edgesOver).
	levelEdges atomic.Int64
	// good is the live states, and those counted as live; goodN is how
	// many of them the chunks merged so far hold (the dedupe adds a
	// level's live new states at once, by shard, and takeEdges counts
	// them chunk by chunk, as a loop adding them in order would).
	good     *shardedSet
	goodN    int
	goodAdds [][]int32 // dedupe: each goroutine's adds to good, by chunk
	lastFPs  []uint64  // the fingerprints of the last level's nodes, in order
	newFPs   []uint64  // those of the level under way

	liveBefore int64 // live states before the level under way
	boundQuiet bool  // no event is enabled in any state at the bound

	// With Options.Reduce: the sleep sets of the level under way (sleep[i]
	// is node lo+i's) and of the level being merged, and where in it the
	// merged fingerprints are, to intersect the sleep sets of a state
	// reached from several.
	sleep, nextSleep []uint64
	// levelIdx maps the level's new states, by visited shard, to their
	// place among the level's candidates (candOff[chunk] + index).
	levelIdx [visitedShards]*fpIndex
	candOff  []int
	nextConc []uint64 // with conc: the fingerprints of the states nextSleep is for
	newOff   []int    // mergeNew: the new states of the level before each chunk
	// newBits[w] marks the candidates worker w found new (dedupe), by
	// their place among the level's; newBits[0] all of them once joined.
	newBits [][]uint64
	// keepMore doubles the states kept and the largest level that keeps
	// parents (keepMoreIfReplaying); remadeMark is the workers' replays
	// before the level under way, lastLevel the states of the one before.
	keepMore   bool
	remadeMark int64
	lastLevel  int
	// Up to maxKept states of the next level are kept as they are found
	// (the first keepPer new states of each chunk), so that expanding
	// them needs no replay: levelStates[i] is node lo+i's state or nil,
	// nextStates the next level's.
	keepPer                 int // states each chunk keeps
	parentsPer              int // states each chunk keeps as parents (keepParent)
	levelStates, nextStates []*sim.State
	// parentStates[i] is the state of node parentLo+i of the level before
	// or nil: each chunk keeps up to parentsPer of the states it expands, as
	// parents of the new states it found and did not keep, so that each
	// of those is made again in one step from it (worker.fromParent).
	// Where levels are a few thousand states with about one new state
	// each (transport), the states kept and those one step from a kept
	// parent cover most of a level, and a replay from the chain costs a
	// few steps each.
	parentStates []*sim.State
	parentLo     int
	// conc says the search keeps the states' own fingerprints beside
	// their keys: with symmetry and sleep sets, to tell a state met
	// again from a renaming of it.
	conc bool
	// sharded says the search is a slice (Options.Shard); until it has
	// split, keys holds every stored state's key, node by node (always,
	// with Options.Fingerprints). foreign[i], once split at level split,
	// says node lo+i of that level is left to another shard.
	sharded bool
	split   int
	keys    []uint64
	foreign []bool
	// por says observer events are postponed (Options.Observers, where
	// it applies): each state's events list the other nodes' first.
	// cyclic says a step went back to a state of its level or an
	// earlier one: from then on the cycle proviso checks asleep events.
	por, cyclic bool
	// optimistic says the cycle proviso is met by the graph instead:
	// every state postpones where it can, graph holds the steps of the
	// others from the states that did, and cycle says it has a cycle
	// (the search then starts again, not optimistic: see reduce.go).
	optimistic, cycle bool
	// cyclicRerun says the level under way is expanded again under the
	// cycle proviso after a stop (see stopWithin).
	cyclicRerun bool
	graph       postponeGraph
}

// A chunk is what a worker found expanding a run of a level's states.
type chunk struct {
	cands  []cand
	sleeps []uint64     // with sleep sets for the next level: each cand's, over its enabled events
	states []*sim.State // the states of the first cands, up to keepPer
	// parents are states the chunk expanded, kept for the next level as
	// the parents of cands not kept in states (global.parentStates).
	parents []keptParent
	conc    []uint64 // with symmetry and sleep sets: each cand's own fingerprint
	edges   [][2]uint64
	// nEdges counts the chunk's edges, kept in edges or not: once the
	// level's edges are sure to be more than maxDeadEdges, the workers
	// keep none (worker.edgesOver), and the merge, which drops them all
	// then, counts them.
	nEdges  int
	sources []source
	// With global.optimistic: the states that postponed observer events
	// (their keys), where their steps end in pdst (pend), and the keys
	// those steps of the others lead to, asleep ones included.
	psrc        []uint64
	pend        []uint32
	pdst        []uint64
	finds       []find
	reaches     []reach
	cov         coverage.Counter
	transitions int64
	slept       int64
	postponed   int64
	oldHit      bool // a step reached a state of an earlier level or this one
	expanded    int  // the chunk's states expanded, from its first: all, unless the search was stopped
	err         error
	// Two workers expand neighbouring chunks at once: what one writes
	// must not share a cache line with what the other writes.
	_ [64]byte
}

// A keptParent is a state a chunk expanded (at offset off in it), kept
// as the parent of the states it found and did not keep.
type keptParent struct {
	off int
	s   *sim.State
}

// A cand is a state a chunk reached that was not in the visited set when
// its level began, with the step that reached it: 16 bytes, since a level
// holds its candidates until it is merged (with Options.Reduce, the sleep
// set is in chunk.sleeps).
type cand struct {
	fp    uint64 // the state's key: its fingerprint, or with symmetry its renaming's
	ev    uint16
	tape  uint16
	off   uint8 // the parent's place in its chunk (chunkSize states)
	flags uint8
}

// parent is the tree node of cd's parent, cd a candidate of chunk ci.
func (g *global) parent(ci int, cd *cand) int { return g.lo + ci*g.csize + int(cd.off) }

const (
	candLive      = 1 << iota
	candQuiescent // no event is enabled
	candPanic     // the step panicked: no state (fp is 0)
	candFind      // a finding: see the chunk's finds
	candReach     // reaches a reachability property: see the chunk's reaches
)

// A reach is a chunk's candidate that satisfies reachability property
// prop (an index into global.sometimes).
type reach struct {
	cand int
	prop int
}

// A source is a state whose transitions are kept to find closed dead
// regions: its node, its fingerprint, and the events whose transitions
// sleep sets spared (over its enabled events), which the edges then lack.
type source struct {
	fp     uint64
	asleep uint64
	node   uint32
}

// A find is a violation found at a chunk's candidate.
type find struct {
	cand   int
	safety bool // a safety violation, handler panic or property error, not a quiescent state
	v      *Violation
	step   sim.Step // for a panic: the step that panicked
}

func (g *global) run(w *sim.World) (*Result, error) {
	opts, res := g.opts, g.res
	st := &res.Stats
	starts, startErr := opts.Starts, error(nil)
	switch {
	case opts.Start != nil:
		starts = []sim.Start{{State: opts.Start}}
	case starts == nil:
		starts, startErr = w.Starts()
		// A handler that panics, or a leads-to property's P or Q (a
		// monitor's), is a finding.
		var hp *sim.HandlerPanic
		var pe *properties.Error
		if startErr != nil && !errors.As(startErr, &hp) && !errors.As(startErr, &pe) {
			return nil, startErr
		}
		// A panic under some choices is reported after the initial
		// states before it, which come first in the search's order.
		for _, st := range starts {
			res.Coverage.Start(st.State.N())
		}
	}
	g.tapes = newTapeTable()
	g.tree = &tree{tapes: g.tapes, levels: []int{0}, por: g.por}
	g.visited = newShardedSet()
	// Under observer postponement the edges left out lead to states the
	// search never saw, which closed regions cannot be judged without:
	// walks alone judge liveness then.
	if len(g.liveness) > 0 && !g.por {
		g.keepEdges = true
		g.good = newShardedSet()
	}

	// Level 0 holds the distinct initial states, each checked as every
	// new state is.
	k0 := g.workers[0]
	exhausted := true
	var quiet *find
	for _, start := range starts {
		s := start.State
		key := s.Key()
		if !g.visited.add(key) {
			continue
		}
		flags, f := k0.classify(s, 0)
		if flags&candReach != 0 {
			for _, j := range k0.hits {
				res.Sometimes[j].Depth, res.Sometimes[j].Key = 0, key
			}
		}
		live := flags&candLive != 0
		g.tree.addRoot(start, live)
		g.states.Add(1)
		st.States++
		if live {
			st.Live++
			g.live.Add(1)
			if g.good != nil && g.good.add(key) {
				g.goodN++
			}
		}
		if opts.Target != 0 && key == opts.Target {
			res.TargetPath, res.TargetInit = sim.Path{}, start.Init
			return res, nil
		}
		if f != nil {
			f.v.Path, f.v.Init = sim.Path{}, start.Init
			if f.safety {
				res.Violation = f.v
				return res, nil
			}
			if quiet == nil {
				quiet = f
			}
		}
		g.lastFPs = append(g.lastFPs, key)
		if g.keeping() {
			g.keys = append(g.keys, key)
		}
		g.levelStates = append(g.levelStates, s)
		if opts.Reduce {
			g.sleep = append(g.sleep, 0)
		}
		exhausted = exhausted && flags&candQuiescent != 0
	}
	var se *sim.StartError
	var hp *sim.HandlerPanic
	var pe *properties.Error
	switch {
	case !errors.As(startErr, &se):
	case errors.As(startErr, &hp):
		res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Panic: hp, Path: sim.Path{}, Init: se.Init}
		return res, nil
	case errors.As(startErr, &pe):
		res.Violation = &Violation{Property: pe.Property, Kind: properties.Liveness, Message: pe.Error(), PropertyError: pe, Path: sim.Path{}, Init: se.Init}
		return res, nil
	}
	if quiet != nil {
		res.Violation = quiet.v
		return res, nil
	}
	root := g.tree.starts[0].State
	for _, k := range g.workers {
		k.tapes = tapeCache{t: g.tapes, ids: map[string]int{}}
		k.chain = append(k.chain[:0], root)
		k.chainIdx = append(k.chainIdx[:0], 0)
		k.chainEvs, k.chainOK = append(k.chainEvs[:0], nil), append(k.chainOK[:0], false)
		k.chainMade = append(k.chainMade[:0], false)
	}
	if opts.Reduce {
		for i := range g.levelIdx {
			g.levelIdx[i] = newFPIndex()
		}
	}
	for d := 0; d < opts.Depth; d++ {
		g.lo, g.hi, g.depth = g.tree.levels[d], g.tree.n, d
		if g.lo == g.hi {
			exhausted = true // no new state at depth d: nothing more is reachable
			break
		}
		st.Queue = g.hi - g.lo
		g.liveBefore = g.live.Load()
		if g.sharded && g.split < 0 && (opts.Shard.SplitDepth > 0 && d == opts.Shard.SplitDepth || opts.Shard.SplitDepth == 0 && g.hi-g.lo >= SplitFactor*opts.Shard.Count) {
			g.splitLevel(d)
		} else {
			g.foreign = nil
		}
		g.expandLevel()
		if g.por && !g.optimistic && !g.cyclic && g.oldHit() {
			// A step of this level went back to a state seen before: the
			// cycle proviso must now look at the events sleep sets spare
			// too (see reduce.go). Nothing of the level is merged yet.
			g.cyclic = true
			g.cyclicRerun = g.stopped.Load()
			g.expandLevel()
		}
		// The chunks after one with a finding that ends the search are
		// not all expanded, by as many workers as were at them: count
		// the transitions up to it, the same for any number of workers.
		for ci := range g.chunks {
			if int64(ci) > g.cut.Load() {
				break
			}
			g.counted += g.chunks[ci].transitions
			g.res.Stats.Slept += g.chunks[ci].slept
			g.res.Stats.Postponed += g.chunks[ci].postponed
			g.res.Coverage.Add(&g.chunks[ci].cov)
		}
		if err := g.firstError(); err != nil {
			return nil, err
		}
		if g.stopped.Load() {
			if g.sharded || g.optimistic || g.cyclicRerun {
				return g.cutShort(d)
			}
			return g.stopWithin(w, d)
		}
		done, err := g.merge(w)
		if err != nil {
			return nil, err
		}
		if done {
			g.finishStats()
			return res, nil
		}
		if g.optimistic && g.graph.due() && g.graph.cyclic() {
			g.cycle = true
			return res, nil
		}
		if opts.MaxStates > 0 && g.states.Load() > int64(opts.MaxStates) {
			return g.cutShort(d)
		}
		g.tree.levels = append(g.tree.levels, g.hi)
		g.lastFPs, g.newFPs = g.newFPs, g.lastFPs[:0]
		g.sleep, g.nextSleep = g.nextSleep, g.sleep[:0]
		clear(g.levelStates)
		g.levelStates, g.nextStates = g.nextStates, g.levelStates[:0]
		g.keepParents()
		st.Depth = d + 1
		exhausted = d+1 == opts.Depth && g.boundQuiet
	}
	if g.optimistic && g.graph.cyclic() {
		g.cycle = true
		return res, nil
	}
	res.Complete = true
	res.Exhausted = exhausted
	res.Depth = opts.Depth
	st.Depth = opts.Depth
	if !exhausted && g.sharded && g.split < 0 {
		// No level below the bound was large enough: the shards divide
		// the states at the bound, which the walks start from.
		g.lo, g.hi = g.tree.levels[len(g.tree.levels)-1], g.tree.n
		g.splitLevel(opts.Depth)
	}
	g.finishStats()
	if !exhausted {
		g.periphery(g.tree.levels[len(g.tree.levels)-1])
	}
	if g.keepEdges {
		dead, err := g.closedDead()
		if err != nil {
			return nil, err
		}
		res.Dead = dead
	}
	return res, nil
}

// cutShort ends a search that did not finish the level from depth d: the
// level is dropped, so that what the result covers is exactly every state
// within d steps, and the periphery is taken at depth d. A closed region
// of dead states within d steps is sought as a search bounded at d would,
// so that a search cut at d finds what the search to depth d finds.
func (g *global) cutShort(d int) (*Result, error) {
	g.tree.truncate(g.hi)
	if len(g.keys) > g.hi {
		g.keys = g.keys[:g.hi]
	}
	g.states.Store(int64(g.hi))
	g.live.Store(g.liveBefore)
	g.res.Depth, g.res.Stats.Depth = d, d
	g.res.Stopped = g.stopped.Load()
	g.finishStats()
	g.periphery(g.tree.levels[d])
	if g.keepEdges && !g.sharded {
		// Edges out of the dropped level (a cut by MaxStates merged it)
		// leave states of the periphery, which count as good: they change
		// nothing.
		dead, err := g.closedDead()
		if err != nil {
			return nil, err
		}
		g.res.Dead = dead
	}
	return g.res, nil
}

// stopWithin ends a search stopped while it expanded the level from
// depth d: what the workers expanded of it is kept. The states of depth
// d+1 found from the states they expanded, chunk by chunk from each
// chunk's first, are merged as a whole level's would be (a violation
// among them is reported), and the periphery is what was not expanded:
// the rest of depth d and the new states. The result covers every state
// within d steps, as cutShort's does, and Stats.Beyond says what more.
//
// Which states of the level were expanded depends on how far each
// worker got, but the search is stopped by the clock or the user, not
// something a second run would repeat. A stop while the level was
// expanded again under the cycle proviso (cyclicRerun), with sharding,
// or with observer postponement's graph not yet checked for cycles,
// drops the level instead (cutShort): what was expanded of it is not
// what the whole level's expansion would have taken.
func (g *global) stopWithin(w *sim.World, d int) (*Result, error) {
	var from int64
	cut := int(min(g.cut.Load(), int64(len(g.chunks)-1)))
	for ci := 0; ci <= cut; ci++ {
		from += int64(g.chunks[ci].expanded)
	}
	if from == 0 {
		return g.cutShort(d)
	}
	before := g.hi
	done, err := g.merge(w)
	if err != nil {
		return nil, err
	}
	g.res.Depth, g.res.Stats.Depth = d, d
	g.res.Stopped = true
	st := &g.res.Stats
	st.Beyond, st.BeyondFrom = int64(g.tree.n-before), from
	g.finishStats()
	if done {
		return g.res, nil
	}
	p := &Periphery{t: g.tree}
	for ci := range g.chunks {
		lo, expanded := g.lo+ci*g.csize, g.chunks[ci].expanded
		if ci > cut {
			expanded = 0 // past a finding: not merged
		}
		for i := lo + expanded; i < min(lo+g.csize, g.hi); i++ {
			g.toPeriphery(p, i, g.lastFPs, i-g.lo)
		}
	}
	for i := g.hi; i < g.tree.n; i++ {
		g.toPeriphery(p, i, g.newFPs, i-g.hi)
	}
	g.res.Periphery = p
	st.Periphery = len(p.nodes)
	if g.keepEdges {
		// The states not expanded are in the periphery, which counts as
		// good; the edges of those expanded are all there.
		dead, err := g.closedDead()
		if err != nil {
			return nil, err
		}
		g.res.Dead = dead
	}
	return g.res, nil
}

// finishStats copies the counters into the result.
func (g *global) finishStats() {
	st := &g.res.Stats
	st.States, st.Live = g.states.Load(), g.live.Load()
	st.Transitions = g.counted
	st.Queue = 0
	st.Remade = 0
	for _, k := range g.workers {
		st.Remade += k.remade
	}
	if g.opts.Fingerprints {
		g.res.Fingerprints = slices.Clone(g.keys)
		slices.Sort(g.res.Fingerprints)
	}
}

// keeping says whether the keys of new states are kept: all of them for
// Options.Fingerprints, and a shard's until it has split.
func (g *global) keeping() bool {
	return g.opts.Fingerprints || g.sharded && g.split < 0
}

// splitLevel divides the states of the level at depth d, nodes lo to hi,
// among the shards: those that fall to another are not expanded (nor,
// at the bound, walked from). The search does not see their future, so
// they count as states that may be live when closed dead regions are
// sought.
func (g *global) splitLevel(d int) {
	g.split, g.res.SplitDepth = d, d
	g.foreign = make([]bool, g.hi-g.lo)
	for i := range g.foreign {
		fp := g.keys[g.lo+i]
		if !g.opts.Shard.owns(fp) {
			g.foreign[i] = true
			g.res.Foreign++
			if g.good != nil && g.good.add(fp) {
				g.goodN++
			}
		}
	}
	if !g.opts.Fingerprints {
		g.keys = nil
	}
}

// periphery takes the states from node first to the last as the
// periphery: those of them that are not live.
func (g *global) periphery(first int) {
	p := &Periphery{t: g.tree}
	for i := first; i < g.tree.n; i++ {
		if g.split == g.res.Depth && g.foreign != nil && g.foreign[i-first] {
			continue
		}
		g.toPeriphery(p, i, g.lastFPs, i-first)
	}
	g.res.Periphery = p
	g.res.Stats.Periphery = len(p.nodes)
}

// toPeriphery adds node i to p unless it is live; fps[j], its key where
// fps has it, then counts as good for closedDead.
func (g *global) toPeriphery(p *Periphery, i int, fps []uint64, j int) {
	if g.tree.at(i).live() {
		return
	}
	p.nodes = append(p.nodes, uint32(i))
	if g.good != nil && j < len(fps) && g.good.add(fps[j]) {
		g.goodN++
	}
}

// keepParents gathers the states the level's chunks kept as parents of
// the next level's (global.parentStates), once the level is merged.
func (g *global) keepParents() {
	clear(g.parentStates)
	g.parentStates, g.parentLo = g.parentStates[:0], g.lo
	if g.keepPer == 0 {
		return // the next level is at the bound: nothing is expanded there
	}
	for ci := range g.chunks {
		for _, p := range g.chunks[ci].parents {
			i := ci*g.csize + p.off
			if len(g.parentStates) <= i {
				g.parentStates = slices.Grow(g.parentStates, i+1-len(g.parentStates))[:i+1]
			}
			g.parentStates[i] = p.s
		}
	}
}

// merge merges the level (mergeLevel), its time counted in Result.Merge.
func (g *global) merge(w *sim.World) (bool, error) {
	t0 := time.Now()
	done, err := g.mergeLevel(w)
	g.res.Merge += time.Since(t0)
	return done, err
}

// expandLevel has the workers expand the level's states, chunk by chunk.
func (g *global) expandLevel() {
	g.csize = chunkOf(g.hi - g.lo)
	n := (g.hi - g.lo + g.csize - 1) / g.csize
	if cap(g.chunks) < n {
		// Made anew, each chunk grows its candidates again from nothing
		// (on unreduced split Paxos 2 x 4, 290 of the 1,040 MB a search
		// allocated); keeping the slices of earlier levels' chunks
		// instead took the peak of all-roles Paxos 3 x 2 to depth 20
		// (7.4M states) from 448 to 517 MB.
		g.chunks = make([]chunk, n)
	}
	g.chunks = g.chunks[:n]
	for i := range g.chunks {
		c := &g.chunks[i]
		clear(c.states)
		clear(c.parents)
		cov := c.cov
		cov.Reset()
		*c = chunk{cands: c.cands[:0], sleeps: c.sleeps[:0], states: c.states[:0], parents: c.parents[:0], conc: c.conc[:0], edges: c.edges[:0], sources: c.sources[:0],
			psrc: c.psrc[:0], pend: c.pend[:0], pdst: c.pdst[:0], finds: c.finds[:0], reaches: c.reaches[:0], cov: cov}
	}
	g.cut.Store(math.MaxInt64)
	g.levelEdges.Store(0)
	// Keep some of the next level's states (not past the bound, where
	// nothing is expanded): each is a few hundred bytes besides the node
	// states it copies, dropped once it is expanded.
	g.keepPer, g.parentsPer = 0, 0
	g.keepMoreIfReplaying()
	if g.depth+1 < g.opts.Depth {
		kept, parentsLevel := maxKept, maxParentsLevel
		if g.keepMore {
			kept, parentsLevel = 2*maxKept, 2*maxParentsLevel
		}
		g.keepPer = kept / n
		if g.hi-g.lo <= parentsLevel {
			g.parentsPer = parentsPer * g.keepPer
		}
	} else if g.levelIdx[0] != nil {
		// The states at the bound need no sleep sets, nor the index
		// that intersects them (dedupe): its room goes, before the
		// level's candidates take theirs.
		for i := range g.levelIdx {
			g.levelIdx[i] = newFPIndex()
		}
	}
	clear(g.nextStates)
	g.nextStates = g.nextStates[:0]
	workers := min(len(g.workers), n)
	if len(g.ranges) < len(g.workers) {
		g.ranges = make([]chunkRange, len(g.workers))
	}
	for i := range g.ranges {
		g.ranges[i].set(int64(min(i, workers)*n/workers), int64(min(i+1, workers)*n/workers))
	}
	onGoroutines(workers, func(w int) { g.workers[w].expandChunks() })
}

// dedupe marks the candidates of chunks 0 to cut that are the first of
// the level with their key (g.isNew) and adds them to the visited set;
// with sleep sets for the next level, a candidate reached again gives up
// what it may not skip: the first's sleep set keeps only what every way
// there may skip (a renaming of it, none: see mergeSleep). It runs on as
// many goroutines as there are workers, each of which takes the visited
// shards of its own, over the candidates in the level's order, so the
// result is that of one.
//
// A worker marks its new candidates in a bit set of its own, joined
// after: flags in the candidates themselves, 16 bytes each and the
// workers' interleaved, had the workers take cache lines from each
// other at every candidate. It looks up a batch of its candidates' home
// slots before it adds them, as expand does, so that their misses of the
// cache overlap.
func (g *global) dedupe(cut int) {
	g.candOff = g.candOff[:0]
	n := 0
	for ci := 0; ci <= cut; ci++ {
		g.candOff = append(g.candOff, n)
		n += len(g.chunks[ci].cands)
	}
	sleeps := g.nextSleep != nil
	if sleeps {
		for _, x := range g.levelIdx {
			x.reset()
		}
	}
	// As many goroutines as workers. Each reads every candidate, and the
	// tables they add to grow into fresh memory, whose first touches by
	// two threads at once cost the kernel more than one's: on 2 workers
	// (split Paxos 2 x 4 unreduced, 2026-11-26) the merges took 0.83 s
	// with two goroutines and 0.66 s with one, and half as many
	// goroutines as workers ran them. Since the collector leaves more
	// room (check/memory.go), the tables' memory is mostly reused, and
	// two goroutines are faster (2026-11-29, three alternated pairs, the
	// merges' time: that Paxos 0.89 to 1.0 s with one, 0.71 to 0.83 s
	// with two; kvstore at depth 15 0.28 to 0.33 s, 0.23 to 0.25 s;
	// RandTree at depth 18 0.18 to 0.21 s, 0.14 to 0.17 s). What the
	// kernel paid for was a page probed before it was written: each
	// such page faulted twice and flushed the other core's TLB (perf);
	// the tables are now written first (freshTable), and two goroutines
	// take about half of one's time.
	workers := len(g.workers)
	if n < 1<<12 || workers < 1 {
		workers = 1 // goroutines cost more than they save
	}
	words := (n + 63) / 64
	for len(g.newBits) < workers {
		g.newBits = append(g.newBits, nil)
	}
	for w := range workers {
		if cap(g.newBits[w]) < words {
			g.newBits[w] = make([]uint64, words, words+words/4+16)
		}
		g.newBits[w] = g.newBits[w][:words]
		clear(g.newBits[w])
	}
	// The live new states join good here, each goroutine adding to its
	// own shards. Added after the merge, on one goroutine, they took 18
	// to 21 ms of transport's reduced search to depth 52 (1.3 to 1.5 s on
	// two workers) while the other worker waited; here the search's time
	// on one core (the merges) fell from 42 to 53 ms to 32 to 47 ms
	// (2026-11-29, four alternated runs), and one worker's did not change.
	good := g.good != nil
	g.goodAdds = g.goodAdds[:0]
	if good {
		g.goodAdds = slices.Grow(g.goodAdds, workers)[:workers]
		for w, adds := range g.goodAdds {
			g.goodAdds[w] = slices.Grow(adds[:0], cut+1)[:cut+1]
			clear(g.goodAdds[w])
		}
	}
	run := func(w int) {
		bits := g.newBits[w]
		var adds []int32
		if good {
			adds = g.goodAdds[w]
		}
		// A candidate is the goroutine's if its shard is and it has a
		// state: a test without a branch, whose outcome is as random as
		// the fingerprints (a branch on it was mispredicted every other
		// candidate, and a division by workers at each).
		var mine [visitedShards]uint8
		for sh := w; sh < visitedShards; sh += workers {
			mine[sh] = 1
		}
		var batch [dedupeBatch]int32
		var sink uint64
		for ci := 0; ci <= cut; ci++ {
			c := &g.chunks[ci]
			off := g.candOff[ci]
			for i := 0; i < len(c.cands); {
				m := 0
				for ; i < len(c.cands) && m < dedupeBatch; i++ {
					cd := &c.cands[i]
					batch[m] = int32(i)
					m += int(mine[shardOf(cd.fp)] &^ (cd.flags / candPanic))
				}
				for _, i := range batch[:m] {
					sink += g.visited.touch(c.cands[i].fp)
				}
				if good {
					for _, i := range batch[:m] {
						if cd := &c.cands[i]; cd.flags&candLive != 0 {
							sink += g.good.touch(cd.fp)
						}
					}
				}
				for _, i := range batch[:m] {
					cd := &c.cands[i]
					sh := shardOf(cd.fp)
					if g.visited.s[sh].add(cd.fp) {
						j := off + int(i)
						bits[j>>6] |= 1 << (j & 63)
						if sleeps {
							g.levelIdx[sh].put(cd.fp, int32(j))
						}
						if good && cd.flags&candLive != 0 && g.good.s[sh].add(cd.fp) {
							adds[ci]++
						}
						continue
					}
					if !sleeps {
						continue
					}
					j := int(g.levelIdx[sh].get(cd.fp))
					if j < 0 {
						continue
					}
					wc, _ := slices.BinarySearch(g.candOff, j+1)
					wc--
					wi := j - g.candOff[wc]
					first := &g.chunks[wc].sleeps[wi]
					if !g.conc || g.chunks[wc].conc[wi] == c.conc[i] {
						*first &= c.sleeps[i]
					} else {
						*first = 0
					}
				}
			}
		}
		g.workers[w].sink += sink
	}
	onGoroutines(workers, run)
	all := g.newBits[0]
	for _, bits := range g.newBits[1:workers] {
		for k, b := range bits {
			all[k] |= b
		}
	}
}

// onGoroutines runs run(0) to run(n-1) at once, run(0) on the caller's
// goroutine, and returns when all have.
func onGoroutines(n int, run func(w int)) {
	var wg sync.WaitGroup
	for w := 1; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}

// dedupeBatch is how many candidates a worker of dedupe looks up before
// it adds them to the visited set.
const dedupeBatch = 32

// isNew says whether candidate i of chunk ci is the first of the level
// with its key, after dedupe.
func (g *global) isNew(ci, i int) bool {
	j := g.candOff[ci] + i
	return g.newBits[0][j>>6]&(1<<(j&63)) != 0
}

// oldHit says whether a step of the level under way, up to the chunk
// with a finding that ends the search, reached a state of an earlier
// level or of this one.
func (g *global) oldHit() bool {
	for ci := range g.chunks {
		if int64(ci) > g.cut.Load() {
			break
		}
		if g.chunks[ci].oldHit {
			return true
		}
	}
	return false
}

// firstError returns the first tool error of the level, in chunk order.
func (g *global) firstError() error {
	for i := range g.chunks {
		if err := g.chunks[i].err; err != nil {
			return err
		}
	}
	return nil
}

// mergeLevel adds the level's new states to the visited set and the tree,
// in chunk order, and takes the first finding. It says whether the search
// ends here (a violation, or the target found).
func (g *global) mergeLevel(w *sim.World) (bool, error) {
	opts, res := g.opts, g.res
	bound := g.depth+1 == opts.Depth
	g.boundQuiet = true
	if opts.Reduce && !bound {
		if g.nextSleep == nil {
			g.nextSleep = make([]uint64, 0, 64)
		}
		g.nextSleep = g.nextSleep[:0]
		g.nextConc = g.nextConc[:0]
	} else {
		g.nextSleep = nil
	}
	var quiet *find // the first quiescent state, reported if no safety violation is as near
	var quietNode int
	cut := int(min(g.cut.Load(), int64(len(g.chunks)-1)))
	g.dedupe(cut)
	if g.mergeNew(cut, bound) {
		return false, nil
	}
	for ci := 0; ci <= cut; ci++ {
		c := &g.chunks[ci]
		fi, ri := 0, 0
		for i := range c.cands {
			cd := &c.cands[i]
			if cd.flags&candReach != 0 {
				for ; ri < len(c.reaches) && c.reaches[ri].cand == i; ri++ {
					if r := &res.Sometimes[c.reaches[ri].prop]; r.Depth < 0 {
						r.Depth, r.Key = g.depth+1, cd.fp
					}
				}
			}
			var f *find
			if cd.flags&candFind != 0 {
				for c.finds[fi].cand != i {
					fi++
				}
				f = &c.finds[fi]
			}
			if cd.flags&candPanic != 0 {
				return g.violation(w, f.v, g.parent(ci, cd), f.step)
			}
			if !g.isNew(ci, i) {
				continue // reached again in this level (dedupe)
			}
			if g.tree.n >= maxNodes {
				return false, fmt.Errorf("the search found more than %d states: too many for its tree of paths", maxNodes)
			}
			live := cd.flags&candLive != 0
			idx := g.tree.add(newNode(g.parent(ci, cd), int(cd.ev), int(cd.tape), live))
			if g.keepPer > 0 {
				var s *sim.State
				if i < len(c.states) {
					s = c.states[i]
				}
				g.nextStates = append(g.nextStates, s)
			}
			if g.nextSleep != nil {
				g.nextSleep = append(g.nextSleep, c.sleeps[i])
				if g.conc {
					g.nextConc = append(g.nextConc, c.conc[i])
				}
			}
			if g.keeping() {
				g.keys = append(g.keys, cd.fp)
			}
			g.states.Add(1)
			res.Stats.MaxDepth = g.depth + 1
			if live {
				g.live.Add(1)
			}
			if g.keepEdges || g.optimistic {
				g.newFPs = append(g.newFPs, cd.fp)
			}
			if bound && cd.flags&candQuiescent == 0 {
				g.boundQuiet = false
			}
			if opts.Target != 0 && cd.fp == opts.Target {
				path, _, init, err := g.tree.replay(w, idx, g.workers[0].trail)
				if err != nil {
					return false, err
				}
				res.TargetPath, res.TargetInit = path, init
				return true, nil
			}
			if f == nil {
				continue
			}
			if f.safety {
				return g.violation(w, f.v, idx)
			}
			if quiet == nil {
				quiet, quietNode = f, idx
			}
		}
		if g.optimistic {
			g.graph.add(c)
		}
		if g.keepEdges {
			g.countGood(ci)
			g.takeEdges(c)
		}
	}
	if quiet != nil {
		return g.violation(w, quiet.v, quietNode)
	}
	return false, nil
}

// takeEdges takes the edges and sources of chunk c, merged after the
// chunks before it, while the search keeps them.
func (g *global) takeEdges(c *chunk) {
	if g.nEdges+c.nEdges+g.nSources > maxDeadEdges || g.goodN > maxDeadEdges || len(c.edges) < c.nEdges {
		// Too many to keep: find no closed dead region. (A chunk with
		// edges left out is past the bound: with the whole level merged,
		// so is an earlier one or itself, and with part of it, the part
		// lacks edges.)
		g.keepEdges = false
		g.sources, g.good, g.newFPs, g.lastFPs = nil, nil, nil, nil
		g.edgeBlocks, g.sourceBlocks = nil, nil
		return
	}
	// The chunk's slices are handed over whole; it makes new ones for
	// the next level.
	g.edgeBlocks, g.nEdges = append(g.edgeBlocks, c.edges), g.nEdges+len(c.edges)
	g.sourceBlocks, g.nSources = append(g.sourceBlocks, c.sources), g.nSources+len(c.sources)
	c.edges, c.sources = nil, nil
}

// mergeNew adds the level's new states as mergeLevel's loop does, on as
// many goroutines as dedupe ran, where nothing in the level needs that
// loop's order: no finding, no reachability property reached, no target
// sought and no reduced graph. The new states of each
// chunk go to the places the new states of the chunks before it leave
// them, in the tree and in the next level's kept states, sleep sets and
// keys: the same result as the loop's. While the search keeps edges,
// their keys go to newFPs so, and the chunks' edges and the live states
// (good) are taken after, chunk by chunk, as the loop takes them. It
// says whether it merged the level; when not, it did nothing.
//
// The merge's loop was 4 to 6% of one worker's search and ran on one
// goroutine while two workers waited (search.Result.Merge).
func (g *global) mergeNew(cut int, bound bool) bool {
	if !mergeInParallel || g.opts.Target != 0 || g.optimistic {
		return false
	}
	if cap(g.newOff) < cut+2 {
		g.newOff = make([]int, cut+2)
	}
	g.newOff = g.newOff[:cut+2]
	total := 0
	for ci := 0; ci <= cut; ci++ {
		c := &g.chunks[ci]
		if len(c.finds) > 0 || len(c.reaches) > 0 {
			return false
		}
		g.newOff[ci] = total
		lo, hi := g.candOff[ci], g.candOff[ci]+len(c.cands)
		total += countBits(g.newBits[0], lo, hi)
	}
	g.newOff[cut+1] = total
	if g.tree.n+total > maxNodes {
		return false // the loop says so
	}
	first := g.tree.grow(total)
	keep := g.keepPer > 0
	if keep {
		g.nextStates = slices.Grow(g.nextStates, total)[:len(g.nextStates)+total]
	}
	sleeps, conc := g.nextSleep != nil, g.nextSleep != nil && g.conc
	if sleeps {
		g.nextSleep = slices.Grow(g.nextSleep, total)[:len(g.nextSleep)+total]
	}
	if conc {
		g.nextConc = slices.Grow(g.nextConc, total)[:len(g.nextConc)+total]
	}
	keys := g.keeping()
	if keys {
		g.keys = slices.Grow(g.keys, total)[:len(g.keys)+total]
	}
	fps := g.keepEdges
	if fps {
		g.newFPs = slices.Grow(g.newFPs, total)[:len(g.newFPs)+total]
	}
	states, sleepAt, concAt, keyAt, fpAt := len(g.nextStates)-total, len(g.nextSleep)-total, len(g.nextConc)-total, len(g.keys)-total, len(g.newFPs)-total
	// The goroutines take runs of chunks with about as many new states.
	workers := len(g.workers)
	if total < 1<<12 {
		workers = 1
	}
	lives := make([]int, workers)
	moving := make([]bool, workers) // a state at the bound with an event enabled
	// Goroutine w takes the chunks whose first new state is one of its
	// share, from to to.
	run := func(w int) {
		from, to := total*w/workers, total*(w+1)/workers
		ci, _ := slices.BinarySearch(g.newOff[:cut+1], from)
		live, move := 0, false
		for ; ci <= cut && g.newOff[ci] < to; ci++ {
			c := &g.chunks[ci]
			j := g.newOff[ci]
			for i := range c.cands {
				if !g.isNew(ci, i) {
					continue
				}
				cd := &c.cands[i]
				isLive := cd.flags&candLive != 0
				*g.tree.at(first + j) = newNode(g.parent(ci, cd), int(cd.ev), int(cd.tape), isLive)
				if keep {
					var s *sim.State
					if i < len(c.states) {
						s = c.states[i]
					}
					g.nextStates[states+j] = s
				}
				if sleeps {
					g.nextSleep[sleepAt+j] = c.sleeps[i]
				}
				if conc {
					g.nextConc[concAt+j] = c.conc[i]
				}
				if keys {
					g.keys[keyAt+j] = cd.fp
				}
				if fps {
					g.newFPs[fpAt+j] = cd.fp
				}
				if isLive {
					live++
				}
				if bound && cd.flags&candQuiescent == 0 {
					move = true
				}
				j++
			}
		}
		lives[w], moving[w] = live, move
	}
	onGoroutines(workers, run)
	live := 0
	for w := range workers {
		live += lives[w]
		if moving[w] {
			g.boundQuiet = false
		}
	}
	g.states.Add(int64(total))
	g.live.Add(int64(live))
	if total > 0 {
		g.res.Stats.MaxDepth = g.depth + 1
	}
	// The edges, chunk by chunk, each after the live states before it
	// and its own, as the loop takes them.
	for ci := 0; ci <= cut && g.keepEdges; ci++ {
		g.countGood(ci)
		g.takeEdges(&g.chunks[ci])
	}
	return true
}

// countGood counts in goodN the live new states of chunk ci, which the
// dedupe added to good.
func (g *global) countGood(ci int) {
	for _, adds := range g.goodAdds {
		if ci < len(adds) {
			g.goodN += int(adds[ci])
		}
	}
}

// mergeInParallel turns mergeNew on: a variable only for the test that
// compares it with mergeLevel's loop.
var mergeInParallel = true

// countBits counts the bits set in bits from bit lo to bit hi (not
// included).
func countBits(bits []uint64, lo, hi int) int {
	n := 0
	for lo < hi {
		w, b := lo>>6, lo&63
		word := bits[w] >> b
		if k := hi - lo; k < 64-b {
			word &= 1<<k - 1
			n += mathbits.OnesCount64(word)
			break
		}
		n += mathbits.OnesCount64(word)
		lo += 64 - b
	}
	return n
}

// violation ends the search with v, its path the one to node i and then
// the steps after it (a step that panicked made no node of its own).
func (g *global) violation(w *sim.World, v *Violation, i int, after ...sim.Step) (bool, error) {
	path, _, init, err := g.tree.replay(w, i, g.workers[0].trail)
	if err != nil {
		return false, err
	}
	v.Path, v.Init = append(path, after...), init
	g.res.Violation = v
	return true, nil
}

// A worker expands chunks of a level on a world of its own. It keeps the
// states on the path to the last state it expanded (its chain), so that
// the next, usually a sibling or a cousin, is made again in a step or two.
type worker struct {
	g        *global
	id       int // the worker's index in g.workers
	w        *sim.World
	trail    *Trail
	tapes    tapeCache
	chain    []*sim.State  // chain[d]: the state of node chainIdx[d], at depth d
	chainIdx []int         //
	chainEvs [][]sim.Event // the events enabled in chain[d], when chainOK[d]
	chainOK  []bool
	// chainMade says chain[d] was made again by state, not kept by the
	// level or given: once it is replaced, nothing holds it.
	chainMade []bool
	steps     sim.Path // steps[d]: the step from chain[d] to chain[d+1]
	anc       []int
	local     *fpIndex // the candidates of the chunk under way, by fingerprint
	evBuf     []sim.Event
	evBufOf   *sim.State  // the state whose enabled events evBuf holds
	obsBuf    []sim.Event // room for observersLast
	tape      []int
	tapeList  [][]int // the tapes by id, as far as this worker has needed them
	n         int64   // transitions not yet added to the search's count
	remade    int64   // steps made again (Stats.Remade)
	// unpolled counts the states the worker expanded since it last asked
	// Stop (poll).
	unpolled int
	// cov and tally count the steps of the chunk under way.
	cov   coverage.Counter
	tally tally
	// The state under expansion (x), the steps taken from it and not
	// judged yet (succs, their choices in choiceBuf), and where the next
	// batch of steps starts: event at, at choices tape when mid.
	x         expansion
	succs     []succ
	choiceBuf []int
	at        int
	mid       bool
	// edgesOver says the chunk under way keeps no edges, only counts
	// them (chunk.nEdges): the level's are more than the search keeps.
	edgesOver bool
	ptape     []int        // reachesOld's tape: it runs while tape waits for the next batch
	pstates   []*sim.State // reachesOld's states, looked up a batch at a time
	pkeys     []uint64     // their keys
	slept     []int        // events of the state under expansion the proviso has still to step (judge)
	sink      uint64
	// reached[j] says the worker found reachability property j: the
	// chunks it takes later come later in the search's order, so they
	// cannot reach it first. hits are those the last state classified
	// reached.
	reached []bool
	hits    []int
}

func (g *global) newWorker(w *sim.World, trail *Trail) *worker {
	if trail == nil {
		trail = &Trail{}
	}
	return &worker{g: g, id: len(g.workers), w: w, trail: trail, local: newFPIndex(), reached: make([]bool, len(g.sometimes)), unpolled: chunkSize}
}

// expandChunks takes chunks until there are none left, or one with a
// finding that ends the search comes before them.
func (k *worker) expandChunks() {
	g := k.g
	defer k.flush()
	for {
		ci, ok := k.claim()
		if !ok || g.stopped.Load() {
			return
		}
		if ci > g.cut.Load() {
			continue // a stolen half may start past the finding
		}
		// Stop is asked every chunkSize states or so, however small the
		// chunks (it reads the heap's figures, under a lock).
		if k.unpolled >= chunkSize {
			k.poll()
		}
		c := &g.chunks[ci]
		lo := g.lo + int(ci)*g.csize
		hi := min(lo+g.csize, g.hi)
		k.local.reset()
		k.cov.Reset()
		k.tally = tally{}
		// The edges kept so far and those of the chunks done already
		// are more than the search keeps: the merge will drop them all,
		// and the chunk only counts its own. (The edges were a fifth of
		// what etcd raft's unreduced search to depth 11 allocated.)
		k.edgesOver = g.keepEdges && g.nEdges+int(g.levelEdges.Load()) > maxDeadEdges
		i := lo
		for ; i < hi && !g.stopped.Load(); i++ {
			if end := k.expand(c, i); end {
				for {
					cur := g.cut.Load()
					if ci >= cur || g.cut.CompareAndSwap(cur, ci) {
						break
					}
				}
				i++
				break
			}
		}
		c.expanded = i - lo
		k.unpolled += c.expanded
		if len(c.edges) > 0 {
			g.levelEdges.Add(int64(len(c.edges)))
		}
		c.cov.Add(&k.cov)
		c.transitions, c.slept, c.postponed = k.tally.transitions, k.tally.slept, k.tally.postponed
	}
}

// A chunkRange is the chunks of the level left to one worker, first to
// end (packed in one word, so that its owner and a thief claim from it
// with one compare-and-swap each). Each worker starts with a run of
// neighbouring chunks, a part of the level, and takes them in order:
// neighbouring chunks are mostly cousins, whose ancestors the worker's
// chain holds already. Chunks handed out one at a time, to whichever
// worker came first, had each worker make more of them again (transport,
// unreduced to depth 40, on 2 workers: the replays, worker.state, took
// 64% more CPU than on one). A worker whose run is done takes the back
// half of the longest run left, which keeps both runs whole. Which worker
// expands a chunk does not change the result.
type chunkRange struct {
	v atomic.Uint64
	_ [56]byte // a cache line each: the workers' claims do not share one
}

func (r *chunkRange) set(first, end int64) { r.v.Store(uint64(first)<<32 | uint64(end)) }

func (r *chunkRange) load() (first, end int64, x uint64) {
	x = r.v.Load()
	return int64(x >> 32), int64(x & math.MaxUint32), x
}

// claim takes the next chunk for worker k to expand: the first of its
// run, or, when the run is done, the first of the back half it takes from
// the longest run left. It says false when no chunk is left that comes
// before a finding which ends the search.
func (k *worker) claim() (int64, bool) {
	g := k.g
	own := &g.ranges[k.id]
	for {
		first, end, x := own.load()
		if first >= end || first > g.cut.Load() {
			break
		}
		if own.v.CompareAndSwap(x, uint64(first+1)<<32|uint64(end)) {
			return first, true
		}
	}
	for {
		cut := g.cut.Load()
		victim, most := -1, int64(0)
		for i := range g.ranges {
			first, end, _ := g.ranges[i].load()
			if cut < end {
				end = cut + 1
			}
			if left := end - first; left > most {
				victim, most = i, left
			}
		}
		if victim < 0 {
			return 0, false
		}
		r := &g.ranges[victim]
		first, end, x := r.load()
		if first >= end {
			continue
		}
		mid := first + (end-first)/2
		if r.v.CompareAndSwap(x, uint64(first)<<32|uint64(mid)) {
			// The thief's own run is done: no one claims from it but a
			// thief, which finds it empty until this store.
			own.set(mid+1, end)
			return mid, true
		}
	}
}

// A tally is what a worker counts, step by step, for the chunk under
// way: kept in the worker, and given to the chunk once it is done, so
// that two workers do not write to one cache line at every step.
type tally struct {
	transitions, slept, postponed int64
}

// expand applies every enabled event, with every combination of choices,
// to node i's state, and keeps the successors not seen before its level
// as candidates. It returns true at a finding that ends the search (a
// safety violation; a tool error, in c.err).
//
// It takes the steps a batch at a time (take), asks the visited set about
// the whole batch at once (lookUp), then judges each step in order
// (judge), as if it had judged each right after taking it: a lookup is a
// miss of the cache most of the time, and lookups one after the other,
// each independent of the others, overlap in the memory system, where a
// lookup after each step waited for its miss alone.
func (k *worker) expand(c *chunk, i int) bool {
	g := k.g
	d := g.depth
	if g.foreign != nil && g.foreign[i-g.lo] {
		return false // another shard's
	}
	x := &k.x
	*x = expansion{c: c, i: i, d: d, lo: i - (i-g.lo)%g.csize, postpone: -1}
	if j := i - g.lo; j < len(g.levelStates) && g.levelStates[j] != nil {
		x.s = g.levelStates[j]
		k.setChain(d, i, x.s)
	} else {
		k.fromParent(i, d)
		var err error
		if x.s, err = k.state(i, d); err != nil {
			c.err = err
			return true
		}
	}
	// The trail names the state by its node of the tree: the steps on the
	// worker's chain above a state the search kept are another path's.
	// Every step of the expansion, in a batch or the proviso's, is from
	// this state: each sets only the trail's event and tape.
	k.trail.tree, k.trail.at, k.trail.Path = g.tree, i, nil
	x.recordEdges = g.keepEdges && !g.tree.at(i).live()
	x.evs = k.events(d)
	if len(x.evs) > maxEvents {
		c.err = fmt.Errorf("%d events are enabled in one state: more than the %d the search's tree of paths can tell apart", len(x.evs), maxEvents)
		return true
	}
	// With reduction: the events asleep here, and whether the new states
	// need sleep sets of their own (not at the bound: nothing is expanded
	// there).
	x.sleeps = g.nextSleepNeeded()
	if g.opts.Reduce {
		x.asleep = g.sleep[i-g.lo]
	}
	if x.recordEdges {
		c.sources = append(c.sources, source{fp: k.w.Key(x.s), node: uint32(i), asleep: x.asleep})
	}
	// Observer postponement: the other nodes' events come first in evs;
	// the observers' from postpone on are left out unless one of the
	// others' leads to a state of this level or an earlier one (the
	// cycle proviso: see reduce.go).
	if g.por {
		n := 0
		for n < len(x.evs) && !k.w.Observer(x.evs[n].Node) {
			n++
		}
		if n > 0 && n < len(x.evs) {
			x.postpone = n
		}
	}
	x.record = g.optimistic && x.postpone >= 0
	if x.record {
		x.pstart = len(c.pdst)
	}
	end := len(x.evs)
	if x.postpone >= 0 {
		end = x.postpone
	}
	k.at, k.mid = 0, false
	k.slept = k.slept[:0]
	for {
		if k.at == end {
			if end != x.postpone {
				return false
			}
			if x.record {
				// The steps of the asleep events of the others join
				// the graph; one that fails has s take every event,
				// as the proviso of levels does.
				if len(k.slept) > 0 && k.sleptSteps(c, x.s, k.slept) {
					c.pdst = c.pdst[:x.pstart]
					x.proviso = true
				} else {
					c.psrc = append(c.psrc, g.lastFPs[i-g.lo])
					c.pend = append(c.pend, uint32(len(c.pdst)))
				}
			} else if !x.proviso && len(k.slept) > 0 {
				// The cycle proviso's look at the asleep events of the
				// others, needed only when none of their steps went back.
				x.proviso = k.reachesOld(x.s, k.slept)
			}
			if !x.proviso {
				k.tally.postponed += int64(len(x.evs) - x.postpone)
				return false
			}
			end = len(x.evs)
			continue
		}
		k.take(end)
		var sink uint64
		for j := range k.succs {
			if r := &k.succs[j]; r.next != nil {
				sink += g.visited.touch(r.fp)
			}
		}
		k.sink += sink // kept, so that the loads are not left out
		for j := range k.succs {
			if r := &k.succs[j]; r.next != nil {
				r.old = g.visited.has(r.fp)
			}
		}
		if k.judge() {
			return true
		}
	}
}

// An expansion is the state a worker expands, and what judging the steps
// from it needs.
type expansion struct {
	c                   *chunk
	s                   *sim.State
	i, d, lo            int // s is node i, at depth d, in the chunk from node lo
	evs                 []sim.Event
	asleep              uint64
	sleeps, recordEdges bool
	postpone            int // see expand; -1: none
	proviso             bool
	// record says the steps of the others from s join the graph of
	// postponing states (global.optimistic), from pdst[pstart] on.
	record bool
	pstart int
	// parentKept says the chunk keeps s as a parent (keepParent).
	parentKept bool
}

// A succ is a step from the state under expansion, taken and not judged
// yet; or an event asleep there, which takes no step.
type succ struct {
	next   *sim.State // nil if the event is asleep or the step failed
	fp     uint64     // next's key
	e      int        // the event, an index into evs
	msg    sim.Message
	ch, cn int32 // the step's choices are choiceBuf[ch:cn]
	errs   int32 // the Error handlers the step ran (StepInfo.Errors)
	err    error
	asleep bool
	old    bool // next is in the visited set
}

// succBatch is how many steps a worker takes before it judges them. A
// variable only for the cross-check (crosscheck_test.go), which sets it
// low so that a batch ends among an event's choices.
var succBatch = 32

// take takes the steps of the events from k.at (its choices from k.tape
// on, when k.mid) up to end, or succBatch of them, into k.succs, and
// leaves k.at, k.mid and k.tape where the next batch starts. After a
// step that fails it takes no more (k.at is end).
//
// With symmetry the steps are taken without their keys (World.NoKeys),
// and the keys worked out after the batch, once the key cache's entries
// of the whole batch have been read one after the other (World.TouchKey):
// the key cache is a table of 16 MB, and an entry a miss of the cache
// most of the time.
func (k *worker) take(end int) {
	x := &k.x
	k.succs, k.choiceBuf = k.succs[:0], k.choiceBuf[:0]
	if k.w.Symmetric() {
		k.w.NoKeys = true
		defer k.keys()
	}
	for k.at < end && len(k.succs) < succBatch {
		e := k.at
		ev := x.evs[e]
		if !k.mid {
			if e < 64 && x.asleep&(1<<e) != 0 {
				k.succs = append(k.succs, succ{e: e, asleep: true})
				k.at++
				continue
			}
			k.tape, k.mid = k.tape[:0], true
		}
		k.trail.Event, k.trail.Tape = ev, k.tape
		next, err := k.w.Apply(x.s, ev, k.tape)
		info := k.w.Last()
		ch := len(k.choiceBuf)
		k.choiceBuf = append(k.choiceBuf, info.Choices...)
		r := succ{e: e, msg: info.Msg, ch: int32(ch), cn: int32(len(k.choiceBuf)), errs: int32(info.Errors), err: err}
		if err != nil {
			k.succs = append(k.succs, r)
			k.at, k.mid = end, false
			return
		}
		r.next = next
		if !k.w.NoKeys {
			r.fp = next.Key()
		}
		k.succs = append(k.succs, r)
		if nt, more := sim.NextTape(info.Choices, info.Bounds, k.tape); more {
			k.tape = nt
		} else {
			k.at++
			k.mid = false
		}
	}
}

// keys works out the keys of the states of k.succs, taken with
// World.NoKeys: it reads their entries in the key cache first, then asks
// for each key in order.
func (k *worker) keys() {
	k.w.NoKeys = false
	var sink uint64
	for j := range k.succs {
		if r := &k.succs[j]; r.next != nil {
			sink += k.w.TouchKey(r.next)
		}
	}
	k.sink += sink
	for j := range k.succs {
		if r := &k.succs[j]; r.next != nil {
			r.fp = k.w.Key(r.next)
		}
	}
}

// judge judges the steps of k.succs in order: it keeps the successors
// not seen before the level as candidates. It returns true at a finding
// that ends the search, as expand does; the steps after it are dropped.
func (k *worker) judge() bool {
	g, x := k.g, &k.x
	for n := range k.succs {
		r := &k.succs[n]
		e, ev := r.e, x.evs[r.e]
		if r.asleep {
			if e < x.postpone && !x.proviso && (g.cyclic || x.record) {
				// Looked at once the others are judged (expand), and
				// only if none of them went back: the proviso is read
				// only then.
				k.slept = append(k.slept, e)
			}
			k.tally.slept++
			continue
		}
		k.tally.transitions++
		k.cov.Event(&ev, r.msg, int(r.errs))
		if k.n++; k.n >= 256 {
			k.flush()
		}
		if k.judgeStep(r) {
			k.dropSuccs(n + 1)
			return true
		}
	}
	return false
}

// dropSuccs gives back the successors of k.succs from n on, not judged.
func (k *worker) dropSuccs(n int) {
	for _, r := range k.succs[n:] {
		if r.next != nil {
			if k.evBufOf == r.next {
				k.evBufOf = nil
			}
			k.w.Discard(r.next)
		}
	}
}

// judgeStep judges one step; true at a finding that ends the search.
func (k *worker) judgeStep(r *succ) bool {
	g, x := k.g, &k.x
	c, e, ev := x.c, r.e, x.evs[r.e]
	choices := k.choiceBuf[r.ch:r.cn]
	if err := r.err; err != nil {
		// A handler that panicked is a finding; so is a leads-to
		// property whose P or Q panicked in the step (a monitor's).
		var hp *sim.HandlerPanic
		var pe *properties.Error
		var nd *sim.NondeterminismError
		var v *Violation
		switch {
		case errors.As(err, &hp):
			v = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Panic: hp}
		case errors.As(err, &nd):
			v = &Violation{Property: DeterministicProperty, Kind: properties.Safety, Message: nd.Error()}
		case errors.As(err, &pe):
			v = &Violation{Property: pe.Property, Kind: properties.Liveness, Message: pe.Error(), PropertyError: pe}
		default:
			c.err = &sim.StepError{Index: x.d, Event: ev, Err: err}
			return true
		}
		tid, terr := k.tapes.intern(choices)
		if terr != nil {
			c.err = terr
			return true
		}
		c.finds = append(c.finds, find{cand: len(c.cands), safety: true, v: v,
			step: sim.Step{Event: ev, Choices: append([]int(nil), choices...)}})
		c.cands = append(c.cands, cand{off: uint8(x.i - x.lo), ev: uint16(e), tape: uint16(tid), flags: candPanic | candFind})
		if x.sleeps {
			c.sleeps = append(c.sleeps, 0)
		}
		if g.conc {
			c.conc = append(c.conc, 0)
		}
		if len(c.states) == len(c.cands)-1 && len(c.states) < g.keepPer {
			c.states = append(c.states, nil)
		}
		return true
	}
	next, fp := r.next, r.fp
	if x.record && e < x.postpone {
		c.pdst = append(c.pdst, fp)
	}
	if x.recordEdges {
		if c.nEdges++; !k.edgesOver {
			c.edges = append(c.edges, [2]uint64{k.w.Key(x.s), fp})
		}
	}
	// The chunk's own index first: a state in it is not in the visited
	// set, so that its lookup (r.old) is not needed.
	j := k.local.get(fp)
	switch {
	case j < 0 && r.old:
		// found in an earlier level: nothing to do
		c.oldHit = true
		if e < x.postpone && !x.record {
			x.proviso = true
		}
		k.w.Discard(next)
	case j >= 0:
		// The sleep sets meet: nothing to do once they have met in the
		// empty set, and a renaming's is empty (see mergeSleep).
		if x.sleeps && c.sleeps[j] != 0 {
			if g.conc && c.conc[j] != next.Fingerprint() {
				c.sleeps[j] = 0
			} else {
				c.sleeps[j] &= k.sleepSet(next, x.evs, e, x.asleep)
			}
		}
		k.evBufOf = nil
		k.w.Discard(next)
	default:
		k.local.put(fp, int32(len(c.cands)))
		tid, terr := k.tapes.intern(choices)
		if terr != nil {
			c.err = terr
			k.w.Discard(next)
			return true
		}
		flags, f := k.classify(next, x.d+1)
		if f != nil {
			f.cand = len(c.cands)
			c.finds = append(c.finds, *f)
			flags |= candFind
		}
		if flags&candReach != 0 {
			for _, j := range k.hits {
				c.reaches = append(c.reaches, reach{cand: len(c.cands), prop: j})
			}
		}
		var z uint64
		if x.sleeps {
			z = k.sleepSet(next, x.evs, e, x.asleep)
		}
		c.cands = append(c.cands, cand{fp: fp, off: uint8(x.i - x.lo), ev: uint16(e), tape: uint16(tid), flags: flags})
		if x.sleeps {
			c.sleeps = append(c.sleeps, z)
		}
		if g.conc {
			c.conc = append(c.conc, next.Fingerprint())
		}
		if len(c.states) == len(c.cands)-1 && len(c.states) < g.keepPer {
			c.states = append(c.states, next)
			// It shares node states, and maybe the network, with s and
			// the states above it on the chain.
			k.pinChain(next, x.d)
		} else {
			// Not kept: the next level re-creates it from its path, in
			// one step from s where the chunk keeps s.
			k.evBufOf = nil
			k.w.Discard(next)
			k.keepParent(c, x)
		}
		if f != nil && f.safety {
			return true
		}
	}
	return false
}

// classify checks a new state: the safety properties first, then the
// reachability properties the worker has not reached yet (those s
// reaches in k.hits), then whether it is live, and whether anything can
// happen in it at all (where that matters: a state that is not live, or
// one at the bound).
func (k *worker) classify(s *sim.State, d int) (flags uint8, f *find) {
	g := k.g
	for _, p := range g.safety {
		if err := p.CheckSafety(s); err != nil {
			v := &Violation{Property: p.Name, Kind: p.Kind, Message: err.Error()}
			errors.As(err, &v.PropertyError)
			return 0, &find{safety: true, v: v}
		}
	}
	if len(g.sometimes) > 0 {
		k.hits = k.hits[:0]
		for j, p := range g.sometimes {
			if k.reached[j] {
				continue
			}
			ok, pe := propReach(p, s)
			if pe != nil {
				return 0, &find{safety: true, v: &Violation{Property: pe.Property, Kind: properties.Reachability, Message: pe.Error(), PropertyError: pe}}
			}
			if ok {
				k.reached[j] = true
				k.hits = append(k.hits, j)
				flags |= candReach
			}
		}
	}
	live, pe := k.isLive(s)
	if pe != nil {
		return 0, &find{safety: true, v: &Violation{Property: pe.Property, Kind: properties.Liveness, Message: pe.Error(), PropertyError: pe}}
	}
	if live {
		flags |= candLive
	}
	// A message in flight can be delivered: only a state without any
	// needs its events listed to say whether it is quiescent (sleepSet
	// lists them when it needs them).
	if (!live || d == g.opts.Depth) && len(s.InFlight()) == 0 {
		k.evBuf, k.evBufOf = k.enabled(s, k.evBuf[:0]), s
		if len(k.evBuf) == 0 {
			flags |= candQuiescent
			if !live && len(g.liveness) > 0 {
				var notLive []string
				for _, p := range g.liveness {
					if ok, _ := k.propLive(p, s); !ok {
						notLive = append(notLive, p.Name)
					}
				}
				return flags, &find{v: &Violation{Property: QuiescentProperty, Kind: properties.Liveness, Message: QuiescentMessage(notLive)}}
			}
		}
	}
	return flags, nil
}

// isLive says whether every liveness property holds in s; with none, no
// state is live. A property that panics is returned as its error.
func (k *worker) isLive(s *sim.State) (bool, *properties.Error) {
	if len(k.g.liveness) == 0 {
		return false, nil
	}
	for _, p := range k.g.liveness {
		ok, pe := k.propLive(p, s)
		if pe != nil || !ok {
			return false, pe
		}
	}
	return true, nil
}

// propReach evaluates a reachability property; one that panics is
// returned as its error.
func propReach(p *properties.Property, s *sim.State) (bool, *properties.Error) {
	return propCall(func() bool { return p.IsReached(s) })
}

func (k *worker) propLive(p *properties.Property, s *sim.State) (bool, *properties.Error) {
	return propCall(func() bool { return p.IsLive(s) })
}

// propCall calls f, a property's predicate, returning the
// *properties.Error it panics with, if it does.
func propCall(f func() bool) (ok bool, pe *properties.Error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*properties.Error)
			if !ok {
				panic(r)
			}
			pe = e
		}
	}()
	return f(), nil
}

// state makes node i, at depth d, on the worker's chain: from the deepest
// of its ancestors already there, it applies the steps down to it.
func (k *worker) state(i, d int) (*sim.State, error) {
	t := k.g.tree
	for len(k.chain) <= d {
		k.chain, k.chainIdx = append(k.chain, nil), append(k.chainIdx, -1)
		k.chainEvs, k.chainOK = append(k.chainEvs, nil), append(k.chainOK, false)
	}
	for len(k.chainMade) < len(k.chain) {
		k.chainMade = append(k.chainMade, false)
	}
	for len(k.steps) < d {
		k.steps = append(k.steps, sim.Step{})
	}
	if cap(k.anc) <= d {
		k.anc = make([]int, d+1)
	}
	anc := k.anc[:d+1]
	l, j := d, i
	for k.chainIdx[l] != j {
		if l == 0 {
			// Another initial state.
			k.dropChain(0)
			k.chain[0], k.chainIdx[0], k.chainOK[0] = t.starts[j].State, j, false
			break
		}
		anc[l] = j
		j = t.at(j).parentIdx()
		l--
	}
	for m := l + 1; m <= d; m++ {
		n := t.at(anc[m])
		evs := k.events(m - 1)
		ev, tape := evs[n.ev], k.tapeOf(int(n.tape))
		k.trail.tree, k.trail.at, k.trail.Path, k.trail.Event, k.trail.Tape = t, k.chainIdx[m-1], nil, ev, tape
		// States made again need neither fingerprint nor key: the
		// search asks for the one it expands (World.Key), if for any.
		k.w.NoFingerprints = true
		k.remade++
		next, err := k.w.Apply(k.chain[m-1], ev, tape)
		k.w.NoFingerprints = false
		if err != nil {
			return nil, &sim.StepError{Index: m - 1, Event: ev, Err: err}
		}
		k.steps[m-1] = sim.Step{Event: ev, Choices: tape}
		k.dropChain(m)
		k.chain[m], k.chainIdx[m], k.chainOK[m], k.chainMade[m] = next, anc[m], false, true
	}
	return k.chain[d], nil
}

// fromParent puts on the chain, at depth d-1, the state the level before
// kept of node i's parent (global.parentStates), where the chain does not
// hold that node already: state then makes node i in one step.
func (k *worker) fromParent(i, d int) {
	g := k.g
	if d == 0 || len(g.parentStates) == 0 {
		return
	}
	p := g.tree.at(i).parentIdx()
	j := p - g.parentLo
	if j < 0 || j >= len(g.parentStates) || g.parentStates[j] == nil || d-1 < len(k.chainIdx) && k.chainIdx[d-1] == p {
		return
	}
	k.setChain(d-1, p, g.parentStates[j])
}

// keepParent keeps x's state for the next level, as the parent of the
// states it found that the chunk did not keep (global.parentStates), up
// to parentsPer of the chunk's. The chain no longer owns it, and the
// states above it on the chain keep what they share with it.
func (k *worker) keepParent(c *chunk, x *expansion) {
	if x.parentKept || len(c.parents) >= k.g.parentsPer {
		return
	}
	x.parentKept = true
	c.parents = append(c.parents, keptParent{off: x.i - x.lo, s: x.s})
	if x.d < len(k.chain) && k.chain[x.d] == x.s {
		k.chainMade[x.d] = false
	}
	k.pinChain(x.s, x.d)
}

// pinChain has the states the worker made again on its chain, down to
// depth d, keep what they share with s, a state the level keeps
// (World.Pin): when they are replaced, the rest goes back to the world.
func (k *worker) pinChain(s *sim.State, d int) {
	for m := min(d, len(k.chain)-1); m >= 0; m-- {
		if k.chainMade[m] && k.chain[m] != s {
			k.w.Pin(k.chain[m], s)
		}
	}
}

// dropChain lets chain[d] go before it is replaced: a state made again
// there goes back to the world for a later step to reuse, with the node
// states and network its step made for it but those a state the level
// keeps shares (pinChain). The states made from it on the chain share
// them too, but they are replaced in turn before they are read again: a
// state of the chain is only made from the one above it.
func (k *worker) dropChain(d int) {
	if d < len(k.chainMade) && k.chainMade[d] {
		if k.evBufOf == k.chain[d] {
			k.evBufOf = nil
		}
		k.w.Discard(k.chain[d])
		k.chain[d], k.chainMade[d] = nil, false
	}
}

// setChain makes s, node i's state, the worker's state at depth d, as if
// it had been made again there.
func (k *worker) setChain(d, i int, s *sim.State) {
	for len(k.chain) <= d {
		k.chain, k.chainIdx = append(k.chain, nil), append(k.chainIdx, -1)
		k.chainEvs, k.chainOK = append(k.chainEvs, nil), append(k.chainOK, false)
	}
	for len(k.steps) < d {
		k.steps = append(k.steps, sim.Step{})
	}
	for len(k.chainMade) < len(k.chain) {
		k.chainMade = append(k.chainMade, false)
	}
	if k.chainIdx[d] != i {
		k.dropChain(d)
		k.chain[d], k.chainIdx[d], k.chainOK[d] = s, i, false
	}
}

// events returns the events enabled in the chain's state at depth d,
// listing them the first time.
func (k *worker) events(d int) []sim.Event {
	if !k.chainOK[d] {
		k.chainEvs[d], k.chainOK[d] = k.enabled(k.chain[d], k.chainEvs[d][:0]), true
	}
	return k.chainEvs[d]
}

func (k *worker) tapeOf(id int) []int {
	for len(k.tapeList) <= id {
		k.tapeList = append(k.tapeList, nil)
	}
	if id != 0 && k.tapeList[id] == nil {
		k.tapeList[id] = k.g.tapes.get(id)
	}
	return k.tapeList[id]
}

// flush adds the worker's transitions to the count, reports progress
// when a multiple of ProgressEvery is crossed, and polls Stop.
func (k *worker) flush() {
	g := k.g
	if k.n == 0 {
		return
	}
	before := g.transitions.Add(k.n) - k.n
	after := before + k.n
	k.n = 0
	every := g.opts.ProgressEvery
	if g.opts.Progress != nil && before/every != after/every {
		g.progMu.Lock()
		st := g.res.Stats
		st.States, st.Live, st.Transitions = g.states.Load(), g.live.Load(), after
		st.Elapsed = time.Since(g.start)
		st.CollisionChance = collisionChance(st.States, st.Transitions)
		g.opts.Progress(st)
		g.progMu.Unlock()
	}
	if before/1024 != after/1024 {
		k.poll()
	}
}

// poll asks Stop whether to end the search.
func (k *worker) poll() {
	g := k.g
	k.unpolled = 0
	if g.opts.Stop == nil || g.stopped.Load() {
		return
	}
	g.stopMu.Lock()
	if g.opts.Stop() {
		g.stopped.Store(true)
	}
	g.stopMu.Unlock()
}

// closedDead returns the first state (in the order the search expanded
// them) that is a source of edges and reaches no good state, or 0. Every
// source was expanded below the depth bound, so its successors are among
// the edges' targets: one that reaches no good state has no future the
// search did not see, and none of it is live.
//
// Sleep sets leave out some edges, so a source that reaches no good state
// over the edges kept might over one left out. The transitions sleep sets
// spared out of those sources are taken, and the question asked again,
// until every source that reaches no good state has all its edges: the
// answer is then the one the search without reduction gives. The deepest
// such sources go first, and what reaches a good state is brought up to
// date from the new edges alone: once the deepest have their edges, many
// above reach a good state through them and need not be expanded again.
func (g *global) closedDead() (uint64, error) {
	// The chunks' blocks of edges are read where they are: one array of
	// them all would be allocated and copied, on one goroutine, as large
	// as every transition the search took out of a state that is not
	// live.
	blocks := g.edgeBlocks
	g.sources = slices.Grow(g.sources[:0], g.nSources)
	for _, b := range g.sourceBlocks {
		g.sources = append(g.sources, b...)
	}
	g.edgeBlocks, g.sourceBlocks = nil, nil
	reaches := reachesGood(blocks, g.nEdges, g.tree.n+g.good.len(), g.good)
	// The sources from end on have all their edges or reach a good
	// state, and go on doing so as edges are added: each round looks
	// only at those before the last round's (on OnePaxos's search to
	// depth 18, looking at them all again took a third of closedDead's
	// time, on one goroutine).
	end := len(g.sources)
	for {
		var todo []int
		deepest := -1
		i := end - 1
		for ; i >= 0; i-- {
			src := &g.sources[i]
			if src.asleep == 0 || reaches.has(src.fp) {
				continue
			}
			d, _ := slices.BinarySearch(g.tree.levels, int(src.node)+1)
			if deepest >= 0 && d < deepest {
				break // the sources are in the order the levels were expanded
			}
			deepest = d
			todo = append(todo, i)
		}
		end = i + 1
		if len(todo) == 0 {
			break
		}
		slices.Reverse(todo)
		slept, err := g.expandSlept(todo)
		if err != nil {
			return 0, err
		}
		reaches.add(slept)
	}
	for _, src := range g.sources {
		if !reaches.has(src.fp) {
			return src.fp, nil
		}
	}
	return 0, nil
}

// expandSlept takes the transitions sleep sets spared out of the sources
// todo (indices into g.sources), on every worker, and returns them in the
// sources' order, whatever the number of workers.
func (g *global) expandSlept(todo []int) ([][2]uint64, error) {
	const batch = 64
	n := (len(todo) + batch - 1) / batch
	out := make([][][2]uint64, n)
	unseen := make([][]uint64, n)
	errs := make([]error, n)
	var next atomic.Int64
	work := func(k *worker) {
		for {
			b := int(next.Add(1) - 1)
			if b >= n {
				return
			}
			var edges [][2]uint64
			for _, si := range todo[b*batch : min(len(todo), (b+1)*batch)] {
				src := &g.sources[si]
				var err error
				if edges, err = k.sleptEdges(int(src.node), src.asleep, edges, &unseen[b]); err != nil {
					errs[b] = err
					break
				}
			}
			out[b] = edges
		}
	}
	onGoroutines(min(len(g.workers), n), func(w int) { work(g.workers[w]) })
	var edges [][2]uint64
	for b := range out {
		if errs[b] != nil {
			return nil, errs[b]
		}
		edges = append(edges, out[b]...)
		for _, fp := range unseen[b] {
			g.good.add(fp)
		}
	}
	for _, si := range todo {
		g.sources[si].asleep = 0
	}
	return edges, nil
}

// sleptEdges appends the transitions out of node i that sleep sets spared
// (asleep, over its enabled events) to edges, and to unseen the states
// they lead to that the search never stored (in a shard only). The state
// is made on the worker's chain, as when it was expanded.
func (k *worker) sleptEdges(i int, asleep uint64, edges [][2]uint64, unseen *[]uint64) ([][2]uint64, error) {
	d, _ := slices.BinarySearch(k.g.tree.levels, i+1)
	d-- // the level whose first node is the last at or before i
	s, err := k.state(i, d)
	if err != nil {
		return edges, err
	}
	for e, ev := range k.events(d) {
		if e >= 64 || asleep&(1<<e) == 0 {
			continue
		}
		k.tape = k.tape[:0]
		for {
			k.trail.tree, k.trail.at, k.trail.Path, k.trail.Event, k.trail.Tape = k.g.tree, i, nil, ev, k.tape
			next, err := k.w.Apply(s, ev, k.tape)
			if err != nil {
				return edges, &sim.StepError{Index: d, Event: ev, Err: err}
			}
			info := k.w.Last()
			to := next.Key()
			if !k.g.visited.has(to) {
				// Only in a shard: the state is reached another way, through
				// a state of the split level left to another shard. Its
				// future is not seen here, so it counts as good.
				*unseen = append(*unseen, to)
			}
			edges = append(edges, [2]uint64{k.w.Key(s), to})
			nt, more := sim.NextTape(info.Choices, info.Bounds, k.tape)
			if !more {
				break
			}
			k.tape = nt
		}
	}
	return edges, nil
}

// reachesGood returns the states that reach a good one over the edges of
// blocks, total in all.
func reachesGood(blocks [][][2]uint64, total, states int, good *shardedSet) *reachSet {
	// Number the states, then list each one's predecessors (compressed
	// rows: the ins of state v are in[start[v]:start[v+1]]). The index
	// has room from the start for as many states as the edges can name
	// (states, at most).
	r := &reachSet{ids: newFPIndexFor(min(2*total, states)), good: good}
	var fps []uint64
	id := func(fp uint64) int32 {
		v := r.ids.put(fp, int32(len(fps)))
		if int(v) == len(fps) {
			fps = append(fps, fp)
		}
		return v
	}
	src, dst := make([]int32, 0, total), make([]int32, 0, total)
	last, lastID := uint64(0), int32(-1)
	for _, b := range blocks {
		for _, e := range b {
			if lastID < 0 || e[0] != last { // a source's edges come together
				last, lastID = e[0], id(e[0])
			}
			src, dst = append(src, lastID), append(dst, id(e[1]))
		}
	}
	n := len(fps)
	start := make([]int32, n+1)
	for _, d := range dst {
		start[d+1]++
	}
	for v := range n {
		start[v+1] += start[v]
	}
	in, pos := make([]int32, len(dst)), slices.Clone(start[:n])
	for i, d := range dst {
		in[pos[d]] = src[i]
		pos[d]++
	}
	r.mark = make([]bool, n)
	var queue []int32
	for fp := range good.all() {
		if v := r.ids.get(fp); v >= 0 && !r.mark[v] {
			r.mark[v] = true
			queue = append(queue, v)
		}
	}
	r.start, r.in = start, in
	r.propagate(queue)
	return r
}

// propagate marks what reaches the states in queue, marked already.
func (r *reachSet) propagate(queue []int32) {
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		var ins []int32
		if int(v) < len(r.start)-1 {
			ins = r.in[r.start[v]:r.start[v+1]]
		}
		for _, list := range [2][]int32{ins, r.more[v]} {
			for _, u := range list {
				if !r.mark[u] {
					r.mark[u] = true
					queue = append(queue, u)
				}
			}
		}
	}
}

// add brings the set up to date with more edges.
func (r *reachSet) add(edges [][2]uint64) {
	if r.more == nil {
		r.more = map[int32][]int32{}
	}
	var queue []int32
	id := func(fp uint64) int32 {
		v := r.ids.put(fp, int32(len(r.mark)))
		if int(v) == len(r.mark) {
			good := r.good.has(fp)
			r.mark = append(r.mark, good)
			if good {
				queue = append(queue, v)
			}
		}
		return v
	}
	for _, e := range edges {
		u, v := id(e[0]), id(e[1])
		r.more[v] = append(r.more[v], u)
		if r.mark[v] && !r.mark[u] {
			r.mark[u] = true
			queue = append(queue, u)
		}
	}
	r.propagate(queue)
}

// A reachSet is the states that reach a good one.
type reachSet struct {
	ids       *fpIndex
	mark      []bool
	good      *shardedSet
	start, in []int32           // the predecessors of the first edges (reachesGood)
	more      map[int32][]int32 // those of the edges added since
}

func (r *reachSet) has(fp uint64) bool {
	if v := r.ids.get(fp); v >= 0 {
		return r.mark[v]
	}
	return r.good.has(fp)
}
