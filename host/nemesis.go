package host

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/livecheck/livecheck/sim"
)

// The nemesis: the simulator's failures applied to a real cluster, so
// that a test can run a system through them (Jepsen's nemesis, for a
// livecheck system) and then check what happened. Every failure applied
// is logged in the run log of the node it happened at, so that the
// merged log replays in the simulator, failures included:
//
//   - drop: the next datagrams a node sends to a peer are not sent; the
//     sender logs a drop entry after the step that sent each, merged as
//     the simulator's Drop of that message.
//   - duplicate: the next datagram a node sends to a peer is sent twice;
//     merged as the simulator's Duplicate.
//   - partition: on datagrams, the nodes of a group and the others drop
//     every datagram they send across, each logged as a drop, until
//     heal; merged as those drops, not as the simulator's Partition
//     event: a datagram already on its way across when the partition
//     starts still arrives. On streams, the simulator's Partition and
//     Heal (partition.go): every connection across is cut at one
//     barrier, both ends of each run Error in one step, a send across
//     is refused and its sender told in the same step as the send, and
//     the heal is logged past every node's clock.
//   - restart: the node's process is killed and started again from its
//     state file, the simulator's reset (Cluster.Restart), merged as a
//     Reset; on streams with its peers' Error in the same step.
//   - break (streams): a connection breaks, both ends' Error in one
//     step, the simulator's SocketError (Cluster.Break).
//
// On streams every failure is applied by a barrier that holds the nodes
// between two handlers: in one process (Cluster), or across processes
// over control connections (`cluster --nemesis`: BreakRemote,
// PartitionRemote, HealRemote in remote.go; a restart kills the process,
// which holds its peers when it starts again, back.go).

type faultKind uint8

const (
	faultNone faultKind = iota
	faultDrop
	faultDup
)

// faults is what the nemesis has set up at a node: what happens to the
// next datagrams it sends to each peer.
type faults struct {
	mu      sync.Mutex
	drop    map[sim.NodeID]int
	dup     map[sim.NodeID]int
	blocked map[sim.NodeID]bool
}

// take says what happens to the next datagram to peer to, and counts it.
func (f *faults) take(to sim.NodeID) faultKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.blocked[to]:
		return faultDrop
	case f.drop[to] > 0:
		f.drop[to]--
		return faultDrop
	case f.dup[to] > 0:
		f.dup[to]--
		return faultDup
	}
	return faultNone
}

func (f *faults) add(m *map[sim.NodeID]int, to sim.NodeID, k int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *m == nil {
		*m = map[sim.NodeID]int{}
	}
	(*m)[to] += k
}

// A Fault is one failure the nemesis applies.
type Fault struct {
	// Kind is drop, duplicate, partition, heal or restart; or break,
	// on streams (Cluster.Break). A nemesis's script may also say when
	// the workload goes on: call, the next driver call of a node that
	// holds them (Options.HoldCalls), so that an operation comes while
	// a failure is in force.
	Kind string
	// Node is the sender (drop, duplicate), the node restarted, the
	// node that makes its next call, or an end of the connection broken.
	Node sim.NodeID
	// Peer is the receiver (drop, duplicate), or the other end.
	Peer sim.NodeID
	// Count is how many of the next datagrams (drop, duplicate; 0: 1).
	Count int
	// Group is a partition's side.
	Group []sim.NodeID
}

func (f Fault) String() string {
	switch f.Kind {
	case "drop", "duplicate":
		return fmt.Sprintf("%s %d->%d x%d", f.Kind, f.Node, f.Peer, max(f.Count, 1))
	case "partition":
		return fmt.Sprintf("partition %v", f.Group)
	case "restart", "call":
		return fmt.Sprintf("%s %d", f.Kind, f.Node)
	case "break":
		return fmt.Sprintf("break %d-%d", f.Node, f.Peer)
	}
	return f.Kind
}

