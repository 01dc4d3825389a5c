package critical

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// Defaults of the test that decides a state is dead (Test, DeadTest).
const (
	// DeadWalks walks that all fail bound the chance that one walk
	// recovers below 1% with 95% confidence: 0.99^300 < 0.05.
	DeadWalks = 300
	// DeadStates bounds the breadth-first search of the dead test.
	DeadStates = 20000
	// ProbeStates bounds the breadth-first search of the cheaper probes
	// that look for the boundary before the dead test confirms it.
	ProbeStates = 1000
)

// A Test says how hard Recovers looks for a way from a state to a live
// one: first a breadth-first search of up to States distinct states and
// WalkDepth steps (the same depth budget as the walks', so that a probe
// near the end of its budget does not look further than its walks), then
// Walks random walks of WalkDepth steps each. A live state found by either
// proves the state is not dead; none found is evidence, of the strength
// the Evidence says, that it is.
type Test struct {
	States    int
	Walks     int
	WalkDepth int
	// Chooser picks walk events (default walk.DefaultWeights).
	Chooser walk.Chooser
	// Seed seeds the walks: walk j gets walk.Seed(Seed, j), so the same
	// test from the same state gives the same evidence.
	Seed uint64
	// Safety, when set, is checked on every state the search and the walks
	// reach: a violation is a *Finding. Safety and the live predicate may
	// panic with a *properties.Error (a property that panicked): that is a
	// *Finding too.
	Safety func(*sim.State) (property, message string)
	// Trail, when set, says where the test is (its Base is the caller's).
	Trail *walk.Trail
	// Pool, when set, runs the walks on its worlds too, at once; the
	// evidence is the same as on the caller's world alone.
	Pool *Pool
}

// A Pool is worlds of the caller's spec, each with its goroutine's trail,
// on which Recovers runs a test's walks beside the caller's world: walk j
// has its seed whatever world runs it, and the evidence counts the walks
// up to the first that decides, as one world taking them in order would,
// so the result does not depend on the pool.
type Pool struct {
	Worlds []*sim.World
	// Trails[i], when set, is where Worlds[i]'s walk is, for a watchdog;
	// each walk's Init and Base are the test's Trail's.
	Trails []*walk.Trail
}

// DeadTest is the test a dead decision rests on: DeadStates states of
// breadth-first search, then DeadWalks walks of depth steps.
func DeadTest(depth int, chooser walk.Chooser, seed uint64) Test {
	return Test{States: DeadStates, Walks: DeadWalks, WalkDepth: depth, Chooser: chooser, Seed: seed}
}

// Evidence is what a Test saw from one state.
type Evidence struct {
	// Live says a live state was reached: the state is not dead. Path
	// leads there from the tested state; ByWalk says a walk found it
	// (otherwise the search did, and no live state is nearer).
	Live   bool
	Path   sim.Path
	ByWalk bool
	// SearchDepth: every state within this many steps was searched.
	// SearchStates counts the distinct states the search saw, and
	// SearchAll says that was every reachable state: a state that is not
	// Live is then dead for certain.
	SearchDepth  int
	SearchStates int
	SearchAll    bool
	// Stuck says no event can happen in the state tested: it is dead for
	// certain, and it stays as it is for ever (SearchAll, of 1 state).
	Stuck bool
	// Walks is the number of walks run (the one that recovered included),
	// each of up to WalkDepth steps.
	Walks     int
	WalkDepth int
	// Steps counts the simulator steps the test took.
	Steps int64
}

// A Finding is a safety violation, a handler panic or a property that
// panicked, met while testing: a bug of its own, found on the way. Path
// shows it from the state tested (Recovers) or from the start of the
// searched path (Search).
type Finding struct {
	Path sim.Path
	// Property is the safety property violated (empty for a handler panic,
	// which is Panic, and for a property that panicked, which is
	// PropertyError), and Message what it said.
	Property, Message string
	Panic             *sim.HandlerPanic
	PropertyError     *properties.Error
}

func (f *Finding) Error() string {
	switch {
	case f.Panic != nil:
		return f.Panic.Error()
	case f.PropertyError != nil:
		return f.PropertyError.Error()
	}
	return fmt.Sprintf("%s: %s", f.Property, f.Message)
}

// Unwrap gives the handler panic or the property error, if that is what
// was found.
func (f *Finding) Unwrap() error {
	switch {
	case f.Panic != nil:
		return f.Panic
	case f.PropertyError != nil:
		return f.PropertyError
	}
	return nil
}

