package check

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/internal/lines"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// liveness runs the second and third phases of a check: a walk from each
// periphery state; for a walk that never becomes live, the critical
// transition search, with the walk depth doubled on C2 up to a limit.
func (c *checker) liveness(qinit []int, quiescent sim.Path) error {
	start := time.Now()
	defer func() { c.res.Live.Elapsed = time.Since(start) }()
	defer c.walksReached()
	opts := c.opts
	// From here on every step of the main world asks whether to stop: a
	// critical search or a dead test runs millions of steps, and the
	// user, the time budget and the memory budget must reach it.
	c.w.Stop = c.mainStop
	defer func() { c.w.Stop = nil }()
	wk := walk.New(c.w, c.isLive, c.weights, 0)
	wk.Safety = c.safety
	wk.Trail = &c.walkTrail
	c.phase = phaseWalk
	c.clock.to(phWalks)
	var undecided []string
	// safetyFound reports a safety violation a walk ran into.
	safetyFound := func(init []int, p sim.Path, r *walk.Result) bool {
		if r.Violated == "" {
			return false
		}
		c.setPath(init, p)
		c.res.Verdict, c.res.Property, c.res.Message = SafetyViolation, r.Violated, r.Message
		if r.LiveAt >= 0 {
			c.res.Live.FoundAfterLive = r.Steps - r.LiveAt
		}
		return true
	}

	// found says what a walk or a probe ran into: a finding the result
	// now records (true), or a failure of the check (the error).
	found := func(err error, init []int, p sim.Path) (bool, error) {
		if err := c.walkError(err, init, p); err != nil {
			return false, err
		}
		return true, nil
	}
	// walkOn walks up to steps further from end, the end of the suspect
	// path p, with wk: a walk that recovers clears the suspect, one that
	// runs into a violation is the finding. r is nil for either, or else
	// the walk, which is not live at its end.
	walkOn := func(wk *walk.Walker, seed uint64, init []int, p sim.Path, end *sim.State, steps int) (r *walk.Result, done bool, err error) {
		wk.Reseed(seed)
		c.walkTrail.Init, c.walkTrail.Base = c.fullInit(init), p
		r, err = wk.Walk(end, steps, true, true)
		c.res.Live.WalkSteps += int64(r.Steps)
		if err != nil {
			done, err = found(err, init, append(p, r.Path...))
			return nil, done, err
		}
		if safetyFound(init, append(p, r.Path...), r) {
			return nil, true, nil
		}
		if r.LiveAt >= 0 {
			c.res.Live.Cleared++
			return nil, false, nil
		}
		return r, false, nil
	}
	// Walks shorter than the floor of the dead test, or weights that give
	// some kind of event no chance, show little about a path: a suspect
	// of such walks first walks on from its end as a dead test's walk
	// does, and is cleared if that recovers. (A suspect of walks as
	// strong as that goes straight to the critical search.)
	deadWt := DeadWeights(c.m.Weights)
	weak := opts.WalkDepth < DeadWalkDepth
	for k := range c.weights {
		weak = weak || !(c.weights[k] > 0)
	}
	dk := walk.New(c.w, c.isLive, &deadWt, 0)
	dk.Safety, dk.Trail = c.safety, &c.walkTrail

	// A suspect is a path that ends in a state that is not live. Walks
	// longer and longer settle it: C1 reports it, a recovery clears it.
	settle := func(idx int, init []int, base sim.Path, tail sim.Path, end *sim.State) (bool, error) {
		c.res.Live.Suspects++
		depth := opts.WalkDepth
		if weak && end != nil {
			r, done, err := walkOn(dk, walk.Seed(uint64(opts.Seed), uint64(idx), 3000), init, append(base.Clone(), tail...), end, DeadWalkDepth)
			if r == nil {
				return done, err
			}
			tail, end = append(tail, r.Path...), r.End
			depth = len(tail) // probes walk as far as the suspect went
		}
		var tried []string
		for attempt := 0; ; attempt++ {
			p := append(base.Clone(), tail...)
			c.during = fmt.Sprintf("the critical-transition search of a path of %s that never became live", reports.Count(len(p), "step"))
			if c.stop() {
				return false, sim.ErrStopped
			}
			c.suspect = len(p)
			c.progress("critical", true)
			ct := time.Now()
			c.clock.to(phCritical)
			c.walkTrail.Init = c.fullInit(init)
			cr, err := critical.Search(c.w, c.startOf(init), p, c.isLive, critical.Options{
				Walks:   opts.Walks,
				Dmax:    len(base) + depth,
				Chooser: c.weights,
				Seed:    walk.Seed(uint64(opts.Seed), uint64(idx), uint64(attempt)+1000),
				Trail:   &c.walkTrail,
				Safety:  c.safety,
				Dead:    c.endTest(depth).test(c.m.Weights),
				Afford:  c.afford(ct),
				Pool:    c.walkPool(),
			})
			c.res.Live.Critical += time.Since(ct)
			c.clock.to(phWalks)
			if err != nil {
				return found(err, init, p)
			}
			if (cr.Case == critical.C1 || cr.Case == critical.Start) && (!atFloor(cr.End) || cr.Dead != nil && !atFloor(cr.Dead)) && c.deadCut != nil {
				// Dead tests below the floor (cut to fit the budget, or
				// as the options asked) found no way back: a suspect,
				// which no longer walk makes a proof. The check ends
				// here: the budget that cut the test is spent.
				c.res.Live.CutSuspect = c.cutSuspect(init, p, cr)
				return false, errCutSuspect
			}
			if (cr.Case == critical.C1 || cr.Case == critical.Start) && (!atFloor(cr.End) || cr.Dead != nil && !atFloor(cr.Dead)) {
				// Only a test weaker than the floor of every dead test
				// ran (cut short): it calls nothing dead.
				cr.Case, cr.Why = critical.C2, "the dead test was cut short, weaker than the floor of every dead test"
			}
			if cr.Case == critical.C1 {
				c.pathFrom = [2]int{len(base), len(tail)}
				c.report(init, p, cr, c.endTest(depth), tried)
				return true, nil
			}
			if cr.Case == critical.Start && cr.Dead != nil && cr.Dead.SearchAll {
				// Dead from the start, for certain: the dead test saw
				// every state reachable from there. (Short of that, with
				// no live state before it to compare, walks too short
				// may be why: escalate as in case C2.)
				c.reportStart(init, p, cr, c.endTest(depth))
				return true, nil
			}
			tried = append(tried, fmt.Sprintf("walk depth %d: %s", depth, cr.Why))
			if cr.Recovered {
				c.res.Live.Cleared++
				return false, nil
			}
			if attempt >= opts.Escalations {
				undecided = append(undecided, fmt.Sprintf("path of %d steps: %s", len(p), strings.Join(tried, "; ")))
				return false, nil
			}
			// Double the walk and go on from where it ended.
			extra := depth
			depth *= 2
			if end == nil {
				continue
			}
			r, done, err := walkOn(wk, walk.Seed(uint64(opts.Seed), uint64(idx), uint64(attempt)+2000), init, p, end, extra)
			if r == nil {
				return done, err
			}
			tail = append(tail, r.Path...)
			end = r.End
		}
	}

	if quiescent != nil {
		// The search found a state where nothing can happen: certainly
		// dead. Find where it became so.
		_, err := settle(0, qinit, quiescent, nil, nil)
		if errors.Is(err, errCutSuspect) {
			// Stuck for certain: the violation stands, without the
			// critical step the cut dead test could not show.
			c.res.Message += fmt.Sprintf(" (its critical transition is not known: %s)", c.deadCut)
			c.res.Live.CutSuspect = ""
			return nil
		}
		if errors.Is(err, sim.ErrStopped) && c.res.Property == search.QuiescentProperty {
			// Stopped before the critical step was found: the violation
			// stands without it, as with --no-walks.
			c.res.Interrupted = c.interrupted()
			c.res.Message += fmt.Sprintf(" (%s before its critical transition was found)", c.whyStopped())
			return nil
		}
		return err
	}
	take, finish := c.walkPeriphery()
	defer finish()
	// walksCut ends the walks where the time budget ran out: with
	// nothing found and no suspect left undecided, the check passes on
	// the walks it took, and says how many (LiveStats.WalksCut).
	walksCut := func() error {
		if !c.budgetOnly() || len(undecided) > 0 {
			return sim.ErrStopped
		}
		c.res.Live.WalksCut = true
		return nil
	}
	for i := range c.periphery.Len() {
		c.during = "" // the walks
		if c.walkStop() {
			return walksCut()
		}
		out := take(i)
		r, err, base, init := out.r, out.err, out.base, out.init
		if errors.Is(err, sim.ErrStopped) {
			return walksCut()
		}
		if r == nil {
			return err // the state did not replay
		}
		c.res.Live.Walks++
		c.res.Live.WalkSteps += int64(r.Steps)
		if r.LiveAt >= 0 && r.Steps > r.LiveAt {
			c.res.Live.AfterLive += int64(r.Steps - r.LiveAt)
			c.res.Live.AfterLiveWalks++
		}
		c.takeWalk(out.tally, out.depth)
		if err != nil {
			return c.walkError(err, init, append(base.Clone(), r.Path...))
		}
		if r.Violated != "" && safetyFound(init, append(base.Clone(), r.Path...), r) {
			return nil
		}
		if c.opts.Progress != nil && i%64 == 63 {
			c.opts.Progress(Progress{Phase: "walks", Stats: c.res.Stats, Walks: c.res.Live.Walks, Periphery: c.periphery.Len()})
		}
		if r.LiveAt >= 0 {
			continue
		}
		found, err := settle(c.walkIndex(i), init, base, r.Path, r.End)
		if errors.Is(err, errCutSuspect) {
			c.suspectVerdict(i+1, undecided)
			return nil
		}
		if err != nil || found {
			return err
		}
	}
	if len(undecided) > 0 && c.res.Verdict == OK {
		c.res.Verdict = Inconclusive
		c.res.Message = fmt.Sprintf("%d walks never became live, and walks up to depth %d could not tell whether they were dead: %s",
			len(undecided), opts.WalkDepth<<opts.Escalations, undecided[0])
	}
	return nil
}

