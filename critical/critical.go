// Package critical finds the critical transition of a dead path: the one
// step after which the liveness property can never hold again. It probes
// the path (each probe a small breadth-first search, then random walks),
// first at exponentially growing steps until a probe fails, then by binary
// search between the last step that recovered and the first that did not.
// A dead decision rests on a stronger test (DeadTest: a larger search,
// then enough walks to bound the recovery rate), run on the path's end and
// on the step the probes point at; where it finds a way back, the search
// goes on past that step. The path that recovers from the last live step
// is kept: the nearest live path, which shares the longest prefix with the
// dead one.
//
// # Usage
//
//	res, err := critical.Search(world, start, deadPath, live, critical.Options{Walks: 8, Dmax: 20000})
//	switch res.Case {
//	case critical.C1: // res.Step, res.Event: the critical transition; res.Dead, res.Alive: the evidence
//	case critical.C2: // the walk was too short to tell: raise Dmax
//	}
//
// Recovers runs one test from one state; replay uses it on a trace's end.
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
	// Start: the path's first state is already dead by the dead test
	// (Result.Dead): no step is to blame, the property can never hold.
	Start Case = "start"
)

// Options for Search. Zero values take the defaults.
type Options struct {
	// Walks is the number of walks per probe (k, default 8).
	Walks int
	// Confirm is the number of further walks that must all fail too before
	// a probe counts as dead (default none: the dead test confirms the
	// step the probes point at, and the search goes on past a step it
	// shows to recover, so probes that fail cheaply cost less than probes
	// that fail surely).
	Confirm int
	// States bounds each probe's breadth-first search, which runs before
	// its walks (default ProbeStates).
	States int
	// Dmax is the total depth budget: a probe at step i walks up to
	// Dmax - i steps (default: twice the path's length).
	Dmax int
	// Chooser picks walk events (default walk.DefaultWeights).
	Chooser walk.Chooser
	// Seed seeds the probes; each probe's walks get their own seeds from
	// it and the step, so the result does not depend on probe order.
	Seed uint64
	// Safety, when set, is checked on every state the probes reach: a
	// violation ends the search with a *Finding.
	Safety func(*sim.State) (property, message string)
	// Trail, when set, is kept up to date by the probes (its Base is the
	// path to the probed step).
	Trail *walk.Trail
	// Dead is the test a dead decision rests on: the path's end must pass
	// it, and so must the state after the critical step, which the
	// cheaper probes only point at. Zero fields take DeadStates, DeadWalks
	// and Dmax, a nil Chooser the Options'; Safety and Trail are the
	// Options'. Its own Chooser lets the probes explore with a bias (one
	// kind of event weighed 0, say) that must not weaken the test that
	// calls a state dead. Its Seed seeds
	// the test of the path's end as it is, so that a replay of the path can
	// run the same test again (DeadTest).
	Dead Test
	// Afford, when set, is asked before each dead test, with the test
	// Dead says and the simulator steps the search took so far, what test
	// to run instead: a caller whose budget cannot pay for Dead cuts it
	// (a test below the caller's floor calls nothing dead; the caller
	// judges the evidence, which says how strong it was).
	Afford func(t Test, steps int64) Test
	// Pool, when set, runs the walks of the probes and of the dead tests
	// on its worlds too (Test.Pool): the result is the same.
	Pool *Pool
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
	// steps, then a walk (or the shortest path the probe's search found)
	// that reaches a live state.
	LivePath sim.Path
	// End is the dead test of the path's last state, Dead that of the
	// state after Step (the same for a critical last step), and Alive the
	// probe that showed the state after LiveStep recovers (Alive.Path
	// empty: that state is live itself).
	End, Dead, Alive *Evidence
	// Overturned counts the steps the probes called dead that the dead
	// test showed to recover.
	Overturned int
	// Probes counts probes and dead tests; Steps the simulator steps they
	// took.
	Probes int
	Steps  int64
	// Why explains a C2 result; Recovered says it is because the end of
	// the path still recovers: the path was not dead at all.
	Why       string
	Recovered bool
	// Tested are the probes and dead tests run, in order, with what each
	// saw: how strong the verdict on each step is (the HTML report's
	// chart).
	Tested []Tested
}

// Tested is one probe or dead test of the state after step Step.
type Tested struct {
	Step     int
	DeadTest bool
	Ev       *Evidence
}

const checkpointEvery = 256

type searcher struct {
	w      *sim.World
	path   sim.Path
	live   func(*sim.State) bool
	opts   Options
	checks []*sim.State // state after i*checkpointEvery steps
	res    *Result
	probed map[int]bool      // the probes' answers, by step
	alive  map[int]*Evidence // how the steps that recover do, by step
}

