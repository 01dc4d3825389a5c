// Package critical finds the critical transition of a dead path: the one
// step after which the liveness property can never hold again. It probes
// the path with random walks (Recovers), first at exponentially growing
// steps until a probe fails, then by binary search between the last step
// that recovered and the first that did not. The recovering walk from the
// last live step is kept: the nearest live path, which shares the longest
// prefix with the dead one.
//
// # Usage
//
//	res, err := critical.Search(world, start, deadPath, live, critical.Options{Walks: 8, Dmax: 20000})
//	switch res.Case {
//	case critical.C1: // res.Step, res.Event: the critical transition
//	case critical.C2: // the walk was too short to tell: raise Dmax
//	}
package critical

import (
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// Case says how a search ended.
type Case string

const (
	// C1: a dead state was found and the critical transition is known.
	C1 Case = "C1"
	// C2: the walk was too short to tell a dead state from a slow one.
	C2 Case = "C2"
)

// Options for Search. Zero values take the defaults.
type Options struct {
	// Walks is the number of walks per probe (k, default 8).
	Walks int
	// Confirm is the number of further walks that must all fail too before
	// a probe counts as dead (default 8*Walks). A state from which few
	// walks recover is not dead: without a confirmation the search would
	// name a step before the real critical transition.
	Confirm int
	// Dmax is the total depth budget: a probe at step i walks up to
	// Dmax - i steps (default: twice the path's length).
	Dmax int
	// Chooser picks walk events (default walk.DefaultWeights).
	Chooser walk.Chooser
	// Seed seeds the probes; each probe's walks get their own seeds from
	// it and the step, so the result does not depend on probe order.
	Seed uint64
	// Trail, when set, is kept up to date by the probes' walks (its Base
	// is the path to the probed step).
	Trail *walk.Trail
}

// Result is what Search found.
type Result struct {
	Case Case
	// Dinit is the first step after which the path is never live again.
	Dinit int
	// Step is the critical step: the state after Step steps is dead, and
	// the one before it (LiveStep = Step-1) still recovers. Event is the
	// step's event, Path[Step-1].
	Step     int
	Event    sim.Event
	LiveStep int
	// LivePath is the nearest live path: the dead path's first LiveStep
	// steps, then a walk that reaches a live state.
	LivePath sim.Path
	// Probes counts Recovers calls; Steps the simulator steps they took.
	Probes int
	Steps  int64
	// Why explains a C2 result; Recovered says it is because walks from
	// the end of the path still recover: the path was not dead at all.
	Why       string
	Recovered bool
}

const checkpointEvery = 256

type searcher struct {
	w       *sim.World
	path    sim.Path
	live    func(*sim.State) bool
	opts    Options
	checks  []*sim.State // state after i*checkpointEvery steps
	walker  *walk.Walker
	res     *Result
	recover map[int]sim.Path // recovering walks found, by step
}

// Search finds the critical transition of path p from start, which is
// suspected dead: it ends in a state that is not live. The error is a
// path that does not replay or a handler that panicked while probing.
func Search(w *sim.World, start *sim.State, p sim.Path, live func(*sim.State) bool, opts Options) (*Result, error) {
	if opts.Walks <= 0 {
		opts.Walks = 8
	}
	if opts.Confirm <= 0 {
		opts.Confirm = 8 * opts.Walks
	}
	if opts.Dmax <= 0 {
		opts.Dmax = 2 * len(p)
	}
	if opts.Chooser == nil {
		wt := walk.DefaultWeights
		opts.Chooser = &wt
	}
	sr := &searcher{w: w, path: p, live: live, opts: opts, res: &Result{}, recover: map[int]sim.Path{}}
	sr.walker = walk.New(w, live, opts.Chooser, opts.Seed)
	sr.walker.Trail = opts.Trail

	// One replay: checkpoints, and the last live step.
	lastLive := -1
	s := start
	if live(s) {
		lastLive = 0
	}
	saved := w.Chooser
	w.Chooser = nil
	for i := 0; ; i++ {
		if i%checkpointEvery == 0 {
			sr.checks = append(sr.checks, s)
		}
		if i == len(p) {
			break
		}
		sr.along(i)
		next, err := w.Apply(s, p[i].Event, p[i].Choices)
		if err != nil {
			w.Chooser = saved
			return nil, &sim.StepError{Index: i, Event: p[i].Event, Err: err}
		}
		s = next
		if live(s) {
			lastLive = i + 1
		}
	}
	w.Chooser = saved
	res := sr.res
	res.Dinit = lastLive + 1
	L := len(p)
	if res.Dinit > L {
		res.Case, res.Why = C2, "the path ends in a live state"
		return res, nil
	}

	// Exponential phase.
	d := res.Dinit
	dprev := -1
	if lastLive >= 0 {
		dprev = lastLive // a live state recovers with no walk at all
		sr.recover[dprev] = nil
	}
	for {
		if d > L {
			d = L
		}
		if d > 0 && d > opts.Dmax/2 {
			res.Case = C2
			res.Why = "probes past half the walk depth would get too short a walk to recover"
			return res, nil
		}
		ok, err := sr.recovers(d)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		dprev = d
		if d == L {
			res.Case, res.Why, res.Recovered = C2, "walks from the end of the path still recover: it was not dead, only slow", true
			return res, nil
		}
		d = max(1, 2*d)
	}
	if dprev < 0 {
		res.Case, res.Why = C2, "even the start of the path does not recover"
		return res, nil
	}

	// Binary phase: dprev recovers, d does not.
	lo, hi := dprev, d
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := sr.recovers(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	res.Case = C1
	res.Step, res.LiveStep = hi, lo
	res.Event = p[hi-1].Event
	res.LivePath = append(p[:lo].Clone(), sr.recover[lo]...)
	return res, nil
}

// stateAt replays the path to step i from the nearest checkpoint.
func (sr *searcher) stateAt(i int) (*sim.State, error) {
	c := i / checkpointEvery
	s := sr.checks[c]
	saved := sr.w.Chooser
	sr.w.Chooser = nil
	defer func() { sr.w.Chooser = saved }()
	for j := c * checkpointEvery; j < i; j++ {
		sr.along(j)
		next, err := sr.w.Apply(s, sr.path[j].Event, sr.path[j].Choices)
		if err != nil {
			return nil, &sim.StepError{Index: j, Event: sr.path[j].Event, Err: err}
		}
		s = next
	}
	return s, nil
}

// along tells the trail, if any, that step j of the path is under way.
func (sr *searcher) along(j int) {
	if t := sr.opts.Trail; t != nil {
		*t = walk.Trail{Base: sr.path[:j], Event: sr.path[j].Event}
	}
}

// recovers runs k walks from step i, each to the total depth Dmax, and
// says whether any reaches a live state; it keeps that walk. If none
// does, Confirm more walks must fail as well.
func (sr *searcher) recovers(i int) (bool, error) {
	sr.res.Probes++
	s, err := sr.stateAt(i)
	if err != nil {
		return false, err
	}
	if sr.live(s) {
		sr.recover[i] = nil
		return true, nil
	}
	depth := sr.opts.Dmax - i
	if t := sr.opts.Trail; t != nil {
		t.Base = sr.path[:i]
	}
	for j := 0; j < sr.opts.Walks+sr.opts.Confirm; j++ {
		sr.walker.Reseed(walk.Seed(sr.opts.Seed, uint64(i), uint64(j)))
		before := sr.walker.Steps
		r, err := sr.walker.Walk(s, depth, true, true)
		sr.res.Steps += sr.walker.Steps - before
		if err != nil {
			return false, err
		}
		if r.LiveAt >= 0 {
			sr.recover[i] = r.Path
			return true, nil
		}
	}
	return false, nil
}
