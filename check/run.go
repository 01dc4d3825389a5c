package check

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// ErrPrefix wraps a prefix that does not replay under the configuration
// of the check.
var ErrPrefix = errors.New("the prefix does not replay")

// Check runs a system through the pipeline: exhaustive search to the
// depth bound, checking safety on every state; a biased random walk from
// each state at the bound that is not live; and, for a walk that never
// becomes live, the critical-transition search. It reports the first
// violation. The error is for bad configurations and failures of the
// tool, never for a violation.
func Check(sys *protocol.System, opts Options) (out *Result, err error) {
	clock := newPhaseClock()
	defer func() {
		phases, total := clock.stop()
		if out != nil {
			out.Phases, out.Elapsed = phases, total
		}
	}()
	opts.Fill(sys)
	if opts.Mode != "global" && opts.Mode != "local" {
		return nil, fmt.Errorf("unknown mode %q (valid: global, local)", opts.Mode)
	}
	red, err := ParseReduce(opts.Reduce)
	if err != nil {
		return nil, err
	}
	cfg, m, err := sys.Model(opts.Config)
	if err != nil {
		return nil, err
	}
	if !red.Symmetry {
		m.Spec.Symmetry = nil
	}
	m.Spec.HandlerTimeout = opts.HandlerTimeout
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return nil, err
	}
	// A sample of the search's steps runs twice, so that a handler that is
	// not deterministic is named rather than giving traces that do not
	// replay.
	w.Recheck = recheckEvery
	if opts.Mode == "local" && len(opts.Prefix) > 0 {
		return nil, fmt.Errorf("local mode starts from the initial state: it does not take a prefix")
	}
	if opts.MinDepth < 0 || opts.MinDepth > opts.Depth {
		return nil, fmt.Errorf("the minimum depth (--min-depth %d) must be between 1 and the depth bound (--depth %d)", opts.MinDepth, opts.Depth)
	}
	if opts.DeadStates < 0 || opts.DeadWalks < 0 || opts.DeadStates > critical.DeadStates || opts.DeadWalks > critical.DeadWalks {
		return nil, fmt.Errorf("the dead test (--dead-test %d,%d) must search 1 to %s states, then take 1 to %d walks: the floor of every dead test is the most a check runs",
			opts.DeadStates, opts.DeadWalks, reports.Thousands(critical.DeadStates), critical.DeadWalks)
	}
	if sh := opts.Shard; sh.Count != 0 || sh.Index != 0 {
		switch {
		case sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count:
			return nil, fmt.Errorf("shard %d/%d: the index must be at least 0 and less than the count", sh.Index, sh.Count)
		case sh.SplitDepth < 0:
			return nil, fmt.Errorf("the split depth cannot be negative")
		case opts.Mode != "global":
			return nil, fmt.Errorf("only the global search splits into shards, not %s mode", opts.Mode)
		case opts.Time > 0:
			return nil, fmt.Errorf("a shard runs without a time budget, so that its result does not depend on the machine")
		}
	}
	c := &checker{w: w, m: m, opts: opts, red: red, prefix: opts.Prefix, mem: newMemBudget(opts.MaxMemory, opts.Workers), clock: clock}
	// Goroutines a confirmed hang leaves behind, should their handler
	// return after all, stop at their next step.
	defer c.over.Store(true)
	c.mem.start()
	defer c.mem.stop()
	if opts.Time > 0 {
		now := c.now()
		c.deadline, c.searchDeadline = now.Add(opts.Time), now.Add(opts.Time-opts.Time/4) // not Time*3/4: no overflow for a huge budget
		c.walksDeadline = now.Add(opts.Time - opts.Time/8)
	}
	defer c.memoryVerdict()
	c.res = &Result{Verdict: OK, System: sys.Name, Config: cfg, Seed: opts.Seed, Depth: opts.Depth,
		WalkDepth: opts.WalkDepth, Walks: opts.Walks, StopAtLive: opts.StopAtLive, AfterLive: opts.AfterLive, Mode: opts.Mode, PrefixLen: len(opts.Prefix)}
	if opts.Mode == "global" {
		c.res.Symmetry = m.Spec.Symmetry
	}
	c.res.FromBugs, c.res.BugWarnings = sys.BugSettings(opts.Config)
	c.res.docs = protocol.Docs(m.Properties...)
	c.weights = &opts.Weights
	if !opts.WeightsSet {
		wt := walk.DefaultWeights
		if m.Weights != nil {
			wt = *m.Weights
		}
		c.weights = &wt
	}
	c.res.Weights = *c.weights
	for i := range m.Properties {
		switch p := &m.Properties[i]; p.Kind {
		case properties.Liveness:
			c.live = append(c.live, p)
		case properties.Reachability:
			c.res.Sometimes = append(c.res.Sometimes, Sometimes{Property: p.Name, Step: -1, Evaluated: opts.Mode != "local"})
			c.some = append(c.some, p)
		}
	}

	trail := &search.Trail{}
	w.Guard = c.watch.add(func() hang { return c.where(trail) })
	c.watch.stop = c.stop
	allow := opts.ConfirmTimeout
	h, err := c.watch.run(opts.HandlerTimeout, allow, func(h *hang) (bool, error) { return c.confirm(sys, h, allow) },
		func() error { return c.run(trail) })
	if h != nil && err == nil {
		// Confirmed: stop here. The handler may loop for ever on the
		// goroutines left in it; confirming more would only add to them.
		return c.hangResult(h, allow), nil
	}
	if errors.Is(err, sim.ErrStopped) {
		// Stopped after the search, before anything it could report, or
		// while a handler held the check (its goroutine, left in the
		// handler, may yet write c.res: the caller gets a copy).
		c.stopped()
		c.memoryVerdict()
		res := *c.res
		return &res, nil
	}
	var nd *sim.NondeterminismError
	if errors.As(err, &nd) {
		// Said in the user's terms, with the step where the search is.
		var se *sim.StepError
		if nd.Step == 0 && c.phase == phaseSearch && errors.As(err, &se) {
			nd.Step = len(c.prefix) + se.Index + 1
		}
		return nil, nd
	}
	if err != nil {
		return nil, err
	}
	res := c.res
	if res.Verdict == OK || res.Verdict == Inconclusive {
		return res, nil
	}
	// Every reported trace replays: run it again from scratch, as a trace
	// file would be, before reporting it. These runs look for no hang:
	// they get the long allowance, so that a busy machine cannot make
	// them fail. The user or the memory budget may stop them, not the
	// time budget: what was found within it is reported, and a replay
	// costs a step per step of the path.
	confirmStop := func() bool { return c.interrupted() || c.mem.over() }
	c.during = fmt.Sprintf("the replay that confirms the %s it found", strings.ReplaceAll(string(res.Verdict), "-", " "))
	clock.to(phReplay)
	rep, err := ReplayStopping(sys, cfg, res.Init, res.Path, allow, confirmStop)
	if errors.Is(err, sim.ErrStopped) {
		c.stopped()
		return res, nil
	}
	if err != nil {
		return nil, c.noReplay(err)
	}
	cx := res.Critical
	if cx == nil {
		cx = res.startEnd
	}
	if cx != nil {
		// The search ran the dead test on the path's last state already:
		// the same test from the same state gives the same evidence.
		if rep.Final == nil || rep.Final.Fingerprint() != cx.endFP {
			return nil, fmt.Errorf("internal error: the %s violation found replays to another last state", res.Property)
		}
		rep.End = cx.End
	}
	if !rep.Reproduces(res.Verdict, res.Property) {
		return nil, notReproduced(fmt.Sprintf("the %s violation found", res.Property), rep)
	}
	res.Steps, res.History = rep.Steps, rep.History
	if res.Verdict == LivenessViolation {
		// Which P-state was never answered, for a leads-to property.
		res.Waiting = rep.Waiting
		for _, wt := range rep.Waiting {
			res.Message += "; " + wt.String()
		}
	}
	if cx := res.Critical; cx != nil {
		lrep, err := ReplayStopping(sys, cfg, res.Init, cx.LivePath, allow, confirmStop)
		if errors.Is(err, sim.ErrStopped) {
			c.stopped()
			return res, nil
		}
		if err != nil {
			return nil, c.noReplay(err)
		}
		if !lrep.Reproduces(Live, "") {
			return nil, notReproduced("the nearest live path", lrep)
		}
		cx.liveSteps = lrep.Steps
		clock.to(phShorten)
		res.Shortened = shorten(sys, cfg, res, allow, c.opts.Workers, c.stop)
		clock.to(phSlip)
		// The slip and the odds are bounded in steps: they run on past
		// the time budget, as the replays above do, so that a violation
		// found within it is reported with its diagnosis; but by an
		// eighth of the budget at most (from its end, or from their
		// start if that is later), since their steps on a system whose
		// step is slow could take minutes. The user, the memory budget
		// or that eighth may stop them, and the report says which.
		var diagEnd time.Time
		if !c.deadline.IsZero() {
			diagEnd = c.deadline
			if now := c.now(); now.After(diagEnd) {
				diagEnd = now
			}
			diagEnd = diagEnd.Add(c.opts.Time / 8)
		}
		diagUp := func() bool { return !diagEnd.IsZero() && c.now().After(diagEnd) }
		cx.Slip, cx.Odds, cx.NoSlip, cx.NoOdds = findSlip(sys, cfg, res, allow, c.opts.Workers, func() bool { return confirmStop() || diagUp() }, func() string {
			switch {
			case c.interrupted():
				return "the check was interrupted"
			case c.mem.over():
				return fmt.Sprintf("the check reached its memory limit (--max-memory %s)", FormatBytes(c.mem.limit))
			}
			return fmt.Sprintf("their eighth of the time budget past its end (--time %s) ran out", c.opts.Time)
		})
	}
	return res, nil
}