// A barrier holds the two ends of a connection the nemesis breaks, each
// between two handlers, while it breaks it: then each runs its Error
// handler at the same Lamport clock, and the merged log has the two as
// the simulator's one SocketError step.
type barrier struct {
	arrived chan uint64 // each node's clock as it arrives
	release chan struct{}
	clock   uint64 // the clock of the Error steps; 0: called off
	// errs are the nodes that run Error then (set before release); the
	// others go on, their clocks raised to clock, so that all they do
	// next comes after the break in the merged log.
	errs map[sim.NodeID]bool
	ran  sync.WaitGroup // the Error handlers, done
	// down is the node the nemesis restarts (restartStream): its peers'
	// Error steps are logged as reset-error, for the merge to join them
	// with its Init into one Reset; -1 for a break.
	down sim.NodeID
	// part: the Error steps are a partition's (partition.go), logged as
	// partition-error; peers are, by node, the peers it runs Error for,
	// in the order of the connections.
	part  bool
	peers map[sim.NodeID][]sim.NodeID
	// marks are, by node, an entry it logs once released: a partition's
	// or a heal's (partition.go).
	marks map[sim.NodeID]LogEntry
	// epoch is the last snapshot any node held had recorded when it
	// came: each held node that has not records it once released, before
	// its part of the failure (and the node restarted, before it stops),
	// so that the failure's one step of the simulator falls after every
	// one's mark, never across a snapshot's cut (snapshot.go).
	epoch uint64
}