// errCutSuspect ends the liveness phase at a suspect that dead tests
// below the floor found no way back from (LiveStats.CutSuspect).
var errCutSuspect = errors.New("a suspect the cut dead test could not settle")

// suspectVerdict makes the check inconclusive at the suspect of the walk
// from the walked-th periphery state, which the cut dead tests
// (c.deadCut) could not call dead: it says where the probes point, how
// strong the test was and how to run it again, what else was left
// undecided, and that the states after it were not walked from.
func (c *checker) suspectVerdict(walked int, undecided []string) {
	r := c.res
	r.Verdict = Inconclusive
	r.Message = fmt.Sprintf("a suspect: the %s; %s", r.Live.CutSuspect, c.deadCut)
	if len(undecided) > 0 {
		r.Message += fmt.Sprintf("; %s before it could not be told from dead by walks up to depth %d: %s",
			reports.Count(len(undecided), "other walk"), c.opts.WalkDepth<<c.opts.Escalations, undecided[0])
	}
	if n := c.periphery.Len(); walked < n {
		r.Message += fmt.Sprintf("; walks from %s of the %s at the bound that are not live were taken, the others not", reports.Thousands(walked), reports.Count(n, "state"))
	}
}

// cutSuspect says where the critical search of p, a path from the
// initial state init names, pointed with dead tests below the floor.
func (c *checker) cutSuspect(init []int, p sim.Path, cr *critical.Result) string {
	prop, k := c.liveName(), len(c.prefix)
	path := fmt.Sprintf("path of %s that never became live", reports.Count(len(p)+k, "step"))
	if cr.Case == critical.Start {
		return fmt.Sprintf("%s does not recover even from its first state by the probes and the dead test: %s", path, evidenceWords(cr.Dead, prop))
	}
	what := ""
	if before, _ := c.stateAfter(init, p, cr.Step-1); before != nil {
		what = " (" + c.w.Describe(before, cr.Event) + ")"
	}
	return fmt.Sprintf("%s has its critical step probably at step %d%s: after it, %s; after step %d, %s",
		path, cr.Step+k, what, evidenceWords(cr.Dead, prop), cr.LiveStep+k, evidenceWords(cr.Alive, prop))
}