// recheckEvery is how often the main world runs a step twice (after its
// first steps, which all are): rarely enough to cost little.
const recheckEvery = 64

type checker struct {
	w      *sim.World
	m      *protocol.Model
	opts   Options
	red    Reductions
	res    *Result
	s0     *sim.State // the initial state (the first, without a prefix)
	base   *sim.State // where the check starts: after the prefix
	prefix sim.Path
	// starts are the initial states the search starts from, without a
	// prefix; the paths from them name theirs by its choices.
	starts    []sim.Start
	live      []*properties.Property
	some      []*properties.Property // the reachability properties, as res.Sometimes
	weights   *walk.Weights
	walkCov   *coverage.Counter // the walks from the periphery's, as they are taken
	periphery *search.Periphery
	// phase says what the main world is doing, and the fields after it
	// where, for the watchdog: a walk's trail, or a path from the initial
	// state with the index of the step under way.
	phase     int
	walkTrail walk.Trail
	along     sim.Path
	alongInit []int
	alongAt   int
	// searchFrom, when set, is the path to the state a search that does
	// not start where the check does starts from (from the initial state
	// searchFromInit names): its trails' paths go on from there.
	searchFrom     sim.Path
	searchFromInit []int

	watch watchdog
	mem   *memBudget
	// deadline is when the time budget runs out (zero: no budget);
	// searchDeadline when the exhaustive search must end; walksDeadline
	// when the walks from the periphery must, so that a critical search
	// begun before it has the last eighth of the budget at least (the
	// diagnosis's share).
	deadline, searchDeadline, walksDeadline time.Time
	// during says what the check does after its search, for a report of
	// a check stopped then; suspect is the length of the path under the
	// critical search, lastProgress when Progress was last called for it.
	during  string
	suspect int
	// pathFrom is, for the suspect the critical search settled, the
	// steps of its path the search took and those a walk took after.
	pathFrom     [2]int
	lastProgress time.Time
	// deadSized says the size of the check's dead tests is decided (at
	// the first one, for every one): the floor's, or deadCut's.
	deadSized bool
	deadCut   *DeadCut
	over      atomic.Bool // Check has returned
	clock     *phaseClock
	pool      *critical.Pool // walkPool's
}

