// Command livecheck checks distributed protocols for safety and liveness
// bugs. It parses flags, calls package livecheck and prints; nothing else.
//
//	livecheck list [--json]
//	livecheck check SYSTEM [flags]
//	livecheck replay TRACE [--json]
//
// Exit status: 0 nothing found, 1 violation found, 2 usage or input error,
// 3 inconclusive.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
	"github.com/livecheck/livecheck/walk"
)

const (
	exitOK           = 0
	exitViolation    = 1
	exitUsage        = 2
	exitInconclusive = 3
)

func main() {
	// A checker's heap is mostly its visited set, which only grows:
	// collecting less often buys about a fifth of the search's time.
	debug.SetGCPercent(400)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `livecheck finds safety and liveness bugs in distributed protocols.

Usage:
  livecheck list [--json]            the bundled systems, their bugs and properties
  livecheck check SYSTEM [flags]     search SYSTEM's behaviours for a violation
  livecheck prefix SYSTEM [flags]    make live prefixes to start checks from (check --from)
  livecheck replay TRACE [--json]    re-execute a trace file step by step

Run 'livecheck COMMAND --help' for a command's flags.

Exit status: 0 nothing found, 1 violation found, 2 usage or input error,
3 inconclusive (the check was cut short before it could tell).
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "list":
		return runList(args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "replay":
		return runReplay(args[1:], stdout, stderr)
	case "prefix":
		return runPrefix(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "livecheck: unknown command %q (valid: list, check, prefix, replay)\n", args[0])
	return exitUsage
}

// parse parses a command's flags; it returns the exit status to use when
// the command should stop (help shown, or a usage error).
func parse(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer, synopsis string) (int, bool) {
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "%s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
		return exitOK, true
	}
	if err != nil {
		fmt.Fprintf(stderr, "livecheck %s: %v (see 'livecheck %s --help')\n", fs.Name(), err, fs.Name())
		return exitUsage, true
	}
	return 0, false
}

func usageErr(stderr io.Writer, cmd string, format string, args ...any) int {
	fmt.Fprintf(stderr, "livecheck %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return exitUsage
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// ---- list ----

type listEntry struct {
	Name       string   `json:"name"`
	Doc        string   `json:"doc"`
	Nodes      int      `json:"nodes"`
	Bugs       []string `json:"bugs"`
	Properties []string `json:"properties"`
	// BugNeeds gives each bug's declared settings as flags, by bug name.
	BugNeeds map[string]string `json:"bug_needs"`
}

// bugNeeds says in flags what a bug needs to show ("--nodes 3 --peers all").
func bugNeeds(b livecheck.Bug) string {
	if b.NeedsDoc != "" {
		return b.NeedsDoc
	}
	var flags []string
	for _, st := range b.Needs.Settings(b.Name) {
		flags = append(flags, st.String())
	}
	return strings.Join(flags, " ")
}

func runList(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("list", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print a JSON array of {name, doc, nodes, bugs, properties, bug_needs}")
	if code, stop := parse(fs, args, stdout, stderr, "livecheck list [--json]: the bundled systems, one per line, with their bugs and properties"); stop {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, "list", "takes no arguments, got %q", fs.Arg(0))
	}
	var entries []listEntry
	for _, s := range systems.All() {
		e := listEntry{Name: s.Name, Doc: s.Doc, Nodes: s.DefaultNodes, Bugs: s.BugNames(), Properties: []string{}, BugNeeds: map[string]string{}}
		for _, b := range s.Bugs {
			e.BugNeeds[b.Name] = bugNeeds(b)
		}
		for _, p := range s.Properties {
			e.Properties = append(e.Properties, p.Name)
		}
		entries = append(entries, e)
	}
	if *asJSON {
		writeJSON(stdout, entries)
		return exitOK
	}
	for i, e := range entries {
		bugs := "none"
		if len(e.Bugs) > 0 {
			named := slices.Clone(e.Bugs)
			for j, b := range systems.All()[i].Bugs {
				if n := e.BugNeeds[b.Name]; n != "" {
					named[j] += " (" + n + ")"
				}
			}
			bugs = strings.Join(named, ", ")
		}
		fmt.Fprintf(stdout, "%s: %s; bugs: %s; properties: %s\n", e.Name, e.Doc, bugs, strings.Join(e.Properties, ","))
	}
	return exitOK
}

// ---- check ----

type jsonStats struct {
	States      int64 `json:"states"`
	Transitions int64 `json:"transitions"`
	// Slept: transitions that sleep sets spared (--reduce sleep).
	Slept      int64 `json:"slept"`
	MaxDepth   int   `json:"max_depth"`
	Periphery  int   `json:"periphery"`
	LiveStates int64 `json:"live_states"`
	ElapsedMS  int64 `json:"elapsed_ms"`
	// CollisionChance is TLC's estimate of the chance that a fingerprint
	// collision hid a state (0 in local mode).
	CollisionChance float64 `json:"collision_chance"`
}

type jsonCritical struct {
	Step      int      `json:"step"`       // counted after the prefix, if any
	TraceStep int      `json:"trace_step"` // counted from the initial state
	Case      string   `json:"case"`
	Event     string   `json:"event"`
	Kind      string   `json:"kind"`
	Node      int      `json:"node"`
	Timer     string   `json:"timer,omitempty"`
	LiveStep  int      `json:"live_step"`
	LiveTrace string   `json:"live_trace,omitempty"`
	Dinit     int      `json:"dinit"`
	WalkDepth int      `json:"walk_depth"`
	Tried     []string `json:"tried,omitempty"`
	Probes    int      `json:"probes"`
	// Dead is the evidence that the state after the critical step is
	// dead, Alive how the state before it recovers, End the evidence that
	// the path's last state is dead (what replay tests again).
	// Overturned counts steps the cheaper probes called dead and the dead
	// test did not.
	Dead       *jsonEvidence `json:"dead,omitempty"`
	Alive      *jsonEvidence `json:"alive,omitempty"`
	End        *jsonEvidence `json:"end,omitempty"`
	Overturned int           `json:"overturned"`
	// Diff names the nodes whose states differ after the parting step on
	// the dead and the live path.
	Diff []jsonDiff `json:"diff,omitempty"`
}

// jsonEvidence is what a test from one state saw: a breadth-first search,
// then walks.
type jsonEvidence struct {
	Step int  `json:"step"` // the state after this step of the trace
	Live bool `json:"live"` // a live state was reached
	// By says how: "live" (the state itself), "search" or "walk"; in
	// StepsToLive steps.
	By           string `json:"by,omitempty"`
	StepsToLive  int    `json:"steps_to_live,omitempty"`
	SearchDepth  int    `json:"search_depth"`  // every state within this many steps searched
	SearchStates int    `json:"search_states"` // distinct states searched
	SearchAll    bool   `json:"search_all"`    // every reachable state searched
	Walks        int    `json:"walks"`         // walks run
	Recovered    int    `json:"recovered"`     // of which reached a live state
	WalkDepth    int    `json:"walk_depth"`
}

func evidenceJSON(ev *critical.Evidence, step int) *jsonEvidence {
	if ev == nil {
		return nil
	}
	j := &jsonEvidence{Step: step, Live: ev.Live, SearchDepth: ev.SearchDepth, SearchStates: ev.SearchStates,
		SearchAll: ev.SearchAll, Walks: ev.Walks, WalkDepth: ev.WalkDepth}
	if ev.Live {
		j.By, j.StepsToLive = "search", len(ev.Path)
		switch {
		case len(ev.Path) == 0:
			j.By = "live"
		case ev.ByWalk:
			j.By, j.Recovered = "walk", 1
		}
	}
	return j
}

// thousands writes n with commas: 514,698.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// evidenceWords says in words what a test from one state saw: how it
// recovers, or the strength of the evidence that it does not.
func evidenceWords(ev *critical.Evidence, prop string) string {
	if ev.Live {
		switch {
		case len(ev.Path) == 0:
			return prop + " holds there"
		case ev.ByWalk:
			return fmt.Sprintf("a walk of %s steps from it reaches %s", thousands(len(ev.Path)), prop)
		}
		return fmt.Sprintf("%s holds %d steps from it (the nearest, by breadth-first search)", prop, len(ev.Path))
	}
	if ev.SearchAll {
		return fmt.Sprintf("%s holds in none of the %s states reachable from it (all searched)", prop, thousands(ev.SearchStates))
	}
	var parts []string
	if ev.Walks > 0 {
		parts = append(parts, fmt.Sprintf("0 of %d walks of %s steps reach %s", ev.Walks, thousands(ev.WalkDepth), prop))
	}
	if ev.SearchStates > 0 {
		parts = append(parts, fmt.Sprintf("no state within %d steps has it (%s states searched)", ev.SearchDepth, thousands(ev.SearchStates)))
	}
	return strings.Join(parts, ", ")
}

type jsonDiff struct {
	Node int    `json:"node"`
	Dead string `json:"dead"`
	Live string `json:"live"`
}

type jsonLive struct {
	WalkDepth int `json:"walk_depth"`
	// SafetyToLive says safety was checked on walks only until they
	// recovered (--stop-at-live).
	SafetyToLive bool    `json:"safety_until_live,omitempty"`
	Walks        int     `json:"walks"`
	WalkSteps    int64   `json:"walk_steps"`
	Suspects     int     `json:"suspects"`
	Cleared      int     `json:"cleared"`
	ElapsedMS    int64   `json:"elapsed_ms"`
	Weights      string  `json:"weights"`
	K            int     `json:"k"`
	Critical     float64 `json:"critical_ms"`
}

type jsonLocal struct {
	NodeStates    []int   `json:"node_states"`
	Messages      int     `json:"messages"`
	Transitions   int64   `json:"transitions"`
	SystemStates  int64   `json:"system_states"`
	Pairs         int64   `json:"pairs"`
	Preliminary   int64   `json:"preliminary_violations"`
	Verifications int64   `json:"verifications"`
	Sequences     int64   `json:"sequences"`
	Unsound       int64   `json:"unsound"`
	Rounds        int     `json:"rounds"`
	ExploreMS     float64 `json:"explore_ms"`
	CombineMS     float64 `json:"combine_ms"`
	VerifyMS      float64 `json:"verify_ms"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type jsonPrefix struct {
	File   string `json:"file"`
	Length int    `json:"length"`
}

type jsonCheck struct {
	Result    string            `json:"result"`
	System    string            `json:"system"`
	Bugs      []string          `json:"bugs"`
	Nodes     int               `json:"nodes"`
	Params    map[string]string `json:"params,omitempty"`
	Budget    sim.Budget        `json:"budget"`
	Seed      int64             `json:"seed"`
	Depth     int               `json:"depth"`
	Property  string            `json:"property,omitempty"`
	Message   string            `json:"message,omitempty"`
	Trace     string            `json:"trace,omitempty"`
	PathLen   int               `json:"path_length,omitempty"`
	Complete  bool              `json:"complete"`
	Exhausted bool              `json:"exhausted"`
	// Covered is the depth the search finished: every state within it
	// was explored; Cut says what ended the search before its bound.
	Covered int    `json:"covered_depth"`
	Cut     string `json:"cut,omitempty"`
	// Interrupted: stopped by a signal; MemoryLimit: by --max-memory.
	Interrupted bool          `json:"interrupted,omitempty"`
	MemoryLimit bool          `json:"memory_limit,omitempty"`
	MaxMemory   int64         `json:"max_memory_bytes,omitempty"`
	PeakMemory  int64         `json:"peak_memory_bytes,omitempty"`
	Stats       jsonStats     `json:"stats"`
	Mode        string        `json:"mode"`
	Prefix      *jsonPrefix   `json:"prefix,omitempty"`
	Local       *jsonLocal    `json:"local,omitempty"`
	Liveness    *jsonLive     `json:"liveness,omitempty"`
	Critical    *jsonCritical `json:"critical,omitempty"`
	// FromBugs are the settings taken from the bugs' needs; BugWarnings
	// say where the settings given cannot show a bug.
	FromBugs    []livecheck.Setting `json:"from_bugs,omitempty"`
	BugWarnings []string            `json:"bug_warnings,omitempty"`
}

// systemFirst takes the system's name off the front of args, so that its
// own parameters can become flags before the rest is parsed.
func systemFirst(args []string) (*livecheck.System, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil, args, nil
	}
	sys, err := lookup(args[0])
	return sys, args[1:], err
}

