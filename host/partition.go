package host

import (
	"errors"
	"fmt"
	"slices"

	"github.com/livecheck/livecheck/sim"
)

// Partitions of a stream system, as the simulator makes them (see
// sim.World's Partition and Heal): at the Partition step every
// connection across the cut breaks and both ends get Error, in the
// order of the connections (a's Error, then b's, for each connection
// a<b); while the partition is in force, a message sent across is lost
// and its sender gets Error for that peer in the same step as the send,
// once per peer in a step, what that Error handler sends to the peer
// again lost without a word (the simulator's refuse); Heal puts the
// links back, and the next send dials again.
//
// For real: the nemesis holds every node at one barrier, between two
// handlers (Cluster.partitionStream), and at the clock C one past every
// node's cuts every connection across on both ends (cutPeer, as Break
// does); the two ends of each pair that had a connection (either end had
// dialed the other: tcp.connected) run Error for each other at clock C,
// logged as partition-error, and the lowest node of the side without the
// highest node logs a partition entry at C with the side; the other
// nodes' clocks are raised to C. runlog.Merge joins them into one Partition
// step. A send across while the partition is in force is refused in
// Send: nothing leaves, and once the handler has run the node runs
// Error for that peer at the handler's clock, logged as refuse-error
// with the index of the handler of the step that sent (parent), which
// runlog.Merge makes part of the same step, in the simulator's order. The heal
// is a barrier too: node 0 logs it at the clock H one past every node's
// and every node's clock is raised to H, so that everything before it
// is before the heal in the merged log and everything after, after.

// A jointStep is the handlers a node runs in one step of the simulator:
// the one its event makes (or, at a partition, its Error for each peer
// across), then an Error for each peer it sent to across a partition.
type jointStep struct {
	clock uint64 // the step's clock, that of all its handlers
	n     int    // handlers run in the step so far
	cur   int    // the index of the handler under way
	in    bool   // stepDone is running the step's other handlers
	// more are the further peers of a partition's Errors at this node,
	// in the order of the connections (brk: the partition's barrier).
	more []sim.NodeID
	brk  *barrier
	// refused are the peers the step's sends across a partition went
	// to, each once, in the order of the sends, with the index of the
	// handler that sent (parent); told counts those told so far.
	refused []sim.NodeID
	parent  []int
	told    int
}

// stepBegin counts the handler about to run (its clock just counted) in
// its step: a new step, unless stepDone runs it as part of one.
func (n *Node) stepBegin() {
	p := &n.step
	if !p.in {
		p.clock, p.n, p.told = n.clock, 0, 0
		p.refused, p.parent = p.refused[:0], p.parent[:0]
	}
	p.cur = p.n
	p.n++
}

// stepDone runs, after the first handler of a step, the rest of it: the
// partition's further Errors at this node, then an Error for each peer
// a handler of the step sent to across the partition, in the order of
// the sends, each at the step's clock. False: the node must stop.
func (n *Node) stepDone(ev *event) bool {
	p := &n.step
	if p.in || len(p.more) == 0 && len(p.refused) == 0 {
		return true
	}
	p.in = true
	defer func() { p.in, p.more, p.brk = false, nil, nil }()
	for len(p.more) > 0 {
		peer := p.more[0]
		p.more = p.more[1:]
		n.clock = p.clock - 1 // handle counts it
		if !n.handle(event{kind: evError, peer: peer, brk: p.brk}) {
			return false
		}
	}
	for p.told < len(p.refused) {
		i := p.told
		p.told++
		n.clock = p.clock - 1
		if !n.handle(event{kind: evError, peer: p.refused[i], refused: true, parent: p.parent[i]}) {
			return false
		}
	}
	return true
}

// refuse says whether a message to peer to is lost at the partition in
// force (streams): then its sender is told, once per peer in the step,
// after the handler (stepDone).
func (n *Node) refuse(to sim.NodeID, msg sim.Message) bool {
	if !n.cutOff(to) {
		return false
	}
	n.stats.lost.Add(1)
	p := &n.step
	if !slices.Contains(p.refused, to) {
		p.refused = append(p.refused, to)
		p.parent = append(p.parent, p.cur)
		n.logf("nemesis: %s to %d is lost at the partition; the node will be told (Error)", short(msg), to)
	} else {
		n.logf("nemesis: %s to %d is lost at the partition", short(msg), to)
	}
	return true
}

