package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/shard"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/traceview"
	"github.com/spf13/pflag"
)

func (c *command) check(args []string) int {
	// Signals first: Ctrl-C at any moment ends the check with its report.
	interrupted, stopSignals := onInterrupt()
	defer stopSignals()
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("check", "%v", err)
	}
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	conf := addConfigFlags(fs, sys, "inject the named bug (repeat for several; see '"+c.cmd+" list')")
	depth := fs.Int("depth", 0, "depth bound of the exhaustive search, in steps (default: the system's, or "+fmt.Sprint(check.DefaultDepth)+")")
	maxMemory := fs.String("max-memory", "", "end the check, inconclusive with a partial report, when its heap outgrows this size, e.g. 4GB, 512MiB (default: 3/4 of the machine's memory, "+check.FormatBytes(check.DefaultMaxMemory())+" here; 0: no limit)")
	maxStates := fs.Int("max-states", 0, "stop the search after this many distinct states (0: no limit): it ends at the last depth it finished, as with --time")
	minDepth := fs.Int("min-depth", check.DefaultMinDepth, "the least depth a check cut short by --time or --max-states must complete to pass (at most --depth; --min-depth equal to --depth asks for the whole bound); one that completes less is inconclusive (exit 3)")
	wf := addWalkFlags(fs, "seed for every random choice", "app=8,deliver=4,timer=1,reset=0")
	resets := fs.Int("resets", 0, "node resets (crash and restart) allowed per run (default: the bugs' needs, then the system's, 0 for most)")
	drops := fs.Int("drops", 0, "lost datagrams allowed per run, datagram transport (default: the bugs' needs, then the system's)")
	sockErrs := fs.Int("socket-errors", 0, "injected socket errors allowed per run, stream transport (default: the bugs' needs, then the system's)")
	dups := fs.Int("dups", 0, "duplicated datagrams allowed per run, datagram transport: a message in flight is copied and may arrive twice (default: the bugs' needs, then the system's)")
	partitions := fs.Int("partitions", 0, "network partitions allowed per run, one at a time: the links between a set of nodes and the rest go down (datagrams across are lost, connections across break and both ends get Error) until a heal event (default: the bugs' needs, then the system's)")
	crashes := fs.Int("crashes", 0, "node crashes allowed per run: a node's process stops and the node is down (no handler runs, its timers are gone, what is in flight to it on a stream is lost, its peers learn by a socket error that costs none) until a reset restarts it, which costs no reset (default: the bugs' needs, then the system's, 0 for most)")
	timeout := fs.Duration("handler-timeout", check.DefaultHandlerTimeout, handlerTimeoutDoc)
	walkDepth := fs.Int("walk-depth", check.DefaultWalkDepth, "steps of each random walk from the states at the depth bound (dmax); doubled up to --escalations times when too short to tell")
	walks := fs.Int("walks", check.DefaultWalks, "random walks per probe of the critical-transition search (k)")
	deadTest := fs.String("dead-test", "", "fix the size of every dead test, STATES,WALKS: a search of STATES states, then WALKS walks (at most the floor, 20000,300); below the floor nothing is called dead and a path with no way back is a suspect (inconclusive, exit 3). Default: the floor where the time budget pays for it, cut to fit where it does not, and the report says so and gives the --dead-test that runs the same test again")
	escalations := fs.Int("escalations", check.DefaultEscalations, "how many times to double --walk-depth when a walk is too short to tell (case C2) before giving up as inconclusive")
	workers := fs.Int("workers", 0, "goroutines of the exhaustive search, the walks, the dead tests, the critical search, the slip and odds, the shortening and local mode's quick checks (0, the default: the number of cores); the result does not depend on it")
	budget := fs.Duration("time", check.DefaultTime, "time budget of the check (0: none; at most "+hours(maxTime)+"): the search may use three quarters, then ends at the last depth it finished, k, and the walks start there; with nothing found the check passes, \"no violation to depth k, complete to depth k\", if k is at least --min-depth; the walks stop at seven eighths of it (passing on the walks taken), so that a critical search has the last eighth at least; a critical search it stops is inconclusive (exit 3); dead tests it cannot pay for are cut to fit (see --dead-test); the slip and the odds, bounded in steps, run on past it by an eighth at most")
	quiet := fs.BoolP("quiet", "q", false, "print no progress on stderr")
	noWalks := fs.Bool("no-walks", false, "stop after the exhaustive search: safety, and liveness only where nothing can happen any more")
	stopAtLive := fs.Bool("stop-at-live", false, "end each walk at its first live state (MaceMC's rule, --after-live 0): safety is then checked on a walk only until it recovers")
	afterLive := fs.Int("after-live", check.DefaultAfterLive, fmt.Sprintf("after a walk first recovers, go on checking safety for N times the steps it took to recover, at least %d steps, within --walk-depth (0: stop at recovery, as --stop-at-live; -1: on to --walk-depth, much slower)", check.AfterLiveMin))
	reduce := fs.String("reduce", check.DefaultReduce, "reductions of the exhaustive search, comma-separated: sleep: skip the transitions that sleep sets show lead only to states reached another way at the same depth (the same states, violations and periphery, fewer transitions); symmetry: keep one state of each set of states that are renamings of each other under the system's symmetric nodes (paxos: the acceptors that do not propose), so that counts are of those sets; observers: take the events of observer nodes (nodes that never send and that the properties alone read: paxos --roles split, its learner) only where no other node has one, which keeps every violation but not every state, nor every violation at its fewest steps; none: take every transition and keep every state")
	mode := fs.String("mode", "global", "global: search global states (network included), then walks for liveness; local: local model checking of the safety properties, each violation verified by a real run; compare: both, side by side (no walks)")
	rounds := fs.Int("rounds", check.DefaultRounds, "local mode: the most local events (timers, driver calls) one node takes on a path, raised round by round up to this")
	maxVerify := fs.Int("max-verify", check.DefaultMaxVerify, "local mode: the most steps of the search for real runs to the preliminary violations the message summaries leave; one that runs out leaves them undecided (inconclusive)")
	from := fs.String("from", "", "start from the end of this prefix file (made by '"+c.cmd+" prefix'): it replays first, then the search begins with failures enabled")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	stepsFlag := fs.String("steps", "", "all: print every step of a liveness violation's path (by default the steps around its critical step, then a summary of the rest)")
	junit := fs.String("junit", "", "also write the result as JUnit XML to this file, a test case per property, for CI")
	graph := fs.Bool("graph", false, "draw the steps around a liveness violation's critical step as an event graph: a lane per node, arrows for messages")
	out := fs.String("out", "livecheck-out", "directory for trace files")
	htmlFile := fs.String("html", "", "also write the report as a web page to this file: the path as an event graph (one lane per node), the nearest live path beside a dead one, every step's state, the walk statistics")
	shardFlag := fs.String("shard", "", "run slice I of a check split into N (I/N, 0 <= I < N): every slice searches the same first levels, then only the states of the split level whose fingerprint falls to it, and walks with seeds of its own; --out FILE is then the shard's result file, for '"+c.cmd+" merge'; no time budget")
	splitDepth := fs.Int("split-depth", 0, "with --shard: the level at which the slices divide the states (default: the first level with at least "+fmt.Sprint(search.SplitFactor)+" states a slice, or the depth bound)")
	saveFPs := fs.Bool("save-fingerprints", false, "with --shard: also write the fingerprints of the states the slice stored beside the result file (FILE without .json, with .fingerprints; 8 bytes a state), so that merge counts the distinct states exactly")
	synopsis := c.cmd + " check SYSTEM [flags]: search every ordering of SYSTEM's events up to --depth steps\n" +
		"and report the first safety or liveness violation, with a trace file that replays it.\n" +
		"Systems: " + c.names() + " (their own flags show with '" + c.cmd + " check SYSTEM --help')"
	if code, stop := c.parseSystem(fs, args, synopsis, sys); stop {
		return code
	}
	if sys == nil {
		if fs.NArg() == 0 {
			return c.usageErr("check", "name the system to check (valid: %s)", c.names())
		}
		return c.usageErr("check", "the system must come first: %s check SYSTEM [flags]", c.cmd)
	}
	if fs.NArg() > 0 {
		return c.usageErr("check", "unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("depth") && *depth < 1 {
		return c.usageErr("check", "--depth must be at least 1, not %d", *depth)
	}
	var maxMem int64
	if *maxMemory != "" {
		n, err := check.ParseBytes(*maxMemory)
		if err != nil {
			return c.usageErr("check", "--max-memory: %v", err)
		}
		if maxMem = n; n == 0 {
			maxMem = -1 // no limit
		}
	}
	if *maxStates < 0 {
		return c.usageErr("check", "--max-states cannot be negative")
	}
	if bound := *depth; fs.Changed("min-depth") {
		if bound == 0 {
			o := check.Options{}
			if *from != "" {
				o.Prefix = sim.Path{{}} // a prefix: the system's depth after one
			}
			bound = o.DefaultDepthFor(sys)
		}
		if *minDepth < 1 || *minDepth > bound {
			return c.usageErr("check", "--min-depth must be at least 1 and at most the depth bound (--depth %d), not %d", bound, *minDepth)
		}
	}
	if *timeout <= 0 {
		return c.usageErr("check", "--handler-timeout must be positive")
	}
	if *workers < 0 {
		return c.usageErr("check", "--workers cannot be negative")
	}
	if *walkDepth < 1 || *walks < 1 || *escalations < 0 {
		return c.usageErr("check", "--walk-depth and --walks must be at least 1, --escalations at least 0")
	}
	switch {
	case *afterLive < -1:
		return c.usageErr("check", "--after-live must be -1 (on to --walk-depth), 0 (stop at recovery) or more, not %d", *afterLive)
	case *stopAtLive && fs.Changed("after-live"):
		return c.usageErr("check", "--stop-at-live is --after-live 0: give one of them")
	case *afterLive == 0:
		*stopAtLive = true
	}
	if *mode != "global" && *mode != "local" && *mode != "compare" {
		return c.usageErr("check", "unknown --mode %q (valid: global, local, compare)", *mode)
	}
	if *rounds < 1 {
		return c.usageErr("check", "--rounds must be at least 1")
	}
	if *maxVerify < 1 {
		return c.usageErr("check", "--max-verify must be at least 1")
	}
	// Local mode's flags change nothing in a global check: one given
	// there is most likely a forgotten --mode local.
	for _, name := range []string{"rounds", "max-verify"} {
		if fs.Changed(name) && *mode == "global" {
			return c.usageErr("check", "--%s is a flag of --mode local and compare, not of --mode global", name)
		}
	}
	switch {
	case *budget < 0:
		return c.usageErr("check", "--time %v: a budget is positive, or 0 for none", *budget)
	case *budget > maxTime:
		return c.usageErr("check", "--time %v: at most %s (over a year); 0 for no budget", *budget, hours(maxTime))
	}
	if *stepsFlag != "" && *stepsFlag != "all" {
		return c.usageErr("check", "--steps takes only all, not %q", *stepsFlag)
	}
	var slice search.Shard
	if *shardFlag != "" {
		if slice, err = parseShard(*shardFlag); err != nil {
			return c.usageErr("check", "--shard: %v", err)
		}
		switch {
		case !fs.Changed("out"):
			return c.usageErr("check", "--shard needs --out FILE: where to write the shard's result")
		case fs.Changed("time") && *budget != 0:
			return c.usageErr("check", "--shard runs without a time budget (its result must not depend on the machine): drop --time, or bound the check with --depth or --max-states")
		case *mode != "global":
			return c.usageErr("check", "--shard splits the global search; --mode %s does not split", *mode)
		case *splitDepth < 0:
			return c.usageErr("check", "--split-depth must be at least 1, not %d", *splitDepth)
		case fs.Changed("split-depth") && *splitDepth < 1:
			return c.usageErr("check", "--split-depth must be at least 1, not %d", *splitDepth)
		}
		slice.SplitDepth = *splitDepth
		*budget = 0
	} else if fs.Changed("split-depth") || *saveFPs {
		return c.usageErr("check", "--split-depth and --save-fingerprints go with --shard I/N")
	}
	var deadStates, deadWalks int
	if *deadTest != "" {
		if _, err := fmt.Sscanf(*deadTest, "%d,%d", &deadStates, &deadWalks); err != nil || deadStates < 1 || deadWalks < 1 ||
			fmt.Sprintf("%d,%d", deadStates, deadWalks) != *deadTest {
			return c.usageErr("check", "--dead-test must be STATES,WALKS, two counts of at least 1 (the floor is 20000,300), not %q", *deadTest)
		}
	}
	if err := check.ValidReduce(*reduce); err != nil {
		return c.usageErr("check", "--reduce: %v", err)
	}
	weights, err := wf.parseWeights()
	if err != nil {
		return c.usageErr("check", "--weights: %v", err)
	}
	cfg, err := conf.config(fs, sys)
	if err != nil {
		return c.usageErr("check", "%v", err)
	}
	// A flag left out is 0 in the Config, the default; a flag given 0 is
	// None, no failure of the kind.
	for _, f := range []struct {
		name string
		v    int
		to   *int
	}{{"resets", *resets, &cfg.Budget.Resets}, {"drops", *drops, &cfg.Budget.Drops}, {"socket-errors", *sockErrs, &cfg.Budget.Errors},
		{"dups", *dups, &cfg.Budget.Dups}, {"partitions", *partitions, &cfg.Budget.Partitions}, {"crashes", *crashes, &cfg.Budget.Crashes}} {
		switch {
		case f.v < 0:
			return c.usageErr("check", "--%s cannot be negative", f.name)
		case fs.Changed(f.name) && f.v == 0:
			*f.to = protocol.None
		default:
			*f.to = f.v
		}
	}
	if fs.Changed("nodes") && cfg.Nodes < 1 {
		return c.usageErr("check", "--nodes must be at least 1, not %d", cfg.Nodes)
	}
	var prefixPath sim.Path
	var prefixInit []int
	if *from != "" {
		if cfg, prefixInit, prefixPath, err = check.PrefixStart(sys, *from, cfg, *timeout); err != nil {
			return c.usageErr("check", "--from: %v", err)
		}
	}
	prog := &check.ProgressLine{Print: func(line string) { fmt.Fprintln(c.stderr, line) }, Start: time.Now(), Budget: *budget}
	if *quiet || (*asJSON && !isTerminal(c.stdout)) {
		prog = nil
	}
	timeBudget := *budget
	if timeBudget == 0 {
		timeBudget = check.NoTimeLimit // Options' 0 is the default
	}
	esc := *escalations
	if esc == 0 {
		esc = -1 // Options: none
	}
	opts := check.Options{
		Config:         cfg,
		Depth:          *depth,
		MaxStates:      *maxStates,
		MinDepth:       *minDepth,
		Time:           timeBudget,
		MaxMemory:      maxMem,
		Seed:           *wf.seed,
		HandlerTimeout: *timeout,
		Interrupted:    interrupted,
		WalkDepth:      *walkDepth,
		Walks:          *walks,
		Escalations:    esc,
		DeadStates:     deadStates,
		DeadWalks:      deadWalks,
		Weights:        weights,
		WeightsSet:     fs.Changed("weights"),
		NoWalks:        *noWalks,
		StopAtLive:     *stopAtLive,
		AfterLive:      *afterLive,
		Workers:        *workers,
		Mode:           *mode,
		Reduce:         *reduce,
		Rounds:         *rounds,
		MaxVerify:      *maxVerify,
		Prefix:         prefixPath,
		PrefixInit:     prefixInit,
		Progress:       prog.Report,
		Shard:          slice,
		Fingerprints:   *saveFPs,
	}
	c.warnBugs(sys, opts.Config)
	if *mode == "compare" {
		if *junit != "" {
			return c.usageErr("check", "--junit reports one mode: give --mode global or local")
		}
		return c.compare(sys, opts, *out, *asJSON)
	}
	started := time.Now()
	res, err := check.Check(sys, opts)
	if err != nil {
		if errors.Is(err, check.ErrPrefix) {
			return c.usageErr("check", "--from: %s: %v (a prefix must replay exactly under the check's configuration and bugs)", *from, err)
		}
		return c.usageErr("check", "%v", err)
	}
	if *shardFlag != "" {
		// The shard's result goes to its file, traces inside, for merge.
		sf := shard.FileOf(res, sys, opts, c.build, time.Since(started))
		var fps []uint64
		if *saveFPs {
			fps = res.Fingerprints
			if fps == nil {
				fps = []uint64{}
			}
		}
		if err := shard.WriteFile(*out, sf, fps); err != nil {
			return c.usageErr("check", "--out %s: %v", *out, err)
		}
	}
	trace, liveTrace := "", ""
	if *shardFlag == "" && (res.Verdict == check.SafetyViolation || res.Verdict == check.LivenessViolation || res.Verdict == check.PropertyError) {
		trace, liveTrace, err = res.WriteTraces(*out)
		if err != nil {
			// The finding matters more than its file: report it anyway.
			trace, liveTrace = "", ""
			fmt.Fprintf(c.stderr, "%s check: the trace could not be written, the report below has none: %v\n", c.name, err)
		}
	}
	rep := c.reportOf(res, trace, liveTrace)
	rep.AllSteps, rep.Graph = *stepsFlag == "all", *graph
	if *from != "" {
		rep.Prefix = &reports.Prefix{File: *from, Length: res.PrefixLen}
	}
	if *junit != "" {
		if err := writeJUnit(*junit, sys, res, rep); err != nil {
			fmt.Fprintf(c.stderr, "%s check: warning: --junit %s: the report was not written: %v\n", c.name, *junit, err)
		}
	}
	if *asJSON {
		reports.WriteJSON(c.stdout, rep)
	} else {
		reports.WriteCheck(c.stdout, rep, true)
		if *shardFlag != "" {
			fmt.Fprintf(c.stdout, "\nshard %d/%d written to %s (split at depth %d); merge the shards with: %s merge FILES...\n", slice.Index, slice.Count, *out, res.Shard.SplitDepth, c.cmd)
		}
	}
	if *htmlFile != "" {
		g, err := traceview.ResultGraph(res, sys, rep, *timeout)
		if err == nil {
			err = writeGraph(*htmlFile, g)
		}
		if err != nil {
			// The page is an extra: the verdict stands, as for --junit.
			fmt.Fprintf(c.stderr, "%s check: warning: --html %s: the page was not written: %v\n", c.name, *htmlFile, err)
		}
	}
	return exitCode(res.Verdict)
}

