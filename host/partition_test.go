package host

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// gossiper is a node for the partition tests: it pings every other node
// at Init and every tick, and at every Error draws a choice, which its
// state keeps, and pings the peer and the node it drew. Across a
// partition each of those sends is refused and told, its Error pinging
// again: every joint step of the simulator (a partition's, a break's, a
// reset's) has refusals in it, at several nodes, some told for a
// node's second handler of the step after another node's first, some
// for a refusal's own sends, with choices whose order the merge must
// get right for the fingerprints to match.
type gossiper struct {
	sim.BaseNode
	Got   []int // pings got, by sender
	Errs  int
	Trail int // the choices of its Error handlers, in order
}

func (g *gossiper) Init(ctx sim.Context) {
	g.Got = make([]int, ctx.Nodes())
	ctx.SetPeriodic("tick")
	g.all(ctx)
}

func (g *gossiper) all(ctx sim.Context) {
	for to := range ctx.Nodes() {
		if sim.NodeID(to) != ctx.Self() {
			ctx.Send(sim.NodeID(to), Ping{g.Errs})
		}
	}
}

func (g *gossiper) Timer(ctx sim.Context, name string) { g.all(ctx) }

func (g *gossiper) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { g.Got[from]++ }

// Error pings the peer (across a partition: refused, or lost without a
// word if refused already in the step) and the node it draws, if any.
func (g *gossiper) Error(ctx sim.Context, peer sim.NodeID) {
	g.Errs++
	c := ctx.Choose(ctx.Nodes() + 2)
	g.Trail = (g.Trail*7 + c + int(peer)) % 1000003
	ctx.Send(peer, Ping{g.Errs})
	if c < ctx.Nodes() && sim.NodeID(c) != ctx.Self() {
		ctx.Send(sim.NodeID(c), Ping{g.Errs})
	}
}

var gossipers = protocol.System{Name: "gossipers", Build: func(cfg protocol.Config) (*protocol.Model, error) {
	return &protocol.Model{
		Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &gossiper{} }, Transport: sim.Stream,
			HandlerTimeout: 100 * time.Millisecond},
		Timers: map[string]protocol.Timing{"tick": {After: 20 * time.Millisecond, Jitter: 5 * time.Millisecond}},
		Properties: []properties.Property{properties.EventuallyEach("gossiped", "every node got a ping",
			func(g *gossiper) bool { return g.Got != nil })},
	}, nil
}}

// gotFrom is how many pings node to got from node from.
func gotFrom(c *Cluster, to, from sim.NodeID) int {
	return c.Nodes[to].State().(*gossiper).Got[from]
}

// everyPair waits until every node got k more pings from every other.
func everyPair(t *testing.T, c *Cluster, k int, what string) {
	t.Helper()
	n := len(c.Nodes)
	base := make([]int, n*n)
	for a := range n {
		for b := range n {
			base[a*n+b] = gotFrom(c, sim.NodeID(a), sim.NodeID(b))
		}
	}
	waitFor(t, what, func() bool {
		for a := range n {
			for b := range n {
				if a != b && gotFrom(c, sim.NodeID(a), sim.NodeID(b)) < base[a*n+b]+k {
					return false
				}
			}
		}
		return true
	})
}

// loggedKinds counts the entries of the run logs in dir by kind.
func loggedKinds(t *testing.T, dir string) map[string]int {
	t.Helper()
	logs, err := ReadRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := map[string]int{}
	for _, l := range logs {
		for _, e := range l.Entries {
			k[e.Kind]++
		}
	}
	return k
}

// A partition of a stream system, as the simulator makes it: at the
// Partition step each connection across breaks and both ends run
// Error, in the order of the connections; while it is in force, a send
// across is refused and its sender runs Error in the same step, and a
// break and a restart inside a side are the simulator's, refusals
// included. Every Error handler here draws a choice and sends across
// again, so the merge has to put every handler of each joint step in
// the simulator's order, at several nodes, for the run to replay with
// every fingerprint equal; then the heal, and every node hears from
// every other again.
func TestPartitionStream(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t)
	c, err := StartCluster(&gossipers, protocol.Config{Nodes: 4}, ClusterOptions{Data: dir, LogDir: dir, Log: l, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	everyPair(t, c, 2, "every node hears from every other")
	if err := c.Apply(Fault{Kind: "heal"}); err != nil {
		t.Fatal(err) // nothing to heal: nothing logged
	}
	for _, bad := range []Fault{{Kind: "partition"}, {Kind: "partition", Group: []sim.NodeID{0, 1, 2, 3}}, {Kind: "partition", Group: []sim.NodeID{4}}} {
		if err := c.Apply(bad); err == nil {
			t.Errorf("%v: applied", bad)
		}
	}
	if err := c.Apply(Fault{Kind: "partition", Group: []sim.NodeID{3, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(Fault{Kind: "partition", Group: []sim.NodeID{1}}); err == nil {
		t.Error("a second partition while one is in force: applied")
	}
	waitFor(t, "sends across refused", func() bool { return loggedKinds(t, dir)["refuse-error"] >= 8 })
	if ok, err := c.Break(0, 1); err != nil || !ok {
		t.Fatalf("a break inside a side: %v, %v", ok, err)
	}
	if ok, err := c.Break(0, 2); err != nil || ok {
		t.Fatalf("a break across the partition: %v, %v (no connection to break)", ok, err)
	}
	if err := c.Apply(Fault{Kind: "restart", Node: 2}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 2 hears from node 3 again", func() bool { return gotFrom(c, 2, 3) > 0 })
	if err := c.Apply(Fault{Kind: "heal"}); err != nil {
		t.Fatal(err)
	}
	everyPair(t, c, 2, "every node hears from every other after the heal")
	c.Stop()
	m := mergeRuns(t, dir)
	for i, why := range m.Stop {
		if why != "" {
			t.Errorf("step %d left out: %s", i+1, why)
		}
	}
	rr, err := m.Replay(&gossipers)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 || !rr.Live {
		t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q (%d steps), live %v", err, rr.Divergence, rr.Violation, rr.LeftOut, rr.LeftOutSteps, rr.Live)
	}
	k := map[sim.Kind]int{}
	for _, st := range rr.Path {
		k[st.Event.Kind]++
	}
	if k[sim.Partition] != 1 || k[sim.Heal] != 1 || k[sim.SocketError] != 1 || k[sim.Reset] != 1 || m.Config.Budget.Partitions != 1 {
		t.Errorf("the replayed path has %d partitions, %d heals, %d socket errors, %d resets (budget %+v): want 1 each", k[sim.Partition], k[sim.Heal], k[sim.SocketError], k[sim.Reset], m.Config.Budget)
	}
	lk := loggedKinds(t, dir)
	if lk["partition-error"] != 8 {
		t.Errorf("%d partition-error entries: want 8, both ends of the 4 connections across", lk["partition-error"])
	}
	t.Logf("%d steps replayed; logged: %v", len(rr.Path), lk)
}
