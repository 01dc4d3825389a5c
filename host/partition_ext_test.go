package host_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/internal/runtest"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// applied counts the failures the nemesis made, by the kind of the
// simulator's event each is merged as.
type applied map[sim.Kind]int

// applyFaults applies faults to c one at a time, every apart, and counts
// what each made: a break of a pair with no connection breaks nothing
// (Break says so), every other fault is one event.
func applyFaults(t *testing.T, c *host.Cluster, faults []host.Fault, every time.Duration) applied {
	t.Helper()
	n := applied{}
	for i, f := range faults {
		if i > 0 {
			time.Sleep(every) // pacing, not an assertion
		}
		t.Logf("nemesis: %v", f)
		switch f.Kind {
		case "break":
			ok, err := c.Break(f.Node, f.Peer)
			if err != nil {
				t.Fatalf("fault %d (%v): %v", i+1, f, err)
			}
			if ok {
				n[sim.SocketError]++
			}
			continue
		case "partition":
			n[sim.Partition]++
		case "heal":
			n[sim.Heal]++
		case "restart":
			n[sim.Reset]++
		case "drop":
			n[sim.Drop]++
		case "duplicate":
			n[sim.Duplicate]++
		}
		if err := c.Apply(f); err != nil {
			t.Fatalf("fault %d (%v): %v", i+1, f, err)
		}
	}
	return n
}

// mergeDir merges the run logs in dir; it fails the test where they
// cannot be read or merged, or where a step is left out.
func mergeDir(t *testing.T, dir string) *runlog.Merged {
	t.Helper()
	m := runtest.MergeDir(t, dir)
	for i, why := range m.Stop {
		if why != "" {
			t.Errorf("step %d (%v) is left out of the merge: %s", i+1, m.Path[i].Event, why)
		}
	}
	return m
}

// kinds counts the steps of p by kind.
func kinds(p sim.Path) applied {
	k := applied{}
	for _, st := range p {
		k[st.Event.Kind]++
	}
	return k
}

// refusals counts the refuse-error entries in the run logs in dir.
func refusals(t *testing.T, dir string) int {
	t.Helper()
	logs, err := runlog.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for _, l := range logs {
		for _, e := range l.Entries {
			if e.Kind == "refuse-error" {
				k++
			}
		}
	}
	return k
}

// The correct ring and RandTree run through a seeded random schedule of
// failures on streams: connections broken, partitions and their heals,
// restarts. Once the failures stop every property holds again, and the
// merged log replays in the simulator whole, every fingerprint equal,
// with exactly the failures the nemesis made: its partitions (each
// connection across broken, both ends told, in one Partition step, and
// every send across refused, its sender told in the same step) and
// heals, breaks and restarts.
func TestNemesisStreamsRandom(t *testing.T) {
	for _, tc := range []struct {
		sys  *protocol.System
		cfg  protocol.Config
		seed uint64
	}{
		{&ring.System, protocol.Config{Nodes: 3}, 1},
		{&randtree.System, protocol.Config{Nodes: 3, Params: map[string]string{"peers": "all"}}, 2},
	} {
		t.Run(tc.sys.Name, func(t *testing.T) {
			dir := t.TempDir()
			c := start(t, tc.sys, tc.cfg, host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir})
			live(t, c)
			faults := streamSchedule(tc.seed)
			made := applyFaults(t, c, faults, 150*time.Millisecond)
			live(t, c)
			c.Stop()
			m := mergeDir(t, dir)
			rr, err := runlog.Replay(m, tc.sys)
			if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 || !rr.Live {
				t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q (%d steps), live %v",
					err, rr.Divergence, rr.Violation, rr.LeftOut, rr.LeftOutSteps, rr.Live)
			}
			// The run's trace file, its partitions in it, replays as the
			// checker's do.
			var b bytes.Buffer
			if err := rr.Trace.Write(&b); err != nil {
				t.Fatal(err)
			}
			tr, err := reports.ReadTrace(&b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := check.ReplayTrace(tc.sys, tr, 0, nil); err != nil {
				t.Errorf("the run's trace does not replay: %v", err)
			}
			got := kinds(rr.Path)
			for _, k := range []sim.Kind{sim.SocketError, sim.Partition, sim.Heal, sim.Reset} {
				if got[k] != made[k] {
					t.Errorf("the replayed path has %d %v steps, the nemesis made %d", got[k], k, made[k])
				}
			}
			t.Logf("%d steps replayed: %d partitions, %d heals, %d socket errors, %d resets; %d refusals",
				len(rr.Path), got[sim.Partition], got[sim.Heal], got[sim.SocketError], got[sim.Reset], refusals(t, dir))
		})
	}
}

