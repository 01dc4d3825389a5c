package host

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// Run logs. With Options.RunLog a node appends a line of JSON to its
// log for each handler it ran: the event, the values its Choose calls
// returned, and its state's fingerprint after it, with a Lamport clock
// that orders the lines of all the nodes' logs consistently with cause
// and effect (a message's delivery comes after the handler that sent it:
// each frame carries its sender's clock). A log is written before the
// handler's messages leave, so a node killed at any point has logged
// every message it sent.
//
// Merge puts the nodes' logs in one order, as a path of the simulator:
// the nodes' first Init calls make the initial state, a later Init (the
// process started again) is a reset, a delivery names its message by
// fingerprint. Replay runs that path in the simulator and compares each
// node's fingerprint after each step with the one the node logged: a
// difference means the handler depends on something outside its state
// and its inputs (a clock, a global, real randomness), the finding the
// checker reports as nondeterminism. Broken connections (streams) are
// merged where the nemesis of Cluster made them (a break, a restart, a
// partition: partition.go) and where a killed process started again
// (back.go: its peers' Error steps at the clock of its Init, one
// Reset); an Error told after Options.SuspectFor has no step of the
// simulator (Merged.Stop).

// A LogLine is one line of a run log: the header (first line) or an
// entry. Sum and Seq seal it into the log's chain (chain.go).
type LogLine struct {
	Sum    string     `json:"sum,omitempty"`
	Seq    int        `json:"seq"`
	Header *LogHeader `json:"header,omitempty"`
	// Snap marks where the node recorded a snapshot (snapshot.go): the
	// entries before it are its part of the cut.
	Snap *SnapMark `json:"snap,omitempty"`
	// Void says a step's lines did not happen (chain.go).
	Void *VoidMark `json:"void,omitempty"`
	// Wrote confirms the write of the state file of this generation,
	// after it (chain.go).
	Wrote uint64 `json:"wrote,omitempty"`
	LogEntry
}

// LogHeader says whose log it is, and what it can be merged with.
type LogHeader struct {
	// Format is the log's format (chain.go): 2.
	Format int             `json:"format"`
	System string          `json:"system"`
	Node   int             `json:"node"`
	Config protocol.Config `json:"config"`
	// Exe is the executable that wrote it: its name and the hash of its
	// bytes.
	Exe string `json:"exe"`
	// Run is the log's run, a random id its node's state file carries.
	Run string `json:"run"`
	// Stream says the system's transport is streams.
	Stream bool `json:"stream,omitempty"`
	// Addr is the node's address, where `livecheck snapshot` asks it.
	Addr string `json:"addr,omitempty"`
}

// A LogEntry is one handler a node ran.
type LogEntry struct {
	Node  int    `json:"node"`
	Boot  int    `json:"boot"` // how many times the node started before this one (0: its first run)
	Clock uint64 `json:"clock,omitempty"`
	// Kind is init, deliver, timer, app or error; or drop or duplicate,
	// a fault the nemesis applied to a datagram the node sent to Peer,
	// or socket-error, its Error step when the nemesis broke its
	// connection to Peer, or reset-error, its Error step when the
	// nemesis restarted Peer (nemesis.go); or, on streams (partition.go),
	// partition-error, its Error step when a partition broke its
	// connection to Peer, refuse-error, its Error step for a send to Peer
	// across a partition, partition (the side in Side) or heal.
	Kind  string `json:"kind,omitempty"`
	Peer  int    `json:"peer,omitempty"`
	Msg   string `json:"msg,omitempty"` // a delivered message's fingerprint
	Timer string `json:"timer,omitempty"`
	// Call is the index of the driver's call in Spec.Calls, made by the
	// node or from Go (Node.NextCall, or Node.Call with the value of the
	// node's next one); -1 for any other call made from Go (Node.Call),
	// which no path can name.
	Call    int   `json:"call,omitempty"`
	Choices []int `json:"choices,omitempty"`
	// Epoch is a delivered message's sender's snapshot epoch: a
	// delivery after the node recorded snapshot E of a message sent
	// before its sender did (Epoch < E) was in flight in snapshot E.
	Epoch uint64 `json:"epoch,omitempty"`
	FP    string `json:"fp,omitempty"` // the node state's fingerprint after the handler
	// Reset marks the Init of a node of a stream system that the nemesis
	// restarted (Cluster.Restart): its peers' Error steps for it are
	// the reset-error entries at its clock.
	Reset bool `json:"reset,omitempty"`
	// Side is a partition's side without the highest node, and Parent a
	// refuse-error's handler that sent across: the index of the
	// handler in the node's part of the step (partition.go).
	Side   []int `json:"side,omitempty"`
	Parent int   `json:"parent,omitempty"`
	// Gen is the state file's generation the handler wrote (0: it
	// wrote none; chain.go).
	Gen uint64 `json:"gen,omitempty"`
	// Sent is a delivered message's sender's log entry: that of the
	// handler that sent it (0: the sender keeps no log).
	Sent int `json:"sent,omitempty"`
	// Fresh marks the Init of a node started afresh (Options.Fresh),
	// without the durable fields it kept.
	Fresh bool `json:"fresh,omitempty"`
	// Line is the entry's index in its log, as read back.
	Line int `json:"-"`
}

