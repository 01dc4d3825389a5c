package host

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// Consistent snapshots of a running cluster, by the Chandy–Lamport
// marker algorithm over the host's own frames.
//
// A node records snapshot E when it is asked to (Node.Snapshot, a
// "snapshot" control frame from `livecheck snapshot`), or when a frame
// comes from a node that has recorded E and it has not: before it
// handles that frame. To record is to append a mark to its run log
// between two handlers (its state's fingerprint) and send a Marker to
// every peer. Every frame carries the last epoch its sender recorded,
// so the receiver can tell a message sent before the sender's cut from
// one sent after it. On streams the marker does what Chandy and Lamport
// have it do (the channel is FIFO, and it arrives after every message
// sent before the cut); on datagrams, where frames overtake one another
// and get lost, the epoch in each frame does it (Lai and Yang's
// colouring): no message sent after its sender's cut is handled before
// its receiver's, so the cut is consistent either way. A delivery after
// the receiver's mark of a message sent before the sender's (the entry's
// Epoch below E) is the channel's recorded state: a message in flight
// at the cut.
//
// A snapshot is a state, and a check starts from a path: BuildSnapshot
// turns the marks into one. Each node's part of the cut is its log up to
// its mark; merged (Merge) and replayed in the simulator, those entries
// reach a state whose nodes must have the fingerprints recorded in the
// marks and whose network must hold every message the channels
// recorded in flight (with every other one sent before the cut and not
// handled by then: lost datagrams stay in flight in the simulator, one
// of the orders it allows). That path, when it ends live, is a prefix
// file `check --from` takes as it takes any other, and its replay is
// the proof that the snapshot is a state the simulator reaches. A node
// that does not record (it was down) is recorded as down: its part is
// its whole log, its state is the one it had when it stopped, and the
// path ends with its crash (a crash step after everything else), so
// that the snapshot's state has it down, as a check --from it starts:
// no delivery, timer or driver call reaches it until its restart, a
// reset of it, which costs no reset.

// A Marker is what a node sends every peer when it records a snapshot.
// It reaches no handler.
type Marker struct{ Epoch uint64 }

func isMarker(m sim.Message) bool {
	_, ok := m.(Marker)
	return ok
}

// A SnapMark is a line of a run log: where the node recorded a snapshot.
type SnapMark struct {
	Epoch uint64 `json:"epoch"`
	Boot  int    `json:"boot"`
	Clock uint64 `json:"clock"`
	FP    string `json:"fp"` // the node state's fingerprint when it recorded
	At    int    `json:"-"`  // entries of the log before it
}

// Snapshot has the node record snapshot epoch, after what is queued for
// it (nothing if it has recorded it, or a later one, already). The
// node needs a run log (Options.RunLog), where the mark goes.
func (n *Node) Snapshot(epoch uint64) error {
	if n.rlog == nil {
		return fmt.Errorf("node %d keeps no run log: a snapshot is a mark in it", n.id)
	}
	if !n.post(event{kind: evSnap, epoch: epoch}) {
		return fmt.Errorf("node %d has stopped", n.id)
	}
	return nil
}

// Epoch is the last snapshot the node recorded (0: none).
func (n *Node) Epoch() uint64 { return n.epochA.Load() }

// record records snapshot e, if the node has not recorded it or a later
// one: the mark in its log, then a Marker to every peer. False: the
// node must stop (its log cannot be written).
func (n *Node) record(e uint64) bool {
	if e <= n.epoch {
		return true
	}
	if n.rlog == nil {
		n.epoch = e
		n.epochA.Store(e)
		return true
	}
	n.mu.Lock()
	mark := SnapMark{Epoch: e, Boot: n.boot, Clock: n.clock, FP: fmt.Sprintf("%016x", sim.Fingerprint(n.node))}
	_, err := n.rlog.write(LogLine{Snap: &mark})
	n.mu.Unlock()
	if err != nil {
		n.err = fmt.Errorf("node %d stopped: its run log cannot be written: %v", n.id, err)
		n.logf("stopped: %v", n.err)
		return false
	}
	n.epoch = e
	n.epochA.Store(e)
	n.logf("recorded snapshot %d", e)
	var b bytes.Buffer
	if err := encodeFrame(&b, frame{from: n.id, clock: n.clock, epoch: e, msg: Marker{e}}); err != nil {
		n.logf("markers of snapshot %d not sent: %v", e, err)
		return true
	}
	for to := range n.opts.Peers {
		// Not across a partition on streams (partition.go): the
		// channel is empty, and the first frame after the heal carries
		// the epoch.
		if sim.NodeID(to) != n.id && !n.cutOff(sim.NodeID(to)) {
			n.tr.send(sim.NodeID(to), bytes.Clone(b.Bytes()))
		}
	}
	return true
}

