// Package ring is a Pastry-style ring overlay: every node has a key on a
// circular 16-bit key space, and the nodes arrange themselves into one ring
// in key order. Each node keeps a leaf set, the nearest keys it knows on
// each side, and a routing table, the other nodes it knows; a node's
// successor is the nearest key clockwise in its leaf set, its predecessor
// the nearest counter-clockwise (itself while it knows nobody).
//
// Node 0 is the bootstrap: it starts as a ring of one. Every other node
// starts joining some time after it starts (its "join" timer, set in Init,
// so also after a reset): it sends Join to the bootstrap and sets the timer
// again, asking until it is in. A joined node passes a Join on to the node
// it knows whose key is closest to the joiner's, as long as that node is
// closer than itself; the node where the join stops answers JoinReply with
// every node it knows. The joiner builds its tables from the answer and
// announces itself to its leaf set with a LeafSet message, which makes them
// add it (the node that answered does not add the joiner before that: a
// joiner whose answer is lost must not be routed to). A joined node's
// "maintain" timer, set again every time it fires, sends its leaf set to
// the members of its leaf set, who add the sender and what it lists and
// answer with their own; so nodes hear of closer nodes and the leaf sets
// converge. A node that is joining again after a reset, passed someone
// else's join by a router that still lists it, answers NotJoined, and the
// router drops it.
//
// Connections are streams. When one breaks (a socket error, or a reset of
// the other end) the node suspects the peer: it takes it out of its tables
// and notes it in Failed, and maintenance probes every suspect with its
// leaf set until it answers. A broken connection may be a partition rather
// than a crash, and the probes are what heal it. Each table entry records
// the node it was learned through (Via), for the reports: the node itself
// once heard from directly. A node may re-learn a suspect from another
// node's leaf set, sent before that node noticed anything: such stale
// entries are harmless as long as the join router skips the joiner's own
// entry.
//
// The keys are fixed by node index and spread unevenly, so that index
// order is not ring order and the gaps differ: see [Keys]. With 4 nodes
// the ring is 0 (0x2a00), 3 (0x5600), 1 (0x8c00), 2 (0xd100), and the gap
// from node 2 back to node 0 wraps past zero. The leaf set holds leafset/2
// nodes on each side (parameter leafset, default 2: one predecessor and one
// successor); in a small ring a node may be on both sides.
//
// Properties: ring-formed (liveness) holds when every node is joined,
// following successors from any node visits every node once and comes
// back, and every node's successor has it as its predecessor. no-self
// (safety): no node lists itself in its tables. known-ids (safety): tables
// only hold nodes that exist.
//
// Injectable bugs:
//
//   - partition-forget: the handler of a broken connection treats it as the
//     peer leaving for good: it deletes the peer and every entry it learned
//     through the peer, and keeps no note to probe the peer again. When
//     every connection between two groups of nodes breaks, each group
//     forgets the other, and maintenance, which only talks to leaf-set
//     members, never finds it again: two rings for ever. One socket error
//     is enough while the ring forms: when it breaks the connection of two
//     nodes that know only each other (the bootstrap and the first node
//     in), both become rings of one, and the others join around the
//     bootstrap. The critical transition is that socket error. A reset
//     does the same to the reset node's peers.
//   - rejoin-self: the join router forgets to skip the joiner's own entry.
//     A node that was reset rejoins with the same key; a router that still
//     lists it, because it had no connection to it when it was reset (so no
//     error told it) or because a leaf set sent before the reset named it
//     again, passes the Join to the joiner itself, which drops it, and so
//     on every retry: the node never rejoins. It needs a reset after the
//     ring has formed, so it is found from a live prefix. The critical
//     transition is the delivery of the leaf set that re-adds the stale
//     entry, or the reset itself when the stale entry was bound to reach
//     the router first.
package ring

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Key is a position on the ring: keys wrap around from 0xffff to 0.
type Key uint16

// Keys are the nodes' keys, by node index (up to 8 nodes).
var Keys = [...]Key{0x2a00, 0x8c00, 0xd100, 0x5600, 0xf300, 0x1400, 0xb000, 0x7100}

// Bootstrap is the node every joiner asks first, and the ring's first node.
const Bootstrap sim.NodeID = 0

// cw is the clockwise distance from a to b.
func cw(a, b Key) Key { return b - a }

// dist is the distance between a and b around the ring, either way.
func dist(a, b Key) Key { return min(b-a, a-b) }

// Timer names.
const (
	JoinTimer     = "join"     // ask the bootstrap to join (again)
	MaintainTimer = "maintain" // exchange leaf sets, probe suspected peers
)

