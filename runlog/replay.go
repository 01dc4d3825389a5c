package runlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// A Divergence is a step after which a node's state in the simulator
// is not the one the node logged: its handler depends on something
// outside its state and inputs.
type Divergence struct {
	Step  int // 1-based; 0: the node's first Init
	Node  sim.NodeID
	Event string
	Want  string // the fingerprint the node logged
	Got   string // the simulator's
	State string // the simulator's state of the node
}

func (d *Divergence) Error() string {
	at := fmt.Sprintf("step %d (%s)", d.Step, d.Event)
	if d.Step == 0 {
		at = "its first Init"
	}
	return fmt.Sprintf("node %d's state after %s is not the one it logged (fingerprint %s, the simulator's %s): its handler depends on something outside its state and inputs; the simulator's state: %s",
		d.Node, at, d.Want, d.Got, d.State)
}

// A RunReplay is what the replay of a merged run found.
type RunReplay struct {
	Path         sim.Path    // the steps replayed
	Divergence   *Divergence // the first node state that differs, if any
	LeftOut      []string    // why the rest of a node's log was left out, by node
	LeftOutSteps int         // how many steps were
	// Violation is the first safety property violated, with its step.
	Violation     string
	ViolationStep int
	Message       string
	Live          bool // every liveness property holds at the end
	Trace         *reports.Trace
	// Final is the simulator's state at the end of the path replayed.
	Final *sim.State
	// Histories are the client histories (properties.History) the
	// nodes hold at the end: each checked, step by step, by the
	// replay's safety properties (properties.Linearizable).
	Histories []RunHistory
}

// A RunHistory is a client history a node holds at the end of a run.
type RunHistory struct {
	Node sim.NodeID
	Spec string
	// Ops counts the operations recorded, Pending those of them that
	// never returned.
	Ops, Pending int
	// Violation is why the history is not linearizable; "" while it is.
	Violation string
	// Err is a wrong use of the History: no verdict.
	Err string
}

// String is what trace says of h: "node 3's history of kv: 4
// operations (1 pending), linearizable".
func (h RunHistory) String() string {
	verdict := "linearizable"
	switch {
	case h.Err != "":
		verdict = "no verdict: " + h.Err
	case h.Violation != "":
		verdict = "not linearizable"
	}
	return fmt.Sprintf("node %d's history of %s: %s (%d pending), %s", h.Node, h.Spec, reports.Count(h.Ops, "operation"), h.Pending, verdict)
}

// runHistories returns the client histories the nodes of s hold.
func runHistories(s *sim.State) []RunHistory {
	var out []RunHistory
	for i := range s.N() {
		for _, h := range properties.HistoriesOf(s.Node(sim.NodeID(i))) {
			rh := RunHistory{Node: sim.NodeID(i), Spec: h.Spec(), Violation: h.Violation(), Err: h.Err()}
			for _, o := range h.Ops() {
				rh.Ops++
				if o.Return == 0 {
					rh.Pending++
				}
			}
			out = append(out, rh)
		}
	}
	return out
}

