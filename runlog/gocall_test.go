package runlog_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// A run driven from Go: the test makes the nodes' driver calls with
// Node.Call, one of them across a restart of its node. Each is the
// driver's call (counted made, so the restart does not make it again),
// and the merged log replays whole, every fingerprint equal, with the
// calls as the simulator's App events.
func TestGoCallsMerged(t *testing.T) {
	sys := protocol.System{Name: "go-called", Build: func(cfg protocol.Config) (*protocol.Model, error) {
		m, err := buildPingers(sim.Datagram)(cfg)
		if err == nil {
			m.Spec.Calls = []sim.Call{{To: 1, Call: "mark"}, {To: 2, Call: "mark"}, {To: 1, Call: "noop"}}
		}
		return m, err
	}}
	dir := t.TempDir()
	c, _ := startSystem(t, &sys, host.ClusterOptions{HoldCalls: true, LogDir: dir, Data: t.TempDir()})
	mark := func(i int) int { return c.Nodes[i].State().(*pinger).Mark }
	if err := c.Nodes[1].Call("mark"); err != nil {
		t.Fatal(err)
	}
	if err := c.Nodes[2].Call("mark"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "nodes 1 and 2 make their calls", func() bool { return mark(1) == 1 && mark(2) == 1 })
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	// The restart makes no call again: the replay below counts three.
	if err := c.Nodes[1].Call("noop"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pings", func() bool { return c.Holds(c.State()) })
	c.Stop()
	rr, err := runlog.Replay(mergeDir(t, dir), &sys)
	if err != nil || rr.Divergence != nil || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 {
		t.Fatalf("replay: %v %v %v (%d steps left out): %v", rr.Divergence, rr.LeftOut, rr.LeftOutSteps, err, rr)
	}
	var calls []int
	resets := 0
	for _, st := range rr.Path {
		switch st.Event.Kind {
		case sim.App:
			calls = append(calls, st.Event.Call)
		case sim.Reset:
			resets++
		}
	}
	if len(calls) != 3 || calls[2] != 2 || resets != 1 {
		t.Errorf("the replayed run has driver calls %v and %d resets, want [0 1 2] in some order of the first two, and 1", calls, resets)
	}
}

// A call made from Go that is not the node's next driver call has no
// event in the simulator: trace leaves it out, with the rest of its
// node's log, and says why.
func TestGoCallNotDriverLeftOut(t *testing.T) {
	dir := t.TempDir()
	c, _ := startPingers(t, host.ClusterOptions{LogDir: dir})
	if err := c.Nodes[1].Call("mark"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 1's call", func() bool { return c.Nodes[1].State().(*pinger).Mark == 1 })
	c.Stop()
	rr, err := runlog.Replay(mergeDir(t, dir), &pingers)
	if err != nil || rr.Divergence != nil {
		t.Fatalf("replay: %v %v", rr, err)
	}
	if len(rr.LeftOut) == 0 || !strings.Contains(rr.LeftOut[0], "node 1's call made from Go") {
		t.Errorf("left out %q, want node 1's call made from Go", rr.LeftOut)
	}
}