// timeUp says whether the time budget is spent.
func (c *checker) timeUp() bool { return !c.deadline.IsZero() && c.now().After(c.deadline) }

// now is the time on the clock the budget is read on.
func (c *checker) now() time.Time {
	if c.opts.clock != nil {
		return c.opts.clock()
	}
	return time.Now()
}

// walksUp says whether the walks from the periphery must end: their
// share of the time budget is spent.
func (c *checker) walksUp() bool { return !c.walksDeadline.IsZero() && c.now().After(c.walksDeadline) }

// walkStop says whether to end the walks from the periphery: as stop,
// or their share of the time budget is spent.
func (c *checker) walkStop() bool { return c.stop() || c.walksUp() }

// budgetOnly says the time budget (the walks' share of it), and nothing
// else, is why the walks stop: not the user, the memory budget or
// Check's return.
func (c *checker) budgetOnly() bool {
	return c.walksUp() && !c.interrupted() && !c.mem.over() && !c.over.Load()
}

func (c *checker) isLive(s *sim.State) bool {
	if len(c.live) == 0 {
		return true
	}
	for _, p := range c.live {
		if !p.IsLive(s) {
			return false
		}
	}
	return true
}

// safety checks the safety properties on s, for walks.
func (c *checker) safety(s *sim.State) (string, string) {
	for i := range c.m.Properties {
		if p := &c.m.Properties[i]; p.Kind == properties.Safety {
			if err := p.CheckSafety(s); err != nil {
				var pe *properties.Error
				if errors.As(err, &pe) {
					panic(pe) // the walk ends with it as its error
				}
				return p.Name, err.Error()
			}
		}
	}
	return "", ""
}