// ReadRunLog reads a run log: its header and its entries. A log whose
// chain breaks (an entry deleted, edited or moved) is an error naming
// the entry (*LogDamage).
func ReadRunLog(r io.Reader) (*LogHeader, []LogEntry, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	c, err := readChain(b, "(run log)")
	if err != nil {
		return nil, nil, err
	}
	es, _ := c.entries()
	return c.header, es, nil
}

// A Merged run is the nodes' logs as one path of the simulator.
type Merged struct {
	System string
	Config protocol.Config // with the budget the path needs (its resets)
	Init   []int           // the choices of the first Init calls, node 0's first
	InitFP []string        // each node's fingerprint after its first Init ("" if it has no log)
	Path   sim.Path
	FP     []string // the fingerprint its node logged after each step
	// Others, by step, are the fingerprints the other nodes a step ran
	// a handler on logged (the other end of a break, the peers of a
	// restart on streams); nil for most.
	Others [][]NodeFP
	// Stop, by step, says why the step cannot be merged ("" for most):
	// a broken connection or a restart on streams that no nemesis made,
	// a call made from Go that is not a driver call.
	// Replay leaves such a step out, and with it the rest of its node's
	// log and whatever depended on it.
	Stop []string
}

// A NodeFP is a node's fingerprint after a step.
type NodeFP struct {
	Node int
	FP   string
}

