package search

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// LocalOptions bound a local search. Zero values take the defaults.
type LocalOptions struct {
	// Rounds is the largest number of local events (timers, driver calls)
	// and repeated deliveries (a message delivered again on a path that
	// delivered it before) one node may take on a path to a new state; the
	// search raises the bound round by round from 1 (default 8). What the
	// bound holds back leaves the result incomplete.
	Rounds int
	// MaxNodeStates stops the search after this many node states in all
	// (default 1,000,000); the result is then not complete.
	MaxNodeStates int
	// MaxVerify bounds the steps of the search that verifies all the
	// preliminary violations at once (default 2,000,000); QuickChecks
	// (default 256) of the shortest are first verified one by one, with
	// QuickBudget steps each (default 5,000). A verification that runs out
	// reports nothing, so nothing unverified is ever reported.
	MaxVerify   int
	QuickChecks int
	QuickBudget int
	Properties  []properties.Property
	// Stop is polled every few hundred steps of every phase (exploration,
	// combination, verification); when it returns true the search ends
	// soon after with Stopped set and the statistics so far.
	Stop func() bool
	// Fits, when set, says whether that many more bytes fit the check's
	// memory budget: the search asks before a large structure grows (one
	// doubling of the candidates can take gigabytes, more than polling
	// the heap would see in time) and stops as by Stop when they do not.
	Fits func(bytes int64) bool
	// Progress, when set, is called now and then with the statistics so
	// far (node states not yet added up).
	Progress func(LocalStats)
	// Workers are more worlds, of the same spec as the search's, on which
	// the quick checks of the candidates run at once, one on each world
	// and one on the search's own (quickChecks). The result, statistics
	// included (times aside), does not depend on how many there are.
	Workers []*sim.World
}

// LocalStats describe a local search.
type LocalStats struct {
	NodeStates      []int // distinct node states, per node
	Messages        int   // messages in I+, every message ever sent
	Transitions     int64 // local steps applied
	SystemStates    int64 // system states built to check properties on
	Pairs           int64 // node-state pairs checked by pairwise properties
	Preliminary     int64 // violations on system states built
	Verifications   int64 // soundness verifications run
	Sequences       int64 // interleaving prefixes they tried (simulator steps)
	Unsound         int64 // preliminary violations no real run was found for
	GaveUp          int64 // verifications that ran out of steps
	Refuted         int64 // preliminary violations refuted by message summaries
	Rounds          int   // rounds run
	Explore         time.Duration
	Combine         time.Duration
	Verify          time.Duration
	Elapsed         time.Duration
	TotalNodeStates int
}

// LocalResult is what a local search found.
type LocalResult struct {
	// Violation is a verified violation: its path replays in the global
	// simulator from the initial state.
	Violation *Violation
	// Complete says every node state reachable under the local rules was
	// explored (every message sent tried on every state of its
	// destination, every local event taken: nothing held back by the
	// round bound) and every preliminary violation refuted. The states
	// explored then include every reachable node state, so no violation
	// of the safety properties exists.
	Complete bool
	// Stopped says the search was stopped by MaxNodeStates or Stop.
	Stopped bool
	// HeldBack says the round bound held back some step in the last
	// round: the node states explored are those reachable with at most
	// Stats.Rounds local events and repeated deliveries per node (on the
	// first path found to each state).
	HeldBack bool
	// Undecided says the last verification of the preliminary violations
	// ran out of its budget, or (Refused > 0) its abstraction allowed runs
	// the simulator refused, so that finding none proves nothing: they
	// are neither reported nor ruled out.
	Undecided bool
	Refused   int
	Stats     LocalStats
}

// A pred is one way to reach a node state: from a previous state of the
// same node, by an event, sending messages (their I+ indices).
type pred struct {
	from    int32 // index of the previous state in its node's list
	step    sim.Step
	sent    []int32
	consume int32 // I+ index of the message delivered, -1 for a local event
}

type lstate struct {
	loc   *sim.Local
	preds []pred
	// loops are steps that leave the state as it was: they change nothing
	// in the node but may consume and send messages (a node forwarding a
	// message, say), which a real run may need.
	loops []pred
	// succ are the steps out of the state to other states.
	succ []edge
	// hist holds the I+ indices of the messages delivered on the first
	// path here, sorted; local counts that path's local events and
	// repeated deliveries, which the round bound limits.
	hist  []int32
	local int
	depth int    // steps on the first path here
	tried bool   // its local events have been applied
	in    []bool // per safety property: passes its filter
}

