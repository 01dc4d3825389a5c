package runlog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

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
// node, as host.ReadRunLogFile reads them): the logs cut at the marks,
// merged and replayed in sys, checked against what the marks and the
// channels recorded. A log without the mark is a node down. A node whose
// state in the replay is not the one it logged is a *Divergence: a
// handler that depends on something outside its state and inputs.
func BuildSnapshot(sys *protocol.System, logs []*host.RunLogFile, epoch uint64) (*Snapshot, error) {
	if len(logs) == 0 {
		return nil, errors.New("no run logs to take a snapshot from")
	}
	snap := &Snapshot{System: logs[0].Header.System, Epoch: epoch, Nodes: make([]SnapNode, logs[0].Header.Config.Nodes)}
	cut := make([]*host.RunLogFile, len(logs))
	marks := map[int]host.SnapMark{}
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
		k := slices.IndexFunc(l.Snaps, func(m host.SnapMark) bool { return m.Epoch == epoch })
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
	rr, err := Replay(m, sys)
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
		snap.InFlight = append(snap.InFlight, SnapMessage{From: e.From, To: e.To, FP: fmt.Sprintf("%016x", e.FP), Msg: shortDump(e.Msg), Recorded: used[k]})
	}
	rr.Trace.Message = fmt.Sprintf("snapshot %d of a running cluster (livecheck snapshot): its consistent cut, merged from its nodes' logs", epoch)
	if rr.Live && rr.Violation == "" {
		rr.Trace.Result = string(check.PrefixResult)
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

// SnapshotCluster takes a consistent snapshot of an in-process cluster
// (host.Cluster.RecordSnapshot) and builds it from its run logs.
func SnapshotCluster(c *host.Cluster, timeout time.Duration) (*Snapshot, error) {
	e, dir, err := c.RecordSnapshot(timeout)
	if err != nil {
		return nil, err
	}
	logs, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return BuildSnapshot(c.System, logs, e)
}

// TakeSnapshot takes a snapshot of the running cluster whose nodes keep
// their run logs in dir (`livecheck cluster --data DIR`): it asks each
// node, under the cluster key, to record the next epoch, waits up to
// wait for their marks (a node without one by then is down), and
// builds it (BuildSnapshot).
func TakeSnapshot(sys *protocol.System, dir string, key []byte, wait time.Duration) (*Snapshot, error) {
	logs, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if logs[0].Header.System != sys.Name {
		return nil, fmt.Errorf("the run logs in %s are of system %s, not %s", dir, logs[0].Header.System, sys.Name)
	}
	epoch := lastEpoch(logs) + 1
	if err := host.RequestSnapshot(logs, key, epoch); err != nil {
		return nil, fmt.Errorf("no node could be asked: %v", err)
	}
	end := time.Now().Add(wait)
	for {
		if logs, err = ReadDir(dir); err != nil {
			return nil, err
		}
		all := true
		for _, l := range logs {
			if !slices.ContainsFunc(l.Snaps, func(m host.SnapMark) bool { return m.Epoch == epoch }) {
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