func (c *checker) interrupted() bool { return c.opts.Interrupted != nil && c.opts.Interrupted() }

// stop says whether to end the work early: the user interrupted it, it
// outgrew its memory budget or its time budget, or Check has returned.
func (c *checker) stop() bool {
	return c.interrupted() || c.mem.over() || c.timeUp() || c.over.Load()
}

// searchStop says whether to end the exhaustive search early: it may use
// three quarters of the time budget, since a safety bug deep in a large
// space needs the search; walks past the budget are cut and counted.
func (c *checker) searchStop() bool {
	return c.stop() || (!c.searchDeadline.IsZero() && c.now().After(c.searchDeadline))
}

// memoryVerdict says so when the check ended at its memory budget with
// nothing found: what it covered is partial.
func (c *checker) memoryVerdict() {
	res := c.res
	res.MaxMemory = c.mem.limit
	if !c.mem.hit.Load() {
		return
	}
	res.MemoryLimit, res.PeakMemory = true, c.mem.peak.Load()
	if res.Verdict == OK || res.Verdict == Inconclusive {
		res.Verdict, res.Complete, res.Exhausted = Inconclusive, false, false
		fewer := "lower --depth, or use --max-states"
		if c.opts.Mode == "local" {
			fewer = "or lower --rounds"
		}
		res.Message = fmt.Sprintf("the check reached its memory limit (--max-memory %s; it needed %s) and stopped; raise the limit, %s",
			FormatBytes(c.mem.limit), FormatBytes(res.PeakMemory), fewer)
	}
}

