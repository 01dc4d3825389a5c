package traceview

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// graphPath replays path p from the initial state init names and returns
// it as the HTML report draws it: per-step changes of the node lines and
// the network, and for each delivery or drop the step that sent its
// message. It also returns the replay. A path that stops
// replaying (a safety violation on the way, a step that is not enabled)
// is drawn as far as it went; err says why it stopped early.
func graphPath(sys *protocol.System, cfg protocol.Config, init []int, p sim.Path, timeout time.Duration) (*reports.GraphPath, *check.Replayed, error) {
	gp := &reports.GraphPath{Steps: make([]reports.GraphStep, 0, len(p))}
	var state *reports.GraphState
	// sent holds, by sender, receiver and message, the steps that sent
	// copies still unaccounted for, oldest first: a delivery takes the
	// oldest (copies are indistinguishable, so any order would do).
	type msgKey struct {
		from, to sim.NodeID
		fp       uint64
	}
	sent := map[msgKey][]int{}
	each := func(step int, s *sim.State, info *sim.StepInfo) {
		nodes, net := check.DumpNodes(s), check.DumpNet(s)
		if step == 0 {
			gp.Init, gp.InitNet = nodes, net
			state = reports.NewGraphState(nodes, net)
			for _, e := range s.InFlight() {
				k := msgKey{e.From, e.To, e.FP}
				sent[k] = append(sent[k], 0)
			}
			return
		}
		ev := info.Event
		st := reports.GraphStep{Kind: ev.Kind.String(), Node: int(ev.Node), Peer: -1, From: -1}
		switch ev.Kind {
		case sim.Deliver, sim.Drop:
			st.Peer = int(ev.Peer)
			k := msgKey{ev.Peer, ev.Node, ev.Msg}
			if q := sent[k]; len(q) > 0 {
				st.From, sent[k] = q[0], q[1:]
			}
		case sim.Duplicate:
			// The copy was sent when the original was: a later delivery
			// of either draws its arrow from there.
			st.Peer = int(ev.Peer)
			k := msgKey{ev.Peer, ev.Node, ev.Msg}
			if q := sent[k]; len(q) > 0 {
				sent[k] = append(q, q[0])
			}
		case sim.SocketError:
			st.Peer = int(ev.Peer)
		case sim.Partition:
			// What was in flight across the cut is lost with it.
			for k := range sent {
				if s.Cut(k.from, k.to) {
					delete(sent, k)
				}
			}
		}
		for _, e := range info.Sent {
			if s.Cut(e.From, e.To) {
				continue // lost at the partition
			}
			k := msgKey{e.From, e.To, e.FP}
			sent[k] = append(sent[k], step)
		}
		state.Step(&st, nodes, net)
		gp.Steps = append(gp.Steps, st)
	}
	rep, err := check.ReplayEach(sys, cfg, init, p, timeout, each)
	if rep == nil {
		return nil, nil, err
	}
	if gp.Init == nil {
		return nil, nil, fmt.Errorf("the initial state could not be built: %v", cmp.Or(fmt.Sprint(err), rep.Message))
	}
	// The replay's words for each step; a step that panicked has no state
	// after it and is not drawn.
	for i := range min(len(gp.Steps), len(rep.Steps)) {
		rs, st := &rep.Steps[i], &gp.Steps[i]
		st.Text, st.Sent, st.Logs, st.Violation = rs.Text, rs.Sent, rs.Logs, rs.Violation
	}
	if err == nil && len(gp.Steps) < len(p) {
		err = fmt.Errorf("the replay stopped after step %d of %d: %s of %s", len(gp.Steps), len(p), rep.Verdict, rep.Property)
	}
	return gp, rep, err
}

