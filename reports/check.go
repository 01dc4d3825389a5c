package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A Check is the report of one check: what `livecheck check --json`
// prints, and what its text and livecheck.Test's failures are written
// from. Fields tagged json:"-" are for the text only.
type Check struct {
	// Schema names the version of this JSON (CheckSchema), described by
	// docs/check.schema.json.
	Schema string `json:"schema"`
	Result string `json:"result"`
	System string `json:"system"`
	// Symmetry is the groups of interchangeable nodes the search reduced
	// by: its counts are of classes of states renamings of each other.
	Symmetry [][]sim.NodeID    `json:"symmetry,omitempty"`
	Bugs     []string          `json:"bugs"`
	Nodes    int               `json:"nodes"`
	Params   map[string]string `json:"params,omitempty"`
	Budget   sim.Budget        `json:"budget"`
	Seed     int64             `json:"seed"`
	Depth    int               `json:"depth"`
	Property string            `json:"property,omitempty"`
	Message  string            `json:"message,omitempty"`
	Trace    string            `json:"trace,omitempty"`
	PathLen  int               `json:"path_length,omitempty"`
	// Init is the choices of the first Init calls that give the initial
	// state the path starts from (none where there is one).
	Init      []int `json:"init,omitempty"`
	Complete  bool  `json:"complete"`
	Exhausted bool  `json:"exhausted"`
	// Covered is the depth the search finished: every state within it
	// was explored; Cut says what ended the search before its bound.
	Covered int    `json:"covered_depth"`
	Cut     string `json:"cut,omitempty"`
	// Interrupted: stopped by a signal; MemoryLimit: by --max-memory.
	Interrupted bool      `json:"interrupted,omitempty"`
	MemoryLimit bool      `json:"memory_limit,omitempty"`
	MaxMemory   int64     `json:"max_memory_bytes,omitempty"`
	PeakMemory  int64     `json:"peak_memory_bytes,omitempty"`
	Stats       Stats     `json:"stats"`
	Mode        string    `json:"mode"`
	Prefix      *Prefix   `json:"prefix,omitempty"`
	Local       *Local    `json:"local,omitempty"`
	Liveness    *Liveness `json:"liveness,omitempty"`
	Critical    *Critical `json:"critical,omitempty"`
	// FromBugs are the settings taken from the bugs' needs; BugWarnings
	// say where the settings given cannot show a bug.
	FromBugs    []Setting `json:"from_bugs,omitempty"`
	BugWarnings []string  `json:"bug_warnings,omitempty"`
	// Sometimes are the reachability properties, reached or not.
	Sometimes []Sometimes `json:"sometimes"`
	// Coverage counts the handlers the check ran (nil in local mode).
	Coverage *Coverage `json:"coverage,omitempty"`
	// Merge says how `livecheck merge` combined the shards of a split
	// check into this report (nil for a check's own report).
	Merge *Merge `json:"merge,omitempty"`

	// PrefixLen is the length of the live prefix the check started
	// after (Prefix is set only when it came from a file).
	PrefixLen int `json:"-"`
	// Steps are the violation's path in words.
	Steps []Step `json:"-"`
	// ReplayCommand and LiveReplayCommand replay Trace and the nearest
	// live path: `livecheck replay FILE`, or a go test command.
	ReplayCommand, LiveReplayCommand string `json:"-"`
	// Shortened is the dead path without the steps before the critical
	// one that do not matter (nil: none removed).
	Shortened *Shortened `json:"shortened,omitempty"`
	// Tail summarizes the steps of a dead path past those the text
	// shows; AllSteps shows every step instead (--steps all).
	Tail     *Tail `json:"tail,omitempty"`
	AllSteps bool  `json:"-"`
	// Graph draws the steps around the critical step as an event graph.
	Graph bool `json:"-"`
}

// CheckSchema is the version of a Check's JSON. A change that removes or
// renames a key, or changes what one means, makes a new version; a new
// key does not.
const CheckSchema = "livecheck/check/v1"

