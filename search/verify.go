package search

import (
	"errors"
	"fmt"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// errBudget ends a verification that ran out of steps, errStopped one
// that Stop ended.
var (
	errBudget  = errors.New("verification budget spent")
	errStopped = errors.New("stopped")
)

// verify looks for a real run in which each target node reaches its target
// state: a search from the initial state where a target node takes only
// recorded steps that can still lead to its target (and the loops of its
// current state), every other node takes any recorded step, and a delivery
// needs its message sent and not yet consumed. The run it finds is
// replayed in the global simulator before it counts, and becomes the
// violation's trace. With extra set, the target node then takes the step
// extra.step, which must panic.
//
// The replays run on w, and poll says when to stop. verify writes nothing
// the search shares, so that several can run at once (quickChecks): it
// returns what it found, and count adds it to the search's result.
func (ls *localSearch) verify(w *sim.World, poll func() bool, p *properties.Property, ts []target, extra *panicStep, budget int) outcome {
	v := &verifier{ls: ls, w: w, poll: poll, goal: make([]int32, ls.n), reach: make([][]bool, ls.n),
		seen: map[uint64]bool{}, cur: make([]int32, ls.n), budget: budget}
	if extra != nil {
		// A copy: the replay sets the panic it meets in it.
		e := *extra
		v.extra = &e
	}
	for k := range v.goal {
		v.goal[k] = -1
	}
	for _, t := range ts {
		v.goal[t.node] = t.idx
		v.reach[t.node] = ls.canReach(t.node, t.idx)
	}
	v.init()
	ok, err := v.dfs()
	o := outcome{steps: int64(v.steps)}
	switch {
	case errors.Is(err, errBudget):
		o.gaveUp = true
	case errors.Is(err, errStopped):
		o.stopped = true
	case err != nil:
		o.err = err
	case v.violation != nil:
		o.violation = v.violation // a panic or a violation on the way: a finding of its own
	case ok:
		o.violation = v.finding(p)
	}
	return o
}

// An outcome is what one verification by verify found: the violation it
// verified (nil for none), the interleaving prefixes it tried, whether it
// ran out of its budget or was stopped, and an error of the tool.
type outcome struct {
	violation       *Violation
	steps           int64
	gaveUp, stopped bool
	err             error
}

// ends says whether the outcome ends the quick checks: a violation, a
// stop, or an error.
func (o *outcome) ends() bool { return o.violation != nil || o.stopped || o.err != nil }

// count adds what a verification found to the search's result, and says
// whether it found a violation.
func (ls *localSearch) count(o outcome) (bool, error) {
	st := &ls.res.Stats
	st.Verifications++
	st.Sequences += o.steps
	if o.gaveUp {
		st.GaveUp++
	}
	if o.stopped {
		ls.interrupted = true
	}
	if o.err != nil {
		return false, o.err
	}
	if o.violation != nil {
		ls.res.Violation = o.violation
		return true, nil
	}
	return false, nil
}

// finding is the violation the run v verified shows: the panic of its
// extra step, or p's violation at its end; nil when p holds there.
func (v *verifier) finding(p *properties.Property) *Violation {
	if e := v.extra; e != nil {
		return &Violation{Property: PanicProperty, Kind: properties.Safety, Message: e.panic.Error(), Path: v.path.Clone(), Panic: e.panic}
	}
	perr := p.CheckSafety(v.end)
	if perr == nil {
		return nil
	}
	return &Violation{Property: p.Name, Kind: p.Kind, Message: perr.Error(), Path: v.path.Clone()}
}

// A panicStep is a step that panicked in local exploration: node takes
// step (consuming I+ message consume, -1 for a local event). panic is
// set by the replay of a real run in which it panics.
type panicStep struct {
	node    sim.NodeID
	step    sim.Step
	consume int32
	panic   *sim.HandlerPanic
}

// canReach marks the states of node id from which the target state can be
// reached through recorded steps.
func (ls *localSearch) canReach(id sim.NodeID, target int32) []bool {
	r := make([]bool, len(ls.states[id]))
	r[target] = true
	queue := []int32{target}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, p := range ls.states[id][i].preds {
			if !r[p.from] {
				r[p.from] = true
				queue = append(queue, p.from)
			}
		}
	}
	return r
}