// paramFlags makes a flag of each of the system's parameters.
func paramFlags(fs *pflag.FlagSet, sys *livecheck.System) map[string]*string {
	params := map[string]*string{}
	if sys != nil {
		for _, p := range sys.Params {
			params[p.Name] = fs.String(p.Name, p.Default, p.Doc)
		}
	}
	return params
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	sys, args, err := systemFirst(args)
	if err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	nodes := fs.Int("nodes", 0, "number of nodes (default: the system's)")
	bugs := fs.StringArray("bug", nil, "inject the named bug (repeat for several; see 'livecheck list')")
	depth := fs.Int("depth", 0, "depth bound of the exhaustive search, in steps (default: the system's; 20 for lcr)")
	maxMemory := fs.String("max-memory", "", "end the check, inconclusive with a partial report, when its heap outgrows this size, e.g. 4GB, 512MiB (default: 3/4 of the machine's memory, "+livecheck.FormatBytes(livecheck.DefaultMaxMemory())+" here; 0: no limit)")
	maxStates := fs.Int("max-states", 0, "stop after this many distinct states (0: no limit); the result is then inconclusive unless a violation was found")
	seed := fs.Int64("seed", 1, "seed for every random choice")
	resets := fs.Int("resets", -1, "node resets (crash and restart) allowed per run (default: the system's, 0 for most)")
	drops := fs.Int("drops", -1, "lost datagrams allowed per run, datagram transport (default: the system's)")
	sockErrs := fs.Int("socket-errors", -1, "injected socket errors allowed per run, stream transport (default: the system's)")
	timeout := fs.Duration("handler-timeout", 2*time.Second, "how long one handler may run before it counts as stuck")
	walkDepth := fs.Int("walk-depth", 5000, "steps of each random walk from the states at the depth bound (dmax); doubled up to --escalations times when too short to tell")
	walks := fs.Int("walks", 8, "random walks per probe of the critical-transition search (k)")
	escalations := fs.Int("escalations", 3, "how many times to double --walk-depth when a walk is too short to tell (case C2) before giving up as inconclusive")
	weightsFlag := fs.String("weights", "", "walk weights by event kind, e.g. app=8,deliver=4,timer=1,reset=0 (default: the system's)")
	workers := fs.Int("workers", 0, "goroutines of the exhaustive search and of the walks (default: the number of cores); the result does not depend on it")
	budget := fs.Duration("time", 60*time.Second, "time budget of the check (0: none): the search may use three quarters, then ends at the last depth it finished (the report says which) and the walks start there; a check cut short is inconclusive (exit 3) unless it found a violation")
	quiet := fs.BoolP("quiet", "q", false, "print no progress on stderr")
	noWalks := fs.Bool("no-walks", false, "stop after the exhaustive search: safety, and liveness only where nothing can happen any more")
	stopAtLive := fs.Bool("stop-at-live", false, "end each walk at its first live state (MaceMC's rule): much faster, but safety is then checked on a walk only until it recovers, not to --walk-depth")
	reduce := fs.String("reduce", livecheck.DefaultReduce, "reductions of the exhaustive search, comma-separated: sleep: skip the transitions that sleep sets show lead only to states reached another way at the same depth (the same states, violations and periphery, fewer transitions); symmetry: keep one state of each set of states that are renamings of each other under the system's symmetric nodes (paxos: the acceptors that do not propose), so that counts are of those sets; none: take every transition and keep every state")
	mode := fs.String("mode", "global", "global: search global states (network included), then walks for liveness; local: local model checking of the safety properties, each violation verified by a real run; compare: both, side by side (no walks)")
	rounds := fs.Int("rounds", 8, "local mode: the most local events (timers, driver calls) one node takes on a path, raised round by round up to this")
	from := fs.String("from", "", "start from the end of this prefix file (made by 'livecheck prefix'): it replays first, then the search begins with failures enabled")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	out := fs.String("out", "livecheck-out", "directory for trace files")
	params := paramFlags(fs, sys)
	synopsis := "livecheck check SYSTEM [flags]: search every ordering of SYSTEM's events up to --depth steps\n" +
		"and report the first safety or liveness violation, with a trace file that replays it.\n" +
		"Systems: " + strings.Join(systems.Names(), ", ") + " (their own flags show with 'livecheck check SYSTEM --help')"
	if code, stop := parse(fs, args, stdout, stderr, synopsis); stop {
		return code
	}
	if sys == nil {
		if fs.NArg() == 0 {
			return usageErr(stderr, "check", "name the system to check (valid: %s)", strings.Join(systems.Names(), ", "))
		}
		return usageErr(stderr, "check", "the system must come first: livecheck check SYSTEM [flags]")
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, "check", "unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("depth") && *depth < 1 {
		return usageErr(stderr, "check", "--depth must be at least 1, not %d", *depth)
	}
	var maxMem int64
	if *maxMemory != "" {
		n, err := livecheck.ParseBytes(*maxMemory)
		if err != nil {
			return usageErr(stderr, "check", "--max-memory: %v", err)
		}
		if maxMem = n; n == 0 {
			maxMem = -1 // no limit
		}
	}
	if *maxStates < 0 {
		return usageErr(stderr, "check", "--max-states cannot be negative")
	}
	if *timeout <= 0 {
		return usageErr(stderr, "check", "--handler-timeout must be positive")
	}
	if *workers < 0 {
		return usageErr(stderr, "check", "--workers cannot be negative")
	}
	if *walkDepth < 1 || *walks < 1 || *escalations < 0 {
		return usageErr(stderr, "check", "--walk-depth and --walks must be at least 1, --escalations at least 0")
	}
	if *mode != "global" && *mode != "local" && *mode != "compare" {
		return usageErr(stderr, "check", "unknown --mode %q (valid: global, local, compare)", *mode)
	}
	if *rounds < 1 {
		return usageErr(stderr, "check", "--rounds must be at least 1")
	}
	if err := livecheck.ValidReduce(*reduce); err != nil {
		return usageErr(stderr, "check", "--reduce: %v", err)
	}
	weights, err := walk.ParseWeights(*weightsFlag, walk.DefaultWeights)
	if err != nil {
		return usageErr(stderr, "check", "--weights: %v", err)
	}
	cfg := livecheck.Config{
		Nodes:  *nodes,
		Bugs:   *bugs,
		Budget: sim.Budget{Resets: *resets, Drops: *drops, Errors: *sockErrs},
		Params: map[string]string{},
	}
	for name, v := range map[string]int{"resets": *resets, "drops": *drops, "socket-errors": *sockErrs} {
		if fs.Changed(name) && v < 0 {
			return usageErr(stderr, "check", "--%s cannot be negative", name)
		}
	}
	if fs.Changed("nodes") && *nodes < 1 {
		return usageErr(stderr, "check", "--nodes must be at least 1, not %d", *nodes)
	}
	for name, v := range params {
		if fs.Changed(name) {
			cfg.Params[name] = *v
		}
	}
	var prefixPath sim.Path
	if *from != "" {
		t, err := reports.ReadTraceFile(*from)
		if err != nil {
			return usageErr(stderr, "check", "--from: %v", err)
		}
		if livecheck.Verdict(t.Result) != livecheck.PrefixResult {
			return usageErr(stderr, "check", "--from: %s is not a prefix file (it records %q; make prefixes with 'livecheck prefix')", *from, t.Result)
		}
		var diff []string
		if t.System != sys.Name {
			diff = append(diff, fmt.Sprintf("system %s, not %s", t.System, sys.Name))
		}
		if cfg.Nodes == 0 {
			cfg.Nodes = t.Nodes
		} else if t.Nodes != cfg.Nodes {
			diff = append(diff, fmt.Sprintf("%d nodes, not %d", t.Nodes, cfg.Nodes))
		}
		for name := range params {
			pv, cv, set := t.Params[name], cfg.Params[name], fs.Changed(name)
			switch {
			case set && pv != cv:
				if pv == "" {
					pv = "(default)"
				}
				diff = append(diff, fmt.Sprintf("%s=%s, not %s", name, pv, cv))
			case !set && pv != "":
				cfg.Params[name] = pv
			}
		}
		if len(diff) > 0 {
			return usageErr(stderr, "check", "--from: %s was made for another configuration: %s", *from, strings.Join(diff, "; "))
		}
		if prefixPath, err = reports.Path(t.Steps); err != nil {
			return usageErr(stderr, "check", "--from: %s: %v", *from, err)
		}
	}
	interrupted, stopSignals := onInterrupt()
	defer stopSignals()
	prog := &progress{w: stderr, start: time.Now(), budget: *budget}
	if *quiet || (*asJSON && !isTerminal(stdout)) {
		prog = nil
	}
	opts := livecheck.Options{
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
		Escalations:    max(*escalations, 0),
		Weights:        weights,
		WeightsSet:     fs.Changed("weights"),
		NoWalks:        *noWalks,
		StopAtLive:     *stopAtLive,
		Workers:        *workers,
		Mode:           *mode,
		Reduce:         *reduce,
		Rounds:         *rounds,
		Prefix:         prefixPath,
		Progress:       prog.report,
	}
	warnBugs(stderr, sys, opts.Config)
	if *mode == "compare" {
		return runCompare(sys, opts, *out, *asJSON, stdout, stderr)
	}
	res, err := livecheck.Check(sys, opts)
	if err != nil {
		if errors.Is(err, livecheck.ErrPrefix) {
			return usageErr(stderr, "check", "--from: %s: %v (a prefix must replay exactly under the check's configuration and bugs)", *from, err)
		}
		return usageErr(stderr, "check", "%v", err)
	}
	trace, liveTrace := "", ""
	if res.Verdict == livecheck.SafetyViolation || res.Verdict == livecheck.LivenessViolation || res.Verdict == livecheck.PropertyError {
		trace, liveTrace, err = res.WriteTraces(*out)
		if err != nil {
			// The finding matters more than its file: report it anyway.
			trace, liveTrace = "", ""
			fmt.Fprintf(stderr, "livecheck check: the trace could not be written, the report below has none: %v\n", err)
		}
	}
	if *asJSON {
		writeJSON(stdout, toJSON(res, trace, liveTrace, *from))
	} else {
		printCheck(stdout, res, trace, liveTrace)
	}
	return exitCode(res.Verdict)
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

// lookup finds a system by name; tests add systems of their own.
var lookup = systems.Lookup

func exitCode(v livecheck.Verdict) int {
	switch v {
	case livecheck.OK:
		return exitOK
	case livecheck.Inconclusive:
		return exitInconclusive
	case livecheck.PropertyError:
		return exitUsage // the user's property is broken, not the protocol
	}
	return exitViolation
}

// runCompare runs the same check in global mode (search only) and in local
// mode, and shows the two side by side.
func runCompare(sys *livecheck.System, opts livecheck.Options, out string, asJSON bool, stdout, stderr io.Writer) int {
	var results [2]*livecheck.Result
	var traces [2]string
	for i, mode := range []string{"global", "local"} {
		o := opts
		o.Mode, o.NoWalks = mode, true
		res, err := livecheck.Check(sys, o)
		if err != nil {
			return usageErr(stderr, "check", "%s mode: %v", mode, err)
		}
		if res.Verdict == livecheck.SafetyViolation || res.Verdict == livecheck.LivenessViolation {
			if traces[i], _, err = res.WriteTraces(out); err != nil {
				traces[i] = ""
				fmt.Fprintf(stderr, "livecheck check: %s mode: the trace could not be written, the report below has none: %v\n", mode, err)
			}
		}
		results[i] = res
	}
	g, l := results[0], results[1]
	gv, lv := g.Verdict == livecheck.SafetyViolation, l.Verdict == livecheck.SafetyViolation
	tr := float64(g.Stats.Transitions) / max(float64(l.Stats.Transitions), 1)
	tm := g.Stats.Elapsed.Seconds() / max(l.Stats.Elapsed.Seconds(), 1e-9)
	if asJSON {
		writeJSON(stdout, struct {
			Global           jsonCheck `json:"global"`
			Local            jsonCheck `json:"local"`
			Agree            bool      `json:"agree"`
			TransitionsRatio float64   `json:"transitions_ratio"`
			TimeRatio        float64   `json:"time_ratio"`
		}{toJSON(g, traces[0], "", ""), toJSON(l, traces[1], "", ""), gv == lv, tr, tm})
	} else {
		fmt.Fprintf(stdout, "%s; global depth %d, local rounds %d\n", describeConfig(g.System, g.Config), g.Depth, opts.Rounds)
		printBugSettings(stdout, g)
		fmt.Fprintln(stdout)
		rows := [][]string{}
		for i, r := range results {
			found := string(r.Verdict)
			if r.Property != "" {
				found += " of " + r.Property
			}
			states := fmt.Sprint(r.Stats.States)
			if r.Local != nil {
				states = fmt.Sprintf("%d node states %v", r.Local.TotalNodeStates, r.Local.NodeStates)
			}
			rows = append(rows, []string{[]string{"global", "local"}[i], found, fmt.Sprint(r.Complete), states,
				fmt.Sprint(r.Stats.Transitions), r.Stats.Elapsed.Round(time.Microsecond).String()})
		}
		reports.Table(stdout, []string{"mode", "result", "complete", "states", "transitions", "time"}, rows)
		fmt.Fprintf(stdout, "\nglobal/local: %.1fx the transitions, %.1fx the time\n", tr, tm)
		for i, t := range traces {
			if t != "" {
				fmt.Fprintf(stdout, "%s trace: %s\n", []string{"global", "local"}[i], t)
			}
		}
	}
	if gv != lv {
		fmt.Fprintf(stderr, "livecheck check: the modes disagree: global %s, local %s\n", g.Verdict, l.Verdict)
		return exitInconclusive
	}
	return max(exitCode(g.Verdict), exitCode(l.Verdict))
}

func toJSON(res *livecheck.Result, trace, liveTrace, from string) jsonCheck {
	jc := jsonCheck{
		Result: string(res.Verdict), System: res.System, Bugs: res.Config.Bugs, Nodes: res.Config.Nodes,
		Params: res.Config.Params, Budget: res.Config.Budget, Seed: res.Seed, Depth: res.Depth,
		Property: res.Property, Message: res.Message, Trace: trace, PathLen: len(res.Path),
		Complete: res.Complete, Exhausted: res.Exhausted, Covered: res.Covered, Cut: res.Cut,
		Interrupted: res.Interrupted, MemoryLimit: res.MemoryLimit, MaxMemory: res.MaxMemory, PeakMemory: res.PeakMemory,
		Stats: jsonStats{
			States: res.Stats.States, Transitions: res.Stats.Transitions, Slept: res.Stats.Slept, MaxDepth: res.Stats.MaxDepth,
			Periphery: res.Stats.Periphery, LiveStates: res.Stats.Live, ElapsedMS: res.Stats.Elapsed.Milliseconds(),
			CollisionChance: res.Stats.CollisionChance,
		},
		Mode: res.Mode, FromBugs: res.FromBugs, BugWarnings: res.BugWarnings,
	}
	if from != "" {
		jc.Prefix = &jsonPrefix{File: from, Length: res.PrefixLen}
	}
	if l := res.Local; l != nil {
		jc.Local = &jsonLocal{NodeStates: l.NodeStates, Messages: l.Messages, Transitions: l.Transitions,
			SystemStates: l.SystemStates, Pairs: l.Pairs, Preliminary: l.Preliminary, Verifications: l.Verifications,
			Sequences: l.Sequences, Unsound: l.Unsound, Rounds: l.Rounds,
			ExploreMS: ms(l.Elapsed - l.Combine - l.Verify), CombineMS: ms(l.Combine), VerifyMS: ms(l.Verify)}
	}
	if res.Mode == "global" && (res.Live.Walks > 0 || res.Live.Suspects > 0 || res.Verdict == livecheck.OK) {
		l := res.Live
		jc.Liveness = &jsonLive{WalkDepth: res.WalkDepth, SafetyToLive: res.StopAtLive, Walks: l.Walks, WalkSteps: l.WalkSteps, Suspects: l.Suspects,
			Cleared: l.Cleared, ElapsedMS: l.Elapsed.Milliseconds(), Weights: res.Weights.String(), K: res.Walks,
			Critical: float64(l.Critical.Microseconds()) / 1000}
	}
	if cx := res.Critical; cx != nil {
		jc.Critical = &jsonCritical{Step: cx.Step - res.PrefixLen, TraceStep: cx.Step, Case: string(cx.Case), Event: cx.EventText, Kind: cx.Event.Kind.String(),
			Node: int(cx.Event.Node), Timer: cx.Event.Timer, LiveStep: cx.LiveStep - res.PrefixLen, LiveTrace: liveTrace, Dinit: cx.Dinit,
			WalkDepth: cx.WalkDepth, Tried: cx.Tried, Probes: cx.Probes,
			Dead: evidenceJSON(cx.Dead, cx.Step), Alive: evidenceJSON(cx.Alive, cx.LiveStep), End: evidenceJSON(cx.End, len(res.Path)),
			Overturned: cx.Overturned}
		for i := range cx.After {
			if i < len(cx.LiveAfter) && cx.After[i] != cx.LiveAfter[i] {
				jc.Critical.Diff = append(jc.Critical.Diff, jsonDiff{Node: i, Dead: cx.After[i], Live: cx.LiveAfter[i]})
			}
		}
	}
	return jc
}

func describeConfig(system string, cfg livecheck.Config) string {
	bugs := "no bugs"
	if len(cfg.Bugs) > 0 {
		bugs = "bugs " + strings.Join(cfg.Bugs, ",")
	}
	s := fmt.Sprintf("%s, %d nodes, %s", system, cfg.Nodes, bugs)
	for _, k := range sortedKeys(cfg.Params) {
		s += fmt.Sprintf(", %s=%s", k, cfg.Params[k])
	}
	b := cfg.Budget
	return s + fmt.Sprintf(", failures: %d resets, %d drops, %d socket errors", b.Resets, b.Drops, b.Errors)
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// warnBugs says on w, before a check starts, where the settings given
// cannot show one of the bugs (the report's JSON has the same lines).
func warnBugs(w io.Writer, sys *livecheck.System, cfg livecheck.Config) {
	_, warnings := sys.BugSettings(cfg)
	for _, m := range warnings {
		fmt.Fprintf(w, "livecheck: warning: %s: the check may miss it\n", m)
	}
}

// printBugSettings says which settings came from the bugs' needs.
func printBugSettings(w io.Writer, res *livecheck.Result) {
	for i := 0; i < len(res.FromBugs); {
		bug, flags := res.FromBugs[i].Bug, []string{}
		for ; i < len(res.FromBugs) && res.FromBugs[i].Bug == bug; i++ {
			flags = append(flags, res.FromBugs[i].String())
		}
		fmt.Fprintf(w, "settings from bug %s: %s\n", bug, strings.Join(flags, " "))
	}
}

func printCheck(w io.Writer, res *livecheck.Result, trace, liveTrace string) {
	fmt.Fprintf(w, "%s; depth %d, seed %d\n", describeConfig(res.System, res.Config), res.Depth, res.Seed)
	printBugSettings(w, res)
	if res.PrefixLen > 0 {
		fmt.Fprintf(w, "started after a live prefix of %d steps: depths and counts are after it, step numbers in traces from the initial state\n", res.PrefixLen)
	}
	fmt.Fprintln(w)
	switch res.Verdict {
	case livecheck.OK:
		if l := res.Local; l != nil {
			fmt.Fprintf(w, "ok: no violation; local mode explored every node state reachable without failures (%d node states, %d messages; nothing held back in round %d) and no real run reaches a combination of them that violates a safety property (%d candidates, none reached)\n",
				l.TotalNodeStates, l.Messages, l.Rounds, l.Preliminary)
			break
		}
		scope := fmt.Sprintf("every state within %d steps", res.Depth)
		if res.Exhausted {
			scope = "every reachable state"
		}
		fmt.Fprintf(w, "ok: no violation in %s (%d states)\n", scope, res.Stats.States)
		if l := res.Live; l.Walks > 0 {
			along := fmt.Sprintf("safety checked on every step, %d in all", l.WalkSteps)
			if res.StopAtLive {
				along = "safety checked on each until it recovered (--stop-at-live)"
			}
			fmt.Fprintf(w, "    %d walks of up to %d steps from the depth bound all reached a live state; %s\n",
				l.Walks, res.WalkDepth, along)
		}
	case livecheck.Inconclusive:
		why := "the search was stopped by --max-states"
		if res.Interrupted {
			why = "the search was interrupted"
		}
		if res.Message != "" {
			why = res.Message
		}
		if res.Cut != "" {
			fmt.Fprintf(w, "inconclusive: %s\n", why) // the message says what was covered
			break
		}
		fmt.Fprintf(w, "inconclusive: %s; no violation found among %d states\n", why, res.Stats.States)
	case livecheck.LivenessViolation:
		if res.Critical != nil {
			printCritical(w, res)
			break
		}
		fallthrough
	default:
		fmt.Fprintf(w, "%s of %s: %s\n\n", res.Verdict, res.Property, res.Message)
		fmt.Fprintf(w, "path of %d steps:\n", len(res.Path))
		if len(res.Steps) > 0 {
			printSteps(w, res.Steps)
		} else {
			for i, st := range res.Path {
				fmt.Fprintf(w, "  %3d. %v\n", i+1, st.Event)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if l := res.Local; l != nil {
		reports.Table(w, []string{"node states", "messages (I+)", "transitions", "system states", "pairs", "preliminary", "unsound", "verifications", "sequences", "time"}, [][]string{{
			fmt.Sprint(l.NodeStates), fmt.Sprint(l.Messages), fmt.Sprint(l.Transitions), fmt.Sprint(l.SystemStates),
			fmt.Sprint(l.Pairs), fmt.Sprint(l.Preliminary), fmt.Sprint(l.Unsound), fmt.Sprint(l.Verifications),
			fmt.Sprint(l.Sequences), l.Elapsed.Round(time.Microsecond).String(),
		}})
		return
	}
	reports.Table(w, []string{"states", "transitions", "max depth", "periphery", "live states", "time", "transitions/s"}, [][]string{{
		fmt.Sprint(res.Stats.States), fmt.Sprint(res.Stats.Transitions), fmt.Sprint(res.Stats.MaxDepth),
		fmt.Sprint(res.Stats.Periphery), fmt.Sprint(res.Stats.Live), res.Stats.Elapsed.Round(time.Microsecond).String(),
		fmt.Sprintf("%.0f", float64(res.Stats.Transitions)/max(res.Stats.Elapsed.Seconds(), 1e-9)),
	}})
	fmt.Fprintf(w, "fingerprint collision chance: %.2g\n", res.Stats.CollisionChance)
	if res.Live.Walks > 0 || res.Live.Suspects > 0 {
		l := res.Live
		fmt.Fprintln(w)
		reports.Table(w, []string{"walks", "walk steps", "walk depth", "suspects", "cleared", "liveness time", "of which critical"}, [][]string{{
			fmt.Sprint(l.Walks), fmt.Sprint(l.WalkSteps), fmt.Sprint(res.WalkDepth), fmt.Sprint(l.Suspects), fmt.Sprint(l.Cleared),
			l.Elapsed.Round(time.Microsecond).String(), l.Critical.Round(time.Microsecond).String(),
		}})
	}
	if trace != "" {
		fmt.Fprintf(w, "\ntrace: %s\nreplay it: livecheck replay %s\n", trace, trace)
	}
	if liveTrace != "" {
		fmt.Fprintf(w, "nearest live path: %s\nreplay it: livecheck replay %s\n", liveTrace, liveTrace)
	}
}

func printCritical(w io.Writer, res *livecheck.Result) {
	cx := res.Critical
	fmt.Fprintf(w, "liveness-violation of %s: it can never hold again on this path of %d steps.\n\n", res.Property, len(res.Path))
	fmt.Fprintf(w, "critical transition (case %s): step %d of %d\n    %s\n", cx.Case, cx.Step, len(res.Path), cx.EventText)
	if res.PrefixLen > 0 {
		fmt.Fprintf(w, "that is step %d after the prefix of %d steps\n", cx.Step-res.PrefixLen, res.PrefixLen)
	}
	if cx.Dead != nil && cx.Alive != nil {
		fmt.Fprintf(w, "after step %d: %s;\nafter step %d: %s.\n", cx.Step, evidenceWords(cx.Dead, res.Property), cx.LiveStep, evidenceWords(cx.Alive, res.Property))
		if cx.Step != len(res.Path) && cx.End != nil {
			fmt.Fprintf(w, "after the last step, %d: %s.\n", len(res.Path), evidenceWords(cx.End, res.Property))
		}
		if cx.Overturned > 0 {
			steps := "steps"
			if cx.Overturned == 1 {
				steps = "step"
			}
			fmt.Fprintf(w, "(%d %s that the cheaper probes called dead recovered under the dead test)\n", cx.Overturned, steps)
		}
	}
	if cx.Dinit > 0 {
		fmt.Fprintf(w, "the path was last live after step %d.\n", cx.Dinit-1)
	}
	fmt.Fprintf(w, "\nsteps leading to it (the whole path is in the trace):\n")
	from := max(0, cx.Step-12)
	if from > 0 {
		fmt.Fprintf(w, "  ... %d earlier steps\n", from)
	}
	to := min(len(res.Steps), cx.Step+3)
	if from < to {
		printSteps(w, res.Steps[from:to])
	}
	fmt.Fprintf(w, "\nnode states just before and after step %d on the dead path:\n", cx.Step)
	for i := range cx.Before {
		if cx.Before[i] == cx.After[i] {
			fmt.Fprintf(w, "  node %d: %s\n", i, cx.Before[i])
			continue
		}
		fmt.Fprintf(w, "  node %d: %s\n      ->  %s\n", i, cx.Before[i], cx.After[i])
	}
	if len(cx.LivePath) == cx.LiveStep {
		fmt.Fprintf(w, "\nthe state after step %d is live itself: the critical step is the one that leaves it for good.\n\n", cx.LiveStep)
		return
	}
	fmt.Fprintf(w, "\nthe nearest live path shares the first %d steps, then takes instead\n    %s\n", cx.LiveStep, cx.LiveEventText)
	fmt.Fprintf(w, "and reaches a live state after %d steps. Node states after step %d, dead path vs live path:\n", len(cx.LivePath), cx.Step)
	same := true
	for i := range cx.After {
		if i < len(cx.LiveAfter) && cx.After[i] != cx.LiveAfter[i] {
			same = false
			fmt.Fprintf(w, "  node %d dead: %s\n         live: %s\n", i, cx.After[i], cx.LiveAfter[i])
		}
	}
	if same {
		fmt.Fprintln(w, "  (the node states are the same; the paths differ in the network or timers)")
	}
	if len(cx.Tried) > 0 {
		fmt.Fprintf(w, "\nwalk depths that were too short: %s\n", strings.Join(cx.Tried, "; "))
	}
	fmt.Fprintln(w)
}

func printSteps(w io.Writer, steps []livecheck.ReplayStep) { livecheck.WriteSteps(w, steps) }

// ---- replay ----

type jsonReplayStep struct {
	Step      int      `json:"step"`
	Kind      string   `json:"kind"`
	Node      int      `json:"node"`
	Event     string   `json:"event"`
	Sent      []string `json:"sent,omitempty"`
	Violation string   `json:"violation,omitempty"`
}

type jsonReplay struct {
	Trace      string `json:"trace"`
	System     string `json:"system"`
	Result     string `json:"result"`
	Property   string `json:"property,omitempty"`
	Message    string `json:"message,omitempty"`
	Reproduced bool   `json:"reproduced"`
	// End is what the dead test saw from the final state of a liveness
	// violation.
	End   *jsonEvidence    `json:"end,omitempty"`
	Steps []jsonReplayStep `json:"steps"`
}

func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	timeout := fs.Duration("handler-timeout", 2*time.Second, "how long one handler may run before it counts as stuck")
	synopsis := "livecheck replay TRACE [--json]: re-execute a trace file, print each step (event, node,\n" +
		"messages sent) and the violation it reaches. Exit 1 if the recorded violation reproduces,\n" +
		"2 if the file is malformed or does not replay to it."
	if code, stop := parse(fs, args, stdout, stderr, synopsis); stop {
		return code
	}
	if fs.NArg() != 1 {
		return usageErr(stderr, "replay", "give exactly one trace file")
	}
	file := fs.Arg(0)
	t, err := reports.ReadTraceFile(file)
	if err != nil {
		return usageErr(stderr, "replay", "%v", err)
	}
	sys, err := lookup(t.System)
	if err != nil {
		return usageErr(stderr, "replay", "%s: %v", file, err)
	}
	path, err := reports.Path(t.Steps)
	if err != nil {
		return usageErr(stderr, "replay", "%s: %v", file, err)
	}
	rep, err := livecheck.Replay(sys, livecheck.ConfigOf(t), path, *timeout)
	if err != nil {
		return usageErr(stderr, "replay", "%s: %v", file, err)
	}
	reproduced, err := rep.Confirm(t)
	if err != nil {
		return usageErr(stderr, "replay", "%s: %v", file, err)
	}
	if *asJSON {
		jr := jsonReplay{Trace: file, System: t.System, Result: string(rep.Verdict), Property: rep.Property,
			Message: rep.Message, Reproduced: reproduced, End: evidenceJSON(rep.End, len(rep.Steps)), Steps: []jsonReplayStep{}}
		for _, st := range rep.Steps {
			jr.Steps = append(jr.Steps, jsonReplayStep{Step: st.Index + 1, Kind: st.Event.Kind.String(),
				Node: int(st.Event.Node), Event: st.Text, Sent: st.Sent, Violation: st.Violation})
		}
		writeJSON(stdout, jr)
	} else {
		fmt.Fprintf(stdout, "%s: %s\n\n", file, describeConfig(t.System, livecheck.ConfigOf(t)))
		printSteps(stdout, rep.Steps)
		fmt.Fprintln(stdout)
		if rep.Verdict != livecheck.OK {
			fmt.Fprintf(stdout, "%s of %s: %s\n", rep.Verdict, rep.Property, rep.Message)
		} else if rep.Live {
			fmt.Fprintln(stdout, "the final state is live")
		} else {
			fmt.Fprintln(stdout, "the final state is not live")
		}
		if ev := rep.End; ev != nil && !ev.Live {
			fmt.Fprintf(stdout, "the check's dead test from the final state: %s\n", evidenceWords(ev, t.Property))
		}
		if c := t.Critical; c != nil {
			fmt.Fprintf(stdout, "critical transition (case %s): step %d, %s; nearest live path: %s\n", c.Case, c.Step, c.Event, c.LiveTrace)
		}
	}
	if !reproduced {
		got := "no violation"
		switch {
		case rep.Verdict != livecheck.OK:
			got = fmt.Sprintf("%s of %s", rep.Verdict, rep.Property)
		case rep.Live:
			got = "a live state"
		case rep.End != nil && rep.End.Live:
			// The system is not stuck where the trace ends: a trace of
			// the correct system, of another configuration, or cut short.
			got = "a final state that recovers: " + evidenceWords(rep.End, t.Property)
		}
		what := t.Result
		if t.Property != "" {
			what += " of " + t.Property
		}
		return usageErr(stderr, "replay", "%s does not replay: it records %s, but replaying it gives %s", file, what, got)
	}
	if v := livecheck.Verdict(t.Result); v == livecheck.Live || v == livecheck.PrefixResult {
		if !*asJSON {
			fmt.Fprintln(stdout, "reproduced: the trace reaches a live state")
		}
		return exitOK
	}
	if !*asJSON {
		fmt.Fprintln(stdout, "reproduced: the trace replays to the violation it records")
	}
	return exitViolation
}

// ---- prefix ----

type jsonPrefixFile struct {
	File      string `json:"file"`
	Length    int    `json:"length"`
	FirstLive int    `json:"first_live"`
}

func runPrefix(args []string, stdout, stderr io.Writer) int {
	sys, args, err := systemFirst(args)
	if err != nil {
		return usageErr(stderr, "prefix", "%v", err)
	}
	fs := pflag.NewFlagSet("prefix", pflag.ContinueOnError)
	nodes := fs.Int("nodes", 0, "number of nodes (default: the system's)")
	bugs := fs.StringArray("bug", nil, "inject the named bug while walking (repeatable)")
	count := fs.IntP("count", "n", 1, "how many distinct prefixes to write")
	settle := fs.Int("settle", 0, "steps the liveness property must keep holding after it first holds")
	seed := fs.Int64("seed", 1, "seed of the walks")
	maxSteps := fs.Int("max-steps", 100000, "the longest walk tried for one prefix")
	weightsFlag := fs.String("weights", "", "walk weights by event kind, e.g. app=8,deliver=4,timer=1 (default: the system's)")
	out := fs.String("out", "", "directory for the prefix files (required)")
	asJSON := fs.Bool("json", false, "print a JSON array of {file, length, first_live}")
	params := paramFlags(fs, sys)
	synopsis := "livecheck prefix SYSTEM --out DIR [flags]: walk SYSTEM with resets, drops and socket errors\n" +
		"disabled until its liveness property holds (and keeps holding for --settle steps), and write\n" +
		"each path as a prefix file. 'livecheck check SYSTEM --from FILE' then starts from its end.\n" +
		"Systems: " + strings.Join(systems.Names(), ", ")
	if code, stop := parse(fs, args, stdout, stderr, synopsis); stop {
		return code
	}
	switch {
	case sys == nil && fs.NArg() == 0:
		return usageErr(stderr, "prefix", "name the system (valid: %s)", strings.Join(systems.Names(), ", "))
	case sys == nil:
		return usageErr(stderr, "prefix", "the system must come first: livecheck prefix SYSTEM [flags]")
	case fs.NArg() > 0:
		return usageErr(stderr, "prefix", "unexpected argument %q", fs.Arg(0))
	case *out == "":
		return usageErr(stderr, "prefix", "--out DIR is required: where to write the prefix files")
	case *count < 1 || *count > 10000:
		return usageErr(stderr, "prefix", "-n must be from 1 to 10000, not %d", *count)
	case *settle < 0 || *maxSteps < 1:
		return usageErr(stderr, "prefix", "--settle cannot be negative and --max-steps must be at least 1")
	}
	weights, err := walk.ParseWeights(*weightsFlag, walk.DefaultWeights)
	if err != nil {
		return usageErr(stderr, "prefix", "--weights: %v", err)
	}
	cfg := livecheck.Config{Nodes: *nodes, Bugs: *bugs, Params: map[string]string{}}
	for name, v := range params {
		if fs.Changed(name) {
			cfg.Params[name] = *v
		}
	}
	start := time.Now()
	cfg, ps, err := livecheck.Prefixes(sys, livecheck.PrefixOptions{
		Config: cfg, Count: *count, Settle: *settle, MaxSteps: *maxSteps, Seed: *seed,
		Weights: weights, WeightsSet: fs.Changed("weights"),
	})
	if err != nil && len(ps) == 0 {
		return usageErr(stderr, "prefix", "%v", err)
	}
	var files []jsonPrefixFile
	for _, p := range ps {
		f, werr := livecheck.WritePrefix(*out, sys, cfg, *seed, *settle, p)
		if werr != nil {
			fmt.Fprintf(stderr, "livecheck prefix: writing a prefix: %v\n", werr)
			return exitUsage
		}
		files = append(files, jsonPrefixFile{File: f, Length: len(p.Path), FirstLive: p.FirstLive})
	}
	elapsed := time.Since(start)
	if *asJSON {
		writeJSON(stdout, files)
	} else {
		fmt.Fprintf(stdout, "%s: %d prefixes in %s\n\n", describeConfig(sys.Name, cfg), len(files), elapsed.Round(time.Millisecond))
		var rows [][]string
		for _, f := range files {
			rows = append(rows, []string{f.File, fmt.Sprint(f.FirstLive), fmt.Sprint(f.Length)})
		}
		reports.Table(stdout, []string{"prefix file", "steps to live", "length"}, rows)
		if len(files) > 0 {
			fmt.Fprintf(stdout, "\ncheck from one: livecheck check %s --from %s --resets 1\n", sys.Name, files[0].File)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "livecheck prefix: %v\n", err)
		return exitInconclusive
	}
	return exitOK
}