// Sometimes is one reachability property: whether the check reached it,
// and at which step (from the initial state; -1 when never reached).
type Sometimes struct {
	Name    string `json:"name"`
	Reached bool   `json:"reached"`
	Step    int    `json:"step"`
	// By says what reached it: "search" (Step is then the fewest steps
	// to it) or "walk" (the first walk's path to it).
	By string `json:"by,omitempty"`
	// NotEvaluated: local mode builds no global state to evaluate it on.
	NotEvaluated bool `json:"not_evaluated,omitempty"`
}

// Coverage counts the handlers run by the exhaustive search's
// transitions, and by the walks from the periphery (nil: no walks).
type Coverage struct {
	Search coverage.Summary  `json:"search"`
	Walks  *coverage.Summary `json:"walks,omitempty"`
}

// A Setting is one setting of a configuration that a bug's needs supplied.
type Setting = protocol.Setting

// Stats are the exhaustive search's figures.
type Stats struct {
	States      int64 `json:"states"`
	Transitions int64 `json:"transitions"`
	// Slept: transitions that sleep sets spared (--reduce sleep).
	Slept int64 `json:"slept"`
	// Postponed: observer events left out where other nodes' events were
	// taken (--reduce observers); not 0 means the states are those of the
	// reduced search, and depths count its steps.
	Postponed  int64 `json:"postponed,omitempty"`
	MaxDepth   int   `json:"max_depth"`
	Periphery  int   `json:"periphery"`
	LiveStates int64 `json:"live_states"`
	ElapsedMS  int64 `json:"elapsed_ms"`
	// CollisionChance is TLC's estimate of the chance that a fingerprint
	// collision hid a state (0 in local mode).
	CollisionChance float64       `json:"collision_chance"`
	Elapsed         time.Duration `json:"-"`
}

// Scope says what a search that found no violation covered: every state
// within depth steps, or (exhausted) every reachable one. With observer
// events postponed (postponed > 0: --reduce observers) the search saw
// the states of the reduced search: exhausted, it shows there is no
// violation at all, but it did not see every state, and a bound counts
// the reduced search's steps, not the system's.
func Scope(depth int, exhausted bool, postponed int64) string {
	switch {
	case postponed > 0 && exhausted:
		return "any reachable state (observer events postponed: every violation is reachable in the reduced search, not every state)"
	case postponed > 0:
		return "the reduced search to depth " + strconv.Itoa(depth) + " (observer events postponed: not every state within " + Count(depth, "step") + ")"
	case exhausted:
		return "every reachable state"
	}
	return "every state within " + Count(depth, "step")
}

// StatesWords says a count of states, and what a state is under symmetry
// reduction: "1204 states", or "29378 classes of states, up to renaming
// nodes 2, 3 and 4".
func StatesWords(n int64, symmetry [][]sim.NodeID) string {
	if len(symmetry) == 0 {
		return Count(n, "state")
	}
	var groups []string
	for _, g := range symmetry {
		ids := make([]string, len(g))
		for i, id := range g {
			ids[i] = strconv.Itoa(int(id))
		}
		groups = append(groups, strings.Join(ids[:len(ids)-1], ", ")+" and "+ids[len(ids)-1])
	}
	return Count(n, "class of states", "classes of states") + ", up to renaming nodes " + strings.Join(groups, "; nodes ")
}