type edge struct {
	to int32
	p  pred
}

type imsg struct {
	from, to sim.NodeID
	fp       uint64
	msg      sim.Message
	tried    int // states of the destination it has been tried on, in order
}

type msgKey struct {
	from, to sim.NodeID
	fp       uint64
}

type localSearch struct {
	w        *sim.World
	opts     LocalOptions
	n        int
	states   [][]*lstate
	index    []map[uint64]int32
	msgs     []*imsg
	msgIndex map[msgKey]int32
	safety   []*properties.Property
	res      *LocalResult
	init     *sim.State
	evbuf    []sim.Event
	total    int
	stopped  bool // by MaxNodeStates
	// interrupted: Stop returned true; polls counts the calls to poll.
	interrupted bool
	polls       int
	held        bool // a step was held back by the round bound
	bound       int  // the round's bound
	// deferred are the deliveries that repeat one on the first path to
	// their state and reached a new state beyond the bound: they are
	// applied again in the next round.
	deferred []delivery
	// undecided: the last verification ran out of its budget, or
	// refused runs the replay refused.
	undecided bool
	refused   int
	// pending are the preliminary violations (and handler panics) no real
	// run was found for yet, refuted ones included: a later round may add
	// steps to the node states they pin (not only new states), which can
	// make them real (LMC paper, 4.2), so each round ends by checking
	// them all again if the graphs grew.
	pending []pendingCheck
	edges   int // steps between distinct node states recorded
	// the pending count and graph size at the last verification
	verifiedPending, verifiedEdges int
}

// A pendingCheck is a preliminary violation: property p, with the given
// nodes pinned to the given states (the others free), and the size of
// the graphs when it was last verified. A handler panic has extra set
// instead of p: its one target node must reach its state, then take the
// step that panicked.
type pendingCheck struct {
	p       *properties.Property
	extra   *panicStep
	targets []target
	edges   int // the graphs' size at the last verification, -1 before any
	depth   int // the targets' first-path lengths, added up
}

// plausible checks every pair of targets against the summaries.
func (pc *pendingCheck) plausible(sm *summaries) bool {
	for i, a := range pc.targets {
		for _, b := range pc.targets[i+1:] {
			if !sm.plausible(int(a.node), a.idx, int(b.node), b.idx) {
				return false
			}
		}
	}
	return true
}

type delivery struct{ msg, state int32 }

type target struct {
	node sim.NodeID
	idx  int32
}

// Local runs local model checking (LMC): per-node state sets, one
// monotonic set I+ of every message sent, system states built only to
// check safety properties, and every preliminary violation verified by
// finding a real run that reaches it before it is reported.
//
// Local mode covers deliveries, timers and driver calls; it does not
// inject failures. I+ is a set: a node that sends the same message to the
// same node twice adds it once, and every message of I+ is tried on every
// state of its destination, as often as it leads somewhere (the LMC
// paper's history rule, which skips a message already delivered on the
// first path to a state, loses reachable states and is not used). That
// over-approximates the reachable node states; verification, which
// counts the messages in flight, keeps only real runs.
//
// A system whose nodes choose in their first Init has several initial
// states: each distinct one is searched in turn, in the order of
// World.Starts, until one shows a violation (its Init names that state);
// the statistics add up over them.
func Local(w *sim.World, opts LocalOptions) (*LocalResult, error) {
	starts, err := w.Starts()
	if err != nil {
		var se *sim.StartError
		if hp := asHandlerPanic(err); hp != nil && errorsAs(err, &se) && len(starts) == 0 {
			return &LocalResult{Violation: &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Panic: hp, Init: se.Init}}, nil
		}
		if asHandlerPanic(err) == nil {
			return nil, err
		}
	}
	if len(starts) == 1 && err == nil {
		return localFrom(w, opts, starts[0].State)
	}
	// The initial states one by one: a panic under later choices is
	// reported after the states before it.
	total := &LocalResult{Complete: true}
	seen := map[uint64]bool{}
	t0 := time.Now()
	for _, st := range starts {
		if seen[st.State.Fingerprint()] {
			continue
		}
		seen[st.State.Fingerprint()] = true
		r, rerr := localFrom(w, opts, st.State)
		if rerr != nil {
			return nil, rerr
		}
		total.add(r)
		if r.Violation != nil {
			total.Violation = r.Violation
			total.Violation.Init = st.Init
			break
		}
		if r.Stopped {
			break
		}
	}
	var se *sim.StartError
	if total.Violation == nil && !total.Stopped && errorsAs(err, &se) {
		hp := asHandlerPanic(err)
		total.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Panic: hp, Init: se.Init}
	}
	total.Stats.Elapsed = time.Since(t0)
	return total, nil
}

