package host

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// A node stopped while held at a barrier, with a snapshot request
// queued behind the barrier, records nothing: a killed process does
// nothing more. The node's loop picks at random between its stop and
// its inbox when both are ready, so each round had an even chance of
// recording the mark after the stop (and so before the restart's Init
// while its peers' Error for the restart fell before theirs: a cut the
// merge rejects, TestSnapshotsUnderFaults/ring under load).
func TestStoppedRecordsNothing(t *testing.T) {
	c, _ := startPingers(t, ClusterOptions{Seed: 1, LogDir: t.TempDir()})
	const rounds = 24
	for i := range rounds {
		id := sim.NodeID(i % len(c.Nodes))
		brk, _, err := c.hold([]sim.NodeID{id}, func(sim.NodeID) sim.NodeID { return id })
		if err != nil {
			t.Fatal(err)
		}
		n := c.Nodes[id]
		e := n.Epoch() + 1
		if err := n.Snapshot(e); err != nil {
			t.Fatal(err)
		}
		n.Stop()
		close(brk.release)
		if got := n.Epoch(); got >= e {
			t.Fatalf("round %d: node %d recorded snapshot %d after it was stopped", i+1, id, got)
		}
		if err := c.Revive(id); err != nil {
			t.Fatal(err)
		}
	}
}