// Replay runs m in the simulator for sys, comparing every node's
// fingerprint with its log and checking the safety properties on every
// state, and builds the trace file of the run. A step that cannot be
// merged (Merged.Stop) is left out with the rest of its node's log and
// every delivery of a message that node sent from then on (and so on):
// what is left is a run that happened, as far as those nodes are
// concerned. An error says the path does not replay (a step not
// enabled where the logs put it).
func Replay(m *Merged, sys *protocol.System) (*RunReplay, error) {
	if sys.Name != m.System {
		return nil, fmt.Errorf("the logs are of system %s, not %s", m.System, sys.Name)
	}
	cfg, model, err := sys.Model(m.Config)
	if err != nil {
		return nil, err
	}
	w, err := sim.NewWorld(model.Spec)
	if err != nil {
		return nil, err
	}
	w.Strict = true
	s, err := w.InitialFrom(m.Init)
	if err != nil {
		return nil, fmt.Errorf("the initial state does not replay: %v", err)
	}
	rr := &RunReplay{}
	diverged := func(step int, id sim.NodeID, ev, want string, s *sim.State) {
		got := fmt.Sprintf("%016x", sim.Fingerprint(s.Node(id)))
		if want == "" || want == got || rr.Divergence != nil {
			return
		}
		rr.Divergence = &Divergence{Step: step, Node: id, Event: ev, Want: want, Got: got, State: shortDump(s.Node(id))}
	}
	safety := func(step int, s *sim.State) {
		if rr.Violation != "" {
			return
		}
		for _, st := range host.Status(model.Properties, s) {
			if st.Kind == properties.Safety && !st.Holds {
				rr.Violation, rr.ViolationStep, rr.Message = st.Name, step, st.Why
				return
			}
		}
	}
	for i, fp := range m.InitFP {
		diverged(0, sim.NodeID(i), "Init", fp, s)
	}
	safety(0, s)
	left := map[sim.NodeID]bool{}
	leave := func(id sim.NodeID, why string) {
		if !left[id] {
			left[id] = true
			rr.LeftOut = append(rr.LeftOut, why)
		}
	}
	var texts, fps []string
	for i, st := range m.Path {
		id := st.Event.Node
		switch {
		case left[id]:
			rr.LeftOutSteps++
			continue
		case m.Stop[i] != "":
			leave(id, m.Stop[i])
			rr.LeftOutSteps++
			continue
		}
		text := w.Describe(s, st.Event)
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil && st.Event.Kind == sim.Deliver && left[st.Event.Peer] && errors.Is(err, sim.ErrNotEnabled) {
			// A message its sender sent after the point its log was
			// left out from.
			leave(id, fmt.Sprintf("node %d's delivery of a message node %d sent after its log was left out", id, st.Event.Peer))
			rr.LeftOutSteps++
			continue
		}
		if err != nil {
			return rr, fmt.Errorf("step %d (%s) does not replay: %v", len(rr.Path)+1, text, err)
		}
		if st.Event.Kind == sim.Reset {
			// A peer that the simulator's reset tells (it has a
			// connection with the node) and the real restart did not
			// (it never heard of the connection: the node died before
			// its message or dial reached the peer) is left out from
			// here, if its Error changed its state.
			for j := range s.N() {
				p := sim.NodeID(j)
				if p == id || left[p] || next.NodeFingerprint(p) == s.NodeFingerprint(p) ||
					i < len(m.Others) && slices.ContainsFunc(m.Others[i], func(o NodeFP) bool { return o.Node == j }) {
					continue
				}
				leave(p, fmt.Sprintf("node %d's Error for node %d's restart (step %d), which the simulator runs and the real node did not: it never heard of their connection", j, id, len(rr.Path)+1))
			}
		}
		s = next
		texts = append(texts, text)
		fps = append(fps, m.FP[i])
		rr.Path = append(rr.Path, st)
		diverged(len(rr.Path), id, text, m.FP[i], s)
		if i < len(m.Others) {
			for _, o := range m.Others[i] {
				diverged(len(rr.Path), sim.NodeID(o.Node), text, o.FP, s)
			}
		}
		safety(len(rr.Path), s)
	}
	rr.Final = s
	rr.Histories = runHistories(s)
	rr.Live = true
	for _, ps := range host.Status(model.Properties, s) {
		if ps.Kind == properties.Liveness && !ps.Holds {
			rr.Live = false
		}
	}
	t := &reports.Trace{System: sys.Name, Nodes: cfg.Nodes, Bugs: cfg.Bugs, Params: cfg.Params,
		Budget: reports.Budget(protocol.Counts(cfg.Budget)), Seed: 1, Init: m.Init,
		Message: "a real run, merged from its nodes' logs (livecheck trace)"}
	path := rr.Path
	switch {
	case rr.Violation != "":
		t.Result, t.Property, t.Message = string(check.SafetyViolation), rr.Violation, rr.Message
		path = path[:rr.ViolationStep]
	case rr.Live:
		// Every liveness property holds: the trace names them all,
		// as a check's live trace does.
		t.Result = string(check.Live)
		var live []string
		for _, p := range model.Properties {
			if p.Kind == properties.Liveness {
				live = append(live, p.Name)
			}
		}
		t.Property = strings.Join(live, ",")
	default:
		// Neither: a path that shows no violation, naming what does
		// not hold at its end; replay reproduces it there.
		t.Result = "run"
		var not []string
		for _, ps := range host.Status(model.Properties, s) {
			if ps.Kind == properties.Liveness && !ps.Holds {
				not = append(not, ps.Name)
			}
		}
		t.Property = strings.Join(not, ",")
		t.Message += "; at its end " + strings.Join(not, ", ") + " does not hold"
	}
	t.Steps = reports.FromPath(path, func(i int) string { return texts[i] })
	// The fingerprints the nodes logged: replay compares them too.
	t.InitFP = m.InitFP
	for i := range t.Steps {
		t.Steps[i].FP = fps[i]
	}
	rr.Trace = t
	return rr, nil
}

// shortDump is v's dump, cut to a length a line of a report can hold
// (as the nodes' log lines cut it).
func shortDump(v any) string {
	if d := sim.Dump(v); len(d) <= 200 {
		return d
	}
	return sim.Dump(v)[:200] + "..."
}