// GraphOf is the HTML report's graph of dead path p (and the nearest live
// path live, if any, nil otherwise), from the initial state init names,
// with the client history of a linearizability violation it ends in.
// crit, the critical step counted from the initial state, picks the steps
// past it that the tail summary covers (0: none).
func GraphOf(sys *protocol.System, cfg protocol.Config, init []int, p, live sim.Path, crit int, timeout time.Duration) (*reports.Graph, error) {
	dead, rep, err := graphPath(sys, cfg, init, p, timeout)
	if dead == nil {
		return nil, err
	}
	steps := rep.Steps
	g := &reports.Graph{Nodes: len(dead.Init), Dead: *dead,
		Config: check.DescribeConfig(sys.Name, cfg), History: rep.History}
	if err != nil {
		g.Message = err.Error()
	}
	if crit > 0 {
		if to := crit + 3; to < len(steps) {
			g.Tail = reports.SummarizeTail(check.StepsReport(steps), to)
			g.TailText = g.Tail.String()
		}
	}
	if len(live) > 0 {
		lp, _, err := graphPath(sys, cfg, init, live, timeout)
		if lp == nil {
			return nil, fmt.Errorf("the nearest live path: %v", err)
		}
		g.Live = lp
	}
	return g, nil
}

// Graph is the HTML report of a check's result (reports.WriteHTML draws
// it): its path replayed step by step, the nearest live path beside a
// liveness violation's, and the walk statistics. rep is the result's
// report (Report), whose words it takes.
func ResultGraph(r *check.Result, sys *protocol.System, rep *reports.Check, timeout time.Duration) (*reports.Graph, error) {
	var live sim.Path
	crit := 0
	if cx := r.Critical; cx != nil {
		live, crit = cx.LivePath, cx.Step
	}
	g, err := GraphOf(sys, r.Config, r.Init, r.Path, live, crit, timeout)
	if err != nil {
		return nil, err
	}
	g.Title = fmt.Sprintf("%s: %s", r.System, r.Verdict)
	if r.Property != "" {
		g.Title += " of " + r.Property
	}
	g.Result, g.Property, g.Message, g.Trace = string(r.Verdict), r.Property, r.Message, rep.Trace
	if cx := rep.Critical; cx != nil {
		g.LiveTrace = cx.LiveTrace
		gc := &reports.GraphCritical{Step: cx.TraceStep, LiveStep: cx.LiveStep + rep.PrefixLen, Case: cx.Case, Event: cx.Event, LiveEvent: cx.LiveEvent}
		if cx.Dead != nil {
			gc.Dead = reports.EvidenceWords(cx.Dead, r.Property)
		}
		if cx.Alive != nil {
			gc.Alive = reports.EvidenceWords(cx.Alive, r.Property)
		}
		if cx.End != nil {
			gc.End = reports.EvidenceWords(cx.End, r.Property)
		}
		gc.SetSlip(cx.Slip)
		gc.Odds = cx.Odds
		g.Critical = gc
	}
	if l := rep.Liveness; l != nil {
		g.Walks = &reports.GraphWalks{Walks: l.Walks, WalkDepth: l.WalkDepth, Suspects: l.Suspects, Cleared: l.Cleared}
		if cx := rep.Critical; cx != nil {
			g.Walks.Tested = cx.Tested
		}
	}
	return g, nil
}

// GraphOfTrace is the HTML report of a saved trace, with the nearest live
// path of trace live beside it (nil: none). The critical step and the
// live step are those t records.
//
// A trace that replay refuses (check.ReplayTrace) is an error: the page
// would show a claim the path does not back. So is a live trace that
// replay refuses, or of another system or number of nodes.
func GraphOfTrace(sys *protocol.System, t, live *reports.Trace, timeout time.Duration) (*reports.Graph, error) {
	if _, err := check.ReplayTrace(sys, t, timeout, nil); err != nil {
		return nil, err
	}
	p, err := reports.Path(t.Steps)
	if err != nil {
		return nil, err
	}
	var lp sim.Path
	if live != nil {
		if err := sameCheck(t, live, false); err != nil {
			return nil, err
		}
		if _, err := check.ReplayTrace(sys, live, timeout, nil); err != nil {
			return nil, fmt.Errorf("the live trace: %w", err)
		}
		if lp, err = reports.Path(live.Steps); err != nil {
			return nil, fmt.Errorf("the live trace: %v", err)
		}
	}
	crit := 0
	if t.Critical != nil {
		crit = t.Critical.Step
	}
	cfg := check.ConfigOf(t)
	g, err := GraphOf(sys, cfg, t.Init, p, lp, crit, timeout)
	if err != nil {
		return nil, err
	}
	g.Title = fmt.Sprintf("%s: %s", t.System, check.Recorded(t))
	g.Result, g.Property = t.Result, t.Property
	if g.Message == "" {
		g.Message = t.Message
	} else {
		g.Message = t.Message + " (" + g.Message + ")"
	}
	if c := t.Critical; c != nil {
		gc := &reports.GraphCritical{Step: c.Step, LiveStep: c.LiveStep, Case: c.Case, Event: c.Event}
		if ls := g.Live; ls != nil && c.LiveStep >= 0 && c.LiveStep < len(ls.Steps) {
			gc.LiveEvent = ls.Steps[c.LiveStep].Text
		}
		gc.SetSlip(c.Slip)
		g.Critical = gc
	}
	if t.DeadTest != nil {
		g.Walks = &reports.GraphWalks{DeadTest: t.DeadTest}
	}
	return g, nil
}