// mainStop is the main world's Stop during the liveness phase: whether
// to end the check, and now and then a progress report.
func (c *checker) mainStop() bool {
	c.progress("critical", false)
	return c.stop()
}

// progress reports phase to Options.Progress: at once when now is set,
// otherwise at most once a second.
func (c *checker) progress(phase string, now bool) {
	if c.opts.Progress == nil || (!now && time.Since(c.lastProgress) < time.Second) {
		return
	}
	c.lastProgress = time.Now()
	c.opts.Progress(Progress{Phase: phase, Stats: c.res.Stats, Walks: c.res.Live.Walks, Periphery: c.periphery.Len(), Suspect: c.suspect})
}

// whyStopped says what ended the check early: the user, the time budget
// or the memory budget.
func (c *checker) whyStopped() string {
	switch {
	case c.interrupted():
		return "the check was interrupted"
	case c.timeUp():
		return fmt.Sprintf("the time budget (--time %s) ran out", c.opts.Time)
	}
	return "the check reached its memory limit"
}

// stopped records a check that was stopped (by the user, the time budget
// or the memory budget) after its search, during c.during: nothing was
// found that it could report, so it is inconclusive, and says what it
// covered.
func (c *checker) stopped() {
	r := c.res
	r.Verdict, r.Property, r.Path, r.Init, r.Critical, r.startEnd = Inconclusive, "", nil, nil, nil, nil
	r.Interrupted = c.interrupted()
	if !r.Complete {
		r.Message = c.coverage() // it says what was under way
		return
	}
	r.Message = fmt.Sprintf("%s during %s: %s explored (%s), no violation", c.whyStopped(), cmp.Or(c.during, "the walks"),
		reports.Scope(r.Covered, r.Exhausted, r.Stats.Postponed), reports.StatesWords(r.Stats.States, r.Symmetry))
	if n := c.periphery.Len(); n > 0 {
		r.Message += fmt.Sprintf("; walks from %s of the %s at the bound that are not live reached a live state", reports.Thousands(r.Live.recovered()), reports.Count(n, "state"))
	}
}

