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
	"github.com/livecheck/livecheck/sim"
)

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
	if b.Crashes > 0 {
		s += ", " + Count(b.Crashes, "crash", "crashes")
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

// StuckWords says that no event can happen any more in a state where
// liveness property prop does not hold: the words of the check, of
// replay and of the reports for a system stuck for ever.
func StuckWords(prop string) string {
	return fmt.Sprintf("no event can happen any more and %s does not hold: the system is stuck for ever", prop)
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
	if ev.Stuck {
		return StuckWords(prop)
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
		if c.Cut != "" || c.Liveness != nil && c.Liveness.WalksCut {
			// Cut short by its budget, to the depth it completed, or in
			// its walks: the message says so, and why.
			fmt.Fprintf(w, "ok: %s\n", c.Message)
		} else {
			fmt.Fprintf(w, "ok: no violation in %s (%s)\n", scope, states)
		}
		if l := c.Liveness; l != nil && l.Walks > 0 {
			from := "the depth bound"
			if c.Cut != "" {
				from = "depth " + strconv.Itoa(c.Covered)
			}
			along := "safety checked on each until it recovered (--stop-at-live)"
			if !l.SafetyToLive {
				along = fmt.Sprintf("safety checked on every step, %s in all, %s after recovery in %s (%s)",
					Thousands(l.WalkSteps), Thousands(l.AfterLiveSteps), Count(l.AfterLiveWalks, "walk"), afterLiveWords(l.AfterLive, l.AfterLiveMin, l.WalkDepth))
			}
			if l.WalksCut {
				from += fmt.Sprintf(" (of its %s, before the walks' share of the time budget ran out)", Count(c.Stats.Periphery, "state that is not live", "states that are not live"))
			}
			fmt.Fprintf(w, "    %s of up to %s from %s %s a live state; %s\n",
				Count(l.Walks, "walk"), Count(l.WalkDepth, "step"), from, allReached(l.Walks), along)
		}
	case "inconclusive":
		fmt.Fprintf(w, "inconclusive: %s\n", Inconclusive(c))
	case "liveness-violation":
		if c.Critical != nil {
			writeCritical(w, c)
			return
		}
		fallthrough
	default:
		fmt.Fprintf(w, "%s of %s: %s\n", c.Result, c.Property, c.Message)
		if l := c.Liveness; l != nil && l.FoundAfterLive > 0 {
			fmt.Fprintf(w, "    found by a walk from the depth bound %s after it first reached a live state\n", Count(l.FoundAfterLive, "step"))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "path of %s%s:\n", Count(c.PathLen, "step"), fromInit(c.Init))
		WriteSteps(w, c.Steps)
		fmt.Fprintln(w)
		if c.History != nil {
			WriteHistory(w, c.History)
			fmt.Fprintln(w)
		}
	}
}

// Inconclusive says why an inconclusive check could not tell, and what
// it covered: the line of its report after "inconclusive: ".
func Inconclusive(c *Check) string {
	why := "the search was stopped by --max-states"
	if c.Interrupted {
		why = "the search was interrupted"
	}
	if c.Message != "" {
		why = c.Message
	}
	if c.Cut != "" {
		return why // the message says what was covered
	}
	return fmt.Sprintf("%s; no violation found among %s", why, Count(c.Stats.States, "state"))
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
	}{{"App", s.App}, {"Error", s.Error}, {"resets", s.Resets}, {"drops", s.Drops}, {"duplicates", s.Dups}, {"partitions", s.Partitions}, {"crashes", s.Crashes}} {
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
	if s.ProvisoRerun {
		fmt.Fprintln(w, "observer postponement: the states that postponed observer events had a cycle among them; the search ran again, taking every event in each state one of whose steps goes back (the figures are its)")
	}
	if l := c.Liveness; l != nil && (l.Walks > 0 || l.Suspects > 0) {
		fmt.Fprintln(w)
		Table(w, []string{"WALKS", "WALK STEPS", "WALK DEPTH", "SUSPECTS", "CLEARED", "LIVENESS TIME", "OF WHICH CRITICAL"}, [][]string{{
			Thousands(l.Walks), Thousands(l.WalkSteps), Thousands(l.WalkDepth), Thousands(l.Suspects), Thousands(l.Cleared),
			l.Elapsed.Round(time.Microsecond).String(), l.CriticalTime.Round(time.Microsecond).String(),
		}})
	}
	writePhases(w, c)
}

// writePhases says where the check's time went: each phase's wall time
// and the cores it kept busy on average ("search 1.02s on 1.9 cores"), a
// phase on one core being what did not scale, and the part that ran on
// fewer goroutines by design ("92ms of it merging levels").
func writePhases(w io.Writer, c *Check) {
	if len(c.Phases) == 0 {
		return
	}
	parts := make([]string, len(c.Phases))
	for i, ph := range c.Phases {
		parts[i] = ph.Name + " " + msText(ph.WallMS)
		if ph.CPUMS > 0 && ph.WallMS >= 50 { // shorter: noise
			parts[i] += fmt.Sprintf(" on %.1f cores", ph.Cores)
		}
		if ph.SerialMS >= 1 && ph.WallMS >= 50 {
			parts[i] += " (" + msText(ph.SerialMS) + " of it merging levels)"
		}
	}
	fmt.Fprintf(w, "time: %s in all: %s\n", msText(c.TimeMS), strings.Join(parts, ", "))
}

// msText is a time in milliseconds as a duration, to the millisecond.
func msText(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
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

// pathFrom says where a dead path came from: "the search's 10 steps to
// its depth bound, then a walk of 5,000 steps from there" ("" where the
// report does not know).
func pathFrom(c *Check) string {
	cx := c.Critical
	if cx.SearchSteps+cx.WalkSteps+c.PrefixLen != c.PathLen || c.PathLen == 0 {
		return ""
	}
	out := ""
	if c.PrefixLen > 0 {
		out = fmt.Sprintf("the live prefix's %s, then ", Count(c.PrefixLen, "step"))
	}
	if cx.WalkSteps == 0 {
		return out + fmt.Sprintf("the search's %s to a state where nothing can happen", Count(cx.SearchSteps, "step"))
	}
	return out + fmt.Sprintf("the search's %s to its depth bound, then a walk of %s from there", Count(cx.SearchSteps, "step"), Count(cx.WalkSteps, "step"))
}

// CaseWords says how the critical-transition search ended, in the words
// of a report: "case C1, the point of no return".
func CaseWords(c string) string {
	switch c {
	case "C1":
		return "case C1, the point of no return"
	case "C2":
		return "case C2, walks too short to tell"
	case "start":
		return "dead from the start"
	}
	return "case " + c
}

func writeCritical(w io.Writer, c *Check) {
	cx := c.Critical
	step, liveStep := cx.TraceStep, cx.LiveStep+c.PrefixLen
	// "Again" only where it held before on this path.
	if cx.Dinit == 0 {
		fmt.Fprintf(w, "liveness-violation of %s: it never holds on this path of %s%s, and can no longer.\n", c.Property, Count(c.PathLen, "step"), fromInit(c.Init))
	} else {
		fmt.Fprintf(w, "liveness-violation of %s: it can never hold again on this path of %s%s.\n", c.Property, Count(c.PathLen, "step"), fromInit(c.Init))
	}
	if c.PropertyDoc != "" {
		fmt.Fprintf(w, "%s: %s.\n", c.Property, c.PropertyDoc)
	}
	if from := pathFrom(c); from != "" {
		fmt.Fprintf(w, "the path: %s.\n", from)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "critical transition (%s): step %s of %s\n    %s\n", CaseWords(cx.Case), Thousands(step), Thousands(c.PathLen), cx.Event)
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
	writeStory(w, c)
	writeSlip(w, cx.Slip)
	writeUnfinished(w, cx.SlipUnfinished, cx.OddsUnfinished)
	alive := ""
	if cx.Alive != nil && cx.Alive.Live {
		alive = EvidenceWords(cx.Alive, c.Property)
		if cx.Alive.By == "live" {
			alive = c.Property + " holds there"
		}
	}
	writeOdds(w, cx.Odds, step, cx.Slip, c.Property, alive)
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
		dropped := sh.Before - sh.Kept
		fmt.Fprintf(w, "\nsteps leading to it (numbers are the trace's, which has every step; * the critical one);\n%s of the %s before the critical step dropped, each gap marked: without them the path still recovers before the critical step and is dead after it:\n",
			Thousands(dropped), Count(sh.Before, "step"))
		// The steps past the critical one are the trace's.
		steps, crit = append(slices.Clip(sh.Steps), c.Steps[min(step, len(c.Steps)):]...), sh.Kept
	} else {
		fmt.Fprintf(w, "\nsteps leading to it (the trace has every one; * the critical one):\n")
	}
	from := max(0, crit-stepsBefore)
	if from > 0 {
		more := ""
		if n := steps[from-1].Step - from; c.Shortened != nil && n > 0 {
			more = fmt.Sprintf(" (and %s dropped)", Thousands(n))
		}
		fmt.Fprintf(w, "  ... %s%s\n", Count(from, "earlier step"), more)
	}
	to := min(len(steps), crit+1+stepsAfter)
	if from < to {
		if c.Shortened != nil {
			writeGaps(w, steps, from, min(to, crit+1), crit)
		} else {
			writeMarked(w, steps[from:min(to, crit+1)], crit-from)
		}
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

// writeGaps writes steps[from:to] of a shortened path, the one at index
// mark marked "*", with a line where steps of the trace were dropped
// between two of them.
func writeGaps(w io.Writer, steps []Step, from, to, mark int) {
	prev := 0
	if from > 0 {
		prev = steps[from-1].Step
	}
	for i := from; i < to; i++ {
		switch n := steps[i].Step; {
		case n == prev+2:
			fmt.Fprintf(w, "       (step %s dropped)\n", Thousands(prev+1))
		case n > prev+2:
			fmt.Fprintf(w, "       (steps %s to %s dropped)\n", Thousands(prev+1), Thousands(n-1))
		}
		writeMarked(w, steps[i:i+1], mark-i)
		prev = steps[i].Step
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

// WriteMerge writes a merged report as text: the check's report, then
// how the shards were combined.
func WriteMerge(w io.Writer, c *Check) {
	WriteCheck(w, c, true)
	m := c.Merge
	if m == nil {
		return
	}
	fmt.Fprintln(w)
	split := "the search ended before it split: every shard searched the same"
	if m.SplitDepth >= 0 {
		split = "split at depth " + fmt.Sprint(m.SplitDepth)
	}
	fmt.Fprintf(w, "merged %s (%s): %s in all", Count(m.Shards, "shard"), split, Count(m.StatesSum, "state"))
	if m.UnionExact {
		fmt.Fprintf(w, ", %s distinct (the exact union of their fingerprints)\n", Thousands(m.StatesUnion))
	} else {
		fmt.Fprintf(w, " (states two shards reach count twice; --save-fingerprints gives the distinct count)\n")
	}
	var rows [][]string
	for _, s := range m.PerShard {
		v := ""
		if s.Property != "" {
			v = fmt.Sprintf("%s in %s", s.Property, Count(s.PathLen, "step"))
		}
		rows = append(rows, []string{fmt.Sprintf("%d/%d", s.Shard, m.Shards), s.File, s.Result, Thousands(s.States), Thousands(s.Periphery), Thousands(s.Walks), v})
	}
	Table(w, []string{"shard", "file", "result", "states", "periphery", "walks", "violation"}, rows)
	if len(m.Violations) > 1 {
		fmt.Fprintln(w, "shortest violation of each property:")
		for _, v := range m.Violations {
			trace := v.Trace
			if trace == "" {
				trace = "(no trace written)"
			}
			fmt.Fprintf(w, "    %s of %s in %s (shard %d): %s\n", v.Result, v.Property, Count(v.PathLen, "step"), v.Shard, trace)
		}
	}
}

// afterLiveWords says how far a walk went on after it recovered, for
// --after-live a with its floor of floor steps, in walks of depth steps.
func afterLiveWords(a, floor, depth int) string {
	if a < 0 {
		return fmt.Sprintf("each on to %s", Count(depth, "step"))
	}
	times := fmt.Sprintf("%d times", a)
	switch a {
	case 1:
		times = "as many steps as"
	case 2:
		times = "twice the steps"
	}
	if a > 2 {
		times += " the steps"
	}
	return fmt.Sprintf("each for %s it took to recover, at least %d", times, floor)
}