// The verifier searches an abstraction of the real runs: each node's
// current state (an index into its stored states) and the multiset of
// messages in flight (I+ indices with counts). A step of node k along a
// recorded edge is enabled when the message it consumes is in flight; it
// takes it out and puts in what the step sent. That is the world's own
// rule for datagrams, computed with integers instead of by running
// handlers, so thousands of candidate runs cost what a few simulator steps
// would. Over streams each connection is a queue and only its head may
// be delivered, as in the world: without the order, a run refused by the
// replay would mark its abstract state seen and hide the runs that reach
// it in another order, and a refutation would prove nothing. A run that
// reaches the targets is then replayed in the simulator; only a run that
// replays counts.
type verifier struct {
	ls *localSearch
	// w is the world the replays run on, poll what says when to stop:
	// the search's own, or a worker's (quickChecks).
	w     *sim.World
	poll  func() bool
	goal  []int32  // target state per node, -1 for a free node
	reach [][]bool // per target node: states that can reach the target
	cur   []int32  // each node's current state
	count map[int32]int32
	// queues, over streams, hold each connection's messages in flight in
	// order (index from*n+to).
	queues [][]int32
	key    uint64 // hash of cur, count and queues, kept up to date
	// refused counts the runs the replay refused: the abstraction then
	// missed something, and a search that found nothing proves nothing.
	refused int
	extra   *panicStep
	seen    map[uint64]bool
	path    sim.Path
	end     *sim.State
	steps   int
	budget  int
	// limit, when set, bounds the run's length (iterative deepening); cut
	// says the bound cut some run short.
	limit int
	left  map[uint64]int32
	cut   bool
	// match, when set, replaces the targets: the search stops where it
	// returns true, having set matched (a property whose violation the
	// run must then replay to) or extra (a step that must then panic).
	match   func() bool
	matched *properties.Property
	// violation is a panic or a safety violation the replay met on the
	// way to the targets: a finding of its own.
	violation *Violation
}

func nodeKey(k int, i int32) uint64 { return mix64(uint64(k)<<32 | uint64(uint32(i))) }
func msgKey64(m int32, c int32) uint64 {
	return mix64(0x8000000000000000 | uint64(uint32(m))<<20 | uint64(uint32(c)))
}

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (v *verifier) init() {
	v.count = map[int32]int32{}
	if v.w.Spec().Transport == sim.Stream {
		v.queues = make([][]int32, v.ls.n*v.ls.n)
	}
	for _, e := range v.ls.init.InFlight() {
		v.add(v.ls.msgIndex[msgKey{e.From, e.To, e.FP}], 1)
	}
	for k := range v.cur {
		v.key ^= nodeKey(k, 0)
	}
}

// add puts message m in flight (d = 1: at the back of its queue) or takes
// it out (d = -1: from the front).
func (v *verifier) add(m int32, d int32) {
	c := v.count[m]
	v.key ^= msgKey64(m, c) ^ msgKey64(m, c+d)
	v.count[m] = c + d
	if v.queues != nil {
		im := v.ls.msgs[m]
		ch := int(im.from)*v.ls.n + int(im.to)
		q := v.queues[ch]
		v.key ^= queueKey(ch, q)
		if d > 0 {
			q = append(q, m)
		} else {
			q = q[1:]
		}
		v.queues[ch] = q
		v.key ^= queueKey(ch, q)
	}
}

// unadd undoes add(m, d) exactly: over streams the message leaves or
// rejoins its queue at the end add used.
func (v *verifier) unadd(m int32, d int32) {
	c := v.count[m]
	v.key ^= msgKey64(m, c) ^ msgKey64(m, c-d)
	v.count[m] = c - d
	if v.queues != nil {
		im := v.ls.msgs[m]
		ch := int(im.from)*v.ls.n + int(im.to)
		q := v.queues[ch]
		v.key ^= queueKey(ch, q)
		if d > 0 {
			q = q[:len(q)-1]
		} else {
			q = append([]int32{m}, q...)
		}
		v.queues[ch] = q
		v.key ^= queueKey(ch, q)
	}
}

// queueKey hashes the order of one connection's queue; the multiset part
// of the key already counts its messages.
func queueKey(ch int, q []int32) uint64 {
	if len(q) < 2 {
		return 0
	}
	h := uint64(ch) + 0x9e3779b97f4a7c15
	for _, m := range q {
		h = mix64(h ^ uint64(uint32(m)))
	}
	return h
}

// inFlight says whether message m can be delivered now: sent and not yet
// consumed, and over streams at the head of its connection's queue.
func (v *verifier) inFlight(m int32) bool {
	if v.count[m] == 0 {
		return false
	}
	if v.queues == nil {
		return true
	}
	im := v.ls.msgs[m]
	return v.queues[int(im.from)*v.ls.n+int(im.to)][0] == m
}

