package etcdraft_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// A cluster drives the nodes of one configuration by hand, without the
// checker (which cannot copy a RawNode yet): the test says which node
// ticks and which message arrives, and a message waits in a queue until
// then. Resets are the world's: New builds the node again and its durable
// fields are carried over before Init.
type cluster struct {
	t      *testing.T
	model  *protocol.Model
	nodes  []*etcdraft.Node
	queue  []envelope
	timers []map[string]bool
	log    []string
}

type envelope struct {
	from, to sim.NodeID
	msg      etcdraft.Msg
}

// newCluster starts the nodes of cfg (3 by default), with raft's advice
// of 10 election ticks unless cfg says otherwise: the scripts tick ten
// times to make a node campaign once.
func newCluster(t *testing.T, cfg protocol.Config) *cluster {
	t.Helper()
	if cfg.Param("election-ticks") == "" {
		cfg.Params = maps.Clone(cfg.Params)
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["election-ticks"] = "10"
	}
	cfg, m, err := etcdraft.System.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, model: m}
	for i := range cfg.Nodes {
		c.nodes = append(c.nodes, m.Spec.New(sim.NodeID(i)).(*etcdraft.Node))
		c.timers = append(c.timers, map[string]bool{})
	}
	for i, n := range c.nodes {
		x := c.ctx(sim.NodeID(i))
		sim.Drawing(x, func() { n.Init(x) })
	}
	return c
}

// ctx is node id's sim.Context in the cluster.
type ctx struct {
	c    *cluster
	self sim.NodeID
}

func (c *cluster) ctx(id sim.NodeID) *ctx { return &ctx{c, id} }

func (x *ctx) Self() sim.NodeID { return x.self }
func (x *ctx) Nodes() int       { return len(x.c.nodes) }
func (x *ctx) Send(to sim.NodeID, msg sim.Message) {
	x.c.queue = append(x.c.queue, envelope{x.self, to, msg.(etcdraft.Msg)})
}
func (x *ctx) Deliver(sim.NodeID, sim.Message) { panic("a node of one layer delivers nothing up") }
func (x *ctx) SetTimer(name string)            { x.c.timers[x.self][name] = true }
func (x *ctx) SetPeriodic(name string)         { x.c.timers[x.self][name] = true }
func (x *ctx) CancelTimer(name string)         { delete(x.c.timers[x.self], name) }

// Choose answers what raft draws from crypto/rand (its election
// timeout, through sim.Drawing) with 0: every timeout is then
// ElectionTick, and a test's schedule alone decides who campaigns first.
func (x *ctx) Choose(int) int { return 0 }
func (x *ctx) Logf(format string, args ...any) {
	x.c.log = append(x.c.log, fmt.Sprintf("%d: ", x.self)+fmt.Sprintf(format, args...))
}

// tick fires node id's tick timer k times, which must be set each time.
func (c *cluster) tick(id sim.NodeID, k int) {
	c.t.Helper()
	for range k {
		if !c.timers[id]["tick"] {
			c.t.Fatalf("node %d has no tick timer set", id)
		}
		delete(c.timers[id], "tick")
		x := c.ctx(id)
		sim.Drawing(x, func() { c.nodes[id].Timer(x, "tick") })
	}
}

// deliver delivers the oldest message from node from to node to, and
// returns it.
func (c *cluster) deliver(from, to sim.NodeID) etcdraft.Msg {
	c.t.Helper()
	for i, e := range c.queue {
		if e.from == from && e.to == to {
			c.queue = append(c.queue[:i:i], c.queue[i+1:]...)
			x := c.ctx(to)
			sim.Drawing(x, func() { c.nodes[to].Receive(x, from, e.msg) })
			return e.msg
		}
	}
	c.t.Fatalf("no message from %d to %d in the queue: %s", from, to, c.queued())
	return etcdraft.Msg{}
}