// wait waits until the Error handlers have run, for a while.
func (b *barrier) wait() {
	done := make(chan struct{})
	go func() { b.ran.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// atBarrier holds the node at ev's barrier until the nemesis has broken
// its connection, and returns the Error event to handle then (another
// kind when the break was called off).
func (n *Node) atBarrier(ev event) event {
	ev.brk.arrived <- n.clock
	select {
	case <-ev.brk.release:
	case <-n.stop:
		if ev.brk.down == n.id && ev.brk.epoch > n.epoch {
			// Restarted (restartStream): its part of the cut is all
			// it did before.
			n.record(ev.brk.epoch)
		}
		return event{}
	}
	if ev.brk.clock == 0 {
		return event{}
	}
	if ev.brk.epoch > n.epoch {
		n.record(ev.brk.epoch) // false: n.err says so, and its next write stops it
	}
	if e, ok := ev.brk.marks[n.id]; ok {
		n.mark(e)
	}
	if !ev.brk.errs[n.id] {
		n.clock = max(n.clock, ev.brk.clock)
		n.clockA.Store(n.clock)
		return event{}
	}
	n.clock = ev.brk.clock - 1 // handle counts the step
	if ps := ev.brk.peers[n.id]; len(ps) > 0 {
		// A partition's: one Error for each peer across, in one step
		// (stepDone runs the others).
		n.step.more, n.step.brk = ps[1:], ev.brk
		return event{kind: evError, peer: ps[0], brk: ev.brk}
	}
	return event{kind: evError, peer: ev.peer, brk: ev.brk}
}

// hold holds nodes ids at a new barrier, with peer as the peer of their
// Error, and returns it with the highest of their clocks once all have
// come; on an error none is held.
func (c *Cluster) hold(ids []sim.NodeID, peer func(sim.NodeID) sim.NodeID) (*barrier, uint64, error) {
	brk := &barrier{arrived: make(chan uint64, len(ids)), release: make(chan struct{}), errs: map[sim.NodeID]bool{}, down: -1}
	for _, id := range ids {
		select {
		case <-c.Nodes[id].Done():
			// Stopped: post might still queue the event (a select
			// picks at random among the cases ready).
			close(brk.release)
			return nil, 0, fmt.Errorf("node %d has stopped", id)
		default:
		}
		if !c.Nodes[id].post(event{kind: evBreak, peer: peer(id), brk: brk}) {
			close(brk.release)
			return nil, 0, fmt.Errorf("node %d has stopped", id)
		}
	}
	var clock uint64
	timeout := time.After(10 * time.Second)
	for range ids {
		select {
		case k := <-brk.arrived:
			clock = max(clock, k)
		case <-timeout:
			close(brk.release)
			return nil, 0, fmt.Errorf("nodes %v did not all come to the nemesis's barrier within 10s (a handler stuck, or a node stopped?)", ids)
		}
	}
	for _, id := range ids {
		brk.epoch = max(brk.epoch, c.Nodes[id].Epoch()) // held: it records none meanwhile
	}
	return brk, clock, nil
}

// Break breaks the connection between nodes a and b of a stream system,
// and returns once both have run Error,
// as the simulator's socket error does: what was in flight between them
// either way is lost, and each gets Error for the other, in one step of
// the merged log (both ends held between handlers meanwhile, their
// Error steps logged as socket-error entries at one clock). False, and
// nothing broken, when the two have no connection (neither has sent to
// the other since the last break).
func (c *Cluster) Break(a, b sim.NodeID) (bool, error) {
	if c.Model.Spec.Transport != sim.Stream {
		return false, errors.New("a datagram system has no connections to break")
	}
	na, nb := c.Nodes[a], c.Nodes[b]
	brk, clock, err := c.hold([]sim.NodeID{a, b}, func(id sim.NodeID) sim.NodeID { return a + b - id })
	if err != nil {
		return false, err
	}
	ta, tb := na.tr.(*tcp), nb.tr.(*tcp)
	if !ta.connected(b) && !tb.connected(a) {
		close(brk.release)
		return false, nil
	}
	brk.clock = clock + 1
	ta.cutPeer(b, brk.clock)
	tb.cutPeer(a, brk.clock)
	brk.errs[a], brk.errs[b] = true, true
	brk.ran.Add(2)
	close(brk.release)
	brk.wait()
	return true, nil
}

// restartStream restarts node r of a stream system as the simulator's
// reset does, in one step of the merged log: every node is held between
// two handlers; r's peers cut every connection of their pair with r (what
// was queued or in flight either way is lost, and the Error a cut
// connection would tell is dropped, as in Break); r stops and starts
// again from its state file, its Init at the clock C one past every
// node's; then each peer that had a connection with r (either way) runs
// Error for it at clock C, logged as reset-error, and the others go on
// with their clocks raised to C. The merge joins the Error steps and the
// Init into one Reset of r.
func (c *Cluster) restartStream(r sim.NodeID) error {
	ids := make([]sim.NodeID, len(c.Nodes))
	for i := range ids {
		ids[i] = sim.NodeID(i)
	}
	brk, clock, err := c.hold(ids, func(sim.NodeID) sim.NodeID { return r })
	if err != nil {
		return err
	}
	brk.down = r
	brk.clock = clock + 1
	old := c.Nodes[r]
	tr := old.tr.(*tcp)
	for _, id := range ids {
		if id == r {
			continue
		}
		tp := c.Nodes[id].tr.(*tcp)
		if tp.connected(r) || tr.connected(id) {
			brk.errs[id] = true
		}
		tp.cutPeer(r, brk.clock)
	}
	// r stops where it is held, between two handlers: it runs none
	// after (Node.loop).
	old.Stop()
	o := c.opts[r]
	o.resetClock = brk.clock
	o.blocked = old.faults.snapshot() // a partition outlives the process
	n, err := Start(o)
	if err != nil {
		brk.clock = 0 // called off: the others go on
		close(brk.release)
		return err
	}
	c.Nodes[r] = n
	brk.ran.Add(len(brk.errs))
	close(brk.release)
	brk.wait()
	return nil
}

// FaultKinds are the kinds of Fault on datagrams, in the order
// RandomFaults draws; StreamFaultKinds those on streams.
var FaultKinds = []string{"drop", "duplicate", "partition", "restart"}

// StreamFaultKinds are the kinds of Fault on streams, in the order
// RandomFaults draws.
var StreamFaultKinds = []string{"break", "partition", "restart"}

// Apply applies f to the cluster now. A restart needs the cluster's
// state files (ClusterOptions.Data) for the node to come back with its
// durable fields.
func (c *Cluster) Apply(f Fault) error {
	n := len(c.Nodes)
	in := func(id sim.NodeID) bool { return id >= 0 && int(id) < n }
	stream := c.Model.Spec.Transport == sim.Stream
	switch {
	case f.Kind == "break" && !stream:
		return fmt.Errorf("%v: a datagram system has no connections to break", f)
	case f.Kind == "break":
		if !in(f.Node) || !in(f.Peer) || f.Node == f.Peer {
			return fmt.Errorf("%v: nodes are 0 to %d, and two of them", f, n-1)
		}
		_, err := c.Break(f.Node, f.Peer)
		return err
	case stream && f.Kind == "heal":
		return c.healStream()
	case stream && f.Kind == "partition":
		side, err := sideOf(f.Group, n)
		if err != nil {
			return fmt.Errorf("%v: %v", f, err)
		}
		return c.partitionStream(side)
	case stream && f.Kind != "restart" && f.Kind != "call":
		return fmt.Errorf("%v: on streams the nemesis breaks connections (break), partitions them (partition, heal) and restarts nodes (restart); drops and duplicates are of datagrams", f)
	}
	switch f.Kind {
	case "drop", "duplicate":
		if !in(f.Node) || !in(f.Peer) || f.Node == f.Peer {
			return fmt.Errorf("%v: nodes are 0 to %d, and two of them", f, n-1)
		}
		fs := &c.Nodes[f.Node].faults
		if f.Kind == "drop" {
			fs.add(&fs.drop, f.Peer, max(f.Count, 1))
		} else {
			fs.add(&fs.dup, f.Peer, max(f.Count, 1))
		}
	case "partition", "heal":
		side := map[sim.NodeID]bool{}
		for _, id := range f.Group {
			if !in(id) {
				return fmt.Errorf("%v: nodes are 0 to %d", f, n-1)
			}
			side[id] = true
		}
		for i, node := range c.Nodes {
			fs := &node.faults
			fs.mu.Lock()
			fs.blocked = map[sim.NodeID]bool{}
			for j := range c.Nodes {
				if f.Kind == "partition" && side[sim.NodeID(i)] != side[sim.NodeID(j)] {
					fs.blocked[sim.NodeID(j)] = true
				}
			}
			fs.mu.Unlock()
		}
	case "call":
		if !in(f.Node) {
			return fmt.Errorf("%v: nodes are 0 to %d", f, n-1)
		}
		return c.Nodes[f.Node].NextCall()
	case "restart":
		if !in(f.Node) {
			return fmt.Errorf("%v: nodes are 0 to %d", f, n-1)
		}
		// A partition outlives the process, from its Init on.
		c.opts[f.Node].blocked = c.Nodes[f.Node].faults.snapshot()
		err := c.Restart(f.Node)
		c.opts[f.Node].blocked = nil
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("no fault %q (valid: %s, heal, call)", f.Kind, strings.Join(FaultKinds, ", "))
	}
	return nil
}

// fault applies what a control frame asks of the nemesis.
func (n *Node) fault(c Control) {
	ok := func(id int) bool { return id >= 0 && id < len(n.opts.Peers) && sim.NodeID(id) != n.id }
	fs := &n.faults
	switch {
	case n.model.Spec.Transport == sim.Stream:
		n.logf("the nemesis's faults apply to datagram systems only")
	case c.Fault == "drop" && ok(c.Peer):
		fs.add(&fs.drop, sim.NodeID(c.Peer), max(c.Count, 1))
	case c.Fault == "duplicate" && ok(c.Peer):
		fs.add(&fs.dup, sim.NodeID(c.Peer), max(c.Count, 1))
	case c.Fault == "partition":
		b := map[sim.NodeID]bool{}
		for _, id := range c.Block {
			if ok(id) {
				b[sim.NodeID(id)] = true
			}
		}
		fs.restore(b)
	default:
		n.logf("the nemesis asks for no fault it knows: %s", short(c))
	}
}

// SendFault asks the node at addr to apply f, one of its own faults:
// drop, duplicate (f.Node must be the node), or its side of a partition
// (blocking the peers not on its side of f.Group; heal unblocks them).
// A restart is not the node's to apply: the cluster kills its process.
func SendFault(addr string, key []byte, node sim.NodeID, nodes int, f Fault) error {
	c := Control{Op: "fault", Fault: f.Kind, Peer: int(f.Peer), Count: f.Count}
	switch f.Kind {
	case "drop", "duplicate":
	case "partition", "heal":
		c.Fault = "partition"
		side := map[sim.NodeID]bool{}
		for _, id := range f.Group {
			side[id] = true
		}
		for id := range nodes {
			if f.Kind == "partition" && side[node] != side[sim.NodeID(id)] {
				c.Block = append(c.Block, id)
			}
		}
	default:
		return fmt.Errorf("%v is not a fault a node applies", f)
	}
	return sendControl(addr, false, key, c)
}

// ParseFaults reads a schedule of faults: "drop:0:1:2" (node 0 drops
// its next 2 datagrams to node 1), "duplicate:0:1", "partition:0+2"
// (nodes 0 and 2 from the others), "heal", "restart:1", separated by
// commas.
func ParseFaults(s string, nodes int) ([]Fault, error) {
	var out []Fault
	num := func(x string) (int, error) {
		var v int
		if _, err := fmt.Sscan(x, &v); err != nil || v < 0 || v >= nodes {
			return 0, fmt.Errorf("%q is no node: nodes are 0 to %d", x, nodes-1)
		}
		return v, nil
	}
	for _, item := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		f := Fault{Kind: parts[0]}
		bad := fmt.Errorf("fault %q: want drop:FROM:TO[:COUNT], duplicate:FROM:TO[:COUNT], partition:A+B+..., heal, restart:NODE, break:A:B or call:NODE", item)
		// pair reads the two distinct nodes of parts[1] and parts[2].
		pair := func() (sim.NodeID, sim.NodeID, error) {
			a, err := num(parts[1])
			if err != nil {
				return 0, 0, fmt.Errorf("fault %q: %v", item, err)
			}
			b, err := num(parts[2])
			if err != nil || a == b {
				return 0, 0, bad
			}
			return sim.NodeID(a), sim.NodeID(b), nil
		}
		switch {
		case (f.Kind == "drop" || f.Kind == "duplicate") && (len(parts) == 3 || len(parts) == 4):
			a, b, err := pair()
			if err != nil {
				return nil, err
			}
			f.Node, f.Peer, f.Count = a, b, 1
			if len(parts) == 4 {
				if _, err := fmt.Sscan(parts[3], &f.Count); err != nil || f.Count < 1 {
					return nil, fmt.Errorf("fault %q: the count must be at least 1", item)
				}
			}
		case f.Kind == "partition" && len(parts) == 2:
			for _, x := range strings.Split(parts[1], "+") {
				a, err := num(x)
				if err != nil {
					return nil, fmt.Errorf("fault %q: %v", item, err)
				}
				f.Group = append(f.Group, sim.NodeID(a))
			}
		case f.Kind == "break" && len(parts) == 3:
			a, b, err := pair()
			if err != nil {
				return nil, err
			}
			f.Node, f.Peer = a, b
		case f.Kind == "heal" && len(parts) == 1:
		case (f.Kind == "restart" || f.Kind == "call") && len(parts) == 2:
			a, err := num(parts[1])
			if err != nil {
				return nil, fmt.Errorf("fault %q: %v", item, err)
			}
			f.Node = sim.NodeID(a)
		default:
			return nil, bad
		}
		out = append(out, f)
	}
	return out, nil
}

func (f *faults) snapshot() map[sim.NodeID]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.blocked
}

