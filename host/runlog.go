package host

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/livecheck/livecheck/protocol"
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