func (v *verifier) move(k int, to int32) {
	v.key ^= nodeKey(k, v.cur[k]) ^ nodeKey(k, to)
	v.cur[k] = to
}

func (v *verifier) done() bool {
	if v.match != nil {
		v.matched, v.extra = nil, nil
		return v.match()
	}
	for k, g := range v.goal {
		if g >= 0 && v.cur[k] != g {
			return false
		}
	}
	return true
}

func (v *verifier) dfs() (bool, error) {
	ls := v.ls
	if v.done() {
		ok, err := v.replay()
		if ok || err != nil {
			return ok, err
		}
	}
	if v.limit > 0 {
		// Depth-limited: a state seen before with at least as many steps
		// left has nothing new to give.
		left := int32(v.limit - len(v.path))
		if left <= 0 {
			v.cut = true
			return false, nil
		}
		if old, ok := v.left[v.key]; ok && old >= left {
			return false, nil
		}
		v.left[v.key] = left
	} else {
		if v.seen[v.key] {
			return false, nil
		}
		v.seen[v.key] = true
	}
	// Target nodes first, each toward its target; then the free nodes.
	// Within each, deliveries before local events (timers, driver calls),
	// as the global search orders them: a run settles the messages in
	// flight before it starts something new.
	for pass := 0; pass < 4; pass++ {
		local := pass%2 == 1
		for k := range ls.n {
			pinned := v.goal[k] >= 0
			if pinned != (pass < 2) {
				continue
			}
			st := ls.states[k][v.cur[k]]
			for _, e := range st.succ {
				if (e.p.consume < 0) != local || (pinned && !v.reach[k][e.to]) {
					continue
				}
				if ok, err := v.try(k, e.p, e.to); ok || err != nil {
					return ok, err
				}
			}
			for _, lp := range st.loops {
				if (lp.consume < 0) != local {
					continue
				}
				if ok, err := v.try(k, lp, v.cur[k]); ok || err != nil {
					return ok, err
				}
			}
		}
	}
	return false, nil
}

// try takes one recorded step in the abstraction and goes on from there.
func (v *verifier) try(k int, p pred, to int32) (bool, error) {
	if p.consume >= 0 && !v.inFlight(p.consume) {
		return false, nil
	}
	if v.steps >= v.budget {
		return false, errBudget
	}
	if v.poll() {
		return false, errStopped
	}
	v.steps++
	if p.consume >= 0 {
		v.add(p.consume, -1)
	}
	for _, m := range p.sent {
		v.add(m, 1)
	}
	from := v.cur[k]
	v.move(k, to)
	v.path = append(v.path, p.step)
	ok, err := v.dfs()
	if ok || err != nil {
		return ok, err
	}
	v.path = v.path[:len(v.path)-1]
	v.move(k, from)
	for i := len(p.sent) - 1; i >= 0; i-- {
		v.unadd(p.sent[i], 1)
	}
	if p.consume >= 0 {
		v.unadd(p.consume, -1)
	}
	return false, nil
}

// replay runs the candidate in the simulator, then the step that must
// panic if there is one. A candidate the simulator refuses does not
// count; a handler that panics on the way, or a safety violation on the
// way (of any property), is a finding of its own.
func (v *verifier) replay() (bool, error) {
	ls := v.ls
	w := v.w
	saved := w.Strict
	w.Strict = true
	defer func() { w.Strict = saved }()
	s := ls.init
	steps := v.path
	if v.extra != nil {
		steps = append(steps.Clone(), v.extra.step)
	}
	for i, st := range steps {
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			if errors.Is(err, sim.ErrNotEnabled) {
				v.refused++
				return false, nil
			}
			var hp *sim.HandlerPanic
			if errors.As(err, &hp) {
				if v.extra != nil && i == len(steps)-1 {
					v.extra.panic = hp
					v.path = steps.Clone()
					return true, nil
				}
				v.violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Path: steps[:i+1].Clone(), Panic: hp}
				return true, nil
			}
			return false, err
		}
		s = next
		// The first violation on the way is the finding, whichever
		// property it is: a replay of the trace stops there too.
		for _, p := range ls.safety {
			if perr := p.CheckSafety(s); perr != nil {
				v.violation = &Violation{Property: p.Name, Kind: p.Kind, Message: perr.Error(), Path: steps[:i+1].Clone()}
				return true, nil
			}
		}
	}
	if v.extra != nil {
		v.refused++
		return false, nil // the step did not panic in the real run
	}
	if v.matched != nil && v.matched.CheckSafety(s) == nil {
		v.refused++ // the property reads more than the node states
		return false, nil
	}
	v.end = s
	return true, nil
}