// Merge merges the nodes' run logs (any order, one per node) into one
// path: entries in the order of their clocks (then of the nodes' ids),
// which puts every delivery after the handler that sent the message.
func Merge(logs []*RunLogFile) (*Merged, error) {
	if len(logs) == 0 {
		return nil, errors.New("no run logs to merge")
	}
	if err := verifyRun(logs); err != nil {
		return nil, err
	}
	h0 := logs[0].Header
	n := h0.Config.Nodes
	m := &Merged{System: h0.System, Config: h0.Config, InitFP: make([]string, n)}
	seen := map[int]bool{}
	var all []LogEntry
	for _, l := range logs {
		h := l.Header
		switch {
		case h.System != h0.System || h.Config.Nodes != n:
			return nil, fmt.Errorf("%s is a log of %s with %d nodes, %s one of %s with %d", l.Name, h.System, h.Config.Nodes, logs[0].Name, h0.System, n)
		case h.Node < 0 || h.Node >= n:
			return nil, fmt.Errorf("%s is the log of node %d, which is no node of %d", l.Name, h.Node, n)
		case seen[h.Node]:
			return nil, fmt.Errorf("two logs of node %d", h.Node)
		}
		seen[h.Node] = true
		for _, e := range l.Entries {
			if e.Node != h.Node {
				return nil, fmt.Errorf("%s, node %d's log, has an entry of node %d", l.Name, h.Node, e.Node)
			}
		}
		all = append(all, l.Entries...)
	}
	slices.SortStableFunc(all, func(a, b LogEntry) int {
		if a.Clock != b.Clock {
			if a.Clock < b.Clock {
				return -1
			}
			return 1
		}
		return a.Node - b.Node
	})
	inits := make([][]int, n)
	resets, drops, dups, errs := 0, 0, 0, 0
	// The nemesis's breaks: the two ends' socket-error entries, at one
	// clock, are the simulator's one SocketError step.
	type end struct {
		node, peer int
		clock      uint64
	}
	breaks := map[end]LogEntry{}
	// The nemesis's restarts on streams: the peers' reset-error entries
	// at the clock of the restarted node's Init, which the simulator's
	// Reset runs in one step with it, the peers' Error handlers first,
	// in the order of their ids (its connections' order).
	type reset struct {
		node  int
		clock uint64
	}
	resetErrs := map[reset][]LogEntry{}
	for _, e := range all {
		switch e.Kind {
		case "socket-error":
			breaks[end{e.Node, e.Peer, e.Clock}] = e
		case "reset-error":
			k := reset{e.Peer, e.Clock}
			resetErrs[k] = append(resetErrs[k], e)
		}
	}
	jm := collectJoint(all)
	partitions := 0
	restarted := map[reset]bool{}
	for _, e := range all {
		if e.Kind == "init" && e.Boot > 0 {
			restarted[reset{e.Node, e.Clock}] = true
		}
	}
	for _, e := range all {
		if e.Kind == "init" && e.Boot == 0 {
			inits[e.Node], m.InitFP[e.Node] = e.Choices, e.FP
			continue
		}
		ev := sim.Event{Node: sim.NodeID(e.Node)}
		stop := ""
		var others []NodeFP
		// level0 are the handlers of the step before those for sends
		// refused at a partition (partition.go), in the simulator's
		// order; joined, when it must be, with those for the refusals.
		level0, joined := []LogEntry{e}, false
		switch e.Kind {
		case "init":
			errs := resetErrs[reset{e.Node, e.Clock}]
			if e.Fresh {
				// Started afresh: without its durable fields, which the
				// simulator's reset keeps.
				stop = fmt.Sprintf("node %d's fresh start (clock %d), without the durable fields the simulator's reset keeps", e.Node, e.Clock)
				break
			}
			if h0.Stream && !e.Reset {
				// The simulator's reset breaks the node's connections
				// and tells its peers in the same step; a node started
				// again without holding its peers (back.go: it did not
				// know it was a restart) tells them nothing.
				stop = fmt.Sprintf("node %d's restart (clock %d) on streams, not by the nemesis", e.Node, e.Clock)
				break
			}
			ev.Kind = sim.Reset
			resets++
			level0 = append(slices.Clone(errs), e)
			var choices []int
			for _, pe := range errs { // in the order of the peers' ids
				choices = append(choices, pe.Choices...)
				others = append(others, NodeFP{pe.Node, pe.FP})
			}
			e.Choices = append(choices, e.Choices...)
		case "reset-error":
			if !restarted[reset{e.Peer, e.Clock}] {
				stop = fmt.Sprintf("node %d's Error for node %d's restart (clock %d), whose Init is not in its log", e.Node, e.Peer, e.Clock)
				break
			}
			continue // merged with the restarted node's Init
		case "deliver":
			fp, err := strconv.ParseUint(e.Msg, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("node %d, clock %d: message fingerprint %q", e.Node, e.Clock, e.Msg)
			}
			ev.Kind, ev.Peer, ev.Msg = sim.Deliver, sim.NodeID(e.Peer), fp
		case "timer":
			ev.Kind, ev.Timer = sim.Timer, e.Timer
		case "socket-error":
			other, ok := breaks[end{e.Peer, e.Node, e.Clock}]
			if !ok {
				stop = fmt.Sprintf("node %d's broken connection to node %d (clock %d), whose other end logged none", e.Node, e.Peer, e.Clock)
				break
			}
			if e.Node > e.Peer {
				continue // merged at the other end's entry
			}
			// The simulator runs Node's Error handler, then Peer's.
			ev.Kind, ev.Peer = sim.SocketError, sim.NodeID(e.Peer)
			level0 = []LogEntry{e, other}
			e.Choices = append(slices.Clone(e.Choices), other.Choices...)
			others = []NodeFP{{other.Node, other.FP}}
			errs++
		case "drop", "duplicate":
			// The sender logged it, after the step that sent the
			// datagram: in the simulator it happens to the message in
			// flight from it to its receiver.
			fp, err := strconv.ParseUint(e.Msg, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("node %d, clock %d: message fingerprint %q", e.Node, e.Clock, e.Msg)
			}
			ev = sim.Event{Kind: sim.Drop, Node: sim.NodeID(e.Peer), Peer: sim.NodeID(e.Node), Msg: fp}
			drops++
			if e.Kind == "duplicate" {
				ev.Kind = sim.Duplicate
				drops--
				dups++
			}
			m.Path = append(m.Path, sim.Step{Event: ev})
			m.FP = append(m.FP, "")
			m.Stop = append(m.Stop, "")
			m.Others = append(m.Others, nil)
			continue
		case "app":
			if e.Call < 0 {
				stop = fmt.Sprintf("node %d's call made from Go (clock %d), not its next driver call", e.Node, e.Clock)
				break
			}
			ev.Kind, ev.Call = sim.App, e.Call
		case "partition":
			ev, level0, stop = jm.partition(e)
			joined = stop == ""
			partitions++
		case "heal":
			ev = sim.Event{Kind: sim.Heal}
		case "partition-error", "refuse-error":
			if stop = jm.stray(e); stop == "" {
				continue // merged with its step
			}
		case "error":
			// Told after Options.SuspectFor: the peer did not come back
			// in time (or the connection broke while both ends lived
			// on). The simulator breaks a connection, or resets a node,
			// in one step that tells both ends; this told one end alone.
			stop = fmt.Sprintf("node %d's broken connection to node %d (clock %d)", e.Node, e.Peer, e.Clock)
		default:
			return nil, fmt.Errorf("node %d, clock %d: unknown kind %q", e.Node, e.Clock, e.Kind)
		}
		if stop == "" && (joined || jm.refusedIn(level0)) {
			e.Choices, e.FP, others, stop = jm.join(ev, level0)
		}
		m.Path = append(m.Path, sim.Step{Event: ev, Choices: e.Choices})
		m.FP = append(m.FP, e.FP)
		m.Stop = append(m.Stop, stop)
		m.Others = append(m.Others, others)
	}
	for _, c := range inits {
		m.Init = append(m.Init, c...)
	}
	b := protocol.Counts(m.Config.Budget)
	b.Resets = max(b.Resets, resets)
	b.Drops = max(b.Drops, drops)
	b.Dups = max(b.Dups, dups)
	b.Errors = max(b.Errors, errs)
	b.Partitions = max(b.Partitions, partitions)
	m.Config.Budget = protocol.Explicit(b)
	return m, nil
}