func (c *checker) run(trail *search.Trail) error {
	res := c.res
	if c.opts.Mode == "local" {
		return c.runLocal()
	}
	if len(c.prefix) > 0 {
		// The prefix runs once, from the initial state it names; the
		// search, the walks and the probes all start from the state it
		// reaches.
		c.w.Strict = true
		s0, err := c.w.InitialFrom(c.opts.PrefixInit)
		if err == nil {
			c.s0 = s0
			c.base, err = c.runPath(c.opts.PrefixInit, s0, c.prefix, 0, len(c.prefix))
		}
		c.w.Strict = false
		if err != nil {
			return fmt.Errorf("%w under this configuration: %v", ErrPrefix, err)
		}
	} else {
		starts, err := c.w.Starts()
		if err != nil {
			var se *sim.StartError
			var pe *properties.Error // a leads-to property's P or Q
			if hp := asPanic(err); hp != nil && errors.As(err, &se) && len(starts) == 0 {
				res.Verdict, res.Property, res.Message, res.Init = SafetyViolation, search.PanicProperty, hp.Error(), se.Init
				return nil
			}
			if errors.As(err, &pe) && errors.As(err, &se) && len(starts) == 0 {
				res.Verdict, res.Property, res.Message, res.Init = PropertyError, pe.Property, pe.Error(), se.Init
				return nil
			}
			if hp := asPanic(err); hp == nil && pe == nil {
				return err
			}
			// A panic under later choices: the search reports it after
			// the initial states before it.
			starts = nil
		}
		c.starts = starts
		if starts != nil {
			c.s0, c.base = starts[0].State, starts[0].State
		}
	}
	sopts := search.Options{
		Depth:      c.opts.Depth,
		MaxStates:  c.opts.MaxStates,
		Properties: c.m.Properties,
		Starts:     c.starts,
		Trail:      trail,
		Stop:       c.searchStop,
		Workers:    c.searchWorkers(),
		Reduce:     c.red.Sleep,
		Observers:  c.red.Observers,
		Shard:      c.opts.Shard,

		Fingerprints: c.opts.Fingerprints,
	}
	if c.opts.Progress != nil {
		sopts.Progress = func(s search.Stats) { c.opts.Progress(Progress{Phase: "search", Stats: s}) }
	}
	c.phase = phaseSearch
	c.clock.to(phSearch)
	if len(c.prefix) > 0 {
		sopts.Start = c.base
	}
	sr, err := search.Global(c.w, sopts)
	if err != nil {
		return err
	}
	c.clock.serial(sr.Merge)
	res.Stats = sr.Stats
	res.Shard, res.Foreign, res.Fingerprints = c.opts.Shard, sr.Foreign, sr.Fingerprints
	if res.Shard.Count > 1 {
		res.Shard.SplitDepth = sr.SplitDepth
	}
	c.searchReached(sr)
	res.Complete = sr.Complete
	res.Exhausted = sr.Exhausted
	res.Covered = sr.Depth
	if v := sr.Violation; v != nil {
		c.setPath(v.Init, v.Path)
		if v.PropertyError != nil {
			res.Verdict, res.Property, res.Message = PropertyError, v.Property, v.Message
			return nil
		}
		res.Verdict = SafetyViolation
		res.Property, res.Message = v.Property, v.Message
		if v.Kind == properties.Liveness {
			res.Verdict = LivenessViolation
			if v.Property == search.QuiescentProperty {
				// A state where nothing can happen: a violation of the
				// liveness properties, in the words replay uses too.
				res.Property = c.liveName()
				res.Message = reports.StuckWords(res.Property)
				if !c.opts.NoWalks {
					return c.liveness(v.Init, v.Path)
				}
			}
		}
		return nil
	}
	if !sr.Complete {
		// Cut short: the search covered every state within sr.Depth
		// steps, exactly, as a search bounded there would. Cut by its
		// budget (time or states), the check goes on as that search's
		// would (a closed dead region, then walks from its periphery) and
		// passes to that depth if it may (cutVerdict); stopped by the
		// user or the memory budget, it only says what it covered.
		res.Verdict = Inconclusive
		res.Interrupted = c.interrupted()
		switch {
		case res.Interrupted:
			res.Cut = "interrupted"
		case c.mem.over():
			res.Cut = "memory"
		case !sr.Stopped:
			res.Cut = "max-states"
		default:
			res.Cut = "time"
		}
		budget := (res.Cut == "time" || res.Cut == "max-states") && c.opts.Shard.Count <= 1
		if budget && sr.Dead != 0 {
			return c.deadRegion(sr, sopts)
		}
		if res.Interrupted || c.opts.NoWalks || len(c.live) == 0 || sr.Periphery.Len() == 0 {
			res.Verdict = OK
			c.cutVerdict(budget)
			return nil
		}
		c.periphery = sr.Periphery
		res.Verdict = OK
		if err := c.liveness(nil, nil); err != nil {
			return err
		}
		if res.Verdict == OK || res.Verdict == Inconclusive {
			c.cutVerdict(budget)
		}
		return nil
	}
	if sr.Dead != 0 {
		return c.deadRegion(sr, sopts)
	}
	if c.opts.NoWalks || len(c.live) == 0 {
		return nil
	}
	c.periphery = sr.Periphery
	if err := c.liveness(nil, nil); err != nil {
		return err
	}
	if res.Verdict == OK && res.Live.WalksCut {
		res.Message = c.completeTo()
	}
	return nil
}

