package check

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// A handler that runs past --handler-timeout is not reported as it is: a
// GC pause or a busy machine can hold a handler of microseconds for that
// long. The step is run again from the initial state, alone, with a far
// longer allowance (ConfirmAllowance), and only a step that hangs again
// is reported, with the trace of that second run, which thereby replays.
// A step that returns the second time was slow, not stuck: the check waits
// for it and goes on. A short timeout makes many steps slow: each is run
// again, none is blamed.
//
// Running a step again needs the exact path to it, in whatever phase the
// world is (the search, a periphery state made again, a walk, the critical
// search's probes, a replay of a path): each keeps a trail that says so
// before it calls a handler. The step's choices are those it had made when
// the watchdog looked, and run again it may make more. A trail that names
// another step than the one the world runs is a bug of livecheck's: the
// handler is waited for, never blamed. Only a replay that parts from the
// path the check ran says that a handler is not deterministic.

// ConfirmAllowance is how long a handler that ran past timeout may run
// when it is run again before its hang counts as confirmed: 30 times the
// timeout, and at least 10 seconds. A handler held up by the machine (a GC
// pause, another process on its core: tens of milliseconds, a second at
// worst) is very unlikely to be held up 30 times as long again, and the
// allowance costs time only once per check, at the hang it confirms.
func ConfirmAllowance(timeout time.Duration) time.Duration {
	return max(30*timeout, 10*time.Second)
}

// A hang is where a handler ran past the timeout, read while it ran:
// enough to run the same step again.
type hang struct {
	init    bool     // in an Init handler, before the first step
	start   []int    // the choices that name the initial state path starts from
	path    sim.Path // from the initial state to the stuck step, without it
	event   sim.Event
	choices []int // the choices the stuck step had made
	// walk, when set, is a walk that did not record its path: path ends
	// where it started, and walking walk.Steps steps again from walk.Start
	// with its seed gives the rest.
	walk *walk.Trail
	// local, when set, is the state a step of local mode started from:
	// local mode has no path from the initial state.
	local  *sim.State
	during string // ", during a random walk", or ""
	// lost says the trail named another step than the one under way: the
	// path to the step is not known, and it cannot be run again.
	lost bool

	// Set when the step ran again and returned (confirm).
	ranAgain bool

	// Set when the hang is confirmed: the path of the run that hung again
	// (its last step the stuck one) and that run's steps in words.
	confirmed sim.Path
	steps     []ReplayStep
	text      string // the stuck event in words
}

// A watchdog watches the handlers of every world a check runs (the main
// one and the walk workers').
type watchdog struct {
	mu      sync.Mutex
	watched []watched
	// stop, when set, says the work is to end (an interrupt, the time or
	// memory budget). The goroutine it watches polls it between steps; one
	// held in a handler cannot, so run returns sim.ErrStopped once stop
	// has said so for stopGrace while a handler has held a world as long.
	stop func() bool
}

// stopGrace is how long run lets the goroutine it watches end by itself
// (with its partial report) after stop says so, and the longest it polls
// stop at: an interrupt ends a check held in a handler within a second.
const stopGrace = 250 * time.Millisecond

type watched struct {
	g *sim.Guard
	// where says where the world's goroutine is; it is called while that
	// goroutine is held in the handler (Guard.Hold).
	where func() hang
}

// add registers a world's guard, with how to say where its goroutine is.
func (wd *watchdog) add(where func() hang) *sim.Guard {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	g := &sim.Guard{}
	wd.watched = append(wd.watched, watched{g, where})
	return g
}