// prefixed returns err with p put before a Finding's path.
func prefixed(err error, p sim.Path) error {
	var f *Finding
	if errors.As(err, &f) {
		g := *f
		g.Path = append(p.Clone(), f.Path...)
		return &g
	}
	return err
}

// finding makes a Finding of a handler panic or a property error, or
// returns err.
func finding(err error, p sim.Path) error {
	var hp *sim.HandlerPanic
	if errors.As(err, &hp) {
		return &Finding{Path: p, Panic: hp, Message: hp.Error()}
	}
	var pe *properties.Error
	if errors.As(err, &pe) {
		return &Finding{Path: p, PropertyError: pe, Message: pe.Error()}
	}
	return err
}

// catch turns a property's panic (a *properties.Error) into a Finding at
// the path at gives; it is deferred, with err the caller's result.
func catch(err *error, at func() sim.Path) {
	if r := recover(); r != nil {
		pe, ok := r.(*properties.Error)
		if !ok {
			panic(r)
		}
		*err = &Finding{Path: at(), PropertyError: pe, Message: pe.Error()}
	}
}

// Recovers runs test t from s: is a live state reachable? The error is a
// *Finding (a safety violation, a handler panic or a property error on the
// way), or a failure of the model (a state that cannot be hashed).
func Recovers(w *sim.World, s *sim.State, live func(*sim.State) bool, t Test) (ev *Evidence, err error) {
	ev = &Evidence{WalkDepth: t.WalkDepth}
	defer catch(&err, func() sim.Path { return nil })
	if live(s) {
		ev.Live = true
		return ev, nil
	}
	if t.States > 0 {
		if err := bfs(w, s, live, t, ev); err != nil || ev.Live || ev.SearchAll {
			return ev, err
		}
	}
	chooser := t.Chooser
	if chooser == nil {
		wt := walk.DefaultWeights
		chooser = &wt
	}
	if t.Pool != nil && len(t.Pool.Worlds) > 0 && t.Walks > 1 {
		return ev, poolWalks(w, s, live, chooser, t, ev)
	}
	wk := walk.New(w, live, chooser, 0)
	wk.Safety, wk.Trail, wk.Reuse = t.Safety, t.Trail, true
	defer func() { ev.Steps += wk.Steps }()
	for j := range t.Walks {
		ev.Walks++
		wk.Reseed(walk.Seed(t.Seed, uint64(j)))
		r, err := wk.Walk(s, t.WalkDepth, true, true)
		if err != nil {
			return ev, finding(err, r.Path.Clone())
		}
		if r.Violated != "" {
			return ev, &Finding{Path: r.Path.Clone(), Property: r.Violated, Message: r.Message}
		}
		if r.LiveAt >= 0 {
			ev.Live, ev.ByWalk, ev.Path = true, true, r.Path.Clone()
			return ev, nil
		}
	}
	return ev, nil
}

// A bfsNode is a state the search reached: its parent's index and the step
// from there. States themselves are kept only for the level being expanded
// and the next.
type bfsNode struct {
	parent int32
	step   sim.Step
}

