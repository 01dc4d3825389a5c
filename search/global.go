package search

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// Options bound and observe a search. Zero values take the defaults.
type Options struct {
	// Depth is the depth bound: no path is extended past this many steps
	// (default 20).
	Depth int
	// MaxStates stops the search after this many distinct states (0: no
	// limit). A search stopped this way is not complete.
	MaxStates int
	// Properties are checked: safety on every new state, liveness to end
	// paths and to sort out the periphery.
	Properties []properties.Property
	// Start is the state the search starts from (nil: the world's initial
	// state). Paths in the result start there.
	Start *sim.State
	// Progress, when set, is called about every ProgressEvery transitions.
	Progress      func(Stats)
	ProgressEvery int64
	// Trail, when set, always holds the path to the step being applied, so
	// that a watchdog can say where a handler that never returns was called.
	Trail *Trail
	// Stop, when it returns true, ends the search early (not complete).
	Stop func() bool
	// Target, when not 0, ends the search at the first state with this
	// fingerprint: Result.TargetPath is the path to it.
	Target uint64
}

// maxDeadEdges bounds the transitions the search keeps to find closed
// dead regions (16 bytes each); past it, it finds none.
const maxDeadEdges = 1 << 22

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
	States      int64         // distinct states (fingerprints) seen
	Transitions int64         // steps applied, including those to states already seen
	MaxDepth    int           // deepest step taken
	Periphery   int           // distinct non-live states at the depth bound
	Live        int64         // distinct live states reached
	Elapsed     time.Duration // wall time of the search
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
	// Panic is set when a handler panicked.
	Panic *sim.HandlerPanic
	// PropertyError is set when the property itself panicked.
	PropertyError *properties.Error
}

// PanicProperty names the built-in safety property "no handler panics".
const PanicProperty = "no-panic"

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
	State *sim.State
}

// Result is what a search found.
type Result struct {
	// Violation is the first violation found, or nil.
	Violation *Violation
	// Periphery holds the non-live states at the depth bound, each once.
	Periphery []Frontier
	// Complete says the search saw every state reachable within the bounds:
	// it was not cut short by MaxStates, Stop or a violation.
	Complete bool
	// Exhausted says no path was cut off by the depth bound: the whole
	// reachable state space was explored.
	Exhausted bool
	// Dead, when not 0, is the fingerprint of a state that is not live and
	// from which the search saw every reachable state, none of them live
	// and none at the depth bound: dead for certain, though something can
	// always happen (a cycle of states that are not live). Walks from the
	// periphery never start there. Options.Target finds a path to it.
	Dead       uint64
	TargetPath sim.Path
	Stats      Stats
}

// A Trail is the path to the step a search is applying.
type Trail struct {
	Path  sim.Path
	Event sim.Event
	Tape  []int
}

// A path through the search is in one of three modes, which decide what
// its states are for. Safety is checked on every state in every mode; the
// modes only matter to the liveness classification, which follows MaceMC:
// a path that recovers (reaches a live state after one that was not) has
// shown what it had to, so none of its later states joins the periphery.
type mode uint8

const (
	liveAllAlong mode = iota // every state so far live (from a live prefix)
	dipped                   // went through a state that was not live, not recovered yet
	recovered                // dipped, then reached a live state
)

// next returns the mode of a successor that is live or not.
func (m mode) next(live bool) mode {
	switch {
	case m == recovered:
		return recovered
	case !live:
		return dipped
	case m == dipped:
		return recovered
	}
	return liveAllAlong
}

// seen is what the visited set keeps of a state: the smallest depth at
// which it was expanded in its strong mode (liveAllAlong if it is live,
// dipped if not) and in recovered mode, or -1. Expanding a state in its
// strong mode explores every successor recovered mode would, and
// classifies them too, so it makes the recovered expansion needless.
type seen struct{ strong, weak int32 }

type frame struct {
	state  *sim.State
	mode   mode
	events []sim.Event
	next   int   // index of the event to try next
	tape   []int // the choices to give that event
}

