// Package livecheck checks implementations of distributed systems for
// safety and liveness bugs. A protocol's nodes are plain Go state machines
// (see package sim); livecheck runs them in a deterministic simulated world,
// explores the orderings of messages, timers and failures, and reports each
// violation with a trace that replays.
//
// # Usage
//
// Describe the protocol as a [System] and call [Check]:
//
//	res, err := livecheck.Check(&mySystem, livecheck.Options{Depth: 12})
//	if err != nil { ... }           // bad configuration or a failure of the tool
//	if res.Verdict != livecheck.OK { // a violation, with res.Path
//	}
//
// [Main] gives a program the livecheck command (list, check, prefix,
// replay) for its own systems; cmd/livecheck is Main with the bundled
// ones. [Test] runs a check inside a Go test.
//
// # Step numbers
//
// Step 0 is the initial state; step i is the i-th event of a path (1-based),
// and "the state after step i" the state it leads to. [ReplayStep].Step,
// [Critical].Step and LiveStep, the reports' and trace files' step fields
// all count so.
package livecheck

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// Verdict is the outcome of a check.
type Verdict string

const (
	OK                Verdict = "ok"
	SafetyViolation   Verdict = "safety-violation"
	LivenessViolation Verdict = "liveness-violation"
	Inconclusive      Verdict = "inconclusive"
	// PropertyError says a property's own code panicked: a bug in the
	// property, reported with the path to the state it failed on.
	PropertyError Verdict = "property-error"
	// Live marks a trace that reaches a live state: the nearest live path
	// beside a liveness violation.
	Live Verdict = "live"
)

// DivergenceProperty names the built-in liveness property "every handler
// returns": a handler that runs past the time limit is stuck for ever.
const DivergenceProperty = "handlers-return"

// Options say what to check and how hard. Zero values take the defaults.
type Options struct {
	Config Config
	// Depth bounds the exhaustive search (default: the system's, or 20).
	Depth int
	// MaxStates stops the search after this many distinct states (0: no
	// limit); the result is then not complete.
	MaxStates int
	// Seed seeds every random choice livecheck makes (default 1).
	Seed int64
	// HandlerTimeout is how long one handler may run before it counts as
	// diverged (default 2s). A handler that runs longer is run again from
	// the initial state, allowed ConfirmTimeout, and reported only if it
	// hangs again.
	HandlerTimeout time.Duration
	// ConfirmTimeout is that second allowance (default
	// ConfirmAllowance(HandlerTimeout)).
	ConfirmTimeout time.Duration
	// Progress, when set, is called now and then during long work.
	Progress func(Progress)
	// Interrupted, when set and true, stops the work early: the result
	// keeps what was found and is inconclusive if nothing was.
	Interrupted func() bool
	// Time is the check's time budget (0: none). The exhaustive search
	// may use three quarters of it: past that it ends at the last level it finished,
	// and the walks start from there; walks stop when the budget is spent.
	// A check cut short by its budget is inconclusive unless it found a
	// violation, and says exactly what it covered. Its results depend on
	// the machine: tests bound the depth instead.
	Time time.Duration
	// MaxMemory is the most heap the check may use, in bytes: past it the
	// check ends, inconclusive, with what it found so far (0: the default,
	// DefaultMaxMemory; negative: no limit).
	MaxMemory int64

	// WalkDepth is how far each random walk from the periphery goes before
	// its path counts as a suspect (dmax, default 5000).
	WalkDepth int
	// Walks is the number of walks per probe of the critical-transition
	// search (k, default 8).
	Walks int
	// Escalations is how many times a walk depth too short to tell (case
	// C2) is doubled before the result is inconclusive (default 3).
	Escalations int
	// Weights are the walks' event weights when WeightsSet; otherwise the
	// system's, or walk.DefaultWeights.
	Weights    walk.Weights
	WeightsSet bool
	// NoWalks stops after the exhaustive search.
	NoWalks bool
	// StopAtLive ends each walk from the periphery at its first live
	// state, as MaceMC does: much faster, but safety is then checked on a
	// walk only until it recovers. By default walks go on to WalkDepth.
	StopAtLive bool
	// Workers is the number of goroutines of the exhaustive search and
	// of the walks from the periphery (default: GOMAXPROCS). The result
	// does not depend on it.
	Workers int
	// Mode is "global" (the default: global states, network included,
	// then walks for liveness) or "local" (local model checking of safety
	// properties, every violation verified by a real run).
	Mode string
	// Rounds bounds local mode: local events and repeated deliveries per
	// node on the first path to a state, raised round by round up to this
	// (default 8). A result that the bound cut short is inconclusive.
	Rounds int
	// MaxVerify bounds, in local mode, the steps of the search for real
	// runs to the preliminary violations that the message summaries do
	// not refute (default DefaultMaxVerify). A search that runs out
	// leaves them undecided, and the result inconclusive.
	MaxVerify int
	// Reduce is the reduction of the exhaustive search, "none" or a
	// comma-separated list of: "sleep", which skips transitions that
	// sleep sets show lead only to states found another way at the same
	// depth (the same states, depths, violations and periphery, fewer
	// transitions); "symmetry", which keeps one state of those that are
	// renamings of each other under the system's declared symmetry
	// (sim.Spec.Symmetry; nothing for a system that declares none), so
	// that state counts are of those classes; "observers", which takes
	// the events of the system's observers (sim.Spec.Observers: nodes
	// that never send, the only ones the properties read) only where no
	// other node has one, keeping every violation but not every state
	// (with datagrams, no failures and no leads-to properties; nothing
	// otherwise). Default: DefaultReduce, all three.
	Reduce string
	// Prefix is a path from the initial state (a live prefix, typically):
	// it is replayed once, and the check starts from where it ends.
	// Reported paths include it, so their traces replay on their own.
	// PrefixInit names the initial state it starts from (see Result.Init).
	Prefix     sim.Path
	PrefixInit []int
	// Shard, when its Count is more than 1, makes the check one slice of
	// a check split among Count processes (search.Shard): the search
	// divides the states of its split level among them, and each walks
	// from its own periphery, with seeds of its own (walk i of shard j of
	// n takes the seed of walk i*n+j). Its Index must be in [0, Count).
	// A split check has no time budget: its result must not depend on the
	// machine, so that merged shards mean what the unsplit check would.
	Shard search.Shard
	// Fingerprints keeps the keys of the states the search stored, for
	// Result.Fingerprints: a merge of shards counts their union.
	Fingerprints bool
}