// Messages.
type (
	// Join asks to bring Joiner into the ring; joined nodes pass it on
	// toward the node whose key is closest to the joiner's.
	Join struct{ Joiner sim.NodeID }
	// JoinReply gives the joiner every node the sender knows (the sender
	// itself is implied).
	JoinReply struct{ Known []sim.NodeID }
	// LeafSet carries the sender's leaf set. A receiver that is not asked
	// for a Reply answers with its own.
	LeafSet struct {
		Leaves []sim.NodeID
		Reply  bool
	}
	// NotJoined tells a router that the node it passed a join to is not in
	// the ring (it was reset and is joining again).
	NotJoined struct{}
)

// Entry is a node known to another: a leaf-set member or a routing entry.
type Entry struct {
	ID  sim.NodeID
	Via sim.NodeID // the node it was learned through; ID itself once heard from
}

// Node is one ring node.
type Node struct {
	Joined bool
	// Known holds every other node this one knows, sorted by ID: its leaf
	// set and its routing table.
	Known []Entry
	// Left and Right are the leaf set, derived from Known: the nearest
	// known nodes counter-clockwise and clockwise, nearest first.
	Left, Right []sim.NodeID
	// Failed holds the peers whose connection broke, sorted; maintenance
	// probes them until they answer.
	Failed []sim.NodeID

	self sim.NodeID `livecheck:"-"`
	cfg  *config    `livecheck:"-"`
}

// config is what every node of a world shares: not state.
type config struct {
	half            int // leaf-set members on each side
	partitionForget bool
	rejoinSelf      bool
}

func (n *Node) key() Key { return Keys[n.self] }

// Successor is the nearest node clockwise in the leaf set, or the node
// itself when it knows nobody.
func (n *Node) Successor() sim.NodeID {
	if len(n.Right) == 0 {
		return n.self
	}
	return n.Right[0]
}

// Predecessor is the nearest node counter-clockwise in the leaf set, or the
// node itself when it knows nobody.
func (n *Node) Predecessor() sim.NodeID {
	if len(n.Left) == 0 {
		return n.self
	}
	return n.Left[0]
}

// Leaves is the leaf set, both sides, sorted by ID.
func (n *Node) Leaves() []sim.NodeID {
	out := slices.Concat(n.Left, n.Right)
	slices.Sort(out)
	return slices.Compact(out)
}

// DumpState is the node on one line, for reports. In known, "2<1" is node
// 2, learned through node 1.
func (n *Node) DumpState() string {
	var b strings.Builder
	if !n.Joined {
		b.WriteString("joining")
	} else {
		fmt.Fprintf(&b, "joined pred=%d succ=%d", n.Predecessor(), n.Successor())
	}
	fmt.Fprintf(&b, " leaf=%v known=[", n.Leaves())
	for i, e := range n.Known {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(int(e.ID)))
		if e.Via != e.ID {
			fmt.Fprintf(&b, "<%d", e.Via)
		}
	}
	b.WriteByte(']')
	if len(n.Failed) > 0 {
		fmt.Fprintf(&b, " failed=%v", n.Failed)
	}
	return b.String()
}

func (n *Node) Init(ctx sim.Context) {
	if n.self == Bootstrap {
		n.Joined = true
		ctx.SetTimer(MaintainTimer)
		return
	}
	ctx.SetTimer(JoinTimer)
}

func (n *Node) App(ctx sim.Context, call sim.AppCall) {}

func (n *Node) Timer(ctx sim.Context, name string) {
	switch name {
	case JoinTimer:
		if n.Joined {
			return
		}
		ctx.Send(Bootstrap, Join{Joiner: n.self})
		ctx.SetTimer(JoinTimer)
	case MaintainTimer:
		leaves := n.Leaves()
		for _, p := range leaves {
			ctx.Send(p, LeafSet{Leaves: leaves})
		}
		for _, p := range n.Failed {
			if !slices.Contains(leaves, p) {
				ctx.Send(p, LeafSet{Leaves: leaves})
			}
		}
		ctx.SetTimer(MaintainTimer)
	}
}