// Critical is the critical transition of a liveness violation.
type Critical struct {
	Step      int      `json:"step"`       // counted after the prefix, if any
	TraceStep int      `json:"trace_step"` // counted from the initial state
	Case      string   `json:"case"`
	Event     string   `json:"event"`
	Kind      string   `json:"kind"`
	Node      int      `json:"node"`
	Timer     string   `json:"timer,omitempty"`
	LiveStep  int      `json:"live_step"` // counted after the prefix, if any
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
	Dead       *Evidence `json:"dead,omitempty"`
	Alive      *Evidence `json:"alive,omitempty"`
	End        *Evidence `json:"end,omitempty"`
	Overturned int       `json:"overturned"`
	// Diff names the nodes whose states differ after the parting step on
	// the dead and the live path.
	Diff []Diff `json:"diff,omitempty"`

	// Before and After are the node states just before and after the
	// critical step on the dead path, LiveAfter after the live path's own
	// step there; LiveEvent is that step, LivePathLen the live path's
	// length.
	Before, After, LiveAfter []string `json:"-"`
	LiveEvent                string   `json:"-"`
	LivePathLen              int      `json:"-"`
	// BeforeNet, AfterNet and LiveAfterNet are the messages in flight
	// then ("Msg from->to", sorted).
	BeforeNet, AfterNet, LiveAfterNet []string `json:"-"`

	// Changes are the nodes the critical step changes, field by field,
	// and Network the messages it takes out of flight (Only1: the one it
	// consumed) and puts in (Only2); LiveChanges and LiveNetwork how the
	// state after it differs from the live path's there (Only1: the dead
	// path's). Explain fills them in.
	Changes     []NodeDiff `json:"changes,omitempty"`
	Network     *NetDiff   `json:"network,omitempty"`
	LiveChanges []NodeDiff `json:"live_changes,omitempty"`
	LiveNetwork *NetDiff   `json:"live_network,omitempty"`

	// Tested are the probes and dead tests of the search, in the order
	// run (html.go).
	Tested []Tested `json:"tested,omitempty"`
}

// Shortened is the dead path with the steps before its critical step
// that do not matter removed: Kept of Before steps are left, and Steps
// are the shortened path's, numbered as in the trace.
type Shortened struct {
	Before int    `json:"before"`
	Kept   int    `json:"kept"`
	Steps  []Step `json:"-"`
}

// Evidence is what a test from one state saw: a breadth-first search,
// then walks.
type Evidence struct {
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

// A Diff is a node whose state differs on the dead and the live path.
type Diff struct {
	Node int    `json:"node"`
	Dead string `json:"dead"`
	Live string `json:"live"`
}

// Liveness are the figures of the walks and the critical-transition search.
type Liveness struct {
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
	CriticalMS   float64 `json:"critical_ms"`

	Elapsed, CriticalTime time.Duration `json:"-"`
}

// Local are local mode's figures.
type Local struct {
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

	TotalNodeStates int           `json:"-"`
	Elapsed         time.Duration `json:"-"`
}

// Prefix names the prefix file a check started from.
type Prefix struct {
	File   string `json:"file"`
	Length int    `json:"length"`
}

// A Step is one step of a path in words. Steps are numbered from 1: step
// i is the i-th event, and "the state after step i" the state it leads
// to; the state after step 0 is the initial state.
type Step struct {
	Step      int      `json:"step"`
	Kind      string   `json:"kind"`
	Node      int      `json:"node"`
	Peer      int      `json:"-"`     // the sender of a delivery or a drop, the other end of a socket error
	Event     string   `json:"event"` // the event, with the message it carries
	Sent      []string `json:"sent,omitempty"`
	Logs      []string `json:"-"`
	Violation string   `json:"violation,omitempty"`
	// State is the fingerprint of the state after the step (0: not
	// known), for counting the distinct states of a dead path's tail.
	State uint64 `json:"-"`
}

// WriteJSON writes v as indented JSON, as every --json output is.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// DescribeConfig says a configuration in one line: "lcr, 3 nodes, no bugs,
// failures: 0 resets, 0 drops, 0 socket errors" (and "1 duplicate",
// "1 partition" where those are allowed).
func DescribeConfig(system string, nodes int, bugs []string, params map[string]string, b sim.Budget) string {
	bs := "no bugs"
	if len(bugs) > 0 {
		bs = "bugs " + strings.Join(bugs, ",")
	}
	s := fmt.Sprintf("%s, %s, %s", system, Count(nodes, "node"), bs)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		s += fmt.Sprintf(", %s=%s", k, params[k])
	}
	s += fmt.Sprintf(", failures: %s, %s, %s", Count(b.Resets, "reset"), Count(b.Drops, "drop"), Count(b.Errors, "socket error"))
	// Failures added later are named only when allowed, so that the line
	// reads as it did for checks without them.
	if b.Dups > 0 {
		s += ", " + Count(b.Dups, "duplicate")
	}
	if b.Partitions > 0 {
		s += ", " + Count(b.Partitions, "partition")
	}
	return s
}

