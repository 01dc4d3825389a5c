package host_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/internal/runtest"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// A seeded bug fails under the nemesis as it does in the checker: with
// syn-dup, the transport's acknowledgements dropped for real make
// the sender retransmit its SYN, which the receiver takes for a new
// connection and delivers again; the merged log replays to the
// violation of delivered-once-in-order. The correct transport, under
// the same fault, delivers every message once.
func TestNemesisTransport(t *testing.T) {
	for _, bugs := range [][]string{{"syn-dup"}, nil} {
		name := "correct"
		if bugs != nil {
			name = bugs[0]
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			drop := host.Fault{Kind: "drop", Node: 1, Peer: 0, Count: 2}
			c := start(t, &transport.System, protocol.Config{Bugs: bugs}, host.ClusterOptions{Data: dir, LogDir: dir, Seed: 1, Faults: []host.Fault{drop}})
			live(t, c)
			waitFor(t, "a retransmission reaches node 1", func() bool { return c.Nodes[1].Stats().Received >= 3 })
			c.Stop()
			rr, err := replayDir(t, dir, &transport.System)
			if err != nil || rr.Divergence != nil {
				t.Fatalf("the run's replay: %v, divergence %v", err, rr.Divergence)
			}
			want := ""
			if bugs != nil {
				want = "delivered-once-in-order"
			}
			if rr.Violation != want {
				t.Fatalf("the run's replay violates %q (%s), want %q", rr.Violation, rr.Message, want)
			}
			// The run's trace, its drops in it, replays as the checker's do.
			if _, err := check.ReplayTrace(&transport.System, rr.Trace, 0, nil); err != nil {
				t.Errorf("the run's trace does not replay: %v", err)
			}
		})
	}
}

// On streams the nemesis breaks connections: the ring and RandTree,
// formed, have connections broken for real, each both ends' Error in
// one step of the merged log (the simulator's socket error); each forms
// again after each break (its properties hold), and the run replays
// with its socket errors.
func TestNemesisBreak(t *testing.T) {
	for _, tc := range []struct {
		sys *protocol.System
		cfg protocol.Config
	}{
		{&ring.System, protocol.Config{Nodes: 3}},
		{&randtree.System, protocol.Config{Nodes: 3, Params: map[string]string{"peers": "all"}}},
	} {
		t.Run(tc.sys.Name, func(t *testing.T) { testNemesisBreak(t, tc.sys, tc.cfg) })
	}
}

func testNemesisBreak(t *testing.T, sys *protocol.System, cfg protocol.Config) {
	dir := t.TempDir()
	c := start(t, sys, cfg, host.ClusterOptions{Seed: 1, LogDir: dir})
	live(t, c)
	broken := 0
	for _, f := range []host.Fault{{Kind: "break", Node: 0, Peer: 1}, {Kind: "break", Node: 1, Peer: 2},
		{Kind: "break", Node: 0, Peer: 2}, {Kind: "break", Node: 0, Peer: 1}} {
		ok, err := c.Break(f.Node, f.Peer)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			broken++
			live(t, c)
		}
	}
	if broken == 0 {
		t.Fatal("no connection to break once formed")
	}
	c.Stop()
	m := runtest.MergeDir(t, dir)
	rr, err := runlog.Replay(m, sys)
	if err != nil || rr.Divergence != nil || rr.Violation != "" {
		for i, st := range m.Path {
			t.Logf("%d %v %v fp %s", i+1, st.Event, st.Choices, m.FP[i])
		}
		t.Fatalf("the run's replay: %v, divergence %v, violation %q", err, rr.Divergence, rr.Violation)
	}
	kinds := map[sim.Kind]int{}
	for _, st := range rr.Path {
		kinds[st.Event.Kind]++
	}
	if kinds[sim.SocketError] != broken || !rr.Live {
		logs, _ := runlog.ReadDir(dir)
		for _, l := range logs {
			for _, e := range l.Entries {
				t.Logf("%+v", e)
			}
		}
		t.Errorf("the replayed path has %d socket errors, want %d, and ends live (%v) (left out: %q)",
			kinds[sim.SocketError], broken, rr.Live, rr.LeftOut)
	}
	t.Logf("%d breaks; %d steps replayed, %d left out (%q)", broken, len(rr.Path), rr.LeftOutSteps, rr.LeftOut)
	if err := c.Apply(host.Fault{Kind: "drop", Node: 0, Peer: 1}); err == nil || !strings.Contains(err.Error(), "drops and duplicates are of datagrams") {
		t.Errorf("a drop on streams: %v", err)
	}
}