// add counts r, the search from one initial state, in a result over
// several.
func (t *LocalResult) add(r *LocalResult) {
	t.Complete = t.Complete && r.Complete
	t.Stopped = t.Stopped || r.Stopped
	t.HeldBack = t.HeldBack || r.HeldBack
	t.Undecided = t.Undecided || r.Undecided
	t.Refused += r.Refused
	a, b := &t.Stats, &r.Stats
	if a.NodeStates == nil {
		a.NodeStates = make([]int, len(b.NodeStates))
	}
	for i, n := range b.NodeStates {
		a.NodeStates[i] += n
	}
	a.Messages += b.Messages
	a.Transitions += b.Transitions
	a.SystemStates += b.SystemStates
	a.Pairs += b.Pairs
	a.Preliminary += b.Preliminary
	a.Verifications += b.Verifications
	a.Sequences += b.Sequences
	a.Unsound += b.Unsound
	a.GaveUp += b.GaveUp
	a.Refuted += b.Refuted
	a.Rounds = max(a.Rounds, b.Rounds)
	a.Explore += b.Explore
	a.Combine += b.Combine
	a.Verify += b.Verify
	a.TotalNodeStates += b.TotalNodeStates
}

// localFrom is Local from the initial state s0.
func localFrom(w *sim.World, opts LocalOptions, s0 *sim.State) (*LocalResult, error) {
	if opts.Rounds <= 0 {
		opts.Rounds = 8
	}
	if opts.MaxNodeStates <= 0 {
		opts.MaxNodeStates = 1_000_000
	}
	if opts.MaxVerify <= 0 {
		opts.MaxVerify = 2_000_000
	}
	if opts.QuickChecks <= 0 {
		opts.QuickChecks = 256
	}
	if opts.QuickBudget <= 0 {
		opts.QuickBudget = 5_000
	}
	b := w.Spec().Budget
	// Local steps are a node's own events; a failure acts on the network
	// or on two nodes at once, which local states do not hold.
	if b != (sim.Budget{}) {
		return nil, fmt.Errorf("local mode does not inject failures: resets, drops, socket errors, duplicates, partitions and crashes must be 0 (use --mode global)")
	}
	start := time.Now()
	ls := &localSearch{w: w, opts: opts, n: w.Spec().Nodes, res: &LocalResult{}, msgIndex: map[msgKey]int32{}}
	for i := range opts.Properties {
		if p := &opts.Properties[i]; p.Kind == properties.Safety {
			ls.safety = append(ls.safety, p)
		}
	}
	st := &ls.res.Stats
	defer func() {
		st.Elapsed = time.Since(start)
		st.NodeStates = make([]int, ls.n)
		for i := range ls.states {
			st.NodeStates[i] = len(ls.states[i])
			st.TotalNodeStates += len(ls.states[i])
		}
		st.Messages = len(ls.msgs)
	}()

	ls.init = s0
	for _, p := range ls.safety {
		if err := p.CheckSafety(s0); err != nil {
			ls.res.Violation = &Violation{Property: p.Name, Kind: p.Kind, Message: err.Error()}
			return ls.res, nil
		}
	}
	ls.states = make([][]*lstate, ls.n)
	ls.index = make([]map[uint64]int32, ls.n)
	for i := range ls.n {
		l := w.LocalOf(s0, sim.NodeID(i))
		ls.states[i] = []*lstate{{loc: l}}
		ls.states[i][0].in = make([]bool, len(ls.safety))
		for pi, p := range ls.safety {
			ls.states[i][0].in[pi] = p.Filter == nil || p.Filter(sim.NodeID(i), l.Node)
		}
		ls.index[i] = map[uint64]int32{l.FP: 0}
	}
	for _, e := range s0.InFlight() {
		ls.addMsg(e.From, e.To, e.FP, e.Msg)
	}
	ls.total = ls.n

	for round := 1; round <= opts.Rounds; round++ {
		st.Rounds = round
		ls.held = false
		if err := ls.fixpoint(round); err != nil {
			return nil, err
		}
		if ls.res.Violation != nil {
			return ls.res, nil
		}
		// After MaxNodeStates the candidates found so far are still
		// verified: what a real run reaches is a finding all the same.
		if !ls.interrupted {
			if err := ls.reverify(); err != nil {
				return nil, err
			}
		}
		ls.res.HeldBack, ls.res.Undecided, ls.res.Refused = ls.held, ls.undecided, ls.refused
		if ls.res.Violation != nil || ls.stopped || ls.interrupted {
			ls.res.Stopped = ls.stopped || ls.interrupted
			return ls.res, nil
		}
		if !ls.held {
			break // the bound held nothing back: a larger one adds nothing
		}
	}
	// Complete: nothing held back by the round bound, and every
	// preliminary violation refuted (none left undecided by a budget).
	ls.res.Complete = !ls.held && !ls.undecided
	return ls.res, nil
}

