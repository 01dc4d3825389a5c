package host

import (
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
	base := make([]int, 3)
	for i, n := range c.Nodes {
		base[i] = got(n)
	}
	waitFor(t, "every node gets 3 more pings once the failures stop", func() bool {
		for i, n := range c.Nodes {
			if got(n) < base[i]+3 {
				return false
			}
		}
		return true
	})
	c.Stop()
	logs, err := ReadRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(logs)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := m.Replay(&pingers)
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