// recordStopped records snapshot e for a node of a stream system started
// again, before its Init (back.go): a peer held for its restart had
// recorded e, and the restart is one step of the simulator, which must
// come after the cut at every node it touches. Its part of the cut is
// all it did before it stopped, its state the one it logged last.
func (n *Node) recordStopped(e uint64) error {
	if n.rlog == nil {
		n.epoch = e
		n.epochA.Store(e)
		return nil
	}
	mark := SnapMark{Epoch: e, Boot: max(n.boot-1, 0), Clock: n.clock, FP: n.lastFP}
	if _, err := n.rlog.write(LogLine{Snap: &mark}); err != nil {
		return fmt.Errorf("node %d: its run log cannot be written: %v", n.id, err)
	}
	n.epoch = e
	n.epochA.Store(e)
	n.logf("recorded snapshot %d, as it stopped, before its restart", e)
	return nil
}

// release sends the frames the test hook held back.
func (n *Node) release() {
	n.heldMu.Lock()
	held := n.held
	n.held = nil
	n.heldMu.Unlock()
	for _, o := range held {
		n.tr.send(o.to, o.frame)
	}
}

// A Snapshot is a consistent global state of a running cluster, and the
// path of the simulator that reaches it.
type Snapshot struct {
	System string
	Epoch  uint64
	Nodes  []SnapNode
	// InFlight are the messages sent before the cut and not handled by
	// then, in the simulator's state: those the channels recorded
	// (Recorded), and those lost or not yet arrived when the snapshot
	// was read.
	InFlight []SnapMessage
	// Replay is the replay of the cut's path: its trace is the prefix
	// file (Result "prefix" when it ends live).
	Replay *RunReplay
	Steps  int // steps of the path
}

// A SnapNode is one node's part of a snapshot.
type SnapNode struct {
	ID    sim.NodeID
	Down  bool   // it recorded nothing: not running when the snapshot was taken
	FP    string // its state's fingerprint
	State string // its state, dumped
}

// A SnapMessage is a message in flight in a snapshot.
type SnapMessage struct {
	From, To sim.NodeID
	FP       string
	Msg      string // dumped
	Recorded bool   // the receiver handled it after its mark: the channel's recorded state
}