// Search finds the critical transition of path p from start, which is
// suspected dead: it ends in a state that is not live. The error is a
// path that does not replay, or a *Finding: a safety violation or a
// handler panic met while probing, with its path from start.
func Search(w *sim.World, start *sim.State, p sim.Path, live func(*sim.State) bool, opts Options) (*Result, error) {
	if opts.Walks <= 0 {
		opts.Walks = 8
	}
	if opts.States <= 0 {
		opts.States = ProbeStates
	}
	if opts.Dmax <= 0 {
		opts.Dmax = 2 * len(p)
	}
	if opts.Chooser == nil {
		wt := walk.DefaultWeights
		opts.Chooser = &wt
	}
	dt := &opts.Dead
	if dt.States <= 0 {
		dt.States = DeadStates
	}
	if dt.Walks <= 0 {
		dt.Walks = DeadWalks
	}
	if dt.WalkDepth <= 0 {
		dt.WalkDepth = opts.Dmax
	}
	if dt.Chooser == nil {
		dt.Chooser = opts.Chooser
	}
	dt.Safety, dt.Trail = opts.Safety, opts.Trail
	sr := &searcher{w: w, path: p, live: live, opts: opts, res: &Result{}, probed: map[int]bool{}, alive: map[int]*Evidence{}}

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
		sr.alive[dprev] = &Evidence{Live: true}
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
		ok, err := sr.probe(d)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		dprev = d
		if d == L {
			res.Case, res.Why, res.Recovered = C2, "walks from the end of the path still recover: it was not dead, only slow", true
			res.End = sr.alive[L]
			res.LivePath = append(p.Clone(), res.End.Path...)
			return res, nil
		}
		d = max(1, 2*d)
	}

	// The end must be dead by the dead test before any step is blamed.
	end, err := sr.test(L, dt.Seed)
	if err != nil {
		return nil, err
	}
	res.End = end
	if end.Live {
		res.Case, res.Why, res.Recovered = C2, "the end of the path still recovers: it was not dead, only slow", true
		res.LivePath = append(p.Clone(), end.Path...)
		return res, nil
	}

	// Binary phase: dprev recovers, d does not, by the probes. The dead
	// test then confirms d, or shows it recovers after all and the search
	// goes on between d and the end of the path, which is dead.
	lo, hi := dprev, d
	for {
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			ok, err := sr.probe(mid)
			if err != nil {
				return nil, err
			}
			if ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		ev := end
		if hi < L {
			if ev, err = sr.test(hi, walk.Seed(dt.Seed, uint64(hi)+1)); err != nil {
				return nil, err
			}
		}
		if !ev.Live {
			res.Dead = ev
			break
		}
		res.Overturned++
		sr.probed[hi], sr.alive[hi] = true, ev
		lo, hi = hi, sr.nextDead(hi, L)
	}
	if lo < 0 {
		res.Case, res.Why = Start, "even the start of the path does not recover"
		return res, nil
	}
	res.Case = C1
	res.Step, res.LiveStep = hi, lo
	res.Event = p[hi-1].Event
	res.Alive = sr.alive[lo]
	res.LivePath = append(p[:lo].Clone(), res.Alive.Path...)
	return res, nil
}

// nextDead is the first step after lo that a probe called dead, or the
// path's end L (dead by the dead test) if none did. A state from which a
// later state of the path recovers recovers too, so the first dead step
// lies between lo, which the dead test showed to recover, and that step:
// the search goes on there, not over the whole rest of the path again,
// whose probes past it were already answered (on a path of 5,000 steps,
// a dozen probes saved for each step the dead test overturns).
func (sr *searcher) nextDead(lo, L int) int {
	hi := L
	for i, ok := range sr.probed {
		if !ok && i > lo && i < hi {
			hi = i
		}
	}
	return hi
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
		*t = walk.Trail{Init: t.Init, Base: sr.path[:j], Event: sr.path[j].Event}
	}
}

// probe says whether the state after step i recovers, by a probe: a small
// search, then Walks+Confirm walks to the total depth Dmax. It is cheap
// next to the dead test, and only points at the boundary.
func (sr *searcher) probe(i int) (bool, error) {
	if ok, done := sr.probed[i]; done {
		return ok, nil
	}
	o := sr.opts
	ev, err := sr.run(i, Test{States: o.States, Walks: o.Walks + o.Confirm, WalkDepth: o.Dmax - i,
		Chooser: o.Chooser, Seed: walk.Seed(o.Seed, uint64(i)), Safety: o.Safety, Trail: o.Trail}, false)
	if err != nil {
		return false, err
	}
	sr.probed[i] = ev.Live
	if ev.Live {
		sr.alive[i] = ev
	}
	return ev.Live, nil
}

// test runs the dead test from the state after step i.
func (sr *searcher) test(i int, seed uint64) (*Evidence, error) {
	t := sr.opts.Dead
	if sr.opts.Afford != nil {
		t = sr.opts.Afford(t, sr.res.Steps)
	}
	t.Seed = seed
	return sr.run(i, t, true)
}

func (sr *searcher) run(i int, t Test, dead bool) (*Evidence, error) {
	sr.res.Probes++
	if t.Pool == nil {
		t.Pool = sr.opts.Pool
	}
	s, err := sr.stateAt(i)
	if err != nil {
		return nil, err
	}
	if t.Trail != nil {
		t.Trail.Base = sr.path[:i]
	}
	ev, err := Recovers(sr.w, s, sr.live, t)
	if ev != nil {
		sr.res.Steps += ev.Steps
		sr.res.Tested = append(sr.res.Tested, Tested{Step: i, DeadTest: dead, Ev: ev})
	}
	if err != nil {
		return nil, prefixed(err, sr.path[:i])
	}
	return ev, nil
}