// streamSchedule is the first schedule of 10 random faults on streams,
// from seed on, with a partition, a restart and a break in it.
func streamSchedule(seed uint64) []host.Fault {
	for ; ; seed++ {
		faults := host.RandomFaults(seed, 10, 3, host.StreamFaultKinds)
		has := map[string]bool{}
		for _, f := range faults {
			has[f.Kind] = true
		}
		if has["partition"] && has["restart"] && has["break"] {
			return faults
		}
	}
}

// A seeded bug fails under a partition for real as it does in the
// checker: the ring with partition-forget, whose Error handler takes a
// broken connection for the peer leaving for good, is found by the
// checker with one partition (ring-formed can never hold again). Run
// for real, formed, then partitioned and healed, its two nodes forget
// each other: each is a ring of one with nobody to probe, and the
// merged log replays, the partition's Error steps in it, to that state,
// from which no path of the simulator (no failure left) forms the ring
// again. The correct ring, through the same, forms again.
func TestNemesisPartitionBug(t *testing.T) {
	bug := []string{"partition-forget"}
	budget := protocol.NoFailures
	budget.Partitions = 1
	res, err := check.Check(&ring.System, check.Options{Config: protocol.Config{Nodes: 2, Bugs: bug, Budget: budget}, Time: check.NoTimeLimit})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.LivenessViolation || res.Property != "ring-formed" {
		t.Fatalf("the checker: %s of %q (%s), want a liveness violation of ring-formed", res.Verdict, res.Property, res.Message)
	}
	partitioned := false
	for _, st := range res.Path {
		partitioned = partitioned || st.Event.Kind == sim.Partition
	}
	if !partitioned {
		t.Errorf("the checker's path has no partition: %v", res.Path)
	}
	for _, bugs := range [][]string{bug, nil} {
		t.Run(fmt.Sprint(bugs), func(t *testing.T) {
			dir := t.TempDir()
			c := start(t, &ring.System, protocol.Config{Nodes: 2, Bugs: bugs}, host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir})
			live(t, c)
			if err := c.Apply(host.Fault{Kind: "partition", Group: []sim.NodeID{0}}); err != nil {
				t.Fatal(err)
			}
			forgot := func() bool {
				for _, n := range c.Nodes {
					if len(n.State().(*ring.Node).Known) != 0 {
						return false
					}
				}
				return true
			}
			if bugs != nil {
				waitFor(t, "the two nodes forget each other", forgot)
			}
			if err := c.Apply(host.Fault{Kind: "heal"}); err != nil {
				t.Fatal(err)
			}
			if bugs == nil {
				live(t, c)
			}
			c.Stop()
			m := mergeDir(t, dir)
			rr, err := runlog.Replay(m, &ring.System)
			if err != nil || rr.Divergence != nil || rr.Violation != "" || rr.LeftOutSteps != 0 {
				t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q", err, rr.Divergence, rr.Violation, rr.LeftOut)
			}
			if k := kinds(rr.Path); k[sim.Partition] != 1 || k[sim.Heal] != 1 {
				t.Errorf("the replayed path has %d partitions and %d heals, want 1 each", k[sim.Partition], k[sim.Heal])
			}
			if bugs == nil {
				if !rr.Live {
					t.Error("the correct ring's replay does not end formed")
				}
				return
			}
			// From where the real run ended, every state the simulator
			// reaches (the partition spent, no failure left) has the ring
			// unformed: ring-formed can never hold again.
			_, model, err := ring.System.Model(m.Config)
			if err != nil {
				t.Fatal(err)
			}
			w, err := sim.NewWorld(model.Spec)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[uint64]bool{w.Key(rr.Final): true}
			queue := []*sim.State{rr.Final}
			var buf []sim.Event
			for len(queue) > 0 && len(seen) < 100000 {
				s := queue[0]
				queue = queue[1:]
				for _, st := range host.Status(model.Properties, s) {
					if st.Name == "ring-formed" && st.Holds {
						t.Fatalf("ring-formed holds again in a state the simulator reaches from the run's end:\n%s", s.Dump())
					}
				}
				buf = w.Enabled(s, buf[:0])
				for _, ev := range buf {
					if ev.Kind == sim.Partition || ev.Kind == sim.Heal || ev.Kind == sim.SocketError || ev.Kind == sim.Reset {
						t.Fatalf("a failure is left to the simulator after the run: %v", ev)
					}
					next, err := w.Apply(s, ev, nil)
					if err != nil {
						t.Fatal(err)
					}
					if k := w.Key(next); !seen[k] {
						seen[k] = true
						queue = append(queue, next)
					}
				}
			}
			if len(queue) > 0 {
				t.Fatalf("more than %d states reachable from the run's end", len(seen))
			}
			t.Logf("%d steps replayed; %d states reachable from the end, none formed", len(rr.Path), len(seen))
		})
	}
}

