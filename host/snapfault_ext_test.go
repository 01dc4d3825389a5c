package host_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// Snapshots taken while the nemesis applies its failures, each asked
// for (as livecheck snapshot asks, by control frames) in the same
// instant a fault is applied (10 on the ring over
// streams: breaks, partitions and heals, restarts; 10 on the transport
// over datagrams: drops and duplicates): 20 of 20 build and replay in
// the simulator and, when live, are prefixes check --from takes, their
// failures spent before the check.
func TestSnapshotsUnderFaults(t *testing.T) {
	replayed := 0
	for _, tc := range []struct {
		sys    *protocol.System
		cfg    protocol.Config
		faults []host.Fault
	}{
		{&ring.System, protocol.Config{Nodes: 3}, streamSchedule(1)[:10]},
		{&transport.System, protocol.Config{Nodes: 2}, host.RandomFaults(5, 10, 2, []string{"drop", "duplicate"})[:10]},
	} {
		t.Run(tc.sys.Name, func(t *testing.T) {
			dir := t.TempDir()
			key := []byte("0123456789abcdef0123456789abcdef")
			c := start(t, tc.sys, tc.cfg, host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir, Key: key})
			live(t, c)
			ok, prefixes := 0, 0
			for i, f := range tc.faults {
				done := make(chan error, 1)
				go func() { done <- applyOne(c, f) }()
				// As livecheck snapshot takes it: control frames to the
				// nodes' addresses, under the key.
				snap, err := runlog.TakeSnapshot(tc.sys, dir, key, deadline)
				if ferr := <-done; ferr != nil {
					t.Fatalf("fault %d (%v): %v", i+1, f, ferr)
				}
				if err != nil {
					t.Errorf("snapshot %d, during %v: %v", i+1, f, err)
					continue
				}
				ok++
				if snap.Replay.Trace.Result == "prefix" {
					file := filepath.Join(dir, "snap.json")
					if err := reports.WriteFileAtomic(file, snap.Replay.Trace.Write); err != nil {
						t.Fatal(err)
					}
					if _, _, _, err := check.PrefixStart(tc.sys, file, protocol.Config{}, 0); err != nil {
						t.Errorf("check --from snapshot %d: %v", i+1, err)
					}
					prefixes++
				}
				time.Sleep(50 * time.Millisecond) // pacing, not an assertion
			}
			replayed += ok
			t.Logf("%d of %d snapshots under faults replay (%d live)", ok, len(tc.faults), prefixes)
		})
	}
	if replayed != 20 {
		t.Errorf("%d of 20 snapshots under faults replay", replayed)
	}
}

// applyOne applies f to c (a break that finds no connection breaks
// nothing).
func applyOne(c *host.Cluster, f host.Fault) error {
	if f.Kind == "break" {
		_, err := c.Break(f.Node, f.Peer)
		return err
	}
	return c.Apply(f)
}

// A snapshot begun by one node in the instant the nemesis holds the
// cluster for a failure (a restart, a break, a partition and its heal;
// in the cluster's process, over control connections as `cluster
// --nemesis` holds them, and a process killed and started again, which
// holds its peers itself): node 0 records it and the others are held
// before its marker reaches them, so without agreement at the barrier
// the failure's one step of the simulator (a Reset with its peers'
// Error, a SocketError, a Partition) would fall across the cut ("node 0
// recorded a state that the cut's replay does not reach", "a broken
// connection whose other end logged none"). Every one of these
// snapshots builds, replays, and, when live, is a prefix check --from
// takes with the failures it spent.
func TestSnapshotAcrossBarrier(t *testing.T) {
	dir := t.TempDir()
	key := []byte("0123456789abcdef0123456789abcdef")
	c := start(t, &ring.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir, Key: key})
	live(t, c)
	local := func(f host.Fault) func() error { return func() error { return applyOne(c, f) } }
	steps := []struct {
		name  string
		apply func() error
	}{
		{"restart 1", local(host.Fault{Kind: "restart", Node: 1})},
		{"break 0-2", local(host.Fault{Kind: "break", Node: 0, Peer: 2})},
		{"restart 2", local(host.Fault{Kind: "restart", Node: 2})},
		{"partition [0]", local(host.Fault{Kind: "partition", Group: []sim.NodeID{0}})},
		{"heal", local(host.Fault{Kind: "heal"})},
		{"remote break 0-1", func() error { _, err := host.BreakRemote(c.Peers(), key, 0, 1); return err }},
		{"remote partition [2]", func() error { return host.PartitionRemote(c.Peers(), key, []sim.NodeID{2}) }},
		{"remote heal", func() error { return host.HealRemote(c.Peers(), key) }},
		{"kill 1, snapshot, start 1 again", nil}, // below
		{"restart 1", local(host.Fault{Kind: "restart", Node: 1})},
	}
	for i, st := range steps {
		e := uint64(0)
		for _, n := range c.Nodes {
			e = max(e, n.Epoch()+1)
		}
		if st.apply == nil {
			// Node 1's process dies; node 0 records the snapshot, then
			// node 1 starts again and holds its peers (back.go).
			c.Kill(1)
			c.Nodes[0].Snapshot(e)
			waitFor(t, "node 0 records", func() bool { return c.Nodes[0].Epoch() >= e })
			st.apply = func() error { return c.Revive(1) }
		} else if err := c.Nodes[0].Snapshot(e); err != nil {
			t.Fatal(err)
		}
		if err := st.apply(); err != nil {
			t.Fatalf("step %d (%s): %v", i+1, st.name, err)
		}
		// Then every node is asked, as livecheck snapshot asks them all
		// (across a partition no marker goes).
		for _, n := range c.Nodes {
			n.Snapshot(e)
		}
		waitFor(t, fmt.Sprintf("every node records snapshot %d", e), func() bool {
			for _, n := range c.Nodes {
				if n.Epoch() < e {
					return false
				}
			}
			return true
		})
		logs, err := runlog.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := runlog.BuildSnapshot(&ring.System, logs, e)
		if err != nil {
			t.Errorf("snapshot %d, begun as %s was applied: %v", e, st.name, err)
			continue
		}
		t.Logf("snapshot %d during %s: %d steps, %d in flight, result %s", e, st.name, snap.Steps, len(snap.InFlight), snap.Replay.Trace.Result)
		if snap.Replay.Trace.Result == "prefix" {
			file := filepath.Join(dir, "snap.json")
			if err := reports.WriteFileAtomic(file, snap.Replay.Trace.Write); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := check.PrefixStart(&ring.System, file, protocol.Config{}, 0); err != nil {
				t.Errorf("check --from snapshot %d: %v", e, err)
			}
		}
	}
}