// cutVerdict decides a check whose search was cut short and that found
// nothing: it passes "complete to depth k", k the depth its search
// finished, where its budget (time or states: budget) cut it, its walks
// from depth k all ended (Verdict still OK) and k is at least MinDepth;
// otherwise it is inconclusive. Either way its message says what it
// covered.
func (c *checker) cutVerdict(budget bool) {
	res := c.res
	switch {
	case budget && res.Verdict == OK && res.Covered >= c.opts.MinDepth:
		res.Message = c.completeTo()
	case budget && res.Verdict == OK:
		res.Verdict = Inconclusive
		cov := c.coverage()
		res.Message = fmt.Sprintf("%s; the check must complete depth %d (--min-depth %d): give it more time (--time) or states (--max-states), or ask for less (--min-depth)",
			cov, c.opts.MinDepth, c.opts.MinDepth)
		if c.opts.MinDepth == DefaultMinDepth {
			res.Message = fmt.Sprintf("%s; a check must complete at least depth %d to pass: give it more time (--time) or states (--max-states)", cov, DefaultMinDepth)
		}
	default:
		res.Verdict = Inconclusive
		res.Message = c.coverage()
	}
}

// deadRegion reports the closed region of states that are not live that
// the search found (sr.Dead): no walk starts there, but the search saw
// all of it.
func (c *checker) deadRegion(sr *search.Result, sopts search.Options) error {
	c.clock.to(phRegion)
	res := c.res
	p, init := sim.Path{}, []int(nil)
	if len(c.starts) > 1 || c.base.Fingerprint() != sr.Dead {
		to := sopts
		to.Target, to.Progress, to.Fingerprints, to.Stop, to.Depth = sr.Dead, nil, false, c.stop, sr.Depth
		c.during = "the search for the path to the closed region of dead states it found"
		tr, err := search.Global(c.w, to)
		if err != nil {
			return err
		}
		if tr.TargetPath == nil && c.stop() {
			return sim.ErrStopped
		}
		if tr.TargetPath == nil {
			return fmt.Errorf("internal error: the search does not find its own dead state again")
		}
		p, init = tr.TargetPath, tr.TargetInit
	}
	c.setPath(init, p)
	res.Verdict, res.Property = LivenessViolation, c.liveName()
	res.Message = fmt.Sprintf("%s can never hold again: the search saw every state reachable from the end of this path, and none is live", res.Property)
	if c.opts.NoWalks {
		return c.deadEvidence(init, p, sopts)
	}
	return c.liveness(init, p)
}