func asHandlerPanic(err error) *sim.HandlerPanic {
	var hp *sim.HandlerPanic
	if errorsAs(err, &hp) {
		return hp
	}
	return nil
}

func (ls *localSearch) addMsg(from, to sim.NodeID, fp uint64, msg sim.Message) int32 {
	k := msgKey{from, to, fp}
	if i, ok := ls.msgIndex[k]; ok {
		return i
	}
	i := int32(len(ls.msgs))
	ls.msgs = append(ls.msgs, &imsg{from: from, to: to, fp: fp, msg: msg})
	ls.msgIndex[k] = i
	return i
}

// fixpoint applies every enabled local step until none is new: each
// message of I+ on every state of its destination, each state's local
// events while the state is under the round bound.
//
// A message may be delivered to a state any number of times: the set I+
// holds what was ever sent, and a real run may have sent it again. Such
// a repeated delivery (of a message already delivered on the first path
// to the state) counts toward the round bound like a local event, where
// it reaches a new state: without it, a node that counts the messages it
// gets would have infinitely many states.
func (ls *localSearch) fixpoint(bound int) error {
	w := ls.w
	ls.bound = bound
	// Retried at the start under the raised bound, and at the end: the
	// state they reach may have been found meanwhile by another path.
	retry := func() error {
		old := ls.deferred
		ls.deferred = nil
		for i, d := range old {
			m := ls.msgs[d.msg]
			ev := sim.Event{Kind: sim.Deliver, Node: m.to, Peer: m.from, Msg: m.fp}
			if err := ls.step(m.to, d.state, ev, d.msg); err != nil || ls.done() {
				ls.deferred = append(ls.deferred, old[i+1:]...)
				return err
			}
		}
		return nil
	}
	if err := retry(); err != nil || ls.done() {
		return err
	}
	defer func() {
		if len(ls.deferred) > 0 {
			ls.held = true
		}
	}()
	for progress := true; progress; {
		progress = false
		for id := range ls.n {
			for si := 0; si < len(ls.states[id]); si++ {
				s := ls.states[id][si]
				if s.tried {
					continue
				}
				ls.evbuf = w.LocalEvents(sim.NodeID(id), s.loc, ls.evbuf[:0])
				if len(ls.evbuf) > 0 && s.local >= bound {
					ls.held = true // for a later round
					continue
				}
				s.tried = true
				evs := slices.Clone(ls.evbuf)
				for _, ev := range evs {
					if err := ls.step(sim.NodeID(id), int32(si), ev, -1); err != nil || ls.done() {
						return err
					}
					progress = true
				}
			}
		}
		for mi := 0; mi < len(ls.msgs); mi++ {
			m := ls.msgs[mi]
			for m.tried < len(ls.states[m.to]) {
				si := m.tried
				m.tried++
				ev := sim.Event{Kind: sim.Deliver, Node: m.to, Peer: m.from, Msg: m.fp}
				if err := ls.step(m.to, int32(si), ev, int32(mi)); err != nil || ls.done() {
					return err
				}
				progress = true
			}
		}
	}
	return retry()
}

func (ls *localSearch) done() bool {
	if ls.res.Violation != nil || ls.stopped || ls.poll() {
		return true
	}
	if ls.total >= ls.opts.MaxNodeStates {
		ls.stopped = true
		return true
	}
	return false
}

