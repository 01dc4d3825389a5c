package host_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/internal/hosttest"
	"github.com/livecheck/livecheck/internal/runtest"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// The helpers host's external tests share with runlog's (internal/
// hosttest, internal/runtest).
const deadline = hosttest.Deadline

type (
	pinger = hosttest.Pinger
	Ping   = hosttest.Ping
)

var (
	waitFor       = hosttest.WaitFor
	waitQuiet     = hosttest.WaitQuiet
	newLog        = hosttest.NewLog
	start         = runtest.Start
	startSystem   = runtest.StartSystem
	startPingers  = runtest.StartPingers
	live          = runtest.Live
	replayDir     = runtest.ReplayDir
	got           = runtest.Got
	pingers       = hosttest.Pingers
	streamPingers = hosttest.StreamPingers
	buildPingers  = hosttest.BuildPingers
	morePings     = runtest.MorePings
	loggedKinds   = runtest.LoggedKinds
)

// The lock service of examples/lock, the code the checker checks, runs
// as 3 nodes over UDP on loopback: every client gets its turn.
func TestLockCluster(t *testing.T) {
	dir := t.TempDir()
	c := start(t, &lock.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Data: dir, LogDir: dir, Seed: 1})
	live(t, c)
	for i, n := range c.Nodes {
		st := n.Stats()
		if st.Malformed+st.Oversized+st.Strangers+st.Unsendable != 0 {
			t.Errorf("node %d dropped frames on a quiet loopback: %+v", i, st)
		}
		if st.Handled == 0 {
			t.Errorf("node %d ran no handler", i)
		}
	}
	waitFor(t, "the last client lets go", func() bool {
		return c.Nodes[0].State().(*lock.Server).Holder == 0
	})

	// The run's logs, merged, replay in the checker's simulator with
	// every node's fingerprint equal, and make a trace that replay takes.
	c.Stop()
	var logs []*host.RunLogFile
	for i := range c.Nodes {
		l, err := host.ReadRunLogFile(host.RunLogName(dir, sim.NodeID(i)))
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	m, err := runlog.Merge(logs)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := runlog.Replay(m, &lock.System)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || !rr.Live {
		t.Fatalf("the run's replay: %+v, %v", rr, err)
	}
	if _, err := check.ReplayTrace(&lock.System, rr.Trace, 0, nil); err != nil {
		t.Errorf("the run's trace does not replay: %v", err)
	}
	// The trace carries the nodes' fingerprints, and replay compares
	// them: one that is not the simulator's is named, with its step.
	rr.Trace.Steps[1].FP = "0123456789abcdef"
	if _, err := check.ReplayTrace(&lock.System, rr.Trace, 0, nil); err == nil ||
		!strings.Contains(err.Error(), "state after step 2 (") || !strings.Contains(err.Error(), "is not the one the run logged") {
		t.Errorf("a trace with a fingerprint changed: %v", err)
	}
}

// The Pastry-style ring of systems/ring, a stream system, runs as 3
// nodes over TCP on loopback: they form one ring.
func TestRingCluster(t *testing.T) {
	dir := t.TempDir()
	c := start(t, &ring.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Seed: 1, LogDir: dir})
	live(t, c)

	// Its logs merge and replay, but for what the connections broken as
	// the nodes stop led to.
	c.Stop()
	var logs []*host.RunLogFile
	for i := range c.Nodes {
		l, err := host.ReadRunLogFile(host.RunLogName(dir, sim.NodeID(i)))
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	m, err := runlog.Merge(logs)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := runlog.Replay(m, &ring.System)
	if err != nil || rr.Divergence != nil || rr.Violation != "" {
		t.Fatalf("the run's replay: %+v, %v", rr, err)
	}
	if !rr.Live {
		t.Errorf("the run's replay, %d steps, does not end live (left out: %q)", len(rr.Path), rr.LeftOut)
	}
	t.Logf("%d steps replayed, %d left out: %q", len(rr.Path), rr.LeftOutSteps, rr.LeftOut)
}

// The transport of systems/transport, a stack of layers (an application
// over a retransmitting transport), runs as it does in the checker:
// every message is delivered.
func TestTransportLayersCluster(t *testing.T) {
	c := start(t, &transport.System, protocol.Config{}, host.ClusterOptions{Seed: 1})
	live(t, c)
	if got := properties.Node[*transport.App](c.State(), 1).Got; len(got) != 2 {
		t.Errorf("node 1's application got %v, want node 0's 2 messages", got)
	}
}