// Progress is a snapshot of a running check.
type Progress struct {
	Phase     string
	Stats     search.Stats
	Walks     int // walks done (phase "walks")
	Periphery int // walks to do
}

// defaultDepth is the search depth when the options give none.
func (o *Options) defaultDepth(sys *System) int {
	if len(o.Prefix) > 0 && sys.PrefixDepth > 0 {
		return sys.PrefixDepth
	}
	if sys.DefaultDepth > 0 {
		return sys.DefaultDepth
	}
	return DefaultDepth
}

func (o *Options) fill(sys *System) {
	if o.Depth <= 0 {
		o.Depth = o.defaultDepth(sys)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = DefaultHandlerTimeout
	}
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = ConfirmAllowance(o.HandlerTimeout)
	}
	if o.WalkDepth <= 0 {
		o.WalkDepth = DefaultWalkDepth
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Walks <= 0 {
		o.Walks = DefaultWalks
	}
	if o.Rounds <= 0 {
		o.Rounds = DefaultRounds
	}
	if o.MaxVerify <= 0 {
		o.MaxVerify = DefaultMaxVerify
	}
	if o.Mode == "" {
		o.Mode = "global"
	}
	if o.Reduce == "" {
		o.Reduce = DefaultReduce
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory()
	} else if o.MaxMemory < 0 {
		o.MaxMemory = 0
	}
	if o.Escalations < 0 {
		o.Escalations = 0
	} else if o.Escalations == 0 {
		o.Escalations = DefaultEscalations
	}
}