// poll calls Stop every 256 calls and says whether it returned true
// (then or before). Every loop that can run long calls it once per step.
func (ls *localSearch) poll() bool {
	if ls.interrupted {
		return true
	}
	ls.polls++
	if ls.polls&255 == 0 && ls.opts.Stop != nil && ls.opts.Stop() {
		ls.interrupted = true
	}
	return ls.interrupted
}

// step applies ev to state si of node id, every value of its Choose calls
// in turn, and records what it reaches.
func (ls *localSearch) step(id sim.NodeID, si int32, ev sim.Event, consume int32) error {
	w := ls.w
	var msg sim.Message
	if consume >= 0 {
		msg = ls.msgs[consume].msg
	}
	var tape []int
	for {
		from := ls.states[id][si]
		next, err := w.ApplyLocal(id, from.loc, ev, msg, tape)
		ls.res.Stats.Transitions++
		if ls.opts.Progress != nil && ls.res.Stats.Transitions%8192 == 0 {
			st := ls.res.Stats
			st.TotalNodeStates, st.Messages = ls.total, len(ls.msgs)
			ls.opts.Progress(st)
		}
		info := w.Last()
		choices := slices.Clone(info.Choices)
		bounds := slices.Clone(info.Bounds)
		if err != nil {
			if asHandlerPanic(err) == nil {
				return err
			}
			// A panic in an invalid node state proves nothing: it is a
			// preliminary violation, verified with the others (the
			// panic reported is the one the real run gives).
			ls.res.Stats.Preliminary++
			if !ls.roomForPending() {
				return nil
			}
			ls.pending = append(ls.pending, pendingCheck{extra: &panicStep{node: id, step: sim.Step{Event: ev, Choices: choices}, consume: consume},
				targets: []target{{id, si}}, edges: -1, depth: from.depth + 1})
			nt, more := sim.NextTape(choices, bounds, tape)
			if !more {
				return nil
			}
			tape = slices.Clone(nt)
			continue
		}
		sent := make([]int32, len(info.Sent))
		for k, e := range info.Sent {
			sent[k] = ls.addMsg(e.From, e.To, e.FP, e.Msg)
		}
		p := pred{from: si, step: sim.Step{Event: ev, Choices: choices}, sent: sent, consume: consume}
		if idx, seen := ls.index[id][next.FP]; seen {
			t := ls.states[id][idx]
			same := func(q pred) bool { return samePred(q, p) }
			switch {
			case idx == si:
				if !slices.ContainsFunc(t.loops, same) {
					t.loops = append(t.loops, p)
				}
			case !slices.ContainsFunc(t.preds, same):
				t.preds = append(t.preds, p)
				from.succ = append(from.succ, edge{idx, p})
				ls.edges++
			}
		} else {
			ns := &lstate{loc: next, preds: []pred{p}, hist: from.hist, local: from.local, depth: from.depth + 1}
			if consume >= 0 {
				if i, in := slices.BinarySearch(from.hist, consume); !in {
					ns.hist = slices.Insert(slices.Clip(from.hist), i, consume)
				} else if ns.local++; from.local >= ls.bound {
					// Held back for a later round; the edge is not
					// recorded either, the step is applied again.
					ls.deferred = append(ls.deferred, delivery{consume, si})
					return nil
				}
			} else {
				ns.local++
			}
			idx := int32(len(ls.states[id]))
			ls.states[id] = append(ls.states[id], ns)
			from.succ = append(from.succ, edge{idx, p})
			ls.edges++
			ls.index[id][next.FP] = idx
			ls.total++
			if err := ls.checkSystem(id, idx); err != nil || ls.res.Violation != nil {
				return err
			}
		}
		nt, more := sim.NextTape(choices, bounds, tape)
		if !more {
			return nil
		}
		tape = slices.Clone(nt)
	}
}

func samePred(a, b pred) bool {
	return a.from == b.from && a.consume == b.consume && a.step.Event == b.step.Event && slices.Equal(a.step.Choices, b.step.Choices)
}