// deliverAmong delivers, oldest first, the messages between the nodes
// of among until there are none; every other message stays queued.
func (c *cluster) deliverAmong(among ...sim.NodeID) {
	c.t.Helper()
	in := func(id sim.NodeID) bool { return slices.Contains(among, id) }
	for steps := 0; ; steps++ {
		if steps > 10000 {
			c.t.Fatalf("the nodes %v still talk after 10000 messages", among)
		}
		i := -1
		for j, e := range c.queue {
			if in(e.from) && in(e.to) {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
		e := c.queue[i]
		c.queue = append(c.queue[:i:i], c.queue[i+1:]...)
		x := c.ctx(e.to)
		sim.Drawing(x, func() { c.nodes[e.to].Receive(x, e.from, e.msg) })
	}
}

// deliverAll delivers every message, oldest first, until none is left.
func (c *cluster) deliverAll() {
	c.t.Helper()
	all := make([]sim.NodeID, len(c.nodes))
	for i := range all {
		all[i] = sim.NodeID(i)
	}
	c.deliverAmong(all...)
}

// settle runs rounds in which every node ticks once, in id order, each
// tick followed by the delivery of every message: a cluster without
// failures, in which a leader's heartbeats arrive before a follower's
// election timeout.
func (c *cluster) settle(rounds int) {
	c.t.Helper()
	for range rounds {
		for i := range c.nodes {
			c.tick(sim.NodeID(i), 1)
			c.deliverAll()
		}
	}
}

// reset crashes and restarts node id as the world does: a node built by
// New, with the durable fields of the old one, then Init. Its timers go;
// the messages queued to it stay (datagrams).
func (c *cluster) reset(id sim.NodeID) {
	c.t.Helper()
	old := c.nodes[id]
	fresh := c.model.Spec.New(id).(*etcdraft.Node)
	kept := map[string]bool{}
	from := map[string]sim.DurableField{}
	for _, f := range sim.DurableFields(old) {
		from[f.Name] = f
	}
	for _, f := range sim.DurableFields(fresh) {
		f.Value.Set(from[f.Name].Value)
		kept[f.Name] = true
	}
	if want := "Acked Led Storage"; strings.Join(slices.Sorted(maps.Keys(kept)), " ") != want {
		c.t.Fatalf("durable fields %v, want %s", slices.Sorted(maps.Keys(kept)), want)
	}
	c.nodes[id] = fresh
	c.timers[id] = map[string]bool{}
	x := c.ctx(id)
	sim.Drawing(x, func() { fresh.Init(x) })
}

// propose makes the driver's call Propose{id} at node to.
func (c *cluster) propose(to sim.NodeID, id int) {
	x := c.ctx(to)
	sim.Drawing(x, func() { c.nodes[to].App(x, etcdraft.Propose{ID: id}) })
}

// state is the cluster's nodes as a sim.State, for the properties.
func (c *cluster) state() *sim.State {
	nodes := make([]sim.Node, len(c.nodes))
	for i, n := range c.nodes {
		nodes[i] = n
	}
	return sim.NewState(nodes)
}

// violations is what each safety property says of the cluster now, by
// name; the properties that hold are left out.
func (c *cluster) violations() map[string]string {
	out := map[string]string{}
	s := c.state()
	for _, p := range c.model.Properties {
		if p.Kind == properties.Safety {
			if err := p.CheckSafety(s); err != nil {
				out[p.Name] = err.Error()
			}
		}
	}
	return out
}

// live says whether liveness property name holds now.
func (c *cluster) live(name string) bool {
	c.t.Helper()
	for _, p := range c.model.Properties {
		if p.Name == name {
			return p.IsLive(c.state())
		}
	}
	c.t.Fatalf("no property %s", name)
	return false
}

// dump is every node's state, one line each.
func (c *cluster) dump() string {
	var b strings.Builder
	for i, n := range c.nodes {
		fmt.Fprintf(&b, "\n\tnode %d: %s", i, n.DumpState())
	}
	return b.String()
}

func (c *cluster) queued() string {
	var out []string
	for _, e := range c.queue {
		out = append(out, fmt.Sprintf("%d->%d %s", e.from, e.to, e.msg.DumpState()))
	}
	return "[" + strings.Join(out, "; ") + "]"
}
