package check

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// Result is the outcome of a check.
type Result struct {
	Verdict Verdict
	System  string
	Config  protocol.Config // with defaults filled in
	Seed    int64
	Depth   int
	// Symmetry is the groups of interchangeable nodes the search reduced
	// by (Options.Reduce with symmetry, on a system that declares some):
	// its state counts are then of classes of states that are renamings
	// of each other.
	Symmetry [][]sim.NodeID
	// Phases are where the check's time went, phase by phase, in the
	// order they first ran; Elapsed, the check's wall time, is their sum.
	Phases  []Phase
	Elapsed time.Duration

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
	// History, for a violation of properties.Linearizable, is the client
	// history that shows it, on the steps of Path.
	History *reports.History
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
	// AfterLive is Options.AfterLive (filled in; meaningless with
	// StopAtLive).
	AfterLive int
	Weights   walk.Weights
	Live      LiveStats
	// Mode is the search mode; Local holds local mode's statistics.
	Mode  string
	Local *search.LocalStats
	// PrefixLen is the length of the prefix the check started after;
	// statistics count steps after it, Path and Critical include it.
	PrefixLen int
	// FromBugs are the settings of Config that came from its bugs' needs
	// (see Bug.Needs), not from the options or the system's defaults.
	FromBugs []protocol.Setting
	// BugWarnings say where Config cannot show one of its bugs: the
	// options gave a setting the bug does not show under.
	BugWarnings []string
	// Sometimes says, for each reachability property (properties.Sometimes)
	// in the system's order, whether the check reached it. One never
	// Reached does not change the verdict; Test fails on it.
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

	// docs say what the system's properties mean, for the report.
	docs []protocol.PropertyDoc
}