func (f *faults) restore(b map[sim.NodeID]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked = b
}

// RandomFaults draws count faults for a cluster of nodes from seed,
// among kinds (nil: FaultKinds); a partition is followed by its heal.
func RandomFaults(seed uint64, count, nodes int, kinds []string) []Fault {
	if kinds == nil {
		kinds = FaultKinds
	}
	r := rand.New(rand.NewPCG(seed, 0x6e656d65))
	var out []Fault
	for len(out) < count {
		f := Fault{Kind: kinds[r.IntN(len(kinds))], Node: sim.NodeID(r.IntN(nodes))}
		switch f.Kind {
		case "drop", "duplicate", "break":
			f.Peer = sim.NodeID((int(f.Node) + 1 + r.IntN(nodes-1)) % nodes)
			f.Count = 1 + r.IntN(3)
		case "partition":
			for id := range nodes {
				if r.IntN(2) == 0 {
					f.Group = append(f.Group, sim.NodeID(id))
				}
			}
			if len(f.Group) == 0 || len(f.Group) == nodes {
				f.Group = []sim.NodeID{f.Node}
			}
			out = append(out, f)
			f = Fault{Kind: "heal"}
		}
		out = append(out, f)
	}
	return out
}

// RunFaults applies faults one at a time, every interval apart, then
// heals any partition left, and logs each to log (nil: nowhere). It
// stops early, with the error, at a fault that cannot be applied.
func (c *Cluster) RunFaults(faults []Fault, every time.Duration, log io.Writer) error {
	defer c.Apply(Fault{Kind: "heal"})
	start := time.Now()
	for i, f := range faults {
		if i > 0 {
			time.Sleep(every)
		}
		if log != nil {
			fmt.Fprintf(log, "%8.3fs  nemesis: %v\n", time.Since(start).Seconds(), f)
		}
		if err := c.Apply(f); err != nil {
			return fmt.Errorf("fault %d (%v): %w", i+1, f, err)
		}
	}
	return nil
}

// PendingFaults are the drops and duplicates the nemesis has set up at
// the node (Apply, ClusterOptions.Faults) that no datagram it sent has
// taken yet: those set up less these are the ones applied, each logged.
func (n *Node) PendingFaults() (drops, dups int) {
	f := &n.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.drop {
		drops += k
	}
	for _, k := range f.dup {
		dups += k
	}
	return drops, dups
}