// LiveTraceOf finds the nearest live path's trace that trace file
// (holding t) records: its name, beside the trace.
func LiveTraceOf(file string, t *reports.Trace) string {
	if t.Critical == nil || t.Critical.LiveTrace == "" {
		return ""
	}
	lt := t.Critical.LiveTrace
	if filepath.IsAbs(lt) {
		return lt
	}
	beside := filepath.Join(filepath.Dir(file), lt)
	if _, err := os.Stat(beside); err != nil {
		if _, err := os.Stat(lt); err == nil {
			return lt // written with a path relative to the working directory
		}
	}
	return beside
}

// LivePath finds the live path to show beside trace t, read from file:
// the trace file vs where given, else the nearest live path t names
// (LiveTraceOf). It must be a trace that replay accepts, of t's system
// and number of nodes; the one t names must also be t's: a live trace of
// the same configuration that shares t's first LiveStep steps. A vs that
// fails this is an error; a named one that fails it is not shown, and
// note says why. Live is nil where there is none to show.
func LivePath(sys *protocol.System, file string, t *reports.Trace, vs string, timeout time.Duration) (live *reports.Trace, liveFile, note string, err error) {
	named := vs == ""
	liveFile = vs
	if named {
		if liveFile = LiveTraceOf(file, t); liveFile == "" {
			return nil, "", "", nil
		}
	}
	live, err = reports.ReadTraceFile(liveFile)
	if err == nil {
		err = sameCheck(t, live, named)
		if err == nil {
			if _, err = check.ReplayTrace(sys, live, timeout, nil); err != nil {
				err = check.TraceError(liveFile, err)
			}
		} else {
			err = fmt.Errorf("%s: %w", liveFile, err)
		}
	}
	switch {
	case err == nil:
		return live, liveFile, "", nil
	case named:
		return nil, "", fmt.Sprintf("the nearest live path the trace names cannot be used: %v", err), nil
	}
	return nil, "", "", fmt.Errorf("--vs: %w", err)
}

// sameCheck says why live cannot be shown beside dead trace t: another
// system or number of nodes; for t's own nearest live path (nearest),
// also another configuration or initial state, another result than
// live, or a path that does not share t's first LiveStep steps.
func sameCheck(t, live *reports.Trace, nearest bool) error {
	if live.System != t.System || live.Nodes != t.Nodes {
		return fmt.Errorf("the live trace is of %s with %d nodes, the trace of %s with %d", live.System, live.Nodes, t.System, t.Nodes)
	}
	if !nearest || t.Critical == nil {
		return nil
	}
	switch k := t.Critical.LiveStep; {
	case live.Result != string(check.Live):
		return fmt.Errorf("it records %s, not the live path of the trace", check.Recorded(live))
	case !slices.Equal(live.Bugs, t.Bugs) || !maps.Equal(live.Params, t.Params) || live.Budget != t.Budget || !slices.Equal(live.Init, t.Init):
		return fmt.Errorf("it is of another configuration or initial state than the trace")
	case k < 0 || k > len(t.Steps) || k > len(live.Steps) || !samePath(live.Steps[:k], t.Steps[:k]):
		return fmt.Errorf("it does not share the trace's first %s, as the nearest live path does", reports.Count(k, "step"))
	}
	return nil
}

// samePath says whether two lists of trace steps are the same path (the
// texts, for people, aside).
func samePath(a, b []reports.TraceStep) bool {
	pa, err1 := reports.Path(a)
	pb, err2 := reports.Path(b)
	if err1 != nil || err2 != nil || len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		if pa[i].Event != pb[i].Event || !slices.Equal(pa[i].Choices, pb[i].Choices) {
			return false
		}
	}
	return true
}
