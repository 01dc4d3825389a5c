package host_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// A node that holds its driver calls makes the next one when the
// command line asks, under the cluster key, and only then; the call is
// in its run log as the driver's, and the run replays.
func TestControlNextCall(t *testing.T) {
	for _, tr := range []sim.Transport{sim.Datagram, sim.Stream} {
		t.Run(tr.String(), func(t *testing.T) { testControl(t, tr) })
	}
}

func testControl(t *testing.T, tr sim.Transport) {
	stream := tr == sim.Stream
	called := protocol.System{Name: "called-" + tr.String(), Build: func(cfg protocol.Config) (*protocol.Model, error) {
		m, err := buildPingers(tr)(cfg)
		if err == nil {
			m.Spec.Calls = []sim.Call{{To: 1, Call: "mark"}}
		}
		return m, err
	}}
	key := []byte("0123456789abcdef")
	dir := t.TempDir()
	c, l := startSystem(t, &called, host.ClusterOptions{Key: key, HoldCalls: true, LogDir: dir})
	n := c.Nodes[1]
	if n.State().(*pinger).Mark != 0 {
		t.Fatal("node 1 made its driver call without being asked")
	}
	// Under another key the node does not answer the handshake.
	if err := host.SendControl(c.Peers()[1], stream, []byte("not the key, but long"), "next-call"); err == nil {
		t.Fatal("a control frame under another key was sent")
	}
	waitFor(t, "the control frame under another key dropped", func() bool { return n.Stats().Unauthenticated >= 1 })
	if err := host.SendControl(c.Peers()[1], stream, key, "next-call"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 1 makes its driver call", func() bool { return n.State().(*pinger).Mark == 1 })
	host.SendControl(c.Peers()[1], stream, key, "next-call")
	waitFor(t, "node 1 says it has made them all", func() bool { return strings.Contains(l.String(), "has made them all") })
	waitFor(t, "pings", func() bool { return c.Holds(c.State()) })
	c.Stop()
	m := mergeDir(t, dir)
	rr, err := runlog.Replay(m, &called)
	if err != nil || rr.Divergence != nil || len(rr.LeftOut) != 0 {
		t.Fatalf("replay: %+v %v", rr, err)
	}
	apps := 0
	for _, st := range rr.Path {
		if st.Event.Kind == sim.App {
			apps++
		}
	}
	if apps != 1 {
		t.Errorf("the replayed run has %d driver calls, want 1", apps)
	}
}
