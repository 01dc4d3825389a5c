package check

import (
	"math"
	"strings"
	"time"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/reports"
)

// Report is the result as a report, for reports.WriteCheck and the CLI's
// JSON; trace and liveTrace are its trace files, if written. The caller
// sets the commands that replay them.
func (r *Result) Report(trace, liveTrace string) *reports.Check {
	c := &reports.Check{
		Schema: reports.CheckSchema, Result: string(r.Verdict), System: r.System, Bugs: r.Config.Bugs, Nodes: r.Config.Nodes,
		Params: r.Config.Params, Budget: protocol.Counts(r.Config.Budget), Seed: r.Seed, Depth: r.Depth,
		Property: r.Property, Message: r.Message, Trace: trace, PathLen: len(r.Path), Init: r.Init,
		Complete: r.Complete, Exhausted: r.Exhausted, Covered: r.Covered, Cut: r.Cut,
		Interrupted: r.Interrupted, MemoryLimit: r.MemoryLimit, MaxMemory: r.MaxMemory, PeakMemory: r.PeakMemory,
		Stats: reports.Stats{
			States: r.Stats.States, Transitions: r.Stats.Transitions, Slept: r.Stats.Slept, Postponed: r.Stats.Postponed, ProvisoRerun: r.Stats.ProvisoRerun, MaxDepth: r.Stats.MaxDepth,
			Beyond: r.Stats.Beyond, BeyondFrom: r.Stats.BeyondFrom,
			Periphery: r.Stats.Periphery, LiveStates: r.Stats.Live, ElapsedMS: r.Stats.Elapsed.Milliseconds(),
			CollisionChance: r.Stats.CollisionChance, Elapsed: r.Stats.Elapsed,
		},
		Mode: r.Mode, FromBugs: r.FromBugs, BugWarnings: r.BugWarnings, Symmetry: r.Symmetry,
		PrefixLen: r.PrefixLen, Steps: StepsReport(r.Steps), History: r.History,
	}
	var docs []string
	for _, name := range strings.Split(r.Property, ",") {
		for _, d := range r.docs {
			if d.Name == name && d.Doc != "" {
				docs = append(docs, d.Doc)
			}
		}
	}
	c.PropertyDoc = strings.Join(docs, "; ")
	c.Sometimes = []reports.Sometimes{}
	for _, sm := range r.Sometimes {
		rs := reports.Sometimes{Name: sm.Property, Reached: sm.Reached, Step: sm.Step, NotEvaluated: !sm.Evaluated}
		if sm.Reached {
			rs.By = "search"
			if sm.ByWalk {
				rs.By = "walk"
			}
		}
		c.Sometimes = append(c.Sometimes, rs)
	}
	if r.Coverage != nil {
		c.Coverage = &reports.Coverage{Search: *r.Coverage, Walks: r.WalkCoverage}
	}
	if len(r.Steps) == 0 && len(r.Path) > 0 {
		// Not replayed (a result cut short): the events alone.
		for i, st := range r.Path {
			c.Steps = append(c.Steps, reports.Step{Step: i + 1, Kind: st.Event.Kind.String(), Node: int(st.Event.Node), Peer: int(st.Event.Peer), Event: st.Event.String()})
		}
	}
	if l := r.Local; l != nil {
		c.Local = &reports.Local{NodeStates: l.NodeStates, Messages: l.Messages, Transitions: l.Transitions,
			SystemStates: l.SystemStates, Pairs: l.Pairs, Preliminary: l.Preliminary, Verifications: l.Verifications,
			Sequences: l.Sequences, Unsound: l.Unsound, Rounds: l.Rounds,
			ExploreMS: ms(l.Elapsed - l.Combine - l.Verify), CombineMS: ms(l.Combine), VerifyMS: ms(l.Verify),
			TotalNodeStates: l.TotalNodeStates, Elapsed: l.Elapsed}
	}
	if r.Mode == "global" && (r.Live.Walks > 0 || r.Live.Suspects > 0 || r.Verdict == OK) {
		l := r.Live
		c.Liveness = &reports.Liveness{WalkDepth: r.WalkDepth, SafetyToLive: r.StopAtLive, Walks: l.Walks, WalkSteps: l.WalkSteps, Suspects: l.Suspects,
			AfterLiveSteps: l.AfterLive, AfterLiveWalks: l.AfterLiveWalks, FoundAfterLive: l.FoundAfterLive,
			Cleared: l.Cleared, WalksCut: l.WalksCut, ElapsedMS: l.Elapsed.Milliseconds(), Weights: r.Weights.String(), K: r.Walks,
			CriticalMS: ms(l.Critical), Elapsed: l.Elapsed, CriticalTime: l.Critical}
		if !r.StopAtLive {
			c.Liveness.AfterLive, c.Liveness.AfterLiveMin = r.AfterLive, AfterLiveMin
		}
		if d := l.DeadCut; d != nil {
			c.Liveness.DeadTestCut = &reports.DeadTestCut{SearchStates: d.States, Walks: d.Walks, Fixed: d.Fixed,
				StepNS: float64(d.StepCost.Nanoseconds()), LeftMS: d.Left.Milliseconds(), Flag: d.Flag()}
		}
	}
	if cx := r.Critical; cx != nil {
		c.Critical = &reports.Critical{Step: cx.Step - r.PrefixLen, TraceStep: cx.Step, Case: string(cx.Case), Event: cx.EventText, Kind: cx.Event.Kind.String(),
			Node: int(cx.Event.Node), Timer: cx.Event.Timer, LiveStep: cx.LiveStep - r.PrefixLen, LiveTrace: liveTrace, Dinit: cx.Dinit,
			WalkDepth: cx.WalkDepth, Tried: cx.Tried, Probes: cx.Probes, SearchSteps: cx.SearchSteps, WalkSteps: cx.WalkSteps,
			Dead: evidenceReport(cx.Dead, cx.Step), Alive: evidenceReport(cx.Alive, cx.LiveStep), End: evidenceReport(cx.End, len(r.Path)),
			Overturned: cx.Overturned,
			Before:     cx.Before, After: cx.After, LiveAfter: cx.LiveAfter, LiveEvent: cx.LiveEventText, LivePathLen: len(cx.LivePath)}
		for i := range cx.After {
			if i < len(cx.LiveAfter) && cx.After[i] != cx.LiveAfter[i] {
				c.Critical.Diff = append(c.Critical.Diff, reports.Diff{Node: i, Dead: cx.After[i], Live: cx.LiveAfter[i]})
			}
		}
		c.Critical.BeforeNet, c.Critical.AfterNet, c.Critical.LiveAfterNet = cx.BeforeNet, cx.AfterNet, cx.LiveAfterNet
		for _, t := range cx.Tested {
			c.Critical.Tested = append(c.Critical.Tested, reports.Tested{DeadTest: t.DeadTest, Evidence: *evidenceReport(t.Ev, t.Step)})
		}
		c.Critical.Slip, c.Critical.SlipUnfinished = r.slipReport(), cx.NoSlip
		c.Critical.Odds, c.Critical.OddsUnfinished = r.oddsReport(), cx.NoOdds
		if sh := r.Shortened; sh != nil {
			c.Shortened = &reports.Shortened{Before: cx.Step - 1, Kept: len(sh.Kept), Steps: StepsReport(sh.Steps)}
		}
		c.Explain()
	}
	for _, ph := range r.Phases {
		c.Phases = append(c.Phases, reports.Phase{Name: ph.Name, WallMS: ms(ph.Wall), CPUMS: ms(ph.CPU), Cores: math.Round(ph.Cores()*100) / 100, SerialMS: ms(ph.Serial)})
	}
	c.TimeMS = ms(r.Elapsed)
	return c
}