// Drops and duplicates for real on a bundled datagram system, the
// retransmitting transport, from a seeded random schedule set up
// before the nodes start (so that they fall on its first datagrams:
// once every message is acknowledged it falls quiet). Every message is
// delivered once, in order, and the merged log replays whole, every
// fingerprint equal, with exactly the drops and duplicates applied:
// those set up less those no datagram took.
func TestNemesisDatagramsRandom(t *testing.T) {
	cfg := protocol.Config{Nodes: 2}
	faults := host.RandomFaults(5, 6, cfg.Nodes, []string{"drop", "duplicate"})
	want := applied{}
	for _, f := range faults {
		k := sim.Drop
		if f.Kind == "duplicate" {
			k = sim.Duplicate
		}
		want[k] += max(f.Count, 1)
	}
	if want[sim.Drop] == 0 || want[sim.Duplicate] == 0 {
		t.Fatalf("the schedule %v has no drop or no duplicate", faults)
	}
	dir := t.TempDir()
	c := start(t, &transport.System, cfg, host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir, Faults: faults})
	live(t, c)
	c.Stop()
	for _, n := range c.Nodes {
		drops, dups := n.PendingFaults()
		want[sim.Drop] -= drops
		want[sim.Duplicate] -= dups
	}
	m := mergeDir(t, dir)
	rr, err := runlog.Replay(m, &transport.System)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 || !rr.Live {
		t.Fatalf("the run's replay: %v, divergence %v, violation %q, left out %q (%d steps), live %v",
			err, rr.Divergence, rr.Violation, rr.LeftOut, rr.LeftOutSteps, rr.Live)
	}
	got := kinds(rr.Path)
	if got[sim.Drop] != want[sim.Drop] || got[sim.Duplicate] != want[sim.Duplicate] || got[sim.Drop] == 0 {
		t.Errorf("the replayed path has %d drops and %d duplicates; the nemesis applied %d and %d (and some drop)",
			got[sim.Drop], got[sim.Duplicate], want[sim.Drop], want[sim.Duplicate])
	}
	t.Logf("schedule %v: %d steps replayed, %d drops, %d duplicates", faults, len(rr.Path), got[sim.Drop], got[sim.Duplicate])
}

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
			ctx.Send(sim.NodeID(to), Ping{N: g.Errs})
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
	ctx.Send(peer, Ping{N: g.Errs})
	if c < ctx.Nodes() && sim.NodeID(c) != ctx.Self() {
		ctx.Send(sim.NodeID(c), Ping{N: g.Errs})
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
func gotFrom(c *host.Cluster, to, from sim.NodeID) int {
	return c.Nodes[to].State().(*gossiper).Got[from]
}

// everyPair waits until every node got k more pings from every other.
func everyPair(t *testing.T, c *host.Cluster, k int, what string) {
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
	c, err := host.StartCluster(&gossipers, protocol.Config{Nodes: 4}, host.ClusterOptions{Data: dir, LogDir: dir, Log: l, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	everyPair(t, c, 2, "every node hears from every other")
	if err := c.Apply(host.Fault{Kind: "heal"}); err != nil {
		t.Fatal(err) // nothing to heal: nothing logged
	}
	for _, bad := range []host.Fault{{Kind: "partition"}, {Kind: "partition", Group: []sim.NodeID{0, 1, 2, 3}}, {Kind: "partition", Group: []sim.NodeID{4}}} {
		if err := c.Apply(bad); err == nil {
			t.Errorf("%v: applied", bad)
		}
	}
	if err := c.Apply(host.Fault{Kind: "partition", Group: []sim.NodeID{3, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(host.Fault{Kind: "partition", Group: []sim.NodeID{1}}); err == nil {
		t.Error("a second partition while one is in force: applied")
	}
	waitFor(t, "sends across refused", func() bool { return loggedKinds(t, dir)["refuse-error"] >= 8 })
	if ok, err := c.Break(0, 1); err != nil || !ok {
		t.Fatalf("a break inside a side: %v, %v", ok, err)
	}
	if ok, err := c.Break(0, 2); err != nil || ok {
		t.Fatalf("a break across the partition: %v, %v (no connection to break)", ok, err)
	}
	if err := c.Apply(host.Fault{Kind: "restart", Node: 2}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 2 hears from node 3 again", func() bool { return gotFrom(c, 2, 3) > 0 })
	if err := c.Apply(host.Fault{Kind: "heal"}); err != nil {
		t.Fatal(err)
	}
	everyPair(t, c, 2, "every node hears from every other after the heal")
	c.Stop()
	m := mergeDir(t, dir)
	for i, why := range m.Stop {
		if why != "" {
			t.Errorf("step %d left out: %s", i+1, why)
		}
	}
	rr, err := runlog.Replay(m, &gossipers)
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