// Thousands writes n with thousands separators: 514,698. Every figure of
// a text report goes through it, so that a reader never counts digits.
func Thousands[T ~int | ~int64](n T) string { return humanize.Comma(int64(n)) }

// Count writes n things, singular or plural as n wants: "1 step", "5,010
// steps". plural is the plural form where it is not one+"s" ("1 class of
// states", "2 classes of states").
func Count[T ~int | ~int64](n T, one string, plural ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(plural) > 0 {
		return Thousands(n) + " " + plural[0]
	}
	return Thousands(n) + " " + one + "s"
}

// EvidenceWords says in words what a test from one state saw: how it
// recovers, or the strength of the evidence that it does not.
func EvidenceWords(ev *Evidence, prop string) string {
	if ev.Live {
		switch ev.By {
		case "live":
			return prop + " holds there"
		case "walk":
			return fmt.Sprintf("a walk of %s from it reaches %s", Count(ev.StepsToLive, "step"), prop)
		}
		return fmt.Sprintf("%s holds %s from it (the nearest, by breadth-first search)", prop, Count(ev.StepsToLive, "step"))
	}
	if ev.SearchAll {
		return fmt.Sprintf("%s holds in none of the %s reachable from it (all searched)", prop, Count(ev.SearchStates, "state"))
	}
	var parts []string
	if ev.Walks > 0 {
		parts = append(parts, fmt.Sprintf("0 of %s of %s reach %s", Count(ev.Walks, "walk"), Count(ev.WalkDepth, "step"), prop))
	}
	if ev.SearchStates > 0 {
		parts = append(parts, fmt.Sprintf("no state within %s has it (%s searched)", Count(ev.SearchDepth, "step"), Count(ev.SearchStates, "state")))
	}
	return strings.Join(parts, ", ")
}

// WriteSteps writes steps for people, one a line, with the messages each
// sent, its log lines and the violation it showed.
func WriteSteps(w io.Writer, steps []Step) {
	for _, st := range steps {
		fmt.Fprintf(w, "  %3s. %s", Thousands(st.Step), st.Event)
		if len(st.Sent) > 0 {
			fmt.Fprintf(w, "  => sends %s", strings.Join(st.Sent, ", "))
		}
		fmt.Fprintln(w)
		for _, l := range st.Logs {
			fmt.Fprintf(w, "         log %s\n", l)
		}
		if st.Violation != "" {
			fmt.Fprintf(w, "         !! %s\n", st.Violation)
		}
	}
}

// WriteBugSettings says which settings came from the bugs' needs.
func WriteBugSettings(w io.Writer, from []Setting) {
	for i := 0; i < len(from); {
		bug, flags := from[i].Bug, []string{}
		for ; i < len(from) && from[i].Bug == bug; i++ {
			flags = append(flags, from[i].String())
		}
		fmt.Fprintf(w, "settings from bug %s: %s\n", bug, strings.Join(flags, " "))
	}
}