// cutOff says whether a partition in force on streams cuts the node
// off from peer.
func (n *Node) cutOff(peer sim.NodeID) bool {
	if n.model.Spec.Transport != sim.Stream {
		return false
	}
	n.faults.mu.Lock()
	defer n.faults.mu.Unlock()
	return n.faults.blocked[peer]
}

// sideOf returns the side of a partition of nodes that group makes, as
// the simulator names it (sim.PartitionEvent): the side without the
// highest node.
func sideOf(group []sim.NodeID, nodes int) (sim.NodeSet, error) {
	var g sim.NodeSet
	for _, id := range group {
		if id < 0 || int(id) >= nodes {
			return 0, fmt.Errorf("nodes are 0 to %d", nodes-1)
		}
		g |= 1 << uint(id)
	}
	all := sim.NodeSet(1)<<uint(nodes) - 1
	if g&(1<<uint(nodes-1)) != 0 {
		g = all &^ g
	}
	if g == 0 {
		return 0, errors.New("a partition cuts the nodes in two: the group must be some of them, not none or all")
	}
	return g, nil
}

// partitionStream puts a partition in force on a stream system, as the
// simulator's Partition step with side (the side without the highest
// node): see the top of this file.
func (c *Cluster) partitionStream(side sim.NodeSet) error {
	if c.cut != 0 {
		return fmt.Errorf("a partition is in force already (side %v): heal it first", c.cut)
	}
	ids := c.ids()
	brk, clock, err := c.hold(ids, func(id sim.NodeID) sim.NodeID { return id })
	if err != nil {
		return err
	}
	brk.clock = clock + 1
	brk.part = true
	brk.peers = map[sim.NodeID][]sim.NodeID{}
	in := func(id sim.NodeID) bool { return side&(1<<uint(id)) != 0 }
	for _, a := range ids {
		for _, b := range ids[a+1:] {
			if in(a) == in(b) {
				continue
			}
			ta, tb := c.Nodes[a].tr.(*tcp), c.Nodes[b].tr.(*tcp)
			if ta.connected(b) || tb.connected(a) {
				brk.peers[a] = append(brk.peers[a], b)
				brk.peers[b] = append(brk.peers[b], a)
				brk.errs[a], brk.errs[b] = true, true
			}
			ta.cutPeer(b, brk.clock)
			tb.cutPeer(a, brk.clock)
		}
	}
	for _, id := range ids {
		blocked := map[sim.NodeID]bool{}
		for _, j := range ids {
			if in(id) != in(j) {
				blocked[j] = true
			}
		}
		c.Nodes[id].faults.restore(blocked)
	}
	var members []int
	for _, id := range ids {
		if in(id) {
			members = append(members, int(id))
		}
	}
	first := sim.PartitionEvent(side).Node
	brk.marks = map[sim.NodeID]LogEntry{first: {Node: int(first), Kind: "partition", Clock: brk.clock, Side: members}}
	c.cut = side
	brk.ran.Add(len(brk.errs))
	close(brk.release)
	brk.wait()
	return nil
}

// healStream heals the partition in force on a stream system, as the
// simulator's Heal: node 0 logs it at a clock past every node's. No
// partition in force: nothing to heal, nothing logged.
func (c *Cluster) healStream() error {
	if c.cut == 0 {
		return nil
	}
	ids := c.ids()
	brk, clock, err := c.hold(ids, func(id sim.NodeID) sim.NodeID { return id })
	if err != nil {
		return err
	}
	brk.clock = clock + 1
	for _, id := range ids {
		c.Nodes[id].faults.restore(nil)
	}
	brk.marks = map[sim.NodeID]LogEntry{0: {Node: 0, Kind: "heal", Clock: brk.clock}}
	c.cut = 0
	close(brk.release)
	return nil
}

// ids are the cluster's nodes, 0 to N-1.
func (c *Cluster) ids() []sim.NodeID {
	ids := make([]sim.NodeID, len(c.Nodes))
	for i := range ids {
		ids[i] = sim.NodeID(i)
	}
	return ids
}

// mark logs an entry the nemesis gives the node at its barrier (a
// partition's, a heal's).
func (n *Node) mark(e LogEntry) {
	if n.rlog == nil {
		return
	}
	e.Boot = n.boot
	if _, err := n.rlog.write(LogLine{LogEntry: e}); err != nil {
		n.logf("its run log cannot be written: %v", err)
	}
}