func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Join:
		switch {
		case m.Joiner == n.self:
			// Never happens while routers skip the joiner's own entry
			// (see route). Nobody here can answer it: the join timer
			// asks again.
			ctx.Logf("my own join came back to me: drop it")
		case !n.Joined:
			// A router still lists this node from before it was reset:
			// tell it, so that the joiner's next attempt goes elsewhere.
			ctx.Logf("not joined: cannot serve the join of %d", m.Joiner)
			ctx.Send(from, NotJoined{})
		default:
			if next := n.route(m.Joiner); next != n.self {
				ctx.Send(next, m)
				return
			}
			known := make([]sim.NodeID, 0, len(n.Known))
			for _, e := range n.Known {
				if e.ID != m.Joiner {
					known = append(known, e.ID)
				}
			}
			// The joiner is added when it announces itself, not now: a
			// joiner whose answer is lost must not be routed to.
			ctx.Send(m.Joiner, JoinReply{Known: known})
		}
	case JoinReply:
		joining := !n.Joined
		n.heard(from)
		for _, id := range m.Known {
			n.learn(id, from)
		}
		if !joining {
			return // an answer to an earlier attempt: news, nothing more
		}
		n.Joined = true
		ctx.CancelTimer(JoinTimer)
		ctx.SetTimer(MaintainTimer)
		leaves := n.Leaves()
		for _, p := range leaves {
			ctx.Send(p, LeafSet{Leaves: leaves})
		}
	case NotJoined:
		n.suspect(from)
	case LeafSet:
		if !n.Joined {
			return // not in a ring yet: nothing to exchange
		}
		n.heard(from)
		for _, id := range m.Leaves {
			n.learn(id, from)
		}
		if !m.Reply {
			ctx.Send(from, LeafSet{Leaves: n.Leaves(), Reply: true})
		}
	}
}

func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {
	if n.cfg.partitionForget {
		// The slip: a broken connection handled as a departure.
		n.Known = slices.DeleteFunc(n.Known, func(e Entry) bool { return e.ID == peer || e.Via == peer })
		n.rebuild()
		return
	}
	n.suspect(peer)
}

// suspect takes peer out of the tables and notes it for maintenance to
// probe until it answers.
func (n *Node) suspect(peer sim.NodeID) {
	i, ok := n.find(peer)
	if !ok {
		return
	}
	n.Known = slices.Delete(n.Known, i, i+1)
	n.rebuild()
	if j, ok := slices.BinarySearch(n.Failed, peer); !ok {
		n.Failed = slices.Insert(n.Failed, j, peer)
	}
}

// route returns the node to pass joiner's Join on to: the known node whose
// key is closest to the joiner's, if it is closer than this node's own key;
// otherwise this node, which answers the join.
func (n *Node) route(joiner sim.NodeID) sim.NodeID {
	k := Keys[joiner]
	best, bd := n.self, dist(n.key(), k)
	for _, e := range n.Known {
		// The joiner may still be listed from before it was reset; it
		// cannot answer its own join.
		if e.ID == joiner && !n.cfg.rejoinSelf {
			continue
		}
		if d := dist(Keys[e.ID], k); d < bd {
			best, bd = e.ID, d
		}
	}
	return best
}

func (n *Node) find(id sim.NodeID) (int, bool) {
	return slices.BinarySearchFunc(n.Known, id, func(e Entry, id sim.NodeID) int { return int(e.ID - id) })
}

// heard records that p spoke to this node directly: it is alive and known
// first hand.
func (n *Node) heard(p sim.NodeID) {
	if i, ok := slices.BinarySearch(n.Failed, p); ok {
		n.Failed = slices.Delete(n.Failed, i, i+1)
	}
	if i, ok := n.find(p); ok {
		n.Known[i].Via = p
		return
	}
	n.learn(p, p)
}

// learn adds id, heard of through via, unless it is known already.
func (n *Node) learn(id, via sim.NodeID) {
	if id == n.self {
		return
	}
	i, ok := n.find(id)
	if ok {
		return
	}
	n.Known = slices.Insert(n.Known, i, Entry{ID: id, Via: via})
	n.rebuild()
}

// rebuild derives the leaf set from Known: the cfg.half nearest nodes on
// each side.
func (n *Node) rebuild() {
	n.Left, n.Right = n.nearest(false), n.nearest(true)
}

func (n *Node) nearest(clockwise bool) []sim.NodeID {
	if len(n.Known) == 0 {
		return nil
	}
	me := n.key()
	d := func(id sim.NodeID) Key {
		if clockwise {
			return cw(me, Keys[id])
		}
		return cw(Keys[id], me)
	}
	buf := make([]sim.NodeID, 0, len(n.Known))
	for _, e := range n.Known {
		buf = append(buf, e.ID)
	}
	slices.SortFunc(buf, func(a, b sim.NodeID) int { return int(d(a)) - int(d(b)) })
	return buf[:min(len(buf), n.cfg.half)]
}

// RingFormed is the liveness property: one ring of every node, in which
// successor and predecessor pointers agree.
var RingFormed = properties.Eventually("ring-formed",
	"every node is joined, following successors from any node visits every node once and returns to it, and each node's successor has it as its predecessor",
	ringFormed)