// coverage says exactly what a check whose search was cut short
// covered: the levels it finished, and the walks from the last of them.
func (c *checker) coverage() string {
	r := c.res
	msg := fmt.Sprintf("%s: %s explored (%s), no violation; depth %d partly explored%s",
		c.cutWhy(), reports.Scope(r.Covered, false, r.Stats.Postponed), reports.StatesWords(r.Stats.States-r.Stats.Beyond, r.Symmetry), r.Covered+1, c.beyond())
	if w := c.cutWalks(); w != "" {
		msg += "; " + w
	}
	if r.Message != "" {
		msg += "; " + r.Message
	}
	if c.during != "" && r.Cut != "interrupted" {
		msg += fmt.Sprintf("; then %s during %s", c.whyStopped(), c.during)
	}
	return msg
}

// completeTo is the message of a check that passes to the depth its
// search finished, Covered, short of its bound (Cut), or with its walks
// cut short by the time budget (LiveStats.WalksCut).
func (c *checker) completeTo() string {
	r := c.res
	msg := fmt.Sprintf("no violation to depth %d, complete to depth %d: %s explored (%s)",
		r.Covered, r.Covered, reports.Scope(r.Covered, false, r.Stats.Postponed), reports.StatesWords(r.Stats.States-r.Stats.Beyond, r.Symmetry))
	if r.Stats.Beyond > 0 {
		msg += fmt.Sprintf("; depth %d partly explored%s", r.Covered+1, c.beyond())
	}
	if w := c.cutWalks(); w != "" {
		msg += "; " + w
	}
	if r.Cut == "" {
		return msg
	}
	return msg + fmt.Sprintf("; not to the depth bound %d: %s (--min-depth K fails a check that cannot complete depth K)", r.Depth, c.cutWhy())
}

// beyond says what a search stopped within a level found of the next
// (search.Stats.Beyond), after "depth k partly explored" ("": nothing).
func (c *checker) beyond() string {
	st := &c.res.Stats
	if st.Beyond == 0 {
		return ""
	}
	return fmt.Sprintf(": %s found from %s of those at depth %d", reports.StatesWords(st.Beyond, c.res.Symmetry), reports.Thousands(st.BeyondFrom), c.res.Covered)
}

// frontier says where the periphery of a search cut short is: at the
// depth it finished, and at the next where it kept part of that level.
func (c *checker) frontier() string {
	if c.res.Stats.Beyond > 0 {
		return fmt.Sprintf("at depth %d or %d", c.res.Covered, c.res.Covered+1)
	}
	return fmt.Sprintf("at depth %d", c.res.Covered)
}

// cutWhy says what cut the search short.
func (c *checker) cutWhy() string {
	r := c.res
	switch r.Cut {
	case "time":
		return fmt.Sprintf("the search used its three quarters of the time budget (--time %s)", c.opts.Time)
	case "max-states":
		return fmt.Sprintf("depth %d would pass the limit of %s (--max-states)", r.Covered+1, reports.Count(c.opts.MaxStates, "state"))
	case "memory":
		return "the search reached the memory limit"
	}
	return "the check was interrupted"
}

// cutWalks says how the walks from the periphery of a search cut short
// fared ("": there were none).
func (c *checker) cutWalks() string {
	r := c.res
	n := c.periphery.Len()
	if n == 0 {
		return ""
	}
	ok := r.Live.recovered()
	switch {
	case ok == n:
		return fmt.Sprintf("walks from %s %s that are not live reached a live state", allOf(n, "state"), c.frontier())
	case r.Live.Walks == n:
		return fmt.Sprintf("walks from %s of the %s %s that are not live reached a live state", reports.Thousands(ok), reports.Count(n, "state"), c.frontier())
	}
	if r.Live.WalksCut {
		return fmt.Sprintf("walks from %s of the %s %s that are not live reached a live state before the walks' seven eighths of the time budget (--time %s) ran out; the others were not walked from", reports.Thousands(ok), reports.Count(n, "state"), c.frontier(), c.opts.Time)
	}
	return fmt.Sprintf("walks from %s of the %s %s that are not live reached a live state before the budget ran out", reports.Thousands(ok), reports.Count(n, "state"), c.frontier())
}