// Report is the replay of trace file file, which recorded t, as a report;
// reproduced says whether it shows what t records.
func (rep *Replayed) Report(file string, t *reports.Trace, reproduced bool) *reports.Replay {
	cfg := ConfigOf(t)
	r := &reports.Replay{Trace: file, System: t.System, Result: string(rep.Verdict), Property: rep.Property,
		Message: rep.Message, Reproduced: reproduced, End: evidenceReport(rep.End, len(rep.Steps)), Steps: StepsReport(rep.Steps),
		Config: reports.DescribeConfig(t.System, cfg.Nodes, cfg.Bugs, cfg.Params, protocol.Counts(cfg.Budget)), Live: rep.Live, Recorded: t,
		History: rep.History}
	if r.Steps == nil {
		r.Steps = []reports.Step{}
	}
	return r
}

// slipReport is the slip of a liveness violation as a report, its
// reason in words (nil: the search for it did not run).
func (r *Result) slipReport() *reports.Slip {
	cx := r.Critical
	if cx == nil || cx.Slip == nil {
		return nil
	}
	sl := cx.Slip
	j := &reports.Slip{Found: sl.Found, Tried: sl.Tried, Failure: sl.Failure}
	if sl.Found {
		j.Step, j.Event, j.Kind, j.CriticalStep = sl.Step, sl.EventText, sl.Event.Kind.String(), sl.Critical
		j.Node, j.Timer, j.Message, j.How, j.State, j.Changes = int(sl.Node), sl.Timer, sl.Message, sl.How, sl.State, sl.Changes
		j.Recovery = evidenceReport(sl.Recovery, cx.Step)
	}
	j.Reason = reports.SlipReason(j, cx.Step, cx.EventText, r.Property)
	return j
}