// WriteCheck writes a check's report for people: the configuration, the
// verdict and, for a violation, its path (around the critical step of a
// liveness violation); with stats, the search's and the walks' figures;
// then the trace files and the commands that replay them.
func WriteCheck(w io.Writer, c *Check, stats bool) {
	fmt.Fprintf(w, "%s; depth %s, seed %d\n", DescribeConfig(c.System, c.Nodes, c.Bugs, c.Params, c.Budget), Thousands(c.Depth), c.Seed)
	WriteBugSettings(w, c.FromBugs)
	if c.PrefixLen > 0 {
		fmt.Fprintf(w, "started after a live prefix of %s: depths and counts are after it, step numbers in traces from the initial state\n", Count(c.PrefixLen, "step"))
	}
	fmt.Fprintln(w)
	writeVerdict(w, c)
	WriteCoverage(w, c)
	if c.Trace != "" && !stats {
		fmt.Fprintln(w)
	}
	if stats {
		fmt.Fprintln(w)
		writeStats(w, c)
	}
	if c.Trace != "" {
		if stats {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "trace: %s\nreplay it: %s\n", c.Trace, c.ReplayCommand)
	}
	if cx := c.Critical; cx != nil && cx.LiveTrace != "" {
		fmt.Fprintf(w, "nearest live path: %s\nreplay it: %s\n", cx.LiveTrace, c.LiveReplayCommand)
	}
}

func writeVerdict(w io.Writer, c *Check) {
	switch c.Result {
	case "ok":
		if l := c.Local; l != nil {
			fmt.Fprintf(w, "ok: no violation; local mode explored every node state reachable without failures (%s, %s; nothing held back in round %d) and no real run reaches a combination of them that violates a safety property (%s, none reached)\n",
				Count(l.TotalNodeStates, "node state"), Count(l.Messages, "message"), l.Rounds, Count(l.Preliminary, "candidate"))
			return
		}
		scope := Scope(c.Depth, c.Exhausted, c.Stats.Postponed)
		states := StatesWords(c.Stats.States, c.Symmetry)
		if m := c.Merge; m != nil && !m.UnionExact {
			// Without the shards' fingerprints the count is their sum:
			// a state two shards reach counts twice.
			states = "summed over " + Count(int64(m.Shards), "shard") + ": " + states
		}
		fmt.Fprintf(w, "ok: no violation in %s (%s)\n", scope, states)
		if l := c.Liveness; l != nil && l.Walks > 0 {
			along := fmt.Sprintf("safety checked on every step, %s in all", Thousands(l.WalkSteps))
			if l.SafetyToLive {
				along = "safety checked on each until it recovered (--stop-at-live)"
			}
			fmt.Fprintf(w, "    %s of up to %s from the depth bound %s a live state; %s\n",
				Count(l.Walks, "walk"), Count(l.WalkDepth, "step"), allReached(l.Walks), along)
		}
	case "inconclusive":
		why := "the search was stopped by --max-states"
		if c.Interrupted {
			why = "the search was interrupted"
		}
		if c.Message != "" {
			why = c.Message
		}
		if c.Cut != "" {
			fmt.Fprintf(w, "inconclusive: %s\n", why) // the message says what was covered
			return
		}
		fmt.Fprintf(w, "inconclusive: %s; no violation found among %s\n", why, Count(c.Stats.States, "state"))
	case "liveness-violation":
		if c.Critical != nil {
			writeCritical(w, c)
			return
		}
		fallthrough
	default:
		fmt.Fprintf(w, "%s of %s: %s\n\n", c.Result, c.Property, c.Message)
		fmt.Fprintf(w, "path of %s%s:\n", Count(c.PathLen, "step"), fromInit(c.Init))
		WriteSteps(w, c.Steps)
		fmt.Fprintln(w)
	}
}

// allReached says "all reached", or "reached" of a single walk.
func allReached(walks int) string {
	if walks == 1 {
		return "reached"
	}
	return "all reached"
}

// thousandsList writes counts as a list: [1,204 3 17].
func thousandsList(ns []int) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = Thousands(n)
	}
	return "[" + strings.Join(out, " ") + "]"
}

// fromInit says which initial state a path starts from, where there are
// several.
func fromInit(init []int) string {
	if len(init) == 0 {
		return ""
	}
	return fmt.Sprintf(", from the initial state of Init choices %v", init)
}