// walkError turns a handler or property panic during a walk, or what a
// probe of the critical search ran into (with its own path), into a
// finding; other errors are failures.
func (c *checker) walkError(err error, init []int, p sim.Path) error {
	var f *critical.Finding
	if errors.As(err, &f) {
		c.setPath(init, f.Path)
		switch {
		case f.PropertyError != nil:
			c.res.Verdict, c.res.Property = PropertyError, f.PropertyError.Property
		case f.Panic != nil:
			c.res.Verdict, c.res.Property = SafetyViolation, search.PanicProperty
		default:
			c.res.Verdict, c.res.Property = SafetyViolation, f.Property
		}
		c.res.Message = f.Message
		return nil
	}
	if hp := asPanic(err); hp != nil {
		c.setPath(init, p)
		c.res.Verdict, c.res.Property, c.res.Message = SafetyViolation, search.PanicProperty, hp.Error()
		return nil
	}
	var nd *sim.NondeterminismError
	if errors.As(err, &nd) && nd.Step == 0 {
		// A step of the walk did something else when run again: p
		// ends with it.
		c.setPath(init, p)
		c.res.Verdict, c.res.Property, c.res.Message = SafetyViolation, search.DeterministicProperty, nd.Error()
		return nil
	}
	var pe *properties.Error
	if errors.As(err, &pe) {
		c.setPath(init, p)
		c.res.Verdict, c.res.Property, c.res.Message = PropertyError, pe.Property, pe.Error()
		return nil
	}
	return err
}

