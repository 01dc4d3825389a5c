package runlog_test

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/sim"
)

// The nemesis restarts nodes of a stream system: each restart is the
// simulator's Reset, with the Error of every peer that had a connection
// with the node in the same step. The merged log replays whole, every
// fingerprint equal, and the nodes talk again after each.
func TestNemesisRestartStream(t *testing.T) {
	dir := t.TempDir()
	c, l := startSystem(t, &streamPingers, host.ClusterOptions{Data: dir, LogDir: dir})
	waitFor(t, "pings", func() bool { return c.Holds(c.State()) })
	for _, id := range []sim.NodeID{1, 0, 1, 2} {
		if err := c.RunFaults([]host.Fault{{Kind: "restart", Node: id}}, time.Millisecond, l); err != nil {
			t.Fatal(err)
		}
		morePings(t, c, 2, "every node gets 2 more pings after the restart")
	}
	c.Stop()
	rr, err := replayDir(t, dir, &streamPingers)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 {
		t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q (%d steps)", err, rr.Divergence, rr.Violation, rr.LeftOut, rr.LeftOutSteps)
	}
	resets, errs := 0, 0
	for _, st := range rr.Path {
		if st.Event.Kind == sim.Reset {
			resets++
		}
	}
	for i := range c.Nodes {
		errs += rr.Final.Node(sim.NodeID(i)).(*pinger).Errs
	}
	if resets != 4 || errs == 0 {
		t.Errorf("the replayed path has %d resets and its nodes ran Error %d times: want 4, and some", resets, errs)
	}
	t.Logf("%d steps replayed, %d resets, %d Error calls in the final state", len(rr.Path), resets, errs)
}