// WriteCoverage writes a line per reachability property, reached or not,
// and a line of the handlers the search ran (and one of the walks').
func WriteCoverage(w io.Writer, c *Check) {
	writeSometimes(w, c.Sometimes)
	if c.Coverage != nil {
		writeCoverage(w, "search", &c.Coverage.Search, "transitions")
		if cw := c.Coverage.Walks; cw != nil {
			writeCoverage(w, "walks", cw, "steps")
		}
	}
}

// writeSometimes writes a line per reachability property.
func writeSometimes(w io.Writer, some []Sometimes) {
	unreached := 0
	for _, s := range some {
		switch {
		case s.NotEvaluated:
			fmt.Fprintf(w, "sometimes %s: not evaluated in local mode\n", s.Name)
		case s.Reached && s.By == "walk":
			fmt.Fprintf(w, "sometimes %s: reached at step %s, by a walk from the depth bound\n", s.Name, Thousands(s.Step))
		case s.Reached:
			fmt.Fprintf(w, "sometimes %s: reached at step %s\n", s.Name, Thousands(s.Step))
		default:
			unreached++
			fmt.Fprintf(w, "sometimes %s: NEVER reached: the check may be vacuous\n", s.Name)
		}
	}
	if unreached > 0 {
		fmt.Fprintf(w, "(a reachability property never reached does not change the verdict; livecheck.Test fails on it)\n")
	}
}

// writeCoverage writes what handlers ran, how often, on one line, and
// those that never did.
func writeCoverage(w io.Writer, what string, s *coverage.Summary, unit string) {
	var parts []string
	if s.Init > 0 {
		parts = append(parts, fmt.Sprintf("Init %s", Thousands(int(s.Init))))
	}
	list := func(handler string, cs []coverage.Count) {
		if len(cs) == 0 {
			return
		}
		var total int64
		var each []string
		for _, c := range cs {
			total += c.N
			each = append(each, fmt.Sprintf("%s %s", c.Name, Thousands(int(c.N))))
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", handler, Thousands(int(total)), strings.Join(each, ", ")))
	}
	list("Receive", s.Receive)
	list("Timer", s.Timer)
	for _, n := range []struct {
		name string
		n    int64
	}{{"App", s.App}, {"Error", s.Error}, {"resets", s.Resets}, {"drops", s.Drops}, {"duplicates", s.Dups}, {"partitions", s.Partitions}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", n.name, Thousands(int(n.n))))
		}
	}
	line := fmt.Sprintf("coverage (%s, %s %s): %s", what, Thousands(int(s.Transitions)), unit, strings.Join(parts, ", "))
	if never := s.Never(); len(never) > 0 {
		line += "; never ran: " + strings.Join(never, ", ")
	}
	fmt.Fprintln(w, line)
}

func writeStats(w io.Writer, c *Check) {
	if l := c.Local; l != nil {
		Table(w, []string{"NODE STATES", "MESSAGES (I+)", "TRANSITIONS", "SYSTEM STATES", "PAIRS", "PRELIMINARY", "UNSOUND", "VERIFICATIONS", "SEQUENCES", "TIME"}, [][]string{{
			thousandsList(l.NodeStates), Thousands(l.Messages), Thousands(l.Transitions), Thousands(l.SystemStates),
			Thousands(l.Pairs), Thousands(l.Preliminary), Thousands(l.Unsound), Thousands(l.Verifications),
			Thousands(l.Sequences), l.Elapsed.Round(time.Microsecond).String(),
		}})
		return
	}
	s := c.Stats
	Table(w, []string{"STATES", "TRANSITIONS", "MAX DEPTH", "PERIPHERY", "LIVE STATES", "TIME", "TRANSITIONS/S"}, [][]string{{
		Thousands(s.States), Thousands(s.Transitions), Thousands(s.MaxDepth),
		Thousands(s.Periphery), Thousands(s.LiveStates), s.Elapsed.Round(time.Microsecond).String(),
		Thousands(int64(float64(s.Transitions) / max(s.Elapsed.Seconds(), 1e-9))),
	}})
	fmt.Fprintf(w, "fingerprint collision chance: %.2g\n", s.CollisionChance)
	if l := c.Liveness; l != nil && (l.Walks > 0 || l.Suspects > 0) {
		fmt.Fprintln(w)
		Table(w, []string{"WALKS", "WALK STEPS", "WALK DEPTH", "SUSPECTS", "CLEARED", "LIVENESS TIME", "OF WHICH CRITICAL"}, [][]string{{
			Thousands(l.Walks), Thousands(l.WalkSteps), Thousands(l.WalkDepth), Thousands(l.Suspects), Thousands(l.Cleared),
			l.Elapsed.Round(time.Microsecond).String(), l.CriticalTime.Round(time.Microsecond).String(),
		}})
	}
}