// BuildSnapshot builds snapshot epoch from the nodes' run logs (one per
// node, as ReadRunLogFile reads them): the logs cut at the marks,
// merged and replayed in sys, checked against what the marks and the
// channels recorded. A log without the mark is a node down. A node whose
// state in the replay is not the one it logged is a *Divergence: a
// handler that depends on something outside its state and inputs.
func BuildSnapshot(sys *protocol.System, logs []*RunLogFile, epoch uint64) (*Snapshot, error) {
	if len(logs) == 0 {
		return nil, errors.New("no run logs to take a snapshot from")
	}
	snap := &Snapshot{System: logs[0].Header.System, Epoch: epoch, Nodes: make([]SnapNode, logs[0].Header.Config.Nodes)}
	cut := make([]*RunLogFile, len(logs))
	marks := map[int]SnapMark{}
	type chanMsg struct {
		from, to sim.NodeID
		fp       uint64
	}
	var recorded []chanMsg
	for i, l := range logs {
		c := *l
		id := l.Header.Node
		if id < 0 || id >= len(snap.Nodes) {
			return nil, fmt.Errorf("%s is the log of node %d, which is no node of %d", l.Name, id, len(snap.Nodes))
		}
		snap.Nodes[id].ID = sim.NodeID(id)
		k := slices.IndexFunc(l.Snaps, func(m SnapMark) bool { return m.Epoch == epoch })
		if k < 0 {
			snap.Nodes[id].Down = true
		} else {
			m := l.Snaps[k]
			marks[id] = m
			c.Entries = l.Entries[:m.At]
			for _, e := range l.Entries[m.At:] {
				if e.Kind == "deliver" && e.Epoch < epoch {
					fp, err := strconv.ParseUint(e.Msg, 16, 64)
					if err != nil {
						return nil, fmt.Errorf("node %d, clock %d: message fingerprint %q", e.Node, e.Clock, e.Msg)
					}
					recorded = append(recorded, chanMsg{sim.NodeID(e.Peer), sim.NodeID(id), fp})
				}
			}
		}
		cut[i] = &c
	}
	if len(marks) == 0 {
		return nil, fmt.Errorf("no node recorded snapshot %d", epoch)
	}
	m, err := Merge(cut)
	if err != nil {
		return nil, err
	}
	// The nodes down crash at the end of the cut: whatever they did is
	// in their logs, before it. The crashes are the path's, so its
	// budget covers them.
	crashes := 0
	for id := range snap.Nodes {
		if snap.Nodes[id].Down {
			m.Path = append(m.Path, sim.Step{Event: sim.Event{Kind: sim.Crash, Node: sim.NodeID(id)}})
			m.FP = append(m.FP, "")
			m.Stop = append(m.Stop, "")
			m.Others = append(m.Others, nil)
			crashes++
		}
	}
	if crashes > 0 {
		b := protocol.Counts(m.Config.Budget)
		b.Crashes = max(b.Crashes, crashes)
		m.Config.Budget = protocol.Explicit(b)
	}
	rr, err := m.Replay(sys)
	if err != nil {
		return nil, fmt.Errorf("the snapshot's cut does not replay in the simulator: %v", err)
	}
	if rr.Divergence != nil {
		return nil, rr.Divergence
	}
	if rr.LeftOutSteps > 0 {
		return nil, fmt.Errorf("the snapshot's cut holds %s the simulator does not model step for step (yet): from %s on",
			reports.Count(rr.LeftOutSteps, "step"), rr.LeftOut[0])
	}
	s := rr.Final
	for id := range snap.Nodes {
		got := fmt.Sprintf("%016x", sim.Fingerprint(s.Node(sim.NodeID(id))))
		if mk, ok := marks[id]; ok && mk.FP != got {
			return nil, fmt.Errorf("node %d recorded a state (fingerprint %s) that the cut's replay does not reach (%s): %s",
				id, mk.FP, got, lastStepOf(rr, sim.NodeID(id)))
		}
		snap.Nodes[id].FP, snap.Nodes[id].State = got, sim.Dump(s.Node(sim.NodeID(id)))
	}
	net := s.InFlight()
	used := make([]bool, len(net))
	for _, r := range recorded {
		k := slices.IndexFunc(net, func(e sim.Envelope) bool { return e.From == r.from && e.To == r.to && e.FP == r.fp })
		for k >= 0 && used[k] {
			j := slices.IndexFunc(net[k+1:], func(e sim.Envelope) bool { return e.From == r.from && e.To == r.to && e.FP == r.fp })
			if j < 0 {
				k = -1
				break
			}
			k += 1 + j
		}
		if k < 0 {
			return nil, fmt.Errorf("node %d recorded a message from node %d (fingerprint %016x) in flight that the cut's replay does not have in flight", r.to, r.from, r.fp)
		}
		used[k] = true
	}
	for k, e := range net {
		snap.InFlight = append(snap.InFlight, SnapMessage{From: e.From, To: e.To, FP: fmt.Sprintf("%016x", e.FP), Msg: short(e.Msg), Recorded: used[k]})
	}
	rr.Trace.Message = fmt.Sprintf("snapshot %d of a running cluster (livecheck snapshot): its consistent cut, merged from its nodes' logs", epoch)
	if rr.Live && rr.Violation == "" {
		rr.Trace.Result = "prefix"
	}
	snap.Replay, snap.Steps = rr, len(rr.Path)
	return snap, nil
}

// lastStepOf names node id's last step in the replay of a cut: the step
// after which its state is not the one it recorded.
func lastStepOf(rr *RunReplay, id sim.NodeID) string {
	for k := len(rr.Path) - 1; k >= 0; k-- {
		if rr.Path[k].Event.Node == id && k < len(rr.Trace.Steps) {
			return fmt.Sprintf("its last step in the cut is step %d (%s)", k+1, rr.Trace.Steps[k].Text)
		}
	}
	return "it has no step in the cut after its first Init"
}

// Spent is what the snapshot's path took of the failure budget: the
// failures the cluster went through before it, which a check from it
// spends first (check.PrefixStart).
func (s *Snapshot) Spent() sim.Budget { return s.Replay.Final.Used() }