// Global runs a bounded depth-first search over global states (node states,
// network, timers, failure counters) from the start state, with a visited
// set of fingerprints. A state reached again by a shorter path is explored
// again, so the result does not depend on which path reached it first.
// Safety is checked on every state reachable within the bound; a path that
// recovers goes on for safety, but its states are not periphery.
//
// The error reports a failure of the tool or of the model (a state that
// cannot be hashed); violations are in the result.
func Global(w *sim.World, opts Options) (out *Result, err error) {
	opts.fill()
	start := time.Now()
	res := &Result{}
	var path sim.Path
	// A liveness property that panics ends the search where it was
	// evaluated: path leads to that state.
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*properties.Error)
			if !ok {
				panic(r)
			}
			res.Violation = &Violation{Property: pe.Property, Kind: properties.Liveness, Message: pe.Error(), Path: path.Clone(), PropertyError: pe}
			res.Stats.Periphery = len(res.Periphery)
			out, err = res, nil
		}
	}()
	st := &res.Stats
	defer func() {
		st.Elapsed = time.Since(start)
		st.CollisionChance = collisionChance(st.States, st.Transitions)
	}()

	var safety, liveness []*properties.Property
	for i := range opts.Properties {
		p := &opts.Properties[i]
		if p.Kind == properties.Safety {
			safety = append(safety, p)
		} else {
			liveness = append(liveness, p)
		}
	}
	isLive := func(s *sim.State) bool {
		if len(liveness) == 0 {
			return false
		}
		for _, p := range liveness {
			if !p.IsLive(s) {
				return false
			}
		}
		return true
	}

	s0 := opts.Start
	if s0 == nil {
		var err error
		s0, err = w.Initial()
		if err != nil {
			var hp *sim.HandlerPanic
			if errors.As(err, &hp) {
				res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Panic: hp}
				return res, nil
			}
			return nil, err
		}
	}

	visited := newVisitedSet(0)
	periphery := map[uint64]bool{}

	violate := func(p *properties.Property, err error) {
		res.Violation = &Violation{Property: p.Name, Kind: p.Kind, Message: err.Error(), Path: path.Clone()}
		errors.As(err, &res.Violation.PropertyError)
	}
	// quiescent reports a state where nothing can happen and some
	// liveness property does not hold: it is dead for certain.
	quiescent := func(s *sim.State) bool {
		var notLive []string
		for _, p := range liveness {
			if !p.IsLive(s) {
				notLive = append(notLive, p.Name)
			}
		}
		if len(notLive) == 0 {
			return false
		}
		res.Violation = &Violation{Property: QuiescentProperty, Kind: properties.Liveness,
			Message: QuiescentMessage(notLive), Path: path.Clone()}
		return true
	}

	// The transitions out of states expanded in dipped mode, and the
	// states that have a future the search did not see all of (live ones,
	// the periphery), to find states whose every future it saw, none live.
	var edges [][2]uint64
	good := map[uint64]bool{}
	if len(liveness) > 0 {
		edges = make([][2]uint64, 0, 1024)
	}

	var stack []frame
	var spare [][]sim.Event // event buffers of popped frames, reused
	exhausted := true
	// visit expands a state first reached (or reached by a shorter path,
	// or in a stronger mode) at depth d: it pushes a frame, or at the depth
	// bound records a periphery state. It returns true when the search
	// ends with a violation.
	visit := func(s *sim.State, d int, live bool, m mode) (stop bool) {
		var buf []sim.Event
		if n := len(spare); n > 0 {
			buf, spare = spare[n-1][:0], spare[:n-1]
		}
		evs := w.Enabled(s, buf)
		if len(evs) == 0 {
			spare = append(spare, evs)
			return !live && quiescent(s)
		}
		if d >= opts.Depth {
			spare = append(spare, evs)
			exhausted = false
			if m == dipped {
				if fp := s.Fingerprint(); !periphery[fp] {
					periphery[fp] = true
					res.Periphery = append(res.Periphery, Frontier{Path: path.Clone(), State: s})
				}
			}
			return false
		}
		stack = append(stack, frame{state: s, events: evs, mode: m})
		return false
	}
	// expand says whether a state reached at depth d in mode m is to be
	// expanded, and records that in v, its entry in the visited set.
	expand := func(v *seen, d int, m mode) bool {
		d32 := int32(d)
		strongDone := v.strong >= 0 && v.strong <= d32
		if m == recovered {
			if strongDone || (v.weak >= 0 && v.weak <= d32) {
				return false
			}
			v.weak = d32
		} else {
			if strongDone {
				return false
			}
			v.strong = d32
		}
		return true
	}
	for _, p := range safety {
		if err := p.CheckSafety(s0); err != nil {
			violate(p, err)
			return res, nil
		}
	}
	live0 := isLive(s0)
	m0 := liveAllAlong
	if !live0 {
		m0 = dipped
	}
	v0, _ := visited.upsert(s0.Fingerprint(), seen{-1, -1})
	expand(v0, 0, m0)
	st.States = 1
	if live0 {
		st.Live++
	}
	if visit(s0, 0, live0, m0) {
		return res, nil
	}

	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next >= len(top.events) {
			spare = append(spare, top.events)
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				path = path[:len(path)-1]
			}
			continue
		}
		ev := top.events[top.next]
		if t := opts.Trail; t != nil {
			t.Path, t.Event, t.Tape = path, ev, top.tape
		}
		next, err := w.Apply(top.state, ev, top.tape)
		info := w.Last()
		step := sim.Step{Event: ev, Choices: append([]int(nil), info.Choices...)}
		if nt, more := sim.NextTape(info.Choices, info.Bounds, top.tape); more {
			top.tape = nt
		} else {
			top.next++
			top.tape = top.tape[:0]
		}
		st.Transitions++
		if err != nil {
			var hp *sim.HandlerPanic
			if errors.As(err, &hp) {
				path = append(path, step)
				res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Path: path.Clone(), Panic: hp}
				res.Stats.Periphery = len(res.Periphery)
				return res, nil
			}
			return nil, &sim.StepError{Index: len(path), Event: ev, Err: err}
		}
		d := len(stack) // depth of next, counted from the start state
		if d > st.MaxDepth {
			st.MaxDepth = d
		}
		if opts.Progress != nil && st.Transitions%opts.ProgressEvery == 0 {
			st.Periphery = len(res.Periphery)
			st.Elapsed = time.Since(start)
			st.CollisionChance = collisionChance(st.States, st.Transitions)
			opts.Progress(*st)
		}
		path = append(path, step)
		fp := next.Fingerprint()
		if opts.Target != 0 && fp == opts.Target {
			res.TargetPath = path.Clone()
			st.Periphery = len(res.Periphery)
			return res, nil
		}
		// One lookup serves both: v stays valid until the next upsert.
		v, found := visited.upsert(fp, seen{-1, -1})
		if !found {
			// Safety first: a state that breaks a safety property is
			// that violation, whatever the liveness properties make of it.
			for _, p := range safety {
				if err := p.CheckSafety(next); err != nil {
					violate(p, err)
					st.Periphery = len(res.Periphery)
					return res, nil
				}
			}
		}
		live := isLive(next)
		if top.mode == dipped && edges != nil {
			if len(edges) < maxDeadEdges {
				edges = append(edges, [2]uint64{top.state.Fingerprint(), fp})
				if live {
					good[fp] = true
				}
			} else {
				edges = nil // too many to keep: find no closed dead region
			}
		}
		m := top.mode.next(live)
		ok, first := expand(v, d, m), !found
		if !ok {
			path = path[:len(path)-1]
			continue
		}
		if first {
			st.States++
			if live {
				st.Live++
			}
		}
		n := len(stack)
		if visit(next, d, live, m) {
			st.Periphery = len(res.Periphery)
			return res, nil
		}
		if len(stack) == n {
			path = path[:len(path)-1] // not expanded
		}
		if (opts.MaxStates > 0 && st.States >= int64(opts.MaxStates)) || (opts.Stop != nil && st.Transitions%1024 == 0 && opts.Stop()) {
			st.Periphery = len(res.Periphery)
			return res, nil
		}
	}
	st.Periphery = len(res.Periphery)
	res.Complete = true
	res.Exhausted = exhausted
	if edges != nil {
		for fp := range periphery {
			good[fp] = true
		}
		res.Dead = closedDead(edges, good)
	}
	return res, nil
}

// closedDead returns the first state (in the order the search expanded
// them) that is the source of edges and reaches no good state, or 0.
// Every source was expanded in full below the depth bound, so its
// successors are all among the edges' targets: one that reaches no good
// state has no future the search did not see, and none of it is live.
func closedDead(edges [][2]uint64, good map[uint64]bool) uint64 {
	back := slices.Clone(edges)
	slices.SortFunc(back, func(a, b [2]uint64) int { return cmp.Compare(a[1], b[1]) })
	reaches := make(map[uint64]bool, len(good))
	queue := make([]uint64, 0, len(good))
	for fp := range good {
		reaches[fp] = true
		queue = append(queue, fp)
	}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		i, _ := slices.BinarySearchFunc(back, v, func(e [2]uint64, v uint64) int { return cmp.Compare(e[1], v) })
		for ; i < len(back) && back[i][1] == v; i++ {
			if u := back[i][0]; !reaches[u] {
				reaches[u] = true
				queue = append(queue, u)
			}
		}
	}
	for _, e := range edges {
		if !reaches[e[0]] {
			return e[0]
		}
	}
	return 0
}
