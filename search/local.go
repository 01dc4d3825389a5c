package search

import (
	"fmt"
	"slices"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// LocalOptions bound a local search. Zero values take the defaults.
type LocalOptions struct {
	// Rounds is the largest number of local events (timers, driver calls)
	// one node may take on a path; the search raises the bound round by
	// round from 1 (default 8).
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
	Stop        func() bool
	// Progress, when set, is called now and then with the statistics so
	// far (node states not yet added up).
	Progress func(LocalStats)
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
	// Complete says the bounded space was exhausted: no node state was
	// left unexplored and no local event was held back by the round bound.
	Complete bool
	// Stopped says the search was stopped by MaxNodeStates or Stop.
	Stopped bool
	Stats   LocalStats
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
	succ  []edge
	hist  []int32 // I+ indices of messages delivered on the first path here, sorted
	local int     // local events on the first path here
	depth int     // steps on the first path here
	tried bool    // its local events have been applied
	in    []bool  // per safety property: passes its filter
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
	stopped  bool
	held     bool // a local event was held back by the round bound
	// pending are preliminary violations that failed verification: the
	// node graphs grow, so each round ends by verifying them again.
	pending []pendingCheck
	edges   int // steps between distinct node states recorded
	// the pending count and graph size at the last verification
	verifiedPending, verifiedEdges int
}

// A pendingCheck is a preliminary violation: property p, with the given
// nodes pinned to the given states (the others free), and the size of
// the graphs when it was last verified.
type pendingCheck struct {
	p       *properties.Property
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
// inject failures. Messages are kept as a set: a node that sends the same
// message to the same node twice adds it once (the duplicate limit is 0),
// and a message is not delivered again to a state whose first path
// already delivered it.
func Local(w *sim.World, opts LocalOptions) (*LocalResult, error) {
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
	if b.Resets > 0 || b.Drops > 0 || b.Errors > 0 {
		return nil, fmt.Errorf("local mode does not inject failures: resets, drops and socket errors must be 0 (use --mode global)")
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

	s0, err := w.Initial()
	if err != nil {
		if hp := asHandlerPanic(err); hp != nil {
			ls.res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Panic: hp}
			return ls.res, nil
		}
		return nil, err
	}
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
		if err := ls.reverify(); err != nil {
			return nil, err
		}
		if ls.res.Violation != nil || ls.stopped {
			ls.res.Stopped = ls.stopped
			return ls.res, nil
		}
		if !ls.held {
			break // the bound held nothing back: a larger one adds nothing
		}
	}
	// Complete: nothing held back by the round bound, and every
	// preliminary violation refuted (none left undecided by a budget).
	ls.res.Complete = !ls.held && ls.res.Stats.GaveUp == 0
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
func (ls *localSearch) fixpoint(bound int) error {
	w := ls.w
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
				s := ls.states[m.to][si]
				if _, in := slices.BinarySearch(s.hist, int32(mi)); in {
					continue
				}
				ev := sim.Event{Kind: sim.Deliver, Node: m.to, Peer: m.from, Msg: m.fp}
				if err := ls.step(m.to, int32(si), ev, int32(mi)); err != nil || ls.done() {
					return err
				}
				progress = true
			}
		}
	}
	return nil
}

func (ls *localSearch) done() bool {
	if ls.res.Violation != nil {
		return true
	}
	if ls.total >= ls.opts.MaxNodeStates || (ls.opts.Stop != nil && ls.opts.Stop()) {
		ls.stopped = true
		return true
	}
	return false
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
			if hp := asHandlerPanic(err); hp != nil {
				// A panic in an invalid node state proves nothing; verify
				// that a real run reaches the state it panicked in.
				return ls.verifyPanic(id, si, sim.Step{Event: ev, Choices: choices}, hp)
			}
			return err
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
				ns.hist = slices.Clone(from.hist)
				i, _ := slices.BinarySearch(ns.hist, consume)
				ns.hist = slices.Insert(ns.hist, i, consume)
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
		if !s.in[pi] {
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
	ls.pending = append(ls.pending, pendingCheck{p: p, targets: ts, edges: -1, depth: d})
	return nil
}

// reverify verifies the preliminary violations found so far, all at
// once, if there are new ones or the node graphs grew since the last time.
func (ls *localSearch) reverify() error {
	if len(ls.pending) == 0 || (ls.verifiedPending == len(ls.pending) && ls.verifiedEdges == ls.edges) {
		return nil
	}
	ls.verifiedPending, ls.verifiedEdges = len(ls.pending), ls.edges
	// Refute what the message summaries can, without a search.
	sm := ls.summarize()
	kept := ls.pending[:0]
	for _, pc := range ls.pending {
		if pc.plausible(sm) {
			kept = append(kept, pc)
		} else {
			ls.res.Stats.Refuted++
			ls.res.Stats.Unsound++
		}
	}
	ls.pending = kept
	ls.verifiedPending = len(kept)
	if len(kept) == 0 {
		return nil
	}
	// First the shortest candidates one by one, each node pinned to its
	// target: cheap and quick when the candidate is real. Then all of
	// them in one search.
	slices.SortStableFunc(ls.pending, func(a, b pendingCheck) int { return a.depth - b.depth })
	for i := range ls.pending[:min(len(ls.pending), ls.opts.QuickChecks)] {
		pc := &ls.pending[i]
		if pc.edges == ls.edges {
			continue
		}
		pc.edges = ls.edges
		if ok, err := ls.verify(pc.p, pc.targets, nil, ls.opts.QuickBudget); ok || err != nil {
			return err
		}
	}
	_, err := ls.verifyAll()
	return err
}

// combine builds every system state of node id's state si with stored
// states of the other nodes, and checks p on it.
func (ls *localSearch) combine(p *properties.Property, id sim.NodeID, si int32) error {
	pick := make([]int32, ls.n)
	nodes := make([]sim.Node, ls.n)
	var rec func(i int) error
	rec = func(i int) error {
		if i == ls.n {
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
			if err := rec(i + 1); err != nil || ls.res.Violation != nil {
				return err
			}
		}
		return nil
	}
	return rec(0)
}