// Result is the outcome of a check.
type Result struct {
	Verdict Verdict
	System  string
	Config  Config // with defaults filled in
	Seed    int64
	Depth   int
	// Symmetry is the groups of interchangeable nodes the search reduced
	// by (Options.Reduce with symmetry, on a system that declares some):
	// its state counts are then of classes of states that are renamings
	// of each other.
	Symmetry [][]sim.NodeID

	// Property is the violated property, Message what it said, Path the
	// steps from the initial state that show it.
	Property string
	Message  string
	Path     sim.Path
	// Init names that initial state, for a system whose nodes choose in
	// their first Init: the values those Choose calls returned, node 0's
	// first (nil where there is one initial state). The nearest live path
	// (Critical.LivePath) starts from the same one. ReplayFrom takes it.
	Init []int
	// Complete says the bounded search ran to its end.
	Complete bool
	// Covered is the depth the search finished: every state within
	// Covered steps was explored (Depth when Complete). Cut says what
	// ended the search before its bound ("time", "max-states", "memory",
	// "interrupted"), or is empty.
	Covered int
	Cut     string
	// Exhausted says the search saw every reachable state: no path was cut
	// off by the depth bound.
	Exhausted bool
	Stats     search.Stats
	// Interrupted says the check was stopped before its end.
	Interrupted bool
	// MemoryLimit says the check ended at its memory budget, MaxMemory;
	// PeakMemory is the heap it had then.
	MemoryLimit bool
	MaxMemory   int64
	PeakMemory  int64
	// Steps is the violation's path replayed, in words.
	Steps []ReplayStep
	// Waiting, for a liveness violation, lists the leads-to properties
	// (properties.LeadsTo) that wait at the end of Path, each with the
	// step where its P held and its Q never held after; the Message says
	// the same.
	Waiting []Waiting
	// Critical is set for a liveness violation found by walks.
	Critical *Critical
	// Shortened is Path with the steps before the critical step that do
	// not matter removed (nil: none could be, or no critical step).
	Shortened *Shortened
	// startEnd holds, for a liveness violation dead from the start (no
	// critical step), the dead test of the path's last state.
	startEnd *Critical
	// WalkDepth, Walks and Weights are the liveness settings used.
	WalkDepth  int
	Walks      int
	StopAtLive bool
	Weights    walk.Weights
	Live       LiveStats
	// Mode is the search mode; Local holds local mode's statistics.
	Mode  string
	Local *search.LocalStats
	// PrefixLen is the length of the prefix the check started after;
	// statistics count steps after it, Path and Critical include it.
	PrefixLen int
	// FromBugs are the settings of Config that came from its bugs' needs
	// (see Bug.Needs), not from the options or the system's defaults.
	FromBugs []Setting
	// BugWarnings say where Config cannot show one of its bugs: the
	// options gave a setting the bug does not show under.
	BugWarnings []string
	// Sometimes says, for each reachability property (properties.Sometimes)
	// in the system's order, whether the check reached it. One never
	// reached does not change the verdict; Test fails on it.
	Sometimes []Sometimes
	// Coverage counts the handlers the exhaustive search's transitions
	// ran (Stats.Transitions of them), WalkCoverage those the walks from
	// the periphery ran (nil when there were none; nil both in local
	// mode).
	Coverage, WalkCoverage *coverage.Summary
	// Shard is the slice of a split check this one was (Options.Shard),
	// its SplitDepth the level where the search divided its states (-1:
	// it ended before), Foreign the states of that level it left to the
	// other shards. Fingerprints are the keys of the states the search
	// stored, sorted (Options.Fingerprints).
	Shard        search.Shard
	Foreign      int64
	Fingerprints []uint64
}

// Sometimes is what the check found of one reachability property.
type Sometimes struct {
	Property string
	// Reached says a state the check reached satisfies it; Step is then
	// the fewest steps from the initial state to one that the search saw
	// (a shortest path: the search is breadth first; with observer events
	// postponed, Stats.Postponed, the fewest of the reduced search), or with ByWalk
	// the length of the first walk's path to one, the search having
	// reached none within its bound.
	Reached bool
	Step    int
	ByWalk  bool
	// Evaluated is false in local mode, which builds no global states
	// to evaluate it on.
	Evaluated bool
}

// Unreached lists the reachability properties the check evaluated and
// never reached.
func (r *Result) Unreached() []string {
	var out []string
	for _, s := range r.Sometimes {
		if s.Evaluated && !s.Reached {
			out = append(out, s.Property)
		}
	}
	return out
}

// ErrPrefix wraps a prefix that does not replay under the configuration
// of the check.
var ErrPrefix = errors.New("the prefix does not replay")