// run runs f on its own goroutine and watches the handlers. A handler
// that runs past timeout is handed to confirm (where and how far it got),
// which says whether it hangs when run again; run then returns it, and
// f's goroutines are left behind, blocked in the user's handler. With no
// confirm every such handler is returned. A handler confirm clears is
// waited for up to allow in all. Past that, one that returned when run
// again did not return in the check: run returns a NondeterminismError;
// one that could not be run again (its path not known) is an error that
// blames no handler.
func (wd *watchdog) run(timeout, allow time.Duration, confirm func(*hang) (bool, error), f func() error) (*hang, error) {
	done := make(chan error, 1)
	go func() { done <- f() }()
	every := max(timeout/4, time.Microsecond)
	if wd.stop != nil {
		every = min(every, stopGrace)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var stopSince time.Time
	type watch struct {
		tok     uint64
		since   time.Time
		cleared *hang // the hang confirm cleared, while it is the same
	}
	var ws []watch
	for {
		select {
		case err := <-done:
			return nil, err
		case <-tick.C:
		}
		stopping := false
		if wd.stop != nil && wd.stop() {
			if stopSince.IsZero() {
				stopSince = time.Now()
			}
			stopping = time.Since(stopSince) >= stopGrace
		}
		wd.mu.Lock()
		watched := wd.watched
		wd.mu.Unlock()
		for i, e := range watched {
			if i == len(ws) {
				ws = append(ws, watch{since: time.Now()})
			}
			wi := &ws[i]
			tok, same := e.g.Stuck(wi.tok)
			if !same {
				*wi = watch{tok: tok, since: time.Now()}
				continue
			}
			ran := time.Since(wi.since)
			if stopping && ran >= stopGrace {
				// Told to stop, and held in a handler since before: f
				// cannot poll the stop, and its goroutine is left there,
				// as with a confirmed hang. (One that is not held ends
				// by itself, with its partial report.)
				return nil, sim.ErrStopped
			}
			if h := wi.cleared; h != nil {
				if ran < allow {
					continue
				}
				if !h.ranAgain {
					why := "could not run its step again on its own"
					if h.lost {
						why = "lost track of the path to it (a bug in livecheck), so could not run its step again"
					}
					return nil, fmt.Errorf("a handler has not returned for %v (node %d's %s, on %v%s), and the check %s to tell a hang from a slow machine",
						allow, h.event.Node, sim.HandlerOf(h.event, h.event.Node), h.event, h.during, why)
				}
				return nil, &sim.NondeterminismError{Step: len(h.path) + 1, Event: h.event, Text: h.text, Node: h.event.Node,
					Handler: sim.HandlerOf(h.event, h.event.Node),
					What:    fmt.Sprintf("ran for more than %v in the check but returned when run again", allow)}
			}
			if ran < timeout {
				continue
			}
			var h hang
			if !e.g.Hold(tok, func() { h = e.where() }) {
				continue // it has just returned
			}
			if confirm == nil {
				return &h, nil
			}
			hung, err := confirm(&h)
			if err != nil || hung {
				return &h, err
			}
			wi.cleared = &h
		}
	}
}

// guarded runs f on its own goroutine with a watchdog on w's handlers:
// where says where f is. It returns the hang when a handler ran longer
// than timeout; f's goroutine is then left behind, blocked in the user's
// handler. It returns sim.ErrStopped when w.Stop says so while a handler
// holds f. The handlers of more worlds f runs on are watched too.
func guarded(w *sim.World, timeout time.Duration, where func() hang, f func() error, more ...*sim.World) (*hang, error) {
	wd := watchdog{stop: w.Stop}
	for _, x := range append([]*sim.World{w}, more...) {
		x.Guard = wd.add(where)
	}
	defer func() {
		for _, x := range append([]*sim.World{w}, more...) {
			x.Guard = nil
		}
	}()
	return wd.run(timeout, 0, nil, f)
}

// The phases of the main world, for where.
const (
	phaseInit   = iota // Init handlers
	phasePath          // c.along, a path from the initial state
	phaseSearch        // the exhaustive search: its trail
	phaseWalk          // walks and critical searches: c.walkTrail
	phaseLocal         // local mode
)

// where says where the main world's goroutine is; see watchdog.
func (c *checker) where(trail *search.Trail) hang {
	ev, choices, from := c.w.Current()
	// Building an initial state (InitialFrom's zero Event: before the
	// search, or by the search or local mode after an Init that
	// panicked): the choices so far name it.
	if c.phase == phaseInit || ev == (sim.Event{}) {
		return hang{init: true, start: choices}
	}
	switch c.phase {
	case phasePath:
		return hang{start: c.alongInit, path: c.along[:c.alongAt].Clone(), event: ev, choices: choices, lost: c.along[c.alongAt].Event != ev}
	case phaseWalk:
		return c.walkHang(&c.walkTrail, ev, choices)
	case phaseLocal:
		return hang{local: from, event: ev, choices: choices}
	}
	return c.searchHang(trail, ev, choices)
}

// searchHang says where a search worker is, from its trail.
func (c *checker) searchHang(t *search.Trail, ev sim.Event, choices []int) hang {
	start, path, ok := c.searchPath(t)
	return hang{start: start, path: path, event: ev, choices: choices, lost: !ok || t.Event != ev}
}

// searchPath is the path, from the initial state, to the state a search
// worker steps from, and whether it could be made: a trail names the
// state by its node of the search's tree, and the path to it is made
// again here, on a world of its own, while the worker is held in its
// handler. A search that does not start where the check does
// (searchFrom) has its paths start at the end of that path.
func (c *checker) searchPath(t *search.Trail) ([]int, sim.Path, bool) {
	w, err := sim.NewWorld(c.m.Spec)
	if err != nil {
		return nil, nil, false
	}
	init, p, err := t.PathTo(w)
	if err != nil {
		return nil, nil, false
	}
	if c.searchFrom != nil {
		init, p = c.searchFromInit, append(c.searchFrom.Clone(), p...)
	}
	return c.fullInit(init), c.full(p), true
}

// pathHang says where a world is that runs a path from the initial state
// init names (from the check's start): at its step under way, which ran
// trailEv.
func (c *checker) pathHang(init []int, p sim.Path, trailEv, ev sim.Event, choices []int) hang {
	return hang{start: c.fullInit(init), path: c.full(p.Clone()), event: ev, choices: choices, lost: trailEv != ev}
}

// walkHang says where a walk is, from its trail.
func (c *checker) walkHang(t *walk.Trail, ev sim.Event, choices []int) hang {
	h := hang{start: t.Init, path: c.full(append(t.Base.Clone(), t.Path...)), event: ev, choices: choices, during: ", during a random walk", lost: t.Event != ev}
	if t.Steps > len(t.Path) {
		cp := *t
		cp.Base, cp.Path = nil, nil
		h.walk = &cp
	}
	return h
}

// confirm runs the step h again, from the initial state in a fresh world,
// allowing each handler allow, and says whether it hangs again; it then
// fills in h's confirmed path. A path that does not replay is an error,
// in words.
func (c *checker) confirm(sys *protocol.System, h *hang, allow time.Duration) (bool, error) {
	if h.local != nil {
		return c.confirmLocal(h, allow)
	}
	if h.lost {
		return false, nil // cannot run it again: wait for it
	}
	p := h.path
	if t := h.walk; t != nil {
		if !t.Seeded {
			return false, nil // cannot walk the same way: wait for it
		}
		rest, err := c.rewalk(t, allow)
		if err != nil || rest == nil {
			return false, err
		}
		p = append(p.Clone(), rest...)
	}
	if !h.init {
		p = append(p.Clone(), sim.Step{Event: h.event, Choices: h.choices})
	}
	// The stuck step is replayed as far as it got, and may go further.
	rep, err := replayEach(sys, c.res.Config, h.start, p, allow, nil, c.stop, true)
	if errors.Is(err, sim.ErrStopped) {
		return false, err
	}
	if err != nil {
		return false, c.noReplay(err)
	}
	if n := len(p); n > 0 && len(rep.Steps) >= n {
		h.text = rep.Steps[n-1].Text
	}
	if rep.Property != DivergenceProperty {
		// It returned (or panicked), unless the replay stopped before it.
		h.ranAgain = len(rep.Steps) >= len(p)
		return false, nil
	}
	h.steps = rep.Steps
	if n := len(rep.Steps); n > 0 {
		// The run hung at its last step: the stuck one, or (a handler that
		// is not deterministic) one before.
		h.confirmed = p[:n]
		h.text = rep.Steps[n-1].Text
	}
	return true, nil
}

// rewalk walks t's walk again, recording its path, up to the step that ran
// past the timeout. It returns nil when the walk is held up on the way.
func (c *checker) rewalk(t *walk.Trail, allow time.Duration) (sim.Path, error) {
	w, err := sim.NewWorld(c.m.Spec)
	if err != nil {
		return nil, err
	}
	var chooser walk.Chooser = c.weights
	if t.Chooser != nil {
		chooser = t.Chooser // a dead test's walk: its own weights
	}
	w.Stop = c.stop
	wk := walk.New(w, c.isLive, chooser, t.Seed)
	var r *walk.Result
	h, err := guarded(w, allow, func() hang { return hang{} }, func() error {
		var err error
		r, err = wk.Walk(t.Start, t.Steps, false, true)
		return err
	})
	if h != nil || err != nil || len(r.Path) != t.Steps {
		return nil, err
	}
	return r.Path, nil
}

// hangResult reports a confirmed hang.
func (c *checker) hangResult(h *hang, allow time.Duration) *Result {
	res := c.res
	timeout := c.opts.HandlerTimeout
	if h.local != nil {
		// Local mode has no run from the initial state to the node state
		// the handler hung in: it may not be reachable.
		res.Verdict, res.Property, res.Path = Inconclusive, DivergenceProperty, nil
		res.Message = fmt.Sprintf("a handler did not return within %v on %s, nor within %v when run again, in a node state local mode reached; local mode cannot tell whether a real run reaches it (run --mode global for a trace)",
			timeout, h.text, allow)
		return res
	}
	res.Verdict, res.Property, res.Critical = LivenessViolation, DivergenceProperty, nil
	res.Path, res.Init, res.Steps = h.confirmed, h.start, h.steps
	on := "in Init"
	if len(h.confirmed) > 0 {
		on = "on " + h.text
	}
	res.Message = fmt.Sprintf("a handler did not return within %v %s%s, nor within %v when run again from the initial state",
		timeout, on, h.during, allow)
	return res
}