// report is a result's report with the commands that replay its traces.
func (c *command) reportOf(res *check.Result, trace, liveTrace string) *reports.Check {
	rep := res.Report(trace, liveTrace)
	rep.ReplayCommand = c.cmd + " replay " + trace
	rep.LiveReplayCommand = c.cmd + " replay " + liveTrace
	return rep
}

// compare runs the same check in global mode (search only) and in local
// mode, and shows the two side by side.
func (c *command) compare(sys *protocol.System, opts check.Options, out string, asJSON bool) int {
	cmp, err := check.Compare(sys, opts)
	if err != nil {
		return c.usageErr("check", "%v", err)
	}
	rep := &reports.Compare{Agree: cmp.Agree, TransitionsRatio: cmp.TransitionsRatio, TimeRatio: cmp.TimeRatio, Rounds: opts.Rounds}
	for i, res := range []*check.Result{cmp.Global, cmp.Local} {
		trace := ""
		if res.Verdict == check.SafetyViolation || res.Verdict == check.LivenessViolation {
			if trace, _, err = res.WriteTraces(out); err != nil {
				trace = ""
				fmt.Fprintf(c.stderr, "%s check: %s mode: the trace could not be written, the report below has none: %v\n", c.name, res.Mode, err)
			}
		}
		*[]*reports.Check{&rep.Global, &rep.Local}[i] = *c.reportOf(res, trace, "")
	}
	if asJSON {
		reports.WriteJSON(c.stdout, rep)
	} else {
		reports.WriteCompare(c.stdout, rep)
	}
	if !cmp.Agree {
		fmt.Fprintf(c.stderr, "%s check: the modes disagree: global %s, local %s\n", c.name, cmp.Global.Verdict, cmp.Local.Verdict)
		return ExitInconclusive
	}
	return max(exitCode(cmp.Global.Verdict), exitCode(cmp.Local.Verdict))
}