// A RunLogFile is a run log as read from a file.
type RunLogFile struct {
	Name    string
	Header  *LogHeader
	Entries []LogEntry
	Snaps   []SnapMark // the snapshots the node recorded, each with its place (At)
	// Last is the index of its last line (chain.go): a peer's delivery
	// of a message sent in a later entry says the log was cut short.
	Last int
}

// ReadRunLogFile reads the run log in file name, and checks its chain:
// an entry deleted, edited or moved is an error naming the node, the
// file and the entry (*LogDamage).
func ReadRunLogFile(name string) (*RunLogFile, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	c, err := readChain(b, name)
	if err != nil {
		return nil, err
	}
	es, snaps := c.entries()
	return &RunLogFile{Name: name, Header: c.header, Entries: es, Snaps: snaps, Last: c.last()}, nil
}

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
func (m *Merged) Replay(sys *protocol.System) (*RunReplay, error) {
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
		rr.Divergence = &Divergence{Step: step, Node: id, Event: ev, Want: want, Got: got, State: short(s.Node(id))}
	}
	safety := func(step int, s *sim.State) {
		if rr.Violation != "" {
			return
		}
		for _, st := range Status(model.Properties, s) {
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
	for _, ps := range Status(model.Properties, s) {
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
		t.Result, t.Property, t.Message = "safety-violation", rr.Violation, rr.Message
		path = path[:rr.ViolationStep]
	case rr.Live:
		// Every liveness property holds: the trace names them all,
		// as a check's live trace does.
		t.Result = "live"
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
		for _, ps := range Status(model.Properties, s) {
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