// Check runs a system through the pipeline: exhaustive search to the
// depth bound, checking safety on every state; a biased random walk from
// each state at the bound that is not live; and, for a walk that never
// becomes live, the critical-transition search. It reports the first
// violation. The error is for bad configurations and failures of the
// tool, never for a violation.
func Check(sys *System, opts Options) (*Result, error) {
	opts.fill(sys)
	if opts.Mode != "global" && opts.Mode != "local" {
		return nil, fmt.Errorf("unknown mode %q (valid: global, local)", opts.Mode)
	}
	red, err := parseReduce(opts.Reduce)
	if err != nil {
		return nil, err
	}
	cfg, m, err := sys.Model(opts.Config)
	if err != nil {
		return nil, err
	}
	if !red.symmetry {
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
	if sh := opts.Shard; sh.Count != 0 || sh.Index != 0 {
		switch {
		case sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count:
			return nil, fmt.Errorf("shard %d/%d: the index must be at least 0 and less than the count", sh.Index, sh.Count)
		case sh.SplitDepth < 0:
			return nil, fmt.Errorf("the split depth cannot be negative")
		case opts.Mode != "global":
			return nil, fmt.Errorf("only the global search splits into shards, not %s mode", opts.Mode)
		case opts.Time != 0:
			return nil, fmt.Errorf("a shard runs without a time budget, so that its result does not depend on the machine")
		}
	}
	c := &checker{w: w, m: m, opts: opts, red: red, prefix: opts.Prefix, mem: newMemBudget(opts.MaxMemory)}
	c.mem.start()
	defer c.mem.stop()
	if opts.Time > 0 {
		now := time.Now()
		c.deadline, c.searchDeadline = now.Add(opts.Time), now.Add(opts.Time*3/4)
	}
	defer c.memoryVerdict()
	c.res = &Result{Verdict: OK, System: sys.Name, Config: cfg, Seed: opts.Seed, Depth: opts.Depth,
		WalkDepth: opts.WalkDepth, Walks: opts.Walks, StopAtLive: opts.StopAtLive, Mode: opts.Mode, PrefixLen: len(opts.Prefix)}
	if opts.Mode == "global" {
		c.res.Symmetry = m.Spec.Symmetry
	}
	c.res.FromBugs, c.res.BugWarnings = sys.BugSettings(opts.Config)
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
	allow := opts.ConfirmTimeout
	h, err := c.watch.run(opts.HandlerTimeout, allow, func(h *hang) (bool, error) { return c.confirm(sys, h, allow) },
		func() error { return c.run(trail) })
	if h != nil && err == nil {
		// Confirmed: stop here. The handler may loop for ever on the
		// goroutines left in it; confirming more would only add to them.
		return c.hangResult(h, allow), nil
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
	// them fail.
	rep, err := ReplayFrom(sys, cfg, res.Init, res.Path, allow)
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
	res.Steps = rep.Steps
	if res.Verdict == LivenessViolation {
		// Which P-state was never answered, for a leads-to property.
		res.Waiting = rep.Waiting
		for _, wt := range rep.Waiting {
			res.Message += "; " + wt.String()
		}
	}
	if cx := res.Critical; cx != nil {
		lrep, err := ReplayFrom(sys, cfg, res.Init, cx.LivePath, allow)
		if err != nil {
			return nil, c.noReplay(err)
		}
		if !lrep.Reproduces(Live, "") {
			return nil, notReproduced("the nearest live path", lrep)
		}
		cx.liveSteps = lrep.Steps
		res.Shortened = shorten(sys, cfg, res, allow)
	}
	return res, nil
}

// The defaults of Options, shared by the CLI's flags: a zero field in
// Options and a flag not given mean the same.
const (
	DefaultDepth          = 20 // when the system gives none
	DefaultHandlerTimeout = 2 * time.Second
	DefaultWalkDepth      = 5000
	DefaultWalks          = 8
	DefaultEscalations    = 3
	DefaultRounds         = 8
	DefaultMaxVerify      = 2_000_000
	DefaultPrefixSteps    = 100000
)

// recheckEvery is how often the main world runs a step twice (after its
// first steps, which all are): rarely enough to cost little.
const recheckEvery = 64

type checker struct {
	w      *sim.World
	m      *Model
	opts   Options
	red    reductions
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
	watch     watchdog
	mem       *memBudget
	// deadline is when the time budget runs out (zero: no budget);
	// searchDeadline when the exhaustive search must end.
	deadline, searchDeadline time.Time
}

// timeUp says whether the time budget is spent.
func (c *checker) timeUp() bool { return !c.deadline.IsZero() && time.Now().After(c.deadline) }

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

// stop says whether to end the work early: the user interrupted it, or it
// outgrew its memory budget.
func (c *checker) stop() bool { return c.interrupted() || c.mem.over() || c.timeUp() }

// searchStop says whether to end the exhaustive search early: it may use
// three quarters of the time budget, since a safety bug deep in a large
// space needs the search; walks past the budget are cut and counted.
func (c *checker) searchStop() bool {
	return c.stop() || (!c.searchDeadline.IsZero() && time.Now().After(c.searchDeadline))
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
		Reduce:     c.red.sleep,
		Observers:  c.red.observers,
		Shard:      c.opts.Shard,

		Fingerprints: c.opts.Fingerprints,
	}
	if c.opts.Progress != nil {
		sopts.Progress = func(s search.Stats) { c.opts.Progress(Progress{Phase: "search", Stats: s}) }
	}
	c.phase = phaseSearch
	if len(c.prefix) > 0 {
		sopts.Start = c.base
	}
	sr, err := search.Global(c.w, sopts)
	if err != nil {
		return err
	}
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
			if v.Property == search.QuiescentProperty && !c.opts.NoWalks {
				return c.liveness(v.Init, v.Path)
			}
		}
		return nil
	}
	if !sr.Complete {
		// Cut short: the search covered every state within sr.Depth
		// steps, exactly. The walks start from there, as from a bound
		// of that depth, unless the user stopped the check.
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
		if res.Interrupted || c.opts.NoWalks || len(c.live) == 0 || sr.Periphery.Len() == 0 {
			res.Message = c.coverage()
			return nil
		}
		c.periphery = sr.Periphery
		res.Verdict = OK
		if err := c.liveness(nil, nil); err != nil {
			return err
		}
		if res.Verdict == OK || res.Verdict == Inconclusive {
			res.Verdict = Inconclusive
			res.Message = c.coverage()
		}
		return nil
	}
	if sr.Dead != 0 {
		// A region of states that are not live, closed within the bound:
		// no walk starts there, but the search saw all of it.
		p, init := sim.Path{}, []int(nil)
		if len(c.starts) > 1 || c.base.Fingerprint() != sr.Dead {
			to := sopts
			to.Target, to.Progress, to.Fingerprints = sr.Dead, nil, false
			tr, err := search.Global(c.w, to)
			if err != nil {
				return err
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
	if c.opts.NoWalks || len(c.live) == 0 {
		return nil
	}
	c.periphery = sr.Periphery
	if err := c.liveness(nil, nil); err != nil {
		return err
	}
	if res.Verdict == Inconclusive && res.Message == "" && !res.Interrupted && c.timeUp() {
		res.Message = fmt.Sprintf("the time budget (--time %s) ran out during the walks: %s explored (%s), no violation; walks from %s of the %s at the bound that are not live reached a live state",
			c.opts.Time, reports.Scope(res.Covered, res.Exhausted, res.Stats.Postponed), reports.StatesWords(res.Stats.States, res.Symmetry), reports.Thousands(res.Live.Walks), reports.Count(c.periphery.Len(), "state"))
	}
	return nil
}

// deadEvidence backs a closed dead region found without walks (which
// would run the dead test) with a search from the end of p: every state
// reachable from there, none of them live. The replay of the trace
// checks it as it checks a dead test's.
func (c *checker) deadEvidence(init []int, p sim.Path, sopts search.Options) error {
	end, err := c.runPath(c.fullInit(init), c.startOf(init), p, 0, len(p))
	if err != nil {
		return err
	}
	sopts.Start, sopts.Starts, sopts.Target, sopts.Progress, sopts.Trail = end, nil, 0, nil, nil
	sopts.Shard, sopts.Fingerprints = search.Shard{}, false
	sr, err := search.Global(c.w, sopts)
	if err != nil {
		return err
	}
	if !sr.Exhausted || sr.Stats.Live != 0 || sr.Violation != nil {
		return fmt.Errorf("internal error: the dead region the search found is not dead when searched again (%d states, %d live, exhausted %v)",
			sr.Stats.States, sr.Stats.Live, sr.Exhausted)
	}
	c.res.startEnd = &Critical{End: &critical.Evidence{SearchAll: true, SearchStates: int(sr.Stats.States), SearchDepth: sr.Stats.MaxDepth},
		endFP: end.Fingerprint()}
	return nil
}

// runLocal is local model checking of the safety properties.
func (c *checker) runLocal() error {
	res := c.res
	c.phase = phaseLocal
	lopts := search.LocalOptions{Rounds: c.opts.Rounds, MaxVerify: c.opts.MaxVerify, Properties: c.m.Properties, Stop: c.stop, Fits: c.mem.fits}
	if c.opts.Progress != nil {
		lopts.Progress = func(l search.LocalStats) {
			c.opts.Progress(Progress{Phase: "local", Stats: search.Stats{States: int64(l.TotalNodeStates), Transitions: l.Transitions}})
		}
	}
	lr, err := search.Local(c.w, lopts)
	if err != nil {
		return err
	}
	res.Local = &lr.Stats
	res.Complete, res.Exhausted = lr.Complete, lr.Complete
	res.Stats = search.Stats{States: int64(lr.Stats.TotalNodeStates), Transitions: lr.Stats.Transitions, Elapsed: lr.Stats.Elapsed}
	if v := lr.Violation; v != nil {
		res.Verdict, res.Property, res.Message, res.Path, res.Init = SafetyViolation, v.Property, v.Message, v.Path, v.Init
		if pe := c.propertyError(v.Property, v.Init, v.Path); pe != nil {
			res.Verdict, res.Message = PropertyError, pe.Error()
		}
		return nil
	}
	if !lr.Complete {
		res.Verdict = Inconclusive
		res.Interrupted = c.interrupted()
		if !res.Interrupted {
			res.Message = localInconclusive(lr)
		}
	}
	return nil
}

// localInconclusive says why local mode's result is not complete, and
// what it covered.
func localInconclusive(lr *search.LocalResult) string {
	l := lr.Stats
	switch {
	case lr.Stopped:
		return fmt.Sprintf("local mode stopped at %d node states in round %d", l.TotalNodeStates, l.Rounds)
	case lr.HeldBack:
		return fmt.Sprintf("the round bound still held steps back after round %d: local mode covered every node state reachable under the local rules up to round %d (at most %d timers, driver calls and repeated deliveries per node on the first path to each state), not every reachable one; raise --rounds",
			l.Rounds, l.Rounds, l.Rounds)
	case lr.Refused > 0:
		return fmt.Sprintf("local mode explored every node state reachable without failures, but its search for real runs to %d preliminary violations met %d runs the simulator refused (a property that reads more than the node states, or a handler that is not deterministic?), so they are neither reported nor ruled out (try --mode global)",
			l.Preliminary-l.Refuted, lr.Refused)
	default:
		return fmt.Sprintf("local mode explored every node state reachable without failures and found %d preliminary violations, %d refuted by message summaries; the search for a real run to the others ran out of its budget, so they are neither reported nor ruled out (raise --max-verify, or try --mode global)",
			l.Preliminary, l.Refuted)
	}
}

// coverage says exactly what a check whose search was cut short
// covered: the levels it finished, and the walks from the last of them.
// allOf says "all 5 states", or "the 1 state".
func allOf(n int, one string) string {
	if n == 1 {
		return "the 1 " + one
	}
	return "all " + reports.Count(n, one)
}

func (c *checker) coverage() string {
	r := c.res
	var why string
	switch r.Cut {
	case "time":
		why = fmt.Sprintf("the search used its three quarters of the time budget (--time %s)", c.opts.Time)
	case "max-states":
		why = fmt.Sprintf("depth %d would pass the limit of %s (--max-states)", r.Covered+1, reports.Count(c.opts.MaxStates, "state"))
	case "memory":
		why = "the search reached the memory limit"
	default:
		why = "the check was interrupted"
	}
	msg := fmt.Sprintf("%s: %s explored (%s), no violation; depth %d partly explored",
		why, reports.Scope(r.Covered, false, r.Stats.Postponed), reports.StatesWords(r.Stats.States, r.Symmetry), r.Covered+1)
	if n := c.periphery.Len(); n > 0 {
		if r.Live.Walks == n {
			msg += fmt.Sprintf("; walks from %s at depth %d that are not live reached a live state", allOf(n, "state"), r.Covered)
		} else {
			msg += fmt.Sprintf("; walks from %s of the %s at depth %d that are not live reached a live state before the budget ran out", reports.Thousands(r.Live.Walks), reports.Count(n, "state"), r.Covered)
		}
	}
	if r.Message != "" {
		msg += "; " + r.Message
	}
	return msg
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
		trail := &search.Trail{}
		w.Guard = c.watch.add(func() hang {
			ev, choices, _ := w.Current()
			start, path := c.searchPath(trail)
			return hang{start: start, path: path, event: ev, choices: choices}
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

// Trace returns the trace of a violation, for a trace file.
func (r *Result) Trace(describe func(i int) string) *reports.Trace {
	return &reports.Trace{
		System:   r.System,
		Nodes:    r.Config.Nodes,
		Bugs:     r.Config.Bugs,
		Params:   r.Config.Params,
		Budget:   reports.Budget(Counts(r.Config.Budget)),
		Seed:     r.Seed,
		Result:   string(r.Verdict),
		Property: r.Property,
		Message:  r.Message,
		Init:     r.Init,
		Steps:    reports.FromPath(r.Path, describe),

		PrefixLength: r.PrefixLen,
		DeadTest:     r.deadTest(),
	}
}

// deadTest is the dead test a liveness violation's trace records.
func (r *Result) deadTest() *reports.TraceDeadTest {
	cx := r.Critical
	if cx == nil {
		cx = r.startEnd
	}
	if r.Verdict != LivenessViolation || cx == nil || cx.End == nil {
		return nil
	}
	return cx.EndTest.trace()
}

// ConfigOf returns the configuration a trace was made with. A trace
// counts failures; a failure it allows none of is None in the Config, so
// that no default replaces it.
func ConfigOf(t *reports.Trace) Config {
	return Config{
		Nodes:  t.Nodes,
		Bugs:   t.Bugs,
		Params: t.Params,
		Budget: explicit(sim.Budget(t.Budget)),
	}
}

// A ReplayStep is one step of a replayed path, in words.
type ReplayStep struct {
	// Step numbers the step from 1: step i applies the i-th event of the
	// path, and the state after step 0 is the initial state (as
	// Critical.Step and every report count).
	Step  int
	Event sim.Event
	Text  string   // the event, with the message it carries
	Sent  []string // messages sent, "msg from->to"
	Logs  []string
	// Violation is set on the step where a safety property first fails.
	Violation string
	// State is the fingerprint of the state after the step.
	State uint64
}

// Replayed is the outcome of replaying a path.
type Replayed struct {
	Steps []ReplayStep
	// Verdict, Property and Message describe the violation the replay
	// reached (Verdict OK if none).
	Verdict  Verdict
	Property string
	Message  string
	Final    *sim.State
	// Live says every liveness property holds in the final state.
	Live bool
	// End is what the dead test saw from the final state (TestEnd).
	End *critical.Evidence
	// Waiting lists the leads-to properties (properties.LeadsTo) that
	// wait in the final state, in the system's order.
	Waiting []Waiting

	w       *sim.World
	m       *Model
	timeout time.Duration
	each    func(step int, s *sim.State, info *sim.StepInfo)
}

// Reproduces says whether the replay shows what a trace records: the same
// safety violation; for a liveness violation, a path that replays exactly,
// breaks no safety property and ends where nothing can happen, or in a
// state that is not live and that the dead test (TestEnd, run before)
// found no way back from; for a live trace, a path that ends in a live
// state.
func (rep *Replayed) Reproduces(verdict Verdict, property string) bool {
	switch verdict {
	case SafetyViolation, PropertyError:
		return rep.Verdict == verdict && rep.Property == property
	case LivenessViolation:
		if property == DivergenceProperty || property == search.QuiescentProperty {
			return rep.Verdict == LivenessViolation && rep.Property == property
		}
		if rep.Verdict == LivenessViolation && rep.Property == search.QuiescentProperty {
			return true
		}
		return rep.Verdict == OK && !rep.Live && rep.End != nil && !rep.End.Live
	case Live, PrefixResult:
		return rep.Verdict == OK && rep.Live
	}
	return false
}

// Waiting is a leads-to property left waiting at the end of a path: its P
// held at step Step (0: the initial state), and its Q held neither there
// nor at any later step.
type Waiting struct {
	Property string
	Doc      string
	Step     int
}

func (w Waiting) String() string {
	name := w.Property
	if w.Doc != "" {
		name += " (" + w.Doc + ")"
	}
	return fmt.Sprintf("%s: P held at step %d and Q never held after", name, w.Step)
}

// ErrNoReplay says a trace does not replay: a step is not enabled where the
// trace puts it, or its choices do not fit.
var ErrNoReplay = errors.New("the trace does not replay")

// Replay re-executes a path from the initial state on a system's
// configuration, checking every property on the way, and says what
// violation it reaches. It stops at the first safety violation or handler
// panic. A path whose steps cannot be applied exactly is an error wrapping
// ErrNoReplay. For a system whose nodes choose in their first Init, use
// ReplayFrom.
func Replay(sys *System, cfg Config, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return ReplayFrom(sys, cfg, nil, p, timeout)
}

// ReplayFrom is Replay from the initial state that init names: the values
// the nodes' first Init calls' Choose calls return, node 0's first
// (Result.Init, a trace's init). Choices that do not fit those calls
// exactly (out of range, too few, too many) are an error wrapping
// ErrNoReplay, at step 0.
func ReplayFrom(sys *System, cfg Config, init []int, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return replayFrom(sys, cfg, init, p, timeout, nil)
}

// replayFrom is ReplayFrom that shows each state of the path to each, if
// not nil, as it is reached: the initial state as step 0 (info nil), then
// the state after each step with what the step did.
func replayFrom(sys *System, cfg Config, init []int, p sim.Path, timeout time.Duration, each func(step int, s *sim.State, info *sim.StepInfo)) (*Replayed, error) {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	_, m, err := sys.Model(cfg)
	if err != nil {
		return nil, err
	}
	m.Spec.HandlerTimeout = timeout
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return nil, err
	}
	w.Record = true
	// Every step runs twice: a handler that is not deterministic is named
	// where it first does something else, not steps later where the path
	// stops replaying.
	w.Recheck = 1
	rep := &Replayed{Verdict: OK, w: w, m: m, timeout: timeout, each: each}
	cur := ReplayStep{} // the step under way (0: Init)
	where := func() hang {
		// The replay is held in a handler: what it wrote is stable.
		h := hang{steps: slices.Clone(rep.Steps)}
		if cur.Step > 0 {
			h.steps = append(h.steps, cur)
		}
		return h
	}
	h, err := guarded(w, timeout, where, func() error { return replay(w, m, init, p, rep, &cur) })
	if h != nil {
		// rep belongs to the goroutine left in the handler.
		rep = &Replayed{Verdict: LivenessViolation, Property: DivergenceProperty, Steps: h.steps}
		on := "in Init"
		if n := len(h.steps); n > 0 {
			on = "on " + h.steps[n-1].Text
		}
		rep.Message = fmt.Sprintf("a handler did not return within %v %s", timeout, on)
		return rep, nil
	}
	return rep, err
}

// A NoReplayError is a path that does not replay: its step Step (1-based)
// is not enabled, or does not fit its recorded choices.
type NoReplayError struct {
	Step  int
	Event sim.Event
	Err   error
}

func (e *NoReplayError) Error() string {
	if e.Step == 0 {
		return fmt.Sprintf("%v: the initial state: %v", ErrNoReplay, e.Err)
	}
	return fmt.Sprintf("%v: step %d (%s): %v", ErrNoReplay, e.Step, e.Event, e.Err)
}
func (e *NoReplayError) Unwrap() error { return ErrNoReplay }

func replay(w *sim.World, m *Model, init []int, p sim.Path, rep *Replayed, cur *ReplayStep) (err error) {
	// A property that panics is a property error where it happens.
	propErr := func(pe *properties.Error) {
		rep.Verdict, rep.Property, rep.Message = PropertyError, pe.Property, pe.Error()
	}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*properties.Error)
			if !ok {
				panic(r)
			}
			propErr(pe)
			err = nil
		}
	}()
	check := func(s *sim.State) (string, string) {
		for i := range m.Properties {
			pr := &m.Properties[i]
			if pr.Kind != properties.Safety {
				continue
			}
			if err := pr.CheckSafety(s); err != nil {
				var pe *properties.Error
				if errors.As(err, &pe) {
					panic(pe)
				}
				return pr.Name, err.Error()
			}
		}
		return "", ""
	}
	// A handler that panics is a finding; so is a leads-to property's P
	// or Q that panics in a step.
	panicked := func(err error) bool {
		var hp *sim.HandlerPanic
		var pe *properties.Error
		switch {
		case errors.As(err, &hp):
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, search.PanicProperty, hp.Error()
		case errors.As(err, &pe):
			propErr(pe)
		default:
			return false
		}
		return true
	}
	// since[j] is the step from which leads-to property leads[j] waits
	// (-1: it does not).
	var leads []*properties.Property
	for i := range m.Properties {
		if pr := &m.Properties[i]; pr.IsLeadsTo() {
			leads = append(leads, pr)
		}
	}
	since := make([]int, len(leads))
	waits := func(step int, s *sim.State) {
		for j, pr := range leads {
			switch {
			case pr.IsLive(s):
				since[j] = -1
			case step == 0 || since[j] < 0:
				since[j] = step
			}
		}
	}
	w.Strict = true
	s, err := w.InitialFrom(init)
	if err != nil {
		if panicked(err) {
			return nil
		}
		if errors.Is(err, sim.ErrNotEnabled) {
			return &NoReplayError{Err: err}
		}
		return err
	}
	rep.Final = s
	if rep.each != nil {
		rep.each(0, s, nil)
	}
	if name, msg := check(s); name != "" {
		rep.Verdict, rep.Property, rep.Message = SafetyViolation, name, msg
		return nil
	}
	waits(0, s)
	for i, st := range p {
		text := w.Describe(s, st.Event)
		*cur = ReplayStep{Step: i + 1, Event: st.Event, Text: text}
		// The last step of a diverged trace may be cut short: its choices
		// are what the search had handed out, so it runs without Strict.
		w.Strict = i < len(p)-1
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			if panicked(err) {
				rep.Steps = append(rep.Steps, ReplayStep{Step: i + 1, Event: st.Event, Text: text, Violation: rep.Message})
				return nil
			}
			var nd *sim.NondeterminismError
			if errors.As(err, &nd) {
				nd.Step = i + 1
				return nd
			}
			if errors.Is(err, sim.ErrNotEnabled) {
				return &NoReplayError{Step: i + 1, Event: st.Event, Err: err}
			}
			return err
		}
		if !w.Strict && len(w.Last().Choices) != len(st.Choices) {
			return &NoReplayError{Step: i + 1, Event: st.Event,
				Err: fmt.Errorf("it made %d choices but the trace records %d", len(w.Last().Choices), len(st.Choices))}
		}
		info := w.Last()
		rs := ReplayStep{Step: i + 1, Event: st.Event, Text: text, Logs: append([]string(nil), info.Logs...)}
		for _, e := range info.Sent {
			rs.Sent = append(rs.Sent, fmt.Sprintf("%s %d->%d", sim.Dump(e.Msg), e.From, e.To))
		}
		s = next
		rep.Final = s
		rs.State = s.Fingerprint()
		if rep.each != nil {
			rep.each(i+1, s, info)
		}
		waits(i+1, s)
		if name, msg := check(s); name != "" {
			rs.Violation = msg
			rep.Steps = append(rep.Steps, rs)
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, name, msg
			return nil
		}
		rep.Steps = append(rep.Steps, rs)
	}
	// The search evaluates a reachability property on a state only until
	// it is reached anywhere, so only the path's last state, where one
	// that panicked would end its path, is sure to have had it.
	for i := range m.Properties {
		if pr := &m.Properties[i]; pr.Kind == properties.Reachability {
			pr.IsReached(s)
		}
	}
	for j, pr := range leads {
		if since[j] >= 0 {
			rep.Waiting = append(rep.Waiting, Waiting{Property: pr.Name, Doc: pr.Doc, Step: since[j]})
		}
	}
	// A path that ends where nothing can happen and the system is not live
	// shows a liveness violation.
	rep.Live = true
	var notLive []string
	for i := range m.Properties {
		if pr := &m.Properties[i]; pr.Kind == properties.Liveness && !pr.IsLive(s) {
			rep.Live = false
			notLive = append(notLive, pr.Name)
		}
	}
	if len(notLive) > 0 && len(w.Enabled(s, nil)) == 0 {
		rep.Verdict, rep.Property = LivenessViolation, search.QuiescentProperty
		rep.Message = search.QuiescentMessage(notLive)
	}
	return nil
}