// checkSystem checks the safety properties on the system states that
// the new state si of node id takes part in. A property with a pairwise
// form is checked on pairs of node states, and a conflicting pair is a
// preliminary violation with the other nodes left free; otherwise every
// combination with stored states of the other nodes is built.
func (ls *localSearch) checkSystem(id sim.NodeID, si int32) (err error) {
	t0 := time.Now()
	defer func() { ls.res.Stats.Combine += time.Since(t0) }()
	s := ls.states[id][si]
	s.in = make([]bool, len(ls.safety))
	for pi, p := range ls.safety {
		s.in[pi] = p.Filter == nil || p.Filter(id, s.loc.Node)
	}
	for pi, p := range ls.safety {
		if !s.in[pi] || ls.interrupted {
			continue
		}
		if p.Pair == nil {
			if err := ls.combine(p, id, si); err != nil || ls.res.Violation != nil {
				return err
			}
			continue
		}
		if err := ls.pairs(pi, p, id, si); err != nil || ls.res.Violation != nil {
			return err
		}
	}
	return nil
}

// pairs checks the pairwise form of property p on node id's new state si
// against every stored state of the other nodes that passes its filter.
func (ls *localSearch) pairs(pi int, p *properties.Property, id sim.NodeID, si int32) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the pairwise form of property %s panicked: %v", p.Name, r)
		}
	}()
	s := ls.states[id][si]
	for other := range ls.n {
		if sim.NodeID(other) == id {
			continue
		}
		for oi, o := range ls.states[other] {
			if ls.poll() {
				return nil
			}
			if !o.in[pi] {
				continue
			}
			ls.res.Stats.Pairs++
			a, b := s.loc.Node, o.loc.Node
			if sim.NodeID(other) < id {
				a, b = b, a
			}
			if p.Pair(a, b) == nil {
				continue
			}
			ls.res.Stats.Preliminary++
			ls.check(p, []target{{id, si}, {sim.NodeID(other), int32(oi)}})
		}
	}
	return nil
}

// check records a preliminary violation. It is verified when the round's
// exploration is done: by then the node graphs hold every step a real run
// within the round's bound may need, and the shortest candidates can be
// verified first. (Verifying each as it comes spends the time on the
// many combinations no run reaches, before the states of a real one are
// even found.)
func (ls *localSearch) check(p *properties.Property, ts []target) error {
	d := 0
	for _, t := range ts {
		d += ls.states[t.node][t.idx].depth
	}
	if !ls.roomForPending() {
		return nil
	}
	ls.pending = append(ls.pending, pendingCheck{p: p, targets: ts, edges: -1, depth: d})
	return nil
}

// roomForPending says whether one more candidate fits: when the slice is
// full, appending doubles it, and the memory budget is asked first.
func (ls *localSearch) roomForPending() bool {
	if len(ls.pending) < cap(ls.pending) || ls.opts.Fits == nil {
		return true
	}
	if !ls.opts.Fits(int64(2*cap(ls.pending)+1) * int64(unsafe.Sizeof(pendingCheck{}))) {
		ls.interrupted = true
		return false
	}
	return true
}

// reverify verifies the preliminary violations found so far, all at
// once, if there are new ones or the node graphs grew since the last time.
// Every candidate is kept until a real run reaches it: one refuted now,
// by the summaries or by the search, may become real when a later round
// adds steps to the node states it pins.
func (ls *localSearch) reverify() error {
	if len(ls.pending) == 0 || (ls.verifiedPending == len(ls.pending) && ls.verifiedEdges == ls.edges) {
		return nil
	}
	ls.verifiedPending, ls.verifiedEdges = len(ls.pending), ls.edges
	ls.undecided, ls.refused = false, 0
	st := &ls.res.Stats
	// Refute what the message summaries can, without a search: those are
	// moved to the back, the plausible ones verified.
	sm := ls.summarize()
	if sm == nil {
		return nil // interrupted
	}
	kept := 0
	for i := range ls.pending {
		if ls.poll() {
			return nil
		}
		if ls.pending[i].plausible(sm) {
			ls.pending[kept], ls.pending[i] = ls.pending[i], ls.pending[kept]
			kept++
		}
	}
	st.Refuted = int64(len(ls.pending) - kept)
	st.Unsound = int64(len(ls.pending))
	plausible := ls.pending[:kept]
	if kept == 0 {
		return nil
	}
	// First the shortest candidates one by one, each node pinned to its
	// target: cheap and quick when the candidate is real. Then all of
	// them in one search.
	slices.SortStableFunc(plausible, func(a, b pendingCheck) int { return a.depth - b.depth })
	if ok, err := ls.quickChecks(plausible[:min(kept, ls.opts.QuickChecks)]); ok || err != nil || ls.interrupted {
		return err
	}
	_, err := ls.verifyAll(plausible)
	return err
}