// ringFormed is RingFormed's predicate. It allocates nothing up to 16
// nodes: a walk asks it at every step.
func ringFormed(s *sim.State) bool {
	for id := range sim.NodeID(s.N()) {
		if !properties.Node[*Node](s, id).Joined {
			return false
		}
	}
	var seenBuf [16]bool
	seen := seenBuf[:]
	if s.N() > len(seen) {
		seen = make([]bool, s.N())
	}
	cur := sim.NodeID(0)
	for range s.N() {
		if seen[cur] {
			return false
		}
		seen[cur] = true
		next := properties.Node[*Node](s, cur).Successor()
		if properties.Node[*Node](s, next).Predecessor() != cur {
			return false
		}
		cur = next
	}
	return cur == 0
}

// NoSelf is the safety property: no node lists itself.
var NoSelf = properties.Always("no-self",
	"no node has itself in its leaf set, its routing table or its suspects",
	func(s *sim.State) error {
		for id := range sim.NodeID(s.N()) {
			n := properties.Node[*Node](s, id)
			if slices.Contains(n.Left, id) || slices.Contains(n.Right, id) {
				return fmt.Errorf("node %d has itself in its leaf set %v", id, n.Leaves())
			}
			if _, ok := n.find(id); ok {
				return fmt.Errorf("node %d has itself in its routing table", id)
			}
			if slices.Contains(n.Failed, id) {
				return fmt.Errorf("node %d suspects itself", id)
			}
		}
		return nil
	})

// KnownIDs is the safety property: tables only hold nodes that exist.
var KnownIDs = properties.Always("known-ids",
	"leaf sets, routing tables and suspects only hold ids of nodes that exist",
	func(s *sim.State) error {
		for i := range sim.NodeID(s.N()) {
			n := properties.Node[*Node](s, i)
			for _, e := range n.Known {
				if !exists(s, e.ID) || !exists(s, e.Via) {
					return fmt.Errorf("node %d lists node %d (via %d), but the nodes are 0 to %d", i, e.ID, e.Via, s.N()-1)
				}
			}
			for _, ids := range [...][]sim.NodeID{n.Left, n.Right, n.Failed} {
				for _, id := range ids {
					if !exists(s, id) {
						return fmt.Errorf("node %d lists node %d, but the nodes are 0 to %d", i, id, s.N()-1)
					}
				}
			}
		}
		return nil
	})

func exists(s *sim.State, id sim.NodeID) bool { return id >= 0 && int(id) < s.N() }

// System is the ring overlay as livecheck checks it.
var System = protocol.System{
	Name:         "ring",
	Doc:          "a Pastry-style ring overlay: join through a bootstrap, leaf sets repaired by periodic exchange",
	DefaultNodes: 4,
	MinNodes:     2,
	MaxNodes:     len(Keys),
	DefaultDepth: 8,
	PrefixDepth:  3,
	// One socket error: enough for partition-forget, which needs a node
	// cut off while the ring forms.
	DefaultBudget: sim.Budget{Errors: 1},
	Bugs: []protocol.Bug{
		// partition-forget: one socket error between the first two nodes
		// in; rejoin-self: a reset, and a third node to hold the stale
		// entry (see the package doc).
		{Name: "partition-forget", Doc: "a broken connection deletes the peer and everything learned through it, with no probe to find it again: the ring splits for ever",
			Needs: protocol.Needs{Nodes: 2, Budget: sim.Budget{Errors: 1}}},
		{Name: "rejoin-self", Doc: "the join router does not skip the joiner's own stale entry: a reset node's join comes back to it for ever (needs a reset after the ring formed)",
			Needs: protocol.Needs{Nodes: 3, Budget: sim.Budget{Resets: 1}}},
	},
	Params: []protocol.Param{
		{Name: "leafset", Doc: "leaf-set size, an even number: half of it on each side", Default: "2", Int: true, Min: 2},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		size := cfg.IntParam("leafset")
		if size%2 != 0 {
			return nil, fmt.Errorf("--leafset must be an even whole number of at least 2, not %q", cfg.Param("leafset"))
		}
		c := &config{half: size / 2, partitionForget: cfg.HasBug("partition-forget"), rejoinSelf: cfg.HasBug("rejoin-self")}
		return &protocol.Model{
			Spec: sim.Spec{
				New:       func(id sim.NodeID) sim.Node { return &Node{self: id, cfg: c} },
				Transport: sim.Stream,
			},
			Properties: []properties.Property{RingFormed, NoSelf, KnownIDs},
		}, nil
	},
}