// bfs searches breadth-first from s for a live state, level by level,
// until it has seen t.States distinct states, every state within
// t.WalkDepth steps, or every reachable one.
func bfs(w *sim.World, s *sim.State, live func(*sim.State) bool, t Test, ev *Evidence) (err error) {
	saved := w.Chooser
	w.Chooser = nil // Choose answers come from the tapes: every answer is tried
	defer func() { w.Chooser = saved }()
	nodes := []bfsNode{{parent: -1}}
	visited := map[uint64]struct{}{s.Fingerprint(): {}}
	pathTo := func(i int32) sim.Path {
		var p sim.Path
		for ; i > 0; i = nodes[i].parent {
			p = append(p, nodes[i].step)
		}
		for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
			p[a], p[b] = p[b], p[a]
		}
		return p
	}
	at := int32(0) // the node whose properties are being evaluated
	defer catch(&err, func() sim.Path { return pathTo(at) })
	type entry struct {
		idx   int32
		state *sim.State
	}
	level := []entry{{0, s}}
	var evs []sim.Event
	var tape []int
	for depth := 0; len(level) > 0; depth++ {
		if t.WalkDepth > 0 && depth >= t.WalkDepth {
			ev.SearchDepth, ev.SearchStates = depth, len(nodes)
			return nil
		}
		var next []entry
		for _, e := range level {
			var base sim.Path
			if t.Trail != nil {
				base = pathTo(e.idx)
			}
			evs = w.Enabled(e.state, evs[:0])
			ev.Stuck = depth == 0 && len(evs) == 0
			for _, event := range evs {
				tape = tape[:0]
				for more := true; more; {
					if t.Trail != nil {
						// The path is all there is to the step: no walk to
						// walk again by its seed.
						*t.Trail = walk.Trail{Init: t.Trail.Init, Base: t.Trail.Base, Path: base, Event: event, Steps: len(base)}
					}
					n, err := w.Apply(e.state, event, tape)
					ev.Steps++
					info := w.Last()
					step := sim.Step{Event: event, Choices: append([]int(nil), info.Choices...)}
					tape, more = sim.NextTape(info.Choices, info.Bounds, tape)
					if err != nil {
						return finding(&sim.StepError{Index: depth, Event: event, Err: err}, append(pathTo(e.idx), step))
					}
					fp := n.Fingerprint()
					if _, seen := visited[fp]; seen {
						continue
					}
					visited[fp] = struct{}{}
					nodes = append(nodes, bfsNode{parent: e.idx, step: step})
					idx := int32(len(nodes) - 1)
					at = idx
					if t.Safety != nil {
						if prop, msg := t.Safety(n); prop != "" {
							return &Finding{Path: pathTo(idx), Property: prop, Message: msg}
						}
					}
					if live(n) {
						ev.Live, ev.Path, ev.SearchStates = true, pathTo(idx), len(nodes)
						ev.SearchDepth = depth // every level before this one was searched in full
						return nil
					}
					if len(nodes) >= t.States {
						ev.SearchDepth, ev.SearchStates = depth, len(nodes)
						return nil
					}
					next = append(next, entry{idx, n})
				}
			}
		}
		level = next
		ev.SearchDepth = depth + 1
	}
	ev.SearchStates, ev.SearchAll = len(nodes), true
	return nil
}

// A pooled walk's outcome, kept until the walks before it are known.
type pooled struct {
	path              sim.Path
	err               error
	property, message string
	live              bool
	steps             int64
}

// poolWalks runs t's walks from s on w and t.Pool's worlds at once, then
// reads them in order as Recovers' loop does: the first walk that recovers
// or runs into a finding decides, and the walks after it, which ran only
// because they were under way, count for nothing.
func poolWalks(w *sim.World, s *sim.State, live func(*sim.State) bool, chooser walk.Chooser, t Test, ev *Evidence) error {
	worlds := append([]*sim.World{w}, t.Pool.Worlds...)
	outs := make([]pooled, t.Walks)
	var next, decided atomic.Int64
	decided.Store(int64(t.Walks))
	var wg sync.WaitGroup
	for g, x := range worlds {
		wk := walk.New(x, live, chooser, 0)
		wk.Safety = t.Safety
		switch {
		case g == 0:
			wk.Trail = t.Trail
		case g-1 < len(t.Pool.Trails) && t.Pool.Trails[g-1] != nil:
			wk.Trail = t.Pool.Trails[g-1]
			if t.Trail != nil {
				wk.Trail.Init, wk.Trail.Base = t.Trail.Init, t.Trail.Base
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := next.Add(1) - 1
				if j >= int64(t.Walks) || j > decided.Load() {
					return
				}
				before := wk.Steps
				wk.Reseed(walk.Seed(t.Seed, uint64(j)))
				r, err := wk.Walk(s, t.WalkDepth, true, true)
				out := pooled{err: err, steps: wk.Steps - before}
				if r != nil {
					out.path, out.property, out.message, out.live = r.Path.Clone(), r.Violated, r.Message, r.LiveAt >= 0
				}
				outs[j] = out
				if err != nil || out.property != "" || out.live {
					for d := decided.Load(); j < d && !decided.CompareAndSwap(d, j); d = decided.Load() {
					}
				}
			}
		}()
	}
	wg.Wait()
	for j := range outs {
		o := &outs[j]
		ev.Walks++
		ev.Steps += o.steps
		switch {
		case o.err != nil:
			return finding(o.err, o.path)
		case o.property != "":
			return &Finding{Path: o.path, Property: o.property, Message: o.message}
		case o.live:
			ev.Live, ev.ByWalk, ev.Path = true, true, o.path
			return nil
		}
	}
	return nil
}