// stepsBefore and stepsAfter bound the steps a report shows before and
// after the critical step; the tail summary says what the rest are, and
// the trace has every one.
const (
	stepsBefore = 12
	stepsAfter  = 3
)

// Explain works out what a liveness violation's text shows beyond its
// evidence: the field-level changes at the critical step, network
// included, how the dead path differs from the live one, and the summary
// of the path's tail past the steps shown. The HTML report reads the same.
func (c *Check) Explain() {
	cx := c.Critical
	if cx == nil {
		return
	}
	cx.Changes = DiffNodes(cx.Before, cx.After)
	if d := DiffNet(cx.BeforeNet, cx.AfterNet); !d.Empty() {
		cx.Network = &d
	}
	if len(cx.LiveAfter) > 0 {
		cx.LiveChanges = DiffNodes(cx.After, cx.LiveAfter)
		if d := DiffNet(cx.AfterNet, cx.LiveAfterNet); !d.Empty() {
			cx.LiveNetwork = &d
		}
	}
	if to := cx.TraceStep + stepsAfter; to < len(c.Steps) {
		c.Tail = SummarizeTail(c.Steps, to)
	}
}

func writeCritical(w io.Writer, c *Check) {
	cx := c.Critical
	step, liveStep := cx.TraceStep, cx.LiveStep+c.PrefixLen
	fmt.Fprintf(w, "liveness-violation of %s: it can never hold again on this path of %s%s.\n\n", c.Property, Count(c.PathLen, "step"), fromInit(c.Init))
	fmt.Fprintf(w, "critical transition (case %s): step %s of %s\n    %s\n", cx.Case, Thousands(step), Thousands(c.PathLen), cx.Event)
	if c.PrefixLen > 0 {
		fmt.Fprintf(w, "that is step %s after the prefix of %s\n", Thousands(cx.Step), Count(c.PrefixLen, "step"))
	}
	if cx.Dead != nil && cx.Alive != nil {
		fmt.Fprintf(w, "after step %s: %s;\nafter step %s: %s.\n", Thousands(step), EvidenceWords(cx.Dead, c.Property), Thousands(liveStep), EvidenceWords(cx.Alive, c.Property))
		if step != c.PathLen && cx.End != nil {
			fmt.Fprintf(w, "after the last step, %s: %s.\n", Thousands(c.PathLen), EvidenceWords(cx.End, c.Property))
		}
		if cx.Overturned > 0 {
			fmt.Fprintf(w, "(%s that the cheaper probes called dead recovered under the dead test)\n", Count(cx.Overturned, "step"))
		}
	}
	if cx.Dinit > 0 {
		fmt.Fprintf(w, "the path was last live after step %s.\n", Thousands(cx.Dinit-1))
	}
	writePath(w, c)
	if c.Graph {
		writeCriticalGraph(w, c)
	}
	writeChanges(w, c)
	if cx.LivePathLen == liveStep {
		fmt.Fprintf(w, "\nthe state after step %s is live itself: the critical step is the one that leaves it for good.\n\n", Thousands(liveStep))
		return
	}
	fmt.Fprintf(w, "\nthe nearest live path shares the first %s, then takes instead\n    %s\n", Count(liveStep, "step"), cx.LiveEvent)
	fmt.Fprintf(w, "and reaches a live state after %s. After step %s, dead path vs live path:\n", Count(cx.LivePathLen, "step"), Thousands(step))
	if len(cx.LiveChanges) == 0 && cx.LiveNetwork == nil {
		fmt.Fprintln(w, "  (the same node states and messages in flight; the paths differ in the timers)")
	}
	for _, d := range cx.LiveChanges {
		fmt.Fprintf(w, "  node %d: %s\n", d.Node, d.Versus())
	}
	if n := cx.LiveNetwork; n != nil {
		WriteNet(w, "in flight on the dead path only", n.Only1)
		WriteNet(w, "in flight on the live path only", n.Only2)
	}
	if len(cx.Tried) > 0 {
		fmt.Fprintf(w, "\nwalk depths that were too short: %s\n", strings.Join(cx.Tried, "; "))
	}
	fmt.Fprintln(w)
}