// report records a liveness violation with its critical transition. p
// and cr count from the check's start; the result counts from the initial
// state, prefix included.
func (c *checker) report(init []int, p sim.Path, cr *critical.Result, dt DeadTest, tried []string) {
	r := c.res
	r.Verdict = LivenessViolation
	c.setPath(init, p)
	r.Property = c.liveName()
	k := len(c.prefix)
	cx := &Critical{
		Case: cr.Case, Step: cr.Step + k, Event: cr.Event, LiveStep: cr.LiveStep + k,
		LivePath: c.full(cr.LivePath), Dinit: cr.Dinit + k, Probes: cr.Probes, ProbeSteps: cr.Steps,
		WalkDepth: dt.WalkDepth, Tried: tried, SearchSteps: c.pathFrom[0], WalkSteps: c.pathFrom[1],
		Dead: cr.Dead, Alive: cr.Alive, End: cr.End, EndTest: dt, Overturned: cr.Overturned,
	}
	for _, t := range cr.Tested {
		t.Step += k
		cx.Tested = append(cx.Tested, t)
	}
	if end, _ := c.stateAfter(init, p, len(p)); end != nil {
		cx.endFP = end.Fingerprint()
	}
	before, _ := c.stateAfter(init, p, cr.Step-1)
	after, _ := c.stateAfter(init, p, cr.Step)
	if before != nil && after != nil {
		cx.EventText = c.w.Describe(before, cr.Event)
		cx.Before, cx.After = DumpNodes(before), DumpNodes(after)
		cx.BeforeNet, cx.AfterNet = DumpNet(before), DumpNet(after)
	}
	if len(cr.LivePath) > cr.LiveStep {
		if la, _ := c.stateAfter(init, cr.LivePath, cr.LiveStep+1); la != nil {
			cx.LiveAfter, cx.LiveAfterNet = DumpNodes(la), DumpNet(la)
			cx.LiveEventText = c.w.Describe(before, cr.LivePath[cr.LiveStep].Event)
		}
	}
	r.Critical = cx
	r.Message = fmt.Sprintf("%s can never hold again after step %d of %d (%s)", r.Property, cx.Step, len(r.Path), cx.EventText)
	if cx.Dinit == 0 {
		// "Again" only where it held before on this path.
		r.Message = fmt.Sprintf("%s never holds on this path, and can no longer after step %d of %d (%s)", r.Property, cx.Step, len(r.Path), cx.EventText)
	}
}

// reportStart records a liveness violation whose path is dead from its
// first state: the property can never hold, whatever happens.
func (c *checker) reportStart(init []int, p sim.Path, cr *critical.Result, dt DeadTest) {
	r := c.res
	c.setPath(init, p)
	r.Verdict, r.Property, r.Critical = LivenessViolation, c.liveName(), nil
	// The trace records the dead test of the path's last state, which
	// replay runs again, as for a critical transition.
	r.startEnd = &Critical{End: cr.End, EndTest: dt}
	if end, _ := c.stateAfter(init, p, len(p)); end != nil {
		r.startEnd.endFP = end.Fingerprint()
	}
	why := fmt.Sprintf("none of the %d states reachable from it is live (all searched)", cr.Dead.SearchStates)
	if cr.Dead.Stuck {
		why = reports.StuckWords(r.Property)
	}
	r.Message = fmt.Sprintf("%s can never hold: the state the check starts from is already dead: %s", r.Property, why)
}

func (c *checker) liveName() string { return liveNames(c.m) }

