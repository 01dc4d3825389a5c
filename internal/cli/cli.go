package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/shard"
	"github.com/livecheck/livecheck/traceview"

	"github.com/livecheck/livecheck/protocol"

	"github.com/spf13/pflag"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// The exit status of Main and Run.
const (
	ExitOK           = 0 // nothing found
	ExitViolation    = 1 // a violation found, or a trace replays to it
	ExitUsage        = 2 // a usage or input error, or a broken property
	ExitInconclusive = 3 // the check was cut short before it could tell
)

// Main is the livecheck command for the systems given: a program whose
// main calls it gets every subcommand of cmd/livecheck (list, check,
// prefix, replay) with the same flags, output and exit status, for its
// own systems. It does not return.
//
//	func main() { livecheck.Main(&lock.System) }
//
// Then `go run . check lock --bug early-release` checks it, and `go run .
// replay FILE` replays the trace it writes.
func Main(systems ...*protocol.System) {
	// The collector's pace: see tuneGC; a GOGC in the environment is
	// the user's choice, and stays.
	if os.Getenv("GOGC") == "" {
		check.AdaptiveGC()
	}
	name := filepath.Base(os.Args[0])
	if name == "" || name == "." || strings.HasPrefix(name, "__debug_bin") {
		name = "livecheck"
	}
	bi, _ := debug.ReadBuildInfo()
	c := &cli{name: name, cmd: CommandName(os.Args[0], bi), build: bi, systems: systems, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(c.run(os.Args[1:]))
}

// CommandName is the command line that runs this program again, for the
// commands a report suggests (replay a trace, check from a prefix): the
// program as invoked (arg0: "livecheck" found on PATH, "./bin/livecheck"),
// or, for a binary that `go run` built into a directory of its own
// (temporary, or its cache's), `go run` of its main package, from its
// module's root ("go run ./cmd/livecheck"; "go run ." for a main package
// at the root).
func CommandName(arg0 string, bi *debug.BuildInfo) string {
	base := filepath.Base(arg0)
	if arg0 == "" || strings.HasPrefix(base, "__debug_bin") {
		return "livecheck"
	}
	if !goRunBinary(arg0) {
		return arg0
	}
	if bi == nil || bi.Path == "" {
		return "go run ."
	}
	rel, ok := strings.CutPrefix(bi.Path, bi.Main.Path)
	switch {
	case !ok || bi.Main.Path == "" || (rel != "" && !strings.HasPrefix(rel, "/")):
		return "go run " + bi.Path
	case rel == "":
		return "go run ."
	}
	return "go run ." + rel
}

// goRunBinary says whether path is where `go run` puts the binary it
// builds: $TMPDIR/go-buildNNN/b001/exe/NAME, or since Go 1.24, which
// caches them, GOCACHE/XX/HASH-d/NAME (a directory named by a hex hash
// and "-d").
func goRunBinary(path string) bool {
	dir := filepath.Dir(path)
	if d := filepath.Base(dir); strings.HasSuffix(d, "-d") && len(d) > 40 && strings.Trim(d[:len(d)-2], "0123456789abcdef") == "" {
		return true
	}
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// Version says which build of the program runs: its module's version and
// the VCS revision it was built from, where the build recorded them.
func Version(name string, bi *debug.BuildInfo) string {
	if bi == nil {
		return name + " (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := fmt.Sprintf("%s %s %s", name, bi.Main.Path, v)
	var rev, at string
	modified := false
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.time":
			at = st.Value
		case "vcs.modified":
			modified = st.Value == "true"
		}
	}
	if rev == "" {
		return s + ", no VCS revision recorded (built by go run or with -buildvcs=false)"
	}
	s += ", revision " + rev
	if at != "" {
		s += " of " + at
	}
	if modified {
		s += " with uncommitted changes"
	}
	return s + ", " + bi.GoVersion
}

// Run is Main without the exit: it runs the command line args (without
// the program's name) for the systems given, writes to stdout and stderr,
// and returns the exit status (ExitOK and the rest).
func Run(args []string, stdout, stderr io.Writer, systems ...*protocol.System) int {
	bi, _ := debug.ReadBuildInfo()
	c := &cli{name: "livecheck", cmd: "livecheck", build: bi, systems: systems, stdin: os.Stdin, stdout: stdout, stderr: stderr}
	return c.run(args)
}

// cli is one run of the command: its name in messages, the command line
// that runs it again (CommandName) in the commands it suggests, its build
// and the systems it knows.
type cli struct {
	name, cmd      string
	build          *debug.BuildInfo
	systems        []*protocol.System
	stdin          io.Reader // debug's commands
	stdout, stderr io.Writer
}

func (c *cli) run(args []string) int {
	stderr, stdout, name := c.stderr, c.stdout, c.name
	if err := protocol.ValidSystems(c.systems); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, c.usage())
		return ExitUsage
	}
	switch args[0] {
	case "list":
		return c.list(args[1:])
	case "check":
		return c.check(args[1:])
	case "replay":
		return c.replay(args[1:])
	case "prefix":
		return c.prefix(args[1:])
	case "report":
		return c.reportCmd(args[1:])
	case "debug":
		return c.debug(args[1:])
	case "merge":
		return c.merge(args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, c.usage())
		return ExitOK
	case "version", "--version":
		fmt.Fprintln(stdout, Version(name, c.build))
		return ExitOK
	}
	fmt.Fprintf(stderr, "%s: unknown command %q (valid: list, check, merge, prefix, replay, report, debug)\n", name, args[0])
	return ExitUsage
}