// writePath writes the steps of a dead path around its critical step,
// shortened where steps could be removed, then the summary of the rest;
// with AllSteps, every step.
func writePath(w io.Writer, c *Check) {
	cx := c.Critical
	step := cx.TraceStep
	steps, crit := c.Steps, step-1 // crit indexes steps
	if c.AllSteps {
		fmt.Fprintf(w, "\nevery step (* the critical one):\n")
		writeMarked(w, steps, crit)
		return
	}
	if sh := c.Shortened; sh != nil {
		fmt.Fprintf(w, "\nsteps leading to it, those that do not matter removed: %s -> %s before the critical step\n(numbers are the trace's, which has every step; * the critical one):\n",
			Thousands(sh.Before), Count(sh.Kept, "step"))
		// The steps past the critical one are the trace's.
		steps, crit = append(slices.Clip(sh.Steps), c.Steps[min(step, len(c.Steps)):]...), sh.Kept
	} else {
		fmt.Fprintf(w, "\nsteps leading to it (the trace has every one; * the critical one):\n")
	}
	from := max(0, crit-stepsBefore)
	if from > 0 {
		fmt.Fprintf(w, "  ... %s\n", Count(from, "earlier step"))
	}
	to := min(len(steps), crit+1+stepsAfter)
	if from < to {
		writeMarked(w, steps[from:min(to, crit+1)], crit-from)
	}
	if crit+1 < to {
		if c.Shortened != nil {
			fmt.Fprintf(w, "  then, on the trace's path:\n")
		}
		WriteSteps(w, steps[crit+1:to])
	}
	if c.Tail != nil {
		fmt.Fprintf(w, "  %s\n", c.Tail)
	}
}

// writeMarked writes steps with the one at index mark marked "*".
func writeMarked(w io.Writer, steps []Step, mark int) {
	for i := range steps {
		var b strings.Builder
		WriteSteps(&b, steps[i:i+1])
		out := b.String()
		if i == mark {
			out = " *" + out[2:]
		}
		io.WriteString(w, out)
	}
}

// writeChanges writes what the critical step changes: each node's fields
// that do, and the messages it takes out of flight and puts in.
func writeChanges(w io.Writer, c *Check) {
	cx := c.Critical
	fmt.Fprintf(w, "\nwhat step %s changes:\n", Thousands(cx.TraceStep))
	for _, d := range cx.Changes {
		fmt.Fprintf(w, "  node %d: %s\n", d.Node, d)
	}
	if len(cx.Changes) == 0 {
		why := ""
		if cx.Kind == "deliver" {
			why = ": the message is consumed and ignored"
		}
		fmt.Fprintf(w, "  no node's state%s\n", why)
	}
	if n := cx.Network; n != nil {
		WriteNet(w, "out of flight", n.Only1)
		WriteNet(w, "into flight", n.Only2)
	}
}

func WriteNet(w io.Writer, what string, msgs []string) {
	if len(msgs) > 0 {
		fmt.Fprintf(w, "  %s: %s\n", what, strings.Join(msgs, ", "))
	}
}
