package host

import (
	"bytes"
	"errors"
	"fmt"
	"time"

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
// A snapshot is a state, and a check starts from a path: runlog.BuildSnapshot
// turns the marks into one. Each node's part of the cut is its log up to
// its mark; merged (runlog.Merge) and replayed in the simulator, those entries
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

// RecordSnapshot asks every running node of the cluster, which must
// keep run logs (ClusterOptions.LogDir), to record the next epoch, and
// waits until each has (or has stopped: down), up to timeout. It returns
// the epoch and the directory of the logs, where runlog.BuildSnapshot
// builds it.
func (c *Cluster) RecordSnapshot(timeout time.Duration) (epoch uint64, logDir string, err error) {
	if c.logDir == "" {
		return 0, "", errors.New("the cluster keeps no run logs (ClusterOptions.LogDir): a snapshot is a mark in them")
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
	return e, c.logDir, nil
}

func stopped(n *Node) bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}