func (c *cli) usage() string {
	n := c.cmd
	return fmt.Sprintf(`%s finds safety and liveness bugs in distributed protocols.

Usage:
  %s list [--json]            the systems, their bugs and properties
  %s check SYSTEM [flags]     search SYSTEM's behaviours for a violation
  %s merge SHARD_FILES...     combine the results of a check split with --shard
  %s prefix SYSTEM [flags]    make live prefixes to start checks from (check --from)
  %s replay TRACE [--json]    re-execute a trace file step by step
  %s report TRACE --html FILE the event graph of a trace file as a web page
  %s debug TRACE [--vs LIVE]  step through a trace: commands on stdin ('help' lists them)
  %s --version                the module version and VCS revision of this build

Run '%s COMMAND --help' for a command's flags.

Exit status: 0 nothing found, 1 violation found, 2 usage or input error,
3 inconclusive (the check was cut short before it could tell).
`, c.name, n, n, n, n, n, n, n, n, n)
}

// names returns the systems' names.
func (c *cli) names() string {
	var out []string
	for _, s := range c.systems {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// lookup finds a system by name; the error lists the valid names.
func (c *cli) lookup(name string) (*protocol.System, error) {
	for _, s := range c.systems {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown system %q (valid: %s)", name, c.names())
}

// parse parses a command's flags; it returns the exit status to use when
// the command should stop (help shown, or a usage error).
func (c *cli) parse(fs *pflag.FlagSet, args []string, synopsis string) (int, bool) {
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(c.stdout, "%s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
		return ExitOK, true
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s %s: %v (see '%s %s --help')\n", c.name, fs.Name(), err, c.cmd, fs.Name())
		return ExitUsage, true
	}
	return 0, false
}

func (c *cli) usageErr(cmd string, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "%s %s: %s\n", c.name, cmd, fmt.Sprintf(format, args...))
	return ExitUsage
}

// ---- list ----

// needsText says in flags what a bug needs to show ("--nodes 3 --peers all").
func needsText(b protocol.Bug) string {
	if b.NeedsDoc != "" {
		return b.NeedsDoc
	}
	var flags []string
	for _, st := range b.Needs.Settings(b.Name) {
		flags = append(flags, st.String())
	}
	return strings.Join(flags, " ")
}

func (c *cli) list(args []string) int {
	fs := pflag.NewFlagSet("list", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print a JSON array of {name, doc, nodes, bugs, properties, bug_needs}")
	if code, stop := c.parse(fs, args, c.cmd+" list [--json]: the systems, one per line, with their bugs and properties"); stop {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageErr("list", "takes no arguments, got %q", fs.Arg(0))
	}
	var entries []reports.ListEntry
	for _, s := range c.systems {
		e := reports.ListEntry{Name: s.Name, Doc: s.Doc, Nodes: s.NodeCount(), Bugs: s.BugNames(), Properties: []string{}, BugNeeds: map[string]string{}}
		for _, b := range s.Bugs {
			e.BugNeeds[b.Name] = needsText(b)
			e.Needs = append(e.Needs, needsText(b))
		}
		for _, p := range s.PropertyDocs() {
			e.Properties = append(e.Properties, p.Name)
		}
		entries = append(entries, e)
	}
	if *asJSON {
		reports.WriteJSON(c.stdout, entries)
		return ExitOK
	}
	reports.WriteList(c.stdout, entries)
	return ExitOK
}

// ---- check ----

// systemFirst takes the system's name off the front of args, so that its
// own parameters can become flags before the rest is parsed.
func (c *cli) systemFirst(args []string) (*protocol.System, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil, args, nil
	}
	sys, err := c.lookup(args[0])
	return sys, args[1:], err
}

// paramFlags makes a flag of each of the system's parameters.
func paramFlags(fs *pflag.FlagSet, sys *protocol.System) map[string]*string {
	params := map[string]*string{}
	if sys != nil {
		for _, p := range sys.Params {
			params[p.Name] = fs.String(p.Name, p.Default, p.Doc)
		}
	}
	return params
}

func (c *cli) check(args []string) int {
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("check", "%v", err)
	}
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	nodes := fs.Int("nodes", 0, "number of nodes (default: the system's)")
	bugs := fs.StringArray("bug", nil, "inject the named bug (repeat for several; see '"+c.cmd+" list')")
	depth := fs.Int("depth", 0, "depth bound of the exhaustive search, in steps (default: the system's, or "+fmt.Sprint(check.DefaultDepth)+")")
	maxMemory := fs.String("max-memory", "", "end the check, inconclusive with a partial report, when its heap outgrows this size, e.g. 4GB, 512MiB (default: 3/4 of the machine's memory, "+check.FormatBytes(check.DefaultMaxMemory())+" here; 0: no limit)")
	maxStates := fs.Int("max-states", 0, "stop after this many distinct states (0: no limit); the result is then inconclusive unless a violation was found")
	seed := fs.Int64("seed", 1, "seed for every random choice")
	resets := fs.Int("resets", 0, "node resets (crash and restart) allowed per run (default: the bugs' needs, then the system's, 0 for most)")
	drops := fs.Int("drops", 0, "lost datagrams allowed per run, datagram transport (default: the bugs' needs, then the system's)")
	sockErrs := fs.Int("socket-errors", 0, "injected socket errors allowed per run, stream transport (default: the bugs' needs, then the system's)")
	dups := fs.Int("dups", 0, "duplicated datagrams allowed per run, datagram transport: a message in flight is copied and may arrive twice (default: the bugs' needs, then the system's)")
	partitions := fs.Int("partitions", 0, "network partitions allowed per run, one at a time: the links between a set of nodes and the rest go down (datagrams across are lost, connections across break and both ends get Error) until a heal event (default: the bugs' needs, then the system's)")
	timeout := fs.Duration("handler-timeout", check.DefaultHandlerTimeout, "how long one handler may run before it counts as stuck")
	walkDepth := fs.Int("walk-depth", check.DefaultWalkDepth, "steps of each random walk from the states at the depth bound (dmax); doubled up to --escalations times when too short to tell")
	walks := fs.Int("walks", check.DefaultWalks, "random walks per probe of the critical-transition search (k)")
	escalations := fs.Int("escalations", check.DefaultEscalations, "how many times to double --walk-depth when a walk is too short to tell (case C2) before giving up as inconclusive")
	weightsFlag := fs.String("weights", "", "walk weights by event kind, e.g. app=8,deliver=4,timer=1,reset=0 (default: the system's)")
	workers := fs.Int("workers", 0, "goroutines of the exhaustive search and of the walks (default: the number of cores); the result does not depend on it")
	budget := fs.Duration("time", 60*time.Second, "time budget of the check (0: none): the search may use three quarters, then ends at the last depth it finished (the report says which) and the walks start there; a check cut short is inconclusive (exit 3) unless it found a violation")
	quiet := fs.BoolP("quiet", "q", false, "print no progress on stderr")
	noWalks := fs.Bool("no-walks", false, "stop after the exhaustive search: safety, and liveness only where nothing can happen any more")
	stopAtLive := fs.Bool("stop-at-live", false, "end each walk at its first live state (MaceMC's rule): much faster, but safety is then checked on a walk only until it recovers, not to --walk-depth")
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
	params := paramFlags(fs, sys)
	synopsis := c.cmd + " check SYSTEM [flags]: search every ordering of SYSTEM's events up to --depth steps\n" +
		"and report the first safety or liveness violation, with a trace file that replays it.\n" +
		"Systems: " + c.names() + " (their own flags show with '" + c.cmd + " check SYSTEM --help')"
	if code, stop := c.parse(fs, args, synopsis); stop {
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
	if *timeout <= 0 {
		return c.usageErr("check", "--handler-timeout must be positive")
	}
	if *workers < 0 {
		return c.usageErr("check", "--workers cannot be negative")
	}
	if *walkDepth < 1 || *walks < 1 || *escalations < 0 {
		return c.usageErr("check", "--walk-depth and --walks must be at least 1, --escalations at least 0")
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
	if err := check.ValidReduce(*reduce); err != nil {
		return c.usageErr("check", "--reduce: %v", err)
	}
	weights, err := walk.ParseWeights(*weightsFlag, walk.DefaultWeights)
	if err != nil {
		return c.usageErr("check", "--weights: %v", err)
	}
	cfg := protocol.Config{
		Nodes:  *nodes,
		Bugs:   *bugs,
		Params: map[string]string{},
	}
	// A flag left out is 0 in the Config, the default; a flag given 0 is
	// None, no failure of the kind.
	for _, f := range []struct {
		name string
		v    int
		to   *int
	}{{"resets", *resets, &cfg.Budget.Resets}, {"drops", *drops, &cfg.Budget.Drops}, {"socket-errors", *sockErrs, &cfg.Budget.Errors},
		{"dups", *dups, &cfg.Budget.Dups}, {"partitions", *partitions, &cfg.Budget.Partitions}} {
		switch {
		case f.v < 0:
			return c.usageErr("check", "--%s cannot be negative", f.name)
		case fs.Changed(f.name) && f.v == 0:
			*f.to = protocol.None
		default:
			*f.to = f.v
		}
	}
	if fs.Changed("nodes") && *nodes < 1 {
		return c.usageErr("check", "--nodes must be at least 1, not %d", *nodes)
	}
	for name, v := range params {
		if fs.Changed(name) {
			cfg.Params[name] = *v
		}
	}
	var prefixPath sim.Path
	var prefixInit []int
	if *from != "" {
		if cfg, prefixInit, prefixPath, err = check.PrefixStart(sys, *from, cfg); err != nil {
			return c.usageErr("check", "--from: %v", err)
		}
	}
	interrupted, stopSignals := onInterrupt()
	defer stopSignals()
	prog := &progressLine{w: c.stderr, start: time.Now(), budget: *budget}
	if *quiet || (*asJSON && !isTerminal(c.stdout)) {
		prog = nil
	}
	esc := *escalations
	if esc == 0 {
		esc = -1 // Options: none
	}
	opts := check.Options{
		Config:         cfg,
		Depth:          *depth,
		MaxStates:      *maxStates,
		Time:           *budget,
		MaxMemory:      maxMem,
		Seed:           *seed,
		HandlerTimeout: *timeout,
		Interrupted:    interrupted,
		WalkDepth:      *walkDepth,
		Walks:          *walks,
		Escalations:    esc,
		Weights:        weights,
		WeightsSet:     fs.Changed("weights"),
		NoWalks:        *noWalks,
		StopAtLive:     *stopAtLive,
		Workers:        *workers,
		Mode:           *mode,
		Reduce:         *reduce,
		Rounds:         *rounds,
		MaxVerify:      *maxVerify,
		Prefix:         prefixPath,
		PrefixInit:     prefixInit,
		Progress:       prog.report,
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
	rep := c.report(res, trace, liveTrace)
	rep.AllSteps, rep.Graph = *stepsFlag == "all", *graph
	if *from != "" {
		rep.Prefix = &reports.Prefix{File: *from, Length: res.PrefixLen}
	}
	if *junit != "" {
		if err := writeJUnit(*junit, sys, res, rep); err != nil {
			fmt.Fprintf(c.stderr, "%s check: --junit: %v\n", c.name, err)
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
			return c.usageErr("check", "--html %s: %v", *htmlFile, err)
		}
	}
	return exitCode(res.Verdict)
}

// report is a result's report with the commands that replay its traces.
func (c *cli) report(res *check.Result, trace, liveTrace string) *reports.Check {
	rep := res.Report(trace, liveTrace)
	rep.ReplayCommand = c.cmd + " replay " + trace
	rep.LiveReplayCommand = c.cmd + " replay " + liveTrace
	return rep
}

// onInterrupt watches for Ctrl-C (SIGINT) and SIGTERM, the signal a
// shell's kill, a CI runner or a container stop sends: either ends a check
// early with its partial report. interrupted says whether one came; stop
// gives the signals back.
func onInterrupt() (interrupted func() bool, stop func()) {
	var got atomic.Bool
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; ok {
			got.Store(true)
		}
	}()
	return got.Load, func() {
		signal.Stop(sigs)
		close(sigs)
	}
}

// exitCode is the exit status for a verdict.
func exitCode(v check.Verdict) int {
	switch v {
	case check.OK:
		return ExitOK
	case check.Inconclusive:
		return ExitInconclusive
	case check.PropertyError:
		return ExitUsage // the user's property is broken, not the protocol
	}
	return ExitViolation
}

// compare runs the same check in global mode (search only) and in local
// mode, and shows the two side by side.
func (c *cli) compare(sys *protocol.System, opts check.Options, out string, asJSON bool) int {
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
		*[]*reports.Check{&rep.Global, &rep.Local}[i] = *c.report(res, trace, "")
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
// given cannot show one of the bugs (the report's JSON has the same lines).
func (c *cli) warnBugs(sys *protocol.System, cfg protocol.Config) {
	_, warnings := sys.BugSettings(cfg)
	for _, m := range warnings {
		fmt.Fprintf(c.stderr, "%s: warning: %s: the check may miss it\n", c.name, m)
	}
}

// ---- replay ----

// traceArg reads the one trace file the command cmd was given and finds
// its system; a problem is cmd's usage error (its exit code, and false).
func (c *cli) traceArg(cmd string, fs *pflag.FlagSet) (string, *reports.Trace, *protocol.System, int, bool) {
	if fs.NArg() != 1 {
		return "", nil, nil, c.usageErr(cmd, "give exactly one trace file"), false
	}
	file := fs.Arg(0)
	t, err := reports.ReadTraceFile(file)
	if err != nil {
		return "", nil, nil, c.usageErr(cmd, "%v", err), false
	}
	sys, err := c.lookup(t.System)
	if err != nil {
		return "", nil, nil, c.usageErr(cmd, "%s: %v", file, err), false
	}
	return file, t, sys, 0, true
}

func (c *cli) replay(args []string) int {
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	timeout := fs.Duration("handler-timeout", check.DefaultHandlerTimeout, "how long one handler may run before it counts as stuck")
	synopsis := c.cmd + " replay TRACE [--json]: re-execute a trace file, print each step (event, node,\n" +
		"messages sent) and the violation it reaches. Exit 1 if the recorded violation reproduces,\n" +
		"2 if the file is malformed or does not replay to it."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	file, t, sys, code, ok := c.traceArg("replay", fs)
	if !ok {
		return code
	}
	path, err := reports.Path(t.Steps)
	if err != nil {
		return c.usageErr("replay", "%s: %v", file, err)
	}
	rep, err := check.ReplayFrom(sys, check.ConfigOf(t), t.Init, path, *timeout)
	if err != nil {
		return c.usageErr("replay", "%s: %v", file, err)
	}
	reproduced, err := rep.Confirm(t)
	if err != nil {
		return c.usageErr("replay", "%s: %v", file, err)
	}
	if *asJSON {
		reports.WriteJSON(c.stdout, rep.Report(file, t, reproduced))
	} else {
		reports.WriteReplay(c.stdout, rep.Report(file, t, reproduced))
	}
	if !reproduced {
		return c.usageErr("replay", "%s does not replay: it records %s, but replaying it gives %s", file, check.Recorded(t), rep.Reached(t))
	}
	if v := check.Verdict(t.Result); v == check.Live || v == check.PrefixResult {
		if !*asJSON {
			fmt.Fprintln(c.stdout, "reproduced: the trace reaches a live state")
		}
		return ExitOK
	}
	if !*asJSON {
		fmt.Fprintln(c.stdout, "reproduced: the trace replays to the violation it records")
	}
	return ExitViolation
}

// ---- report ----

func (c *cli) reportCmd(args []string) int {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	htmlFile := fs.String("html", "", "write the web page to this file (required)")
	vs := fs.String("vs", "", "the nearest live path's trace, to draw beside the dead one (default: the one the trace names, beside it)")
	timeout := fs.Duration("handler-timeout", check.DefaultHandlerTimeout, "how long one handler may run before it counts as stuck")
	synopsis := c.cmd + " report TRACE --html FILE [--vs LIVE_TRACE]: replay a trace file and write its path as a\n" +
		"self-contained web page: one lane per node, each delivered message an arrow, the critical step\n" +
		"highlighted and the nearest live path beside it; click a step for every node's state."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	if fs.NArg() == 1 && *htmlFile == "" {
		return c.usageErr("report", "--html FILE is required: where to write the page")
	}
	file, t, sys, code, ok := c.traceArg("report", fs)
	if !ok {
		return code
	}
	liveFile := *vs
	if liveFile == "" {
		liveFile = traceview.LiveTraceOf(file, t)
	}
	var live *reports.Trace
	if liveFile != "" {
		var err error
		if live, err = reports.ReadTraceFile(liveFile); err != nil {
			if *vs != "" {
				return c.usageErr("report", "--vs: %v", err)
			}
			// The page is worth having without the live path.
			fmt.Fprintf(c.stderr, "%s report: warning: the nearest live path the trace names cannot be read, the page has none: %v\n", c.name, err)
		}
	}
	g, err := traceview.GraphOfTrace(sys, t, live, *timeout)
	if err != nil {
		return c.usageErr("report", "%s: %v", file, err)
	}
	g.Trace = file
	if live != nil {
		g.LiveTrace = liveFile
	}
	if err := writeGraph(*htmlFile, g); err != nil {
		return c.usageErr("report", "--html %s: %v", *htmlFile, err)
	}
	fmt.Fprintf(c.stdout, "wrote %s\n", *htmlFile)
	return ExitOK
}

// ---- prefix ----

func (c *cli) prefix(args []string) int {
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("prefix", "%v", err)
	}
	fs := pflag.NewFlagSet("prefix", pflag.ContinueOnError)
	nodes := fs.Int("nodes", 0, "number of nodes (default: the system's)")
	bugs := fs.StringArray("bug", nil, "inject the named bug while walking (repeatable)")
	count := fs.IntP("count", "n", 1, "how many distinct prefixes to write")
	settle := fs.Int("settle", 0, "steps the liveness property must keep holding after it first holds")
	seed := fs.Int64("seed", 1, "seed of the walks")
	maxSteps := fs.Int("max-steps", check.DefaultPrefixSteps, "the longest walk tried for one prefix")
	weightsFlag := fs.String("weights", "", "walk weights by event kind, e.g. app=8,deliver=4,timer=1 (default: the system's)")
	out := fs.String("out", "", "directory for the prefix files (required)")
	asJSON := fs.Bool("json", false, "print a JSON array of {file, length, first_live}")
	params := paramFlags(fs, sys)
	synopsis := c.cmd + " prefix SYSTEM --out DIR [flags]: walk SYSTEM with every failure (resets, drops, socket errors...)\n" +
		"disabled until its liveness property holds (and keeps holding for --settle steps), and write\n" +
		"each path as a prefix file. '" + c.cmd + " check SYSTEM --from FILE' then starts from its end.\n" +
		"Systems: " + c.names()
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	switch {
	case sys == nil && fs.NArg() == 0:
		return c.usageErr("prefix", "name the system (valid: %s)", c.names())
	case sys == nil:
		return c.usageErr("prefix", "the system must come first: %s prefix SYSTEM [flags]", c.name)
	case fs.NArg() > 0:
		return c.usageErr("prefix", "unexpected argument %q", fs.Arg(0))
	case *out == "":
		return c.usageErr("prefix", "--out DIR is required: where to write the prefix files")
	case *count < 1 || *count > 10000:
		return c.usageErr("prefix", "-n must be from 1 to 10000, not %d", *count)
	case *settle < 0 || *maxSteps < 1:
		return c.usageErr("prefix", "--settle cannot be negative and --max-steps must be at least 1")
	}
	weights, err := walk.ParseWeights(*weightsFlag, walk.DefaultWeights)
	if err != nil {
		return c.usageErr("prefix", "--weights: %v", err)
	}
	cfg := protocol.Config{Nodes: *nodes, Bugs: *bugs, Params: map[string]string{}}
	for name, v := range params {
		if fs.Changed(name) {
			cfg.Params[name] = *v
		}
	}
	start := time.Now()
	cfg, ps, err := check.Prefixes(sys, check.PrefixOptions{
		Config: cfg, Count: *count, Settle: *settle, MaxSteps: *maxSteps, Seed: *seed,
		Weights: weights, WeightsSet: fs.Changed("weights"),
	})
	if err != nil && len(ps) == 0 {
		return c.usageErr("prefix", "%v", err)
	}
	files := []reports.PrefixFile{}
	for _, p := range ps {
		f, werr := check.WritePrefix(*out, sys, cfg, *seed, *settle, p)
		if werr != nil {
			fmt.Fprintf(c.stderr, "%s prefix: writing a prefix: %v\n", c.name, werr)
			return ExitUsage
		}
		files = append(files, reports.PrefixFile{File: f, Length: len(p.Path), FirstLive: p.FirstLive})
	}
	if *asJSON {
		if len(files) == 0 {
			files = nil // as before: null
		}
		reports.WriteJSON(c.stdout, files)
	} else {
		checkFrom := ""
		if len(files) > 0 {
			checkFrom = fmt.Sprintf("%s check %s --from %s --resets 1", c.cmd, sys.Name, files[0].File)
		}
		reports.WritePrefixes(c.stdout, check.DescribeConfig(sys.Name, cfg), files, time.Since(start), checkFrom)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s prefix: %v\n", c.name, err)
		return ExitInconclusive
	}
	return ExitOK
}