// Sometimes is what the check found of one reachability property.
type Sometimes struct {
	Property string
	// Reached says a state the check reached satisfies it; Step is then
	// the fewest steps from the initial state to one that the search saw
	// (a shortest path: the search is breadth first; with observer events
	// postponed, Stats.Postponed, the fewest of the reduced search), or with ByWalk
	// the length of the first walk's path to one, the search having
	// Reached none within its bound.
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

// Critical is the critical transition of a liveness violation, with the
// nearest live path beside it.
type Critical struct {
	Case critical.Case
	// Step is the critical step (1-based): the path is dead after it, and
	// the state after LiveStep = Step-1 steps still recovers.
	Step      int
	Event     sim.Event
	EventText string // the event in words, with the message it carries
	LiveStep  int
	// LivePath shares the dead path's first LiveStep steps, then recovers.
	LivePath sim.Path
	// Before and After are the node states (one line each) just before
	// and after the critical step on the dead path; LiveAfter after the
	// live path's own step LiveStep+1, where the two paths part.
	Before, After, LiveAfter []string
	// BeforeNet, AfterNet and LiveAfterNet are the messages in flight
	// then, "Msg from->to" each, sorted.
	BeforeNet, AfterNet, LiveAfterNet []string
	LiveEventText                     string // the live path's event at the parting step
	// Dinit is the first step after which the dead path is never live.
	Dinit int
	// Dead is the evidence that the state after Step is dead, Alive how
	// the state after LiveStep recovers (an empty Alive.Path: it is live
	// itself), End the evidence that the path's last state is dead, by
	// EndTest, which replay runs again. Overturned counts steps the
	// cheaper probes called dead and the dead test showed to recover.
	Dead, Alive, End *critical.Evidence
	EndTest          DeadTest
	Overturned       int
	// Probes and ProbeSteps count the search's probes and dead tests, and
	// their steps.
	Probes     int
	ProbeSteps int64
	// WalkDepth is the walk depth that settled it; Tried lists the depths
	// that were too short (case C2), with why.
	WalkDepth int
	Tried     []string
	// Tested are the search's probes and dead tests, in the order run,
	// steps counted from the initial state.
	Tested []critical.Tested
	// SearchSteps are the steps of the path (after the prefix, if any)
	// that the exhaustive search took, to a state at its depth bound or
	// (WalkSteps 0) to one where nothing can happen; WalkSteps those a
	// walk took from there.
	SearchSteps, WalkSteps int
	// Slip is the step that took away what would have let the path
	// recover (Slip.Found), or what the search for it tried (nil: it
	// could not be finished, and NoSlip says why).
	Slip   *Slip
	NoSlip string
	// Odds are the recovery odds along the path before the critical
	// step (nil: they could not be worked out, and NoOdds says why).
	Odds   *Odds
	NoOdds string

	liveSteps []ReplayStep
	endFP     uint64 // the fingerprint of the path's last state
}

// LiveStats describe the liveness phase.
type LiveStats struct {
	Walks     int   // walks from the periphery
	WalkSteps int64 // their simulator steps
	// AfterLive counts the steps of WalkSteps that walks from the
	// periphery took after they first recovered (safety checked on each),
	// AfterLiveWalks the walks that took any.
	AfterLive      int64
	AfterLiveWalks int
	// FoundAfterLive, for a safety violation a walk found after it had
	// recovered, is how many steps after: the walk's last step is the
	// violation (0: not found so).
	FoundAfterLive int
	Suspects       int // walks that never became live
	Cleared        int // suspects that recovered with a longer walk
	// WalksCut says the time budget ran out during the walks, with
	// nothing found: Walks of the Stats.Periphery states were walked
	// from, and the check passed on them.
	WalksCut bool
	// DeadCut, when set, is the size of the check's dead tests, below the
	// floor of every dead test: they called nothing dead.
	DeadCut *DeadCut
	// CutSuspect, with DeadCut, says where the critical search of the
	// path that ended the check pointed, and what its cut dead tests saw:
	// the check is inconclusive, a suspect.
	CutSuspect string
	Elapsed    time.Duration // walks and critical searches
	Critical   time.Duration // of which the critical-transition search
}

// recovered counts the walks from the periphery that reached a live
// state, at once or when walked further.
func (l *LiveStats) recovered() int { return max(0, l.Walks-l.Suspects+l.Cleared) }

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

// Trace returns the trace of a violation, for a trace file.
func (r *Result) Trace(describe func(i int) string) *reports.Trace {
	return &reports.Trace{
		System:   r.System,
		Nodes:    r.Config.Nodes,
		Bugs:     r.Config.Bugs,
		Params:   r.Config.Params,
		Budget:   reports.Budget(protocol.Counts(r.Config.Budget)),
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

// WriteTraces writes the violation's trace into dir, atomically, and for a
// liveness violation with a critical transition also its nearest live
// path, both or neither; it returns the files' paths.
func (r *Result) WriteTraces(dir string) (dead, live string, err error) {
	return r.WriteTracesNamed(dir, func(property string, p sim.Path) string { return reports.TraceName(r.System, property, r.Init, p) })
}

// WriteTracesNamed is WriteTraces with the files named by name, given the
// property ("live" for the nearest live path) and the path.
func (r *Result) WriteTracesNamed(dir string, name func(property string, p sim.Path) string) (dead, live string, err error) {
	t, lt := r.Traces(name)
	dead = filepath.Join(dir, name(r.Property, r.Path))
	if lt == nil {
		return dead, "", reports.WriteFileAtomic(dead, t.Write)
	}
	// Both or neither: a dead trace names its live one.
	live = filepath.Join(dir, t.Critical.LiveTrace)
	if err := reports.WriteFilesAtomic([]string{dead, live}, []func(io.Writer) error{t.Write, lt.Write}); err != nil {
		return "", "", err
	}
	return dead, live, nil
}

// Traces are the violation's trace and, with a critical step, the
// nearest live path's (nil otherwise), which the first names by the
// file name name gives it.
func (r *Result) Traces(name func(property string, p sim.Path) string) (t, lt *reports.Trace) {
	describe := func(steps []ReplayStep) func(i int) string {
		return func(i int) string {
			if i < len(steps) {
				return steps[i].Text
			}
			return ""
		}
	}
	t = r.Trace(describe(r.Steps))
	if cx := r.Critical; cx != nil {
		lt = r.Trace(nil)
		lt.Result, lt.Message = string(Live), fmt.Sprintf("the nearest live path: the dead path's first %d steps, then a walk that reaches a live state", cx.LiveStep)
		lt.Steps = reports.FromPath(cx.LivePath, describe(cx.liveSteps))
		t.Critical = &reports.TraceCritical{Case: string(cx.Case), Step: cx.Step, Event: cx.EventText,
			Node: int(cx.Event.Node), LiveStep: cx.LiveStep, LiveTrace: name("live", cx.LivePath), Slip: r.slipReport(),
			Odds: r.oddsReport(), SlipUnfinished: cx.NoSlip, OddsUnfinished: cx.NoOdds}
	}
	return t, lt
}