// warnBugs says on stderr, before a check starts, where the settings
// given cannot show one of the bugs (the report's JSON has the same
// lines), and which failures given the system's transport cannot have.
func (c *command) warnBugs(sys *protocol.System, cfg protocol.Config) {
	_, warnings := sys.BugSettings(cfg)
	for _, m := range warnings {
		fmt.Fprintf(c.stderr, "%s: warning: %s: the check may miss it\n", c.name, m)
	}
	for _, m := range sys.BudgetWarnings(cfg) {
		fmt.Fprintf(c.stderr, "%s: warning: %s\n", c.name, m)
	}
}

// maxTime is the longest --time: a longer one is no budget at all, and
// far longer ones overflow the deadlines.
const maxTime = 10000 * time.Hour

// hours writes d in whole hours: "10000h".
func hours(d time.Duration) string { return fmt.Sprintf("%dh", int64(d.Hours())) }

// writeJUnit writes the JUnit report of a check to file, atomically, with
// its text report as the failures' text.
func writeJUnit(file string, sys *protocol.System, res *check.Result, rep *reports.Check) error {
	var text strings.Builder
	reports.WriteCheck(&text, rep, false)
	j := reports.NewJUnit(rep, check.PropertyCases(sys, res.Config), text.String())
	return reports.WriteFileAtomic(file, func(w io.Writer) error { return j.Write(w) })
}

// writeGraph writes g's page to file, atomically.
func writeGraph(file string, g *reports.Graph) error {
	return reports.WriteFileAtomic(file, func(w io.Writer) error { return reports.WriteHTML(w, g) })
}