// liveNames names the liveness properties of m, as a liveness violation
// does: every one of them must hold in a live state.
func liveNames(m *protocol.Model) string {
	var names []string
	for _, p := range m.Properties {
		if p.Kind == properties.Liveness {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ",")
}

// stateAfter replays the first n steps of p from where the check started
// (the initial state init names, without a prefix).
func (c *checker) stateAfter(init []int, p sim.Path, n int) (*sim.State, error) {
	saved := c.w.Chooser
	c.w.Chooser = nil
	defer func() { c.w.Chooser = saved }()
	k := len(c.prefix)
	s, err := c.runPath(c.fullInit(init), c.startOf(init), c.full(p), k, k+min(n, len(p)))
	if err != nil {
		return nil, err
	}
	return s, nil
}

func DumpNodes(s *sim.State) []string {
	out := make([]string, s.N())
	for i := range out {
		out[i] = sim.DumpNode(s, sim.NodeID(i))
	}
	return out
}

// DumpNet lists the messages in flight in s, "Msg from->to" each, sorted.
func DumpNet(s *sim.State) []string {
	out := []string{}
	for _, e := range s.InFlight() {
		out = append(out, fmt.Sprintf("%s %d->%d", sim.Dump(e.Msg), e.From, e.To))
	}
	slices.Sort(out)
	return out
}

// walkIndex numbers walk i from the periphery among all the shards' walks
// (Options.Shard): walk i of shard j of n is walk i*n+j, so that no two
// shards walk with the same seeds. Unsplit, it is i.
func (c *checker) walkIndex(i int) int {
	if sh := c.opts.Shard; sh.Count > 1 {
		return i*sh.Count + sh.Index
	}
	return i
}

type walkOut struct {
	// base is the periphery state's path, for a walk that did not
	// recover or ran into a finding (nil for the others), and depth its
	// length.
	base  sim.Path
	depth int
	init  []int // from the initial state that names
	r     *walk.Result
	err   error
	tally *walkTally
}

// walkPeriphery walks from every periphery state on opts.Workers worlds
// and hands the results over in periphery order: the walk from state i
// has its own seed, so the results, and what the check reports, do not
// depend on the number of workers. One fewer goroutine than workers walks
// beside the reader: take walks itself while the walk it needs is under
// way elsewhere, so one worker walks on the reader's goroutine alone and
// no core waits on another to hand a walk over. Walks run at most a few
// ahead of the reader. finish stops the goroutines and waits for them.
func (c *checker) walkPeriphery() (take func(i int) walkOut, finish func()) {
	n := c.periphery.Len()
	outs := make([]chan walkOut, n)
	for i := range outs {
		outs[i] = make(chan walkOut, 1)
	}
	workers := max(1, min(c.opts.Workers, n))
	ahead := make(chan struct{}, 4*workers) // walks done or under way, not yet read
	done := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers - 1 {
		pw := c.newPeriWalker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				select {
				case ahead <- struct{}{}:
				case <-done:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				outs[i] <- pw.walk(i)
			}
		}()
	}
	own := c.newPeriWalker()
	take = func(i int) walkOut {
		for {
			select {
			case out := <-outs[i]:
				<-ahead // a slot for the walkers
				return out
			default:
			}
			// Walk i is not done: walk the next one not yet begun, if the
			// window has room, rather than wait. (While i is not begun,
			// nothing after it is either, and the window is empty.)
			select {
			case ahead <- struct{}{}:
				if j := int(next.Add(1) - 1); j < n {
					outs[j] <- own.walk(j)
					continue
				}
				<-ahead
			default:
			}
			out := <-outs[i]
			<-ahead
			return out
		}
	}
	var once sync.Once
	finish = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
	return take, finish
}

// A periWalker walks from periphery states on a world of its own.
type periWalker struct {
	c      *checker
	rm     *search.Remaker
	wk     *walk.Walker
	trail  *walk.Trail
	at     search.Trail
	making bool // making a periphery state again, not walking from it
	tally  *walkTally
	visit  func(*sim.State, *sim.StepInfo)
}