// quickChecks verifies the candidates one by one, in order, each with
// QuickBudget steps, up to the first that is verified; a candidate
// verified before, with the graphs as they are now, is skipped.
//
// With workers, the next candidates are verified at once, one on each
// world, then counted in order as if one by one: those after the first
// that ends the checks (verified, stopped, failed) are dropped, uncounted,
// as if never run, and are stopped early once it has ended. The result
// and the statistics are then those of the candidates one by one, for
// any number of workers; only the time differs. Every verification runs
// on its own world and writes nothing the search shares (verify).
func (ls *localSearch) quickChecks(cands []pendingCheck) (bool, error) {
	worlds := append([]*sim.World{ls.w}, ls.opts.Workers...)
	var next []int // indices in cands
	for i := 0; i < len(cands); {
		next = next[:0]
		for ; i < len(cands) && len(next) < len(worlds); i++ {
			if cands[i].edges != ls.edges {
				next = append(next, i)
			}
		}
		t0 := time.Now()
		outs := ls.verifyEach(worlds, cands, next)
		ls.res.Stats.Verify += time.Since(t0)
		for k, ci := range next {
			cands[ci].edges = ls.edges
			if ok, err := ls.count(outs[k]); ok || err != nil || ls.interrupted {
				return ok, err
			}
		}
	}
	return false, nil
}

// verifyEach verifies cands[next[k]] on worlds[k]: on this goroutine
// when there is one, else each on a goroutine of its own. The goroutines
// ask Stop one at a time, each every 256 of its own steps (Stop need not
// be safe to call at once), and a verification after one that has ended
// the checks is stopped: quickChecks drops it.
func (ls *localSearch) verifyEach(worlds []*sim.World, cands []pendingCheck, next []int) []outcome {
	outs := make([]outcome, len(next))
	if len(next) == 1 {
		pc := &cands[next[0]]
		outs[0] = ls.verify(ls.w, ls.poll, pc.p, pc.targets, pc.extra, ls.opts.QuickBudget)
		return outs
	}
	var (
		mu      sync.Mutex // held while Stop runs
		stopped atomic.Bool
		first   atomic.Int64 // the first k whose outcome ends the checks
		wg      sync.WaitGroup
	)
	first.Store(int64(len(next)))
	for k, ci := range next {
		wg.Add(1)
		go func() {
			defer wg.Done()
			polls := 0
			poll := func() bool {
				if first.Load() < int64(k) {
					return true // dropped whatever it finds
				}
				polls++
				if polls&255 == 0 && ls.opts.Stop != nil && !stopped.Load() {
					mu.Lock()
					if !stopped.Load() && ls.opts.Stop() {
						stopped.Store(true)
					}
					mu.Unlock()
				}
				return stopped.Load()
			}
			pc := &cands[ci]
			o := ls.verify(worlds[k], poll, pc.p, pc.targets, pc.extra, ls.opts.QuickBudget)
			outs[k] = o
			for o.ends() {
				f := first.Load()
				if f <= int64(k) || first.CompareAndSwap(f, int64(k)) {
					break
				}
			}
		}()
	}
	wg.Wait()
	return outs
}

// combine builds every system state of node id's state si with stored
// states of the other nodes, and checks p on it.
func (ls *localSearch) combine(p *properties.Property, id sim.NodeID, si int32) error {
	pick := make([]int32, ls.n)
	nodes := make([]sim.Node, ls.n)
	var rec func(i int) error
	rec = func(i int) error {
		if i == ls.n {
			if ls.poll() {
				return nil
			}
			ls.res.Stats.SystemStates++
			for k := range ls.n {
				nodes[k] = ls.states[k][pick[k]].loc.Node
			}
			if err := p.CheckSafety(sim.NewState(nodes)); err == nil {
				return nil
			}
			ls.res.Stats.Preliminary++
			ts := make([]target, ls.n)
			for k := range ls.n {
				ts[k] = target{sim.NodeID(k), pick[k]}
			}
			return ls.check(p, ts)
		}
		if sim.NodeID(i) == id {
			pick[i] = si
			return rec(i + 1)
		}
		for k := range ls.states[i] {
			pick[i] = int32(k)
			if err := rec(i + 1); err != nil || ls.res.Violation != nil || ls.interrupted {
				return err
			}
		}
		return nil
	}
	return rec(0)
}