// Down lists the nodes down in the snapshot.
func (s *Snapshot) Down() []sim.NodeID {
	var out []sim.NodeID
	for _, n := range s.Nodes {
		if n.Down {
			out = append(out, n.ID)
		}
	}
	return out
}

// LastEpoch is the last snapshot any of the logs recorded (0: none).
func LastEpoch(logs []*RunLogFile) uint64 {
	var e uint64
	for _, l := range logs {
		for _, m := range l.Snaps {
			e = max(e, m.Epoch)
		}
	}
	return e
}

// ReadRunLogs reads the run logs node-*.log in dir.
func ReadRunLogs(dir string) ([]*RunLogFile, error) {
	names, _ := filepath.Glob(filepath.Join(dir, "node-*.log"))
	if len(names) == 0 {
		return nil, fmt.Errorf("no run logs (node-*.log) in %s", dir)
	}
	var out []*RunLogFile
	for _, name := range names {
		l, err := ReadRunLogFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Snapshot takes a consistent snapshot of the cluster, which must keep
// run logs (ClusterOptions.LogDir): it asks every running node to
// record the next epoch, waits until each has (or has stopped: down),
// up to timeout, and builds the snapshot from the logs.
func (c *Cluster) Snapshot(timeout time.Duration) (*Snapshot, error) {
	if c.logDir == "" {
		return nil, errors.New("the cluster keeps no run logs (ClusterOptions.LogDir): a snapshot is a mark in them")
	}
	var e uint64
	for _, n := range c.Nodes {
		e = max(e, n.Epoch())
	}
	e++
	for _, n := range c.Nodes {
		n.Snapshot(e) // a node that has stopped is down
	}
	end := time.Now().Add(timeout)
	for _, n := range c.Nodes {
		for n.Epoch() < e && n.Err() == nil && !stopped(n) && time.Now().Before(end) {
			time.Sleep(time.Millisecond)
		}
	}
	logs, err := ReadRunLogs(c.logDir)
	if err != nil {
		return nil, err
	}
	return BuildSnapshot(c.System, logs, e)
}

func stopped(n *Node) bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// RequestSnapshot asks every node of a cluster, by the addresses in its
// run logs and under its key, to record snapshot epoch (see
// Control): what `livecheck snapshot` sends. Nodes that cannot be asked
// are left out; the error says so only when none could be.
func RequestSnapshot(logs []*RunLogFile, key []byte, epoch uint64) error {
	var errs []error
	for _, l := range logs {
		if l.Header.Addr == "" {
			errs = append(errs, fmt.Errorf("%s names no address (a log of an older livecheck)", l.Name))
			continue
		}
		if err := sendControl(l.Header.Addr, l.Header.Stream, key, Control{Op: "snapshot", Epoch: epoch}); err != nil {
			errs = append(errs, fmt.Errorf("node %d at %s: %v", l.Header.Node, l.Header.Addr, err))
		}
	}
	if len(errs) == len(logs) {
		return errors.Join(errs...)
	}
	return nil
}

// TakeSnapshot takes a snapshot of the running cluster whose nodes keep
// their run logs in dir (`livecheck cluster --data DIR`): it asks each
// node, under the cluster key, to record the next epoch, waits up to
// wait for their marks (a node without one by then is down), and
// builds it (BuildSnapshot).
func TakeSnapshot(sys *protocol.System, dir string, key []byte, wait time.Duration) (*Snapshot, error) {
	logs, err := ReadRunLogs(dir)
	if err != nil {
		return nil, err
	}
	if logs[0].Header.System != sys.Name {
		return nil, fmt.Errorf("the run logs in %s are of system %s, not %s", dir, logs[0].Header.System, sys.Name)
	}
	epoch := LastEpoch(logs) + 1
	if err := RequestSnapshot(logs, key, epoch); err != nil {
		return nil, fmt.Errorf("no node could be asked: %v", err)
	}
	end := time.Now().Add(wait)
	for {
		if logs, err = ReadRunLogs(dir); err != nil {
			return nil, err
		}
		all := true
		for _, l := range logs {
			if !slices.ContainsFunc(l.Snaps, func(m SnapMark) bool { return m.Epoch == epoch }) {
				all = false
			}
		}
		if all || time.Now().After(end) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return BuildSnapshot(sys, logs, epoch)
}
