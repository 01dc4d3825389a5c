package host_test

import (
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/ring"
)

// A node of a stream system killed as a process dies (its peers notice
// its connections break, on their own) and started again: its peers
// suspect it meanwhile, and are told at its restart, before its Init,
// so that the run's merged log has one Reset and replays whole, every
// fingerprint equal.
func TestKilledStreamNodeIsAReset(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t)
	c, err := host.StartCluster(&ring.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Seed: 1, LogDir: dir, Log: l, SuspectFor: deadline})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	waitFor(t, "the ring", func() bool { return c.Holds(c.State()) })
	c.Kill(1)
	waitFor(t, "node 0 or 2 suspects node 1", func() bool {
		return host.Suspects(c.Nodes[0], 1) || host.Suspects(c.Nodes[2], 1)
	})
	told := 0
	for _, id := range []sim.NodeID{0, 2} {
		if host.Suspects(c.Nodes[id], 1) {
			told++
		}
	}
	if err := c.Revive(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ring again", func() bool { return c.Holds(c.State()) })
	c.Stop()

	m := mergeDir(t, dir)
	resets, others := 0, 0
	for i, st := range m.Path {
		if st.Event.Kind == sim.Reset {
			resets++
			others += len(m.Others[i])
			if st.Event.Node != 1 {
				t.Errorf("step %d resets node %d, not 1", i+1, st.Event.Node)
			}
		}
		if m.Stop[i] != "" {
			t.Errorf("step %d left out: %s", i+1, m.Stop[i])
		}
	}
	if resets != 1 || others < told {
		t.Errorf("%d resets with %d peers' Error steps, want 1 with at least the %d that suspected it", resets, others, told)
	}
	rr, err := runlog.Replay(m, &ring.System)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || rr.LeftOutSteps != 0 || !rr.Live {
		t.Fatalf("the run's replay: divergence %v, violation %q, %d steps left out (%q), live %v: %v",
			rr.Divergence, rr.Violation, rr.LeftOutSteps, rr.LeftOut, rr.Live, err)
	}
	t.Logf("%d steps replayed, %d peers told at the reset", len(rr.Path), others)
}

// A snapshot's markers connect nodes that never sent each other a
// message (nodes 0 and 2 of 4 stream pingers, each sending to the next
// only), but make no connection of the simulator's: a break of the pair
// after it breaks nothing, and the run's merged log replays whole.
func TestMarkersMakeNoConnection(t *testing.T) {
	dir := t.TempDir()
	c, err := host.StartCluster(&streamPingers, protocol.Config{Nodes: 4}, host.ClusterOptions{Data: dir, LogDir: dir, Log: newLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	waitFor(t, "pings", func() bool { return got(c.Nodes[0]) >= 3 && got(c.Nodes[2]) >= 3 })
	if _, err := runlog.SnapshotCluster(c, deadline); err != nil {
		t.Fatal(err)
	}
	if host.Connected(c.Nodes[0], 2) || host.Connected(c.Nodes[2], 0) {
		t.Fatal("nodes 0 and 2 have a connection after the snapshot's markers")
	}
	if broke, err := c.Break(0, 2); err != nil || broke {
		t.Fatalf("Break(0, 2) = %v, %v: want false, nothing to break", broke, err)
	}
	if broke, err := c.Break(0, 1); err != nil || !broke {
		t.Fatalf("Break(0, 1) = %v, %v: want true", broke, err)
	}
	c.Stop()
	m := mergeDir(t, dir)
	rr, err := runlog.Replay(m, &streamPingers)
	if err != nil || rr.Divergence != nil || rr.LeftOutSteps != 0 {
		t.Fatalf("the run's replay: divergence %v, %d steps left out (%q): %v", rr.Divergence, rr.LeftOutSteps, rr.LeftOut, err)
	}
}