// allOf says "all 5 states", or "the 1 state".
func allOf(n int, one string) string {
	if n == 1 {
		return "the 1 " + one
	}
	return "all " + reports.Count(n, one)
}

// searchWorkers makes the worlds of the search's workers past the first
// (which uses the main world), each watched for handlers that hang.
func (c *checker) searchWorkers() []search.Worker {
	var out []search.Worker
	for range c.opts.Workers - 1 {
		w, err := sim.NewWorld(c.m.Spec)
		if err != nil {
			panic(err) // the spec was valid for the main world
		}
		w.Recheck = c.w.Recheck
		// The workers share what their step caches recorded: a run one
		// recorded answers the others (on etcd raft at depth 11, the
		// misses of two workers were nearly twice one's).
		if c.w.SharedCache == nil {
			c.w.SharedCache = sim.NewSharedStepCache()
		}
		w.SharedCache = c.w.SharedCache
		trail := &search.Trail{}
		w.Guard = c.watch.add(func() hang {
			ev, choices, _ := w.Current()
			return c.searchHang(trail, ev, choices)
		})
		out = append(out, search.Worker{World: w, Trail: trail})
	}
	return out
}

// runPath applies p[from:to] to s, p a path from the initial state init
// names, keeping the watchdog told where it is.
func (c *checker) runPath(init []int, s *sim.State, p sim.Path, from, to int) (*sim.State, error) {
	saved := c.phase
	defer func() { c.phase = saved }()
	c.phase, c.along, c.alongInit = phasePath, p, init
	for i := from; i < to; i++ {
		c.alongAt = i
		next, err := c.w.Apply(s, p[i].Event, p[i].Choices)
		if err != nil {
			return s, &sim.StepError{Index: i, Event: p[i].Event, Err: err}
		}
		s = next
	}
	return s, nil
}

// startOf returns the state the check's paths from the initial state
// init names start from: the prefix's end, or that initial state.
func (c *checker) startOf(init []int) *sim.State {
	if len(c.prefix) == 0 {
		for _, st := range c.starts {
			if slices.Equal(st.Init, init) {
				return st.State
			}
		}
	}
	return c.base
}

// fullInit names the initial state of a path from where the check
// starts that starts from init: the prefix's, with a prefix.
func (c *checker) fullInit(init []int) []int {
	if len(c.prefix) > 0 {
		return c.opts.PrefixInit
	}
	return init
}

// setPath makes p, a path from the initial state init names (from the
// prefix's end, with a prefix), the result's path.
func (c *checker) setPath(init []int, p sim.Path) {
	c.res.Init, c.res.Path = c.fullInit(init), c.full(p)
}

// full returns the path from the initial state: the prefix, then p.
func (c *checker) full(p sim.Path) sim.Path {
	if len(c.prefix) == 0 {
		return p
	}
	return append(c.prefix.Clone(), p...)
}

// propertyError says whether the named property panics at the end of p:
// local mode, verifying a violation, sees only that it failed.
func (c *checker) propertyError(name string, init []int, p sim.Path) *properties.Error {
	s, err := c.w.InitialFrom(init)
	if err != nil {
		return nil
	}
	if s, err = c.w.Run(s, p, nil); err != nil {
		return nil
	}
	for i := range c.m.Properties {
		if pr := &c.m.Properties[i]; pr.Name == name && pr.Kind == properties.Safety {
			var pe *properties.Error
			if errors.As(pr.CheckSafety(s), &pe) {
				return pe
			}
		}
	}
	return nil
}

func asPanic(err error) *sim.HandlerPanic {
	var hp *sim.HandlerPanic
	if errors.As(err, &hp) {
		return hp
	}
	return nil
}