// verifyAll looks for a real run that reaches any of the candidates at
// once: one search of the recorded steps of every node from the initial
// state, checking at each point whether the nodes' current states make up
// a candidate (a conflicting pair, a whole system state, or a node state
// whose step panicked with its message in flight). One search serves all
// the candidates, which matters when there are many: most combinations of
// node states no run reaches, and refuting them one by one repeats the
// same work.
//
// It runs on this goroutine alone, whatever the workers: its iterative
// deepening is one depth-first search, whose table of the states seen
// (with the steps left) prunes every branch after the one that saw them,
// so its branches are not independent runs, and splitting them would
// change what it counts and which run it finds first.
func (ls *localSearch) verifyAll(cands []pendingCheck) (bool, error) {
	t0 := time.Now()
	defer func() { ls.res.Stats.Verify += time.Since(t0) }()
	ls.res.Stats.Verifications++
	pairs := map[[4]int32]*properties.Property{}
	whole := map[uint64]*properties.Property{}
	panics := map[target][]*panicStep{}
	for _, pc := range cands {
		switch {
		case pc.extra != nil:
			t := pc.targets[0]
			panics[t] = append(panics[t], pc.extra)
		case len(pc.targets) == 2 && ls.n > 2 || len(pc.targets) == 2 && pc.p.Pair != nil:
			a, b := pc.targets[0], pc.targets[1]
			if a.node > b.node {
				a, b = b, a
			}
			pairs[[4]int32{int32(a.node), a.idx, int32(b.node), b.idx}] = pc.p
		default:
			idx := make([]int32, ls.n)
			for _, t := range pc.targets {
				idx[t.node] = t.idx
			}
			whole[wholeKey(idx)] = pc.p
		}
	}
	v := &verifier{ls: ls, w: ls.w, poll: ls.poll, goal: make([]int32, ls.n), reach: make([][]bool, ls.n), seen: map[uint64]bool{}, cur: make([]int32, ls.n),
		budget: ls.opts.MaxVerify}
	for k := range v.goal {
		v.goal[k] = -1
	}
	v.match = func() bool {
		for i := 0; i < ls.n; i++ {
			for j := i + 1; j < ls.n; j++ {
				if p := pairs[[4]int32{int32(i), v.cur[i], int32(j), v.cur[j]}]; p != nil {
					v.matched = p
					return true
				}
			}
		}
		if len(whole) > 0 {
			// A hash collision costs a replay, which then fails.
			if p := whole[wholeKey(v.cur)]; p != nil {
				v.matched = p
				return true
			}
		}
		if len(panics) > 0 {
			for k := range ls.n {
				for _, e := range panics[target{sim.NodeID(k), v.cur[k]}] {
					if e.consume < 0 || v.inFlight(e.consume) {
						v.extra = e
						return true
					}
				}
			}
		}
		return false
	}
	v.init()
	// Iterative deepening: short runs first, as a global search would
	// find them, instead of wandering deep along one branch.
	var ok bool
	var err error
	for v.limit = 12; ; v.limit *= 2 {
		v.left, v.cut = map[uint64]int32{}, false
		ok, err = v.dfs()
		if ok || err != nil || !v.cut {
			break
		}
	}
	ls.res.Stats.Sequences += int64(v.steps)
	if errors.Is(err, errBudget) {
		ls.res.Stats.GaveUp++
		ls.undecided = true
		err, ok = nil, false
	}
	if errors.Is(err, errStopped) {
		err, ok = nil, false
	}
	if err != nil || v.violation != nil {
		ls.res.Violation = v.violation
		return v.violation != nil, err
	}
	if !ok {
		// No run reaches any of them, unless the replay refused a run
		// the abstraction allowed: then the search proved nothing.
		if v.refused > 0 {
			ls.undecided = true
			ls.refused = v.refused
		}
		return false, nil
	}
	if v.extra == nil && v.matched.CheckSafety(v.end) == nil {
		return false, fmt.Errorf("internal error: local mode verified a run to a state where %s holds", v.matched.Name)
	}
	ls.res.Violation = v.finding(v.matched)
	return ls.res.Violation != nil, nil
}

// wholeKey hashes a system state made of node states (one index per node).
func wholeKey(idx []int32) uint64 {
	var h uint64
	for k, i := range idx {
		h = mix64(h ^ nodeKey(k, i))
	}
	return h
}