// On streams the nemesis restarts nodes too: the ring and RandTree,
// formed, have nodes restarted for real from their state files, each
// restart the simulator's Reset with its peers' Error in the same step
// of the merged log; each forms again after each, and the run replays
// whole (nothing left out, every fingerprint equal) with its resets.
func TestNemesisRestartStreams(t *testing.T) {
	for _, tc := range []struct {
		sys *protocol.System
		cfg protocol.Config
	}{
		{&ring.System, protocol.Config{Nodes: 3}},
		{&randtree.System, protocol.Config{Nodes: 3, Params: map[string]string{"peers": "all"}}},
	} {
		t.Run(tc.sys.Name, func(t *testing.T) {
			dir := t.TempDir()
			c := start(t, tc.sys, tc.cfg, host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir})
			live(t, c)
			restarts := []sim.NodeID{1, 0, 2}
			for _, id := range restarts {
				if err := c.Apply(host.Fault{Kind: "restart", Node: id}); err != nil {
					t.Fatal(err)
				}
				live(t, c)
			}
			c.Stop()
			rr, err := replayDir(t, dir, tc.sys)
			if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 {
				t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q (%d steps)", err, rr.Divergence, rr.Violation, rr.LeftOut, rr.LeftOutSteps)
			}
			resets := 0
			for _, st := range rr.Path {
				if st.Event.Kind == sim.Reset {
					resets++
				}
			}
			if resets != len(restarts) || !rr.Live {
				t.Errorf("the replayed path has %d resets, want %d, and ends live (%v)", resets, len(restarts), rr.Live)
			}
			t.Logf("%d steps replayed, %d resets", len(rr.Path), resets)
		})
	}
}

// The nemesis drops, duplicates, partitions and restarts for real, at
// random from a seed and from a list; the merged log replays in the
// simulator with the failures in it, and the property holds once they
// stop.
func TestNemesisPingers(t *testing.T) {
	dir := t.TempDir()
	c, l := startPingers(t, host.ClusterOptions{Data: dir, LogDir: dir, Faults: []host.Fault{{Kind: "duplicate", Node: 0, Peer: 1}}})
	faults := append([]host.Fault{{Kind: "drop", Node: 1, Peer: 2, Count: 2}, {Kind: "partition", Group: []sim.NodeID{0}},
		{Kind: "heal"}, {Kind: "restart", Node: 2}}, host.RandomFaults(1, 8, 3, nil)...)
	if err := c.RunFaults(faults, 20*time.Millisecond, l); err != nil {
		t.Fatal(err)
	}
	morePings(t, c, 3, "every node gets 3 more pings once the failures stop")
	c.Stop()
	rr, err := replayDir(t, dir, &pingers)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || rr.LeftOutSteps != 0 || !rr.Live {
		t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q, live %v", err, rr.Divergence, rr.Violation, rr.LeftOut, rr.Live)
	}
	kinds := map[sim.Kind]int{}
	for _, st := range rr.Path {
		kinds[st.Event.Kind]++
	}
	if kinds[sim.Drop] < 2 || kinds[sim.Duplicate] < 1 || kinds[sim.Reset] < 1 {
		t.Errorf("the replayed path has %d drops, %d duplicates, %d resets: want at least 2, 1, 1", kinds[sim.Drop], kinds[sim.Duplicate], kinds[sim.Reset])
	}
	t.Logf("%d steps replayed: %d drops, %d duplicates, %d resets", len(rr.Path), kinds[sim.Drop], kinds[sim.Duplicate], kinds[sim.Reset])
}

// The faults a node applies itself come in control frames too, under
// the cluster key (what 'cluster --nemesis' sends): drops, and a side
// of a partition then its heal.
func TestNemesisControl(t *testing.T) {
	dir := t.TempDir()
	key := []byte("a cluster key, long enough")
	c, _ := startPingers(t, host.ClusterOptions{LogDir: dir, Key: key})
	waitFor(t, "every node gets a ping", func() bool { return got(c.Nodes[0]) > 0 && got(c.Nodes[1]) > 0 && got(c.Nodes[2]) > 0 })
	for _, f := range []host.Fault{{Kind: "drop", Node: 0, Peer: 1, Count: 2}, {Kind: "partition", Group: []sim.NodeID{2}}} {
		for i, addr := range c.Peers() {
			if f.Kind == "drop" && i != int(f.Node) {
				continue
			}
			if err := host.SendFault(addr, key, sim.NodeID(i), 3, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the nodes drop 2 datagrams and 2 across the partition", func() bool { return loggedKinds(t, dir)["drop"] >= 4 })
	for i, addr := range c.Peers() {
		if err := host.SendFault(addr, key, sim.NodeID(i), 3, host.Fault{Kind: "heal"}); err != nil {
			t.Fatal(err)
		}
	}
	base := got(c.Nodes[0])
	// And every node 3 pings in all, which the replay's last state must
	// show (node 1's come from node 0 alone, two of them dropped: on a
	// busy machine node 0 can get 3 from node 2 before node 1 has its 3).
	waitFor(t, "node 0 gets pings from node 2 again", func() bool {
		return got(c.Nodes[0]) >= base+3 && got(c.Nodes[1]) >= 3 && got(c.Nodes[2]) >= 3
	})
	c.Stop()
	if rr, err := replayDir(t, dir, &pingers); err != nil || rr.Divergence != nil || rr.LeftOutSteps != 0 || !rr.Live {
		t.Fatalf("the run's replay: %v, %+v", err, rr)
	}
	fs, err := host.ParseFaults("drop:0:1:2,duplicate:1:0,partition:0+2,heal,restart:1,call:2", 3)
	if got := fmt.Sprint(fs); err != nil || got != "[drop 0->1 x2 duplicate 1->0 x1 partition [0 2] heal restart 1 call 2]" {
		t.Errorf("ParseFaults: %s, %v", got, err)
	}
	for _, bad := range []string{"drop:0:0", "drop:0:5", "partition", "restart", "frobnicate", "drop:0:1:0", "call", "call:3"} {
		if _, err := host.ParseFaults(bad, 3); err == nil {
			t.Errorf("ParseFaults(%q) took it", bad)
		}
	}
}
