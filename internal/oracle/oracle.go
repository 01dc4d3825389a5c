// Package oracle is a plain breadth-first search of the full reachable
// state space of a world, the reference the randomized cross-check holds
// livecheck's search modes to. It shares no code with package search: it
// keys its visited set on full state dumps (never on fingerprints, so a
// hashing bug cannot hide a state), never ends a path early (not at a
// violation, not at a live state, not at a depth bound), and enumerates
// Choose values itself. Only the simulator (sim.World) is shared, with
// its step cache off: every step runs its handlers, so that a cached
// answer the search takes (by the node's fingerprint) is held to a run.
// Reaches answers, by the same search from any state, whether a live
// state is reachable: the truth that the liveness phase's "dead" claims
// are held to.
//
// It is meant for small spaces: it keeps every state and a string key per
// state, and stops with ErrTooBig past its cap.
package oracle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// PanicProperty is the name under which a handler panic is recorded; it
// matches the name livecheck reports (search.PanicProperty), which the
// cross-check compares against.
const PanicProperty = "no-panic"

// ErrTooBig says the space has more states than the cap.
var ErrTooBig = errors.New("the state space is larger than the cap")

// A Found is the shortest path to a state that violates a property.
type Found struct {
	Depth   int
	Path    sim.Path
	Message string
}

// Result describes the full reachable space.
type Result struct {
	States      int // distinct states
	Transitions int // steps applied (each Choose combination counts)
	MaxDepth    int // the largest shortest distance from the initial state
	// Violated maps each violated safety property (and PanicProperty) to
	// its shortest violation.
	Violated map[string]*Found
	// All is every reachable state, in breadth-first order: the
	// cross-check of symmetry reduction renames each.
	All []*sim.State
}

// Explore visits every state reachable from w's initial state, checking
// every safety property in props (liveness properties are ignored) on
// each. It fails with ErrTooBig when there are more than maxStates
// states.
func Explore(w *sim.World, props []properties.Property, maxStates int) (*Result, error) {
	res := &Result{Violated: map[string]*Found{}}
	record := func(name, msg string, depth int, path func() sim.Path) {
		if _, ok := res.Violated[name]; !ok {
			// Breadth-first: the first violation found is a shortest one.
			res.Violated[name] = &Found{Depth: depth, Path: path(), Message: msg}
		}
	}
	s0, err := w.Initial()
	if err != nil {
		var hp *sim.HandlerPanic
		if errors.As(err, &hp) {
			record(PanicProperty, hp.Error(), 0, func() sim.Path { return nil })
			return res, nil
		}
		return nil, err
	}
	states, err := bfs(w, s0, maxStates, func(s *sim.State, depth int, path func() sim.Path) bool {
		res.MaxDepth = max(res.MaxDepth, depth)
		res.All = append(res.All, s)
		for pi := range props {
			p := &props[pi]
			if p.Kind != properties.Safety {
				continue
			}
			if msg, bad := violates(p, s); bad {
				record(p.Name, msg, depth, path)
			}
		}
		return false
	}, func(hp *sim.HandlerPanic, depth int, path func() sim.Path) {
		record(PanicProperty, hp.Error(), depth, path)
	}, &res.Transitions)
	if err != nil {
		return nil, err
	}
	res.States = states
	return res, nil
}

// Reaches says whether some state reachable from start (start included)
// is live, as the liveness phase's "recovers" claims: a state from which
// none is is dead. A handler panic on the way is a state like any other
// with no way on. It fails with ErrTooBig past maxStates states.
func Reaches(w *sim.World, start *sim.State, live func(*sim.State) bool, maxStates int) (bool, error) {
	found := false
	var transitions int
	_, err := bfs(w, start, maxStates, func(s *sim.State, _ int, _ func() sim.Path) bool {
		found = live(s)
		return found
	}, func(*sim.HandlerPanic, int, func() sim.Path) {}, &transitions)
	return found, err
}

type entry struct {
	state  *sim.State
	parent int // index in the list, -1 for the start state
	step   sim.Step
	depth  int
}

// bfs visits every state reachable from start once, breadth-first, and
// calls visit on each with its distance and a function that builds the
// path to it; visit returning true ends the search. panicked is called
// for each step whose handler panicked, with the path including that
// step. It returns the number of states visited.
func bfs(w *sim.World, start *sim.State, maxStates int,
	visit func(s *sim.State, depth int, path func() sim.Path) bool,
	panicked func(hp *sim.HandlerPanic, depth int, path func() sim.Path),
	transitions *int) (int, error) {
	defer func(off bool) { w.NoStepCache = off }(w.NoStepCache)
	w.NoStepCache = true
	var all []entry
	visited := map[string]bool{}
	pathTo := func(i int) sim.Path {
		var p sim.Path
		for ; all[i].parent >= 0; i = all[i].parent {
			p = append(p, all[i].step)
		}
		for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
			p[a], p[b] = p[b], p[a]
		}
		return p
	}
	// add enqueues s unless an equal state is known, and visits it.
	add := func(s *sim.State, parent int, st sim.Step, depth int) (bool, error) {
		k := key(w, s)
		if visited[k] {
			return false, nil
		}
		if len(all) >= maxStates {
			return false, fmt.Errorf("%w (%d)", ErrTooBig, maxStates)
		}
		visited[k] = true
		all = append(all, entry{state: s, parent: parent, step: st, depth: depth})
		i := len(all) - 1
		return visit(s, depth, func() sim.Path { return pathTo(i) }), nil
	}

	if done, err := add(start, -1, sim.Step{}, 0); done || err != nil {
		return len(all), err
	}
	for i := 0; i < len(all); i++ {
		e := all[i]
		for _, ev := range w.Enabled(e.state, nil) {
			// Every combination of Choose values: a tape fixes the first
			// choices and later ones default to 0; each choice past the
			// tape that could have been larger opens a new tape.
			tapes := [][]int{nil}
			for len(tapes) > 0 {
				tape := tapes[len(tapes)-1]
				tapes = tapes[:len(tapes)-1]
				next, err := w.Apply(e.state, ev, tape)
				*transitions++
				info := w.Last()
				choices := append([]int(nil), info.Choices...)
				for j := len(tape); j < len(info.Choices); j++ {
					for v := 1; v < info.Bounds[j]; v++ {
						tapes = append(tapes, append(append([]int(nil), info.Choices[:j]...), v))
					}
				}
				st := sim.Step{Event: ev, Choices: choices}
				if err != nil {
					var hp *sim.HandlerPanic
					if errors.As(err, &hp) {
						panicked(hp, e.depth+1, func() sim.Path { return append(pathTo(i), st) })
						continue
					}
					return len(all), fmt.Errorf("step %v from a reachable state: %w", ev, err)
				}
				if done, err := add(next, i, st, e.depth+1); done || err != nil {
					return len(all), err
				}
			}
		}
	}
	return len(all), nil
}

// key is everything that distinguishes two states: the dump (node states,
// timers, messages in flight with their multiplicity and order, open
// connections), then what the dump leaves out: the driver calls made and
// the failures used.
func key(w *sim.World, s *sim.State) string {
	var b strings.Builder
	b.WriteString(s.Dump())
	b.WriteString("calls:")
	for c := range w.Spec().Calls {
		if s.CallMade(c) {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	fmt.Fprintf(&b, " used:%+v", s.Used())
	return b.String()
}

func violates(p *properties.Property, s *sim.State) (msg string, bad bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, bad = fmt.Sprintf("property %s panicked: %v", p.Name, r), true
		}
	}()
	if err := p.Check(s); err != nil {
		return err.Error(), true
	}
	return "", false
}
