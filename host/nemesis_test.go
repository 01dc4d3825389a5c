package host

import (
	"fmt"
	"testing"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The nemesis drops, duplicates, partitions and restarts for real, at
// random from a seed and from a list; the merged log replays in the
// simulator with the failures in it, and the property holds once they
// stop.
func TestNemesisPingers(t *testing.T) {
	dir := t.TempDir()
	c, l := startPingers(t, ClusterOptions{Data: dir, LogDir: dir, Faults: []Fault{{Kind: "duplicate", Node: 0, Peer: 1}}})
	faults := append([]Fault{{Kind: "drop", Node: 1, Peer: 2, Count: 2}, {Kind: "partition", Group: []sim.NodeID{0}},
		{Kind: "heal"}, {Kind: "restart", Node: 2}}, RandomFaults(1, 8, 3, nil)...)
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
	c, _ := startPingers(t, ClusterOptions{LogDir: dir, Key: key})
	waitFor(t, "every node gets a ping", func() bool { return got(c.Nodes[0]) > 0 && got(c.Nodes[1]) > 0 && got(c.Nodes[2]) > 0 })
	for _, f := range []Fault{{Kind: "drop", Node: 0, Peer: 1, Count: 2}, {Kind: "partition", Group: []sim.NodeID{2}}} {
		for i, addr := range c.Peers() {
			if f.Kind == "drop" && i != int(f.Node) {
				continue
			}
			if err := SendFault(addr, key, sim.NodeID(i), 3, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the nodes drop 2 datagrams and 2 across the partition", func() bool { return loggedKinds(t, dir)["drop"] >= 4 })
	for i, addr := range c.Peers() {
		if err := SendFault(addr, key, sim.NodeID(i), 3, Fault{Kind: "heal"}); err != nil {
			t.Fatal(err)
		}
	}
	base := got(c.Nodes[0])
	waitFor(t, "node 0 gets pings from node 2 again", func() bool { return got(c.Nodes[0]) >= base+3 })
	c.Stop()
	if rr, err := replayDir(t, dir, &pingers); err != nil || rr.Divergence != nil || rr.LeftOutSteps != 0 || !rr.Live {
		t.Fatalf("the run's replay: %v, %+v", err, rr)
	}
	fs, err := ParseFaults("drop:0:1:2,duplicate:1:0,partition:0+2,heal,restart:1,call:2", 3)
	if got := fmt.Sprint(fs); err != nil || got != "[drop 0->1 x2 duplicate 1->0 x1 partition [0 2] heal restart 1 call 2]" {
		t.Errorf("ParseFaults: %s, %v", got, err)
	}
	for _, bad := range []string{"drop:0:0", "drop:0:5", "partition", "restart", "frobnicate", "drop:0:1:0", "call", "call:3"} {
		if _, err := ParseFaults(bad, 3); err == nil {
			t.Errorf("ParseFaults(%q) took it", bad)
		}
	}
}