// oddsReport is the recovery odds of a liveness violation as a report
// (nil: none were worked out).
func (r *Result) oddsReport() *reports.Odds {
	cx := r.Critical
	if cx == nil || cx.Odds == nil {
		return nil
	}
	od := cx.Odds
	return &reports.Odds{Walks: od.Walks, WalkDepth: od.WalkDepth, From: od.From, Recovered: od.Recovered, Suspect: od.Suspect}
}

func StepsReport(steps []ReplayStep) []reports.Step {
	var out []reports.Step
	for _, st := range steps {
		out = append(out, reports.Step{Step: st.Step, Kind: st.Event.Kind.String(), Node: int(st.Event.Node), Peer: int(st.Event.Peer),
			Event: st.Text, Sent: st.Sent, Logs: st.Logs, Violation: st.Violation, State: st.State})
	}
	return out
}

func evidenceReport(ev *critical.Evidence, step int) *reports.Evidence {
	if ev == nil {
		return nil
	}
	j := &reports.Evidence{Step: step, Live: ev.Live, SearchDepth: ev.SearchDepth, SearchStates: ev.SearchStates,
		SearchAll: ev.SearchAll, Stuck: ev.Stuck, Walks: ev.Walks, WalkDepth: ev.WalkDepth}
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

// evidenceWords says in words what a test from one state saw.
func evidenceWords(ev *critical.Evidence, prop string) string {
	return reports.EvidenceWords(evidenceReport(ev, 0), prop)
}

// DescribeConfig says a configuration in one line.
func DescribeConfig(system string, cfg protocol.Config) string {
	return reports.DescribeConfig(system, cfg.Nodes, cfg.Bugs, cfg.Params, protocol.Counts(cfg.Budget))
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// PropertyCases lists the properties of a system's configuration, by name
// and kind, in the system's order: the test cases of a JUnit report.
func PropertyCases(sys *protocol.System, cfg protocol.Config) []reports.PropertyCase {
	_, m, err := sys.Model(cfg)
	if err != nil {
		return nil
	}
	out := make([]reports.PropertyCase, len(m.Properties))
	for i, p := range m.Properties {
		out[i] = reports.PropertyCase{Name: p.Name, Kind: p.Kind.String()}
	}
	return out
}