func (c *checker) newPeriWalker() *periWalker {
	w, err := sim.NewWorld(c.m.Spec)
	if err != nil {
		panic(err) // the spec was valid for the main world
	}
	w.Stop = c.walkStop // a walk of millions of steps stops too
	// Each walker writes its trail and tally at every step, and its
	// periWalker at every walk: all on cache lines of their own, as
	// walkers made one after the other walk on different cores.
	pw := lines.New[periWalker]()
	pw.c, pw.trail, pw.rm = c, lines.New[walk.Trail](), c.periphery.Remaker(w)
	// where the walker is, for the watchdog: making a periphery state
	// again (at), or walking from it (trail).
	w.Guard = c.watch.add(func() hang {
		ev, choices, _ := w.Current()
		if pw.making {
			return c.pathHang(pw.at.Init, pw.at.Path, pw.at.Event, ev, choices)
		}
		return c.walkHang(pw.trail, ev, choices)
	})
	pw.wk = walk.New(w, c.isLive, c.weights, 0)
	pw.wk.Safety, pw.wk.Trail = c.safety, pw.trail
	pw.wk.AfterLive = afterLive(c.opts.AfterLive)
	pw.tally, pw.visit = c.newWalkTally()
	return pw
}

// walk walks from periphery state i.
func (pw *periWalker) walk(i int) walkOut {
	c := pw.c
	// The search keeps the periphery as paths: the state is made again
	// here, on this walker's world.
	pw.making = true
	f, err := pw.rm.At(i, &pw.at)
	pw.making = false
	if err != nil {
		return walkOut{err: err}
	}
	seed := walk.Seed(uint64(c.opts.Seed), uint64(c.walkIndex(i)), 0)
	wk := pw.wk
	wk.Reseed(seed)
	pw.trail.Init, pw.trail.Base = c.fullInit(f.Init), f.Path
	// A walk goes on past recovery, checking safety, as far as
	// Options.AfterLive says. It records nothing the first time: only a
	// walk that never recovers, or runs into a violation, needs its path,
	// and the same seed walks the same way again.
	pw.tally.reset()
	wk.Visit = pw.visit
	r, err := wk.Walk(f.State, c.opts.WalkDepth, c.opts.StopAtLive, false)
	wk.Visit = nil // the same walk again is tallied already
	t := pw.tally.clone()
	// The path is the remaker's, made again by its next call: kept
	// only where the walk is reported.
	var base sim.Path
	if err != nil || r.LiveAt < 0 || r.Violated != "" {
		wk.Reseed(seed)
		r, err = wk.Walk(f.State, c.opts.WalkDepth, c.opts.StopAtLive, true)
		base = f.Path.Clone()
	} else {
		r.End = nil // recovered: nothing more is needed of it
	}
	return walkOut{base, len(f.Path), f.Init, r, err, t}
}

// walkPool returns the worlds on which the critical searches' probes and
// dead tests walk beside the main world, one fewer than the workers
// (nil for one worker), made at the first call: each stops when the main
// world does, and tells the watchdog where its walk is.
func (c *checker) walkPool() *critical.Pool {
	if c.pool != nil || c.opts.Workers <= 1 {
		return c.pool
	}
	p := &critical.Pool{}
	for range c.opts.Workers - 1 {
		w, err := sim.NewWorld(c.m.Spec)
		if err != nil {
			panic(err) // the spec was valid for the main world
		}
		w.Stop = c.mainStop
		trail := lines.New[walk.Trail]() // written at every step (see newPeriWalker)
		w.Guard = c.watch.add(func() hang {
			ev, choices, _ := w.Current()
			return c.walkHang(trail, ev, choices)
		})
		p.Worlds, p.Trails = append(p.Worlds, w), append(p.Trails, trail)
	}
	c.pool = p
	return p
}
