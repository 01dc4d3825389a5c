package host_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// A snapshot taken while a message is held in flight (the test hook)
// contains it; the cut replays in the simulator to the recorded states
// with the message in its network; once let go, the receiver handles it
// after its mark, and the channel records it. A node stopped is down.
func TestSnapshotInFlight(t *testing.T) {
	dir := t.TempDir()
	held := func(from, to sim.NodeID, msg sim.Message) bool {
		p, ok := msg.(Ping)
		return ok && from == 0 && to == 1 && p.N == 2
	}
	co := host.ClusterOptions{Data: dir, LogDir: dir}
	host.Hold(&co, held)
	c, _ := startPingers(t, co)
	waitFor(t, "every node gets 3 pings", func() bool {
		return got(c.Nodes[0]) >= 3 && got(c.Nodes[1]) >= 3 && got(c.Nodes[2]) >= 3
	})
	snap, err := runlog.SnapshotCluster(c, deadline)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Epoch != 1 || len(snap.Down()) != 0 || snap.Replay.Trace.Result != "prefix" {
		t.Fatalf("snapshot %d, down %v, result %q: want 1, none, prefix", snap.Epoch, snap.Down(), snap.Replay.Trace.Result)
	}
	var heldMsg *runlog.SnapMessage
	for i, m := range snap.InFlight {
		if m.From == 0 && m.To == 1 && strings.Contains(m.Msg, "N:2}") {
			heldMsg = &snap.InFlight[i]
		}
	}
	if heldMsg == nil || heldMsg.Recorded {
		t.Fatalf("the held Ping{N: 2} from 0 to 1 is not in flight in the snapshot, or recorded as handled: %+v", snap.InFlight)
	}
	// The states recorded are those the replay of the cut reaches.
	for _, n := range snap.Nodes {
		if n.FP != fmtFP(snap.Replay.Final.Node(n.ID)) {
			t.Errorf("node %d: fingerprint %s, the replay's %s", n.ID, n.FP, fmtFP(snap.Replay.Final.Node(n.ID)))
		}
	}

	// check --from takes it: it replays to a live state, the held
	// message in flight.
	file := filepath.Join(dir, "snap.json")
	if err := reports.WriteFileAtomic(file, snap.Replay.Trace.Write); err != nil {
		t.Fatal(err)
	}
	if _, _, path, err := check.PrefixStart(&pingers, file, protocol.Config{}, 0); err != nil || len(path) != snap.Steps {
		t.Fatalf("check --from the snapshot: %v (%d steps, want %d)", err, len(path), snap.Steps)
	}

	// Let it go: node 1 handles it after its mark, and the channel
	// records it.
	host.ReleaseHeld(c.Nodes[0])
	var again *runlog.Snapshot
	waitFor(t, "node 1 handles the held message", func() bool {
		logs, err := runlog.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if again, err = runlog.BuildSnapshot(&pingers, logs, 1); err != nil {
			t.Fatal(err)
		}
		for _, m := range again.InFlight {
			if m.Recorded && m.From == 0 && m.To == 1 && strings.Contains(m.Msg, "N:2}") {
				return true
			}
		}
		return false
	})

	// A node down at the snapshot is recorded as down.
	c.Nodes[2].Stop()
	snap2, err := runlog.SnapshotCluster(c, deadline)
	if err != nil {
		t.Fatal(err)
	}
	if d := snap2.Down(); snap2.Epoch != 2 || len(d) != 1 || d[0] != 2 {
		t.Fatalf("snapshot %d with node 2 stopped: down %v", snap2.Epoch, d)
	}
	// Its prefix crashes it last: the state the snapshot replays to has
	// node 2 down, the others up, and so does the check --from it.
	tr := snap2.Replay.Trace
	last := tr.Steps[len(tr.Steps)-1]
	if fin := snap2.Replay.Final; !fin.Down(2) || fin.Down(0) || fin.Down(1) || last.Kind != "crash" || last.Node != 2 || tr.Budget.Crashes != 1 {
		t.Fatalf("snapshot with node 2 stopped: down %v, last step %+v, budget %+v", fin.DownNodes(), last, tr.Budget)
	}
	if tr.Result != "prefix" {
		t.Fatalf("snapshot with node 2 down: result %q (%s), want a prefix", tr.Result, tr.Message)
	}
	file2 := filepath.Join(dir, "snap2.json")
	if err := reports.WriteFileAtomic(file2, tr.Write); err != nil {
		t.Fatal(err)
	}
	if back, err := reports.ReadTraceFile(file2); err != nil || back.Version != 5 {
		t.Fatalf("the snapshot with a node down read back: %v, version %d", err, back.Version)
	}
	cfg, init, path, err := check.PrefixStart(&pingers, file2, protocol.Config{}, 0)
	if err != nil || path[len(path)-1].Event != (sim.Event{Kind: sim.Crash, Node: 2}) || cfg.Budget.Crashes != 1 {
		t.Fatalf("check --from the snapshot with a node down: %v, budget %+v", err, cfg.Budget)
	}
	rep, err := check.ReplayFrom(&pingers, cfg, init, path, 0)
	if err != nil || rep.Final.DownNodes() != sim.NodeSet(0).Add(2) {
		t.Fatalf("the check's start from it: %v, down %v", err, rep.Final.DownNodes())
	}
}

func fmtFP(n sim.Node) string { return fmt.Sprintf("%016x", sim.Fingerprint(n)) }
