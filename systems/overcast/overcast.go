// Package overcast is the tree of the MaceMC paper's BrokenTree and
// Overcast (section 7): a multicast tree rooted at node 0, reorganised
// periodically, where a node moves only while it holds a lock at its
// parent.
//
// Node 0 is the root from the start. Every other node joins by sending
// Join to the root; a node with room for another child (fewer than degree)
// takes the joiner (JoinOK) and a full one passes the Join on to one of its
// children picked with ctx.Choose. A joiner whose "join" timer fires before
// it is taken asks the root again. A Join from a node that is already a
// child of the node asked is answered by taking it again: the joiner may
// have asked twice, or be moving (see below).
//
// Every non-root node has a periodic "reorg" timer, the stand-in for
// Overcast's bandwidth measurements. When it fires on a member that is
// neither locked nor moving, the node asks its parent for the parent's
// lock (Probe). The parent grants it (Grant, with the node's siblings and
// grandparent) when nobody else holds it and the parent is not moving
// itself; otherwise it answers Busy. A node holding its parent's lock picks
// (ctx.Choose) a sibling, its grandparent, or to stay. To move it sends
// Join to the new parent, which takes it or passes it on as for any join;
// a Join to a sibling names the parent they share (Under), and a node
// that has left that parent since refuses it (JoinNo). Taken, the node
// switches parent and tells the old one (Unlock with Left), which drops it
// and frees the lock; refused, or when its "move" timer fires first, it
// stays and frees the lock (Unlock). The lock makes the moves under one
// parent one at a time, and a locked node does not move.
//
// Two more rules keep a Join out of the joiner's own subtree, where taking
// it would close a loop; the lock alone does not, once a tree has more
// than one level of movers or a node rejoins with its subtree:
//
//   - A Join goes down the tree only along parent pointers as they are: a
//     node passing a Join on names itself as Under, and a child that has
//     left it since refuses the Join. A parent learns that a child left
//     only from the child's Unlock, so its list can name a child that is
//     already under a node of the joiner's subtree; without the rule, 4
//     nodes moving under each other one level apart passed a Join to such
//     a child.
//   - A node whose lock is held refuses a Join sent to it directly (a
//     newcomer's or a rejoiner's at the root, a mover's at its sibling or
//     grandparent). A child of it is between two parents, and is still
//     listed here: a Join passed down to it would follow it to its new
//     place, which may be the joiner's own subtree. With a socket error at
//     4 nodes, a node took a moving sibling, lost its parent, and its
//     rejoin came down from the root to that sibling, which took it (the
//     loop 1 -> 2 -> 1, testdata/loop-4nodes-socket-error.json); at 5
//     nodes two movers one level apart took each other's Join. A Join
//     passed down by its parent is let through: a mover's Join to a full
//     grandparent comes down to the mover's own parent, locked by the
//     mover, which takes it back (BT2 is the slip of passing it on).
//
// These rules are checked, not proved: the correct version reports
// nothing on up to 5 nodes (the most the system offers), with a socket
// error or a reset, at degree 1 and 2, at the depths and seeds its tests
// give.
//
// Each spell of joining or moving has a number (Epoch) that Joins and their
// answers carry: an acceptance from an earlier spell is refused with
// Remove, since its sender may by now be in the node's own subtree. The
// number is kept across a reset (on disk), since a Join relayed by
// another node outlives its joiner's restart.
//
// Connections are streams: when one breaks, both ends are told. A node
// drops the peer from its children and frees its lock if the peer held
// it; a node that loses its parent joins again from the root, keeping its
// subtree. A node refuses a Join from its own parent: the parent lost its
// place and rejoins, and the Join reached this node because it is moving
// out of the parent's subtree and was taken ahead of its answer.
//
// Properties: no-loops (safety): following parents from any node never
// cycles. one-tree (liveness): every node is a member, parent and child
// pointers agree, and every node reaches the root. locks-released
// (liveness): every node's lock is free. The canary moved says some node
// moved at all.
//
// Injectable bugs, each a one-line slip:
//
//   - BT1: the parent grants its lock without looking whether another
//     child holds it, which is BrokenTree without Overcast's lock: two
//     siblings move at once, each under the other, and form a loop
//     (safety, no-loops; 3 nodes).
//   - BT2: a full node passes on every Join, also one from a node that is
//     already its child: the join goes down to one of its children, which
//     can be the joiner itself, and the joiner takes itself as its own
//     child or puts itself under its own subtree (safety, no-loops). It
//     takes a full parent of the mover, so it shows with degree 1 (a
//     chain) at 3 nodes.
//   - probe-lock: the handler of a broken connection drops the peer from
//     the children but forgets the lock the peer held. A node whose lock
//     holder's connection breaks keeps the lock taken for ever, and its
//     children never reorganise again (liveness, locks-released; 3 nodes,
//     a socket error, as MaceMC found it).
package overcast

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Status is where a node is in joining the tree.
type Status uint8

const (
	Joining Status = iota // looking for a parent
	Joined                // in the tree: the root, or under a parent
)

func (s Status) String() string {
	if s == Joined {
		return "joined"
	}
	return "joining"
}

// Root is the node the tree hangs from.
const Root sim.NodeID = 0

// None stands for "no node".
const None sim.NodeID = -1

// Timer names.
const (
	JoinTimer  = "join"  // a join went unanswered: ask the root again
	ReorgTimer = "reorg" // periodic: try to move
	MoveTimer  = "move"  // a move went unanswered: give it up
)

// Messages.
type (
	// Join asks to take Joiner as a child, in its spell Epoch. Under is
	// the node the sender believes to be the receiver's parent: the
	// parent a mover shares with a sibling, or the node that passed the
	// Join on to its child; None for a Join sent to the root or to the
	// grandparent.
	Join struct {
		Joiner sim.NodeID
		Epoch  int
		Under  sim.NodeID
	}
	// JoinOK says the sender took the receiver as a child in spell Epoch.
	JoinOK struct{ Epoch int }
	// JoinNo says the move of spell Epoch was refused.
	JoinNo struct{ Epoch int }
	// Remove asks the receiver to drop the sender from its children: the
	// sender refused the acceptance of spell Epoch. A child taken again
	// since, in a later spell, stays.
	Remove struct{ Epoch int }
	// Probe asks the parent for its lock.
	Probe struct{}
	// Grant gives the lock, with where the receiver may move to.
	Grant struct {
		Grandparent sim.NodeID // None when the parent is the root
		Siblings    []sim.NodeID
	}
	// Busy refuses the lock.
	Busy struct{}
	// Unlock frees the lock; Left says the sender moved away in spell
	// Epoch (a child taken again since, in a later spell, stays).
	Unlock struct {
		Left  bool
		Epoch int
	}
)

// Node is one tree node.
type Node struct {
	Status   Status
	Parent   sim.NodeID   // itself for the root, None while joining
	Children []sim.NodeID // sorted
	// Taken holds, for each child, the spell in which it was last taken:
	// a Remove for an earlier one must not drop a child taken again.
	Taken    []int
	LockedBy sim.NodeID // the child holding this node's lock, or None
	Probing  bool       // asked its parent for the lock
	Moving   bool       // holds its parent's lock and asked to move
	// Epoch numbers the node's spells of joining and moving. It is kept on
	// disk: a Join relayed by a third node outlives a reset of its joiner,
	// and a number used again after the reset would take its answer for
	// a current one.
	Epoch int  `livecheck:"durable"`
	Moved bool // has moved once, for the canary

	self sim.NodeID `livecheck:"-"`
	cfg  *config    `livecheck:"-"`
}

type config struct {
	degree                 int
	bt1, bt2, probeLockBug bool
}

// DumpState is the node on one line, for reports.
func (n *Node) DumpState() string {
	var b strings.Builder
	b.WriteString(n.Status.String())
	if n.Parent != None {
		b.WriteString(" parent=")
		b.WriteString(strconv.Itoa(int(n.Parent)))
	}
	if len(n.Children) > 0 {
		fmt.Fprintf(&b, " children=%v", n.Children)
	}
	if n.LockedBy != None {
		fmt.Fprintf(&b, " locked-by=%d", n.LockedBy)
	}
	if n.Probing {
		b.WriteString(" probing")
	}
	if n.Moving {
		b.WriteString(" moving")
	}
	if n.Epoch > 0 {
		fmt.Fprintf(&b, " epoch=%d", n.Epoch)
	}
	return b.String()
}

func (n *Node) Init(ctx sim.Context) {
	n.LockedBy = None
	if n.self == Root {
		n.Status, n.Parent = Joined, Root
		return
	}
	n.Parent = None
	ctx.SetPeriodic(ReorgTimer)
	n.rejoin(ctx)
}

func (n *Node) App(ctx sim.Context, call sim.AppCall) {}

func (n *Node) Timer(ctx sim.Context, name string) {
	switch name {
	case JoinTimer:
		if n.Status == Joining {
			ctx.SetTimer(JoinTimer)
			ctx.Send(Root, Join{Joiner: n.self, Epoch: n.Epoch, Under: None})
		}
	case ReorgTimer:
		if n.Status == Joined && n.LockedBy == None && !n.Probing && !n.Moving {
			n.Probing = true
			ctx.Send(n.Parent, Probe{})
		}
	case MoveTimer:
		if n.Moving {
			ctx.Logf("move unanswered: stay under %d", n.Parent)
			n.endMove(ctx)
		}
	}
}

func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Join:
		switch {
		case n.Status != Joined || m.Joiner == n.Parent:
			// Not in the tree, between two parents, or the parent
			// rejoining (see the package comment): a joiner asks again, a
			// mover gives up.
			ctx.Send(m.Joiner, JoinNo{Epoch: m.Epoch})
		case n.LockedBy != None && from == m.Joiner:
			ctx.Send(m.Joiner, JoinNo{Epoch: m.Epoch})
		case m.Under != None && m.Under != n.Parent:
			// Sent to a child of a node this one has left since.
			ctx.Send(m.Joiner, JoinNo{Epoch: m.Epoch})
		default:
			n.place(ctx, m)
		}
	case JoinOK:
		n.joinOK(ctx, from, m)
	case JoinNo:
		if n.Moving && m.Epoch == n.Epoch {
			ctx.Logf("move refused: stay under %d", n.Parent)
			n.endMove(ctx)
		}
	case Remove:
		n.dropChildUpTo(from, m.Epoch)
	case Probe:
		_, child := slices.BinarySearch(n.Children, from)
		free := n.LockedBy == None || n.cfg.bt1 // BT1: the lock is taken without a look
		if !child || !free || n.Status != Joined || n.Probing || n.Moving {
			ctx.Send(from, Busy{})
			return
		}
		n.LockedBy = from
		g := None
		if n.self != Root {
			g = n.Parent
		}
		var sib []sim.NodeID
		for _, c := range n.Children {
			if c != from {
				sib = append(sib, c)
			}
		}
		ctx.Send(from, Grant{Grandparent: g, Siblings: sib})
	case Grant:
		if !n.Probing || from != n.Parent || n.Status != Joined {
			ctx.Send(from, Unlock{}) // not asked for, or not from the parent any more
			return
		}
		n.Probing = false
		targets := m.Siblings
		if m.Grandparent != None {
			targets = append(slices.Clone(targets), m.Grandparent)
		}
		k := ctx.Choose(len(targets) + 1)
		if k == len(targets) {
			ctx.Send(from, Unlock{}) // stay
			return
		}
		t := targets[k]
		under := None
		if t != m.Grandparent {
			under = n.Parent
		}
		n.Moving = true
		n.Epoch++
		ctx.SetTimer(MoveTimer)
		ctx.Logf("move under %d", t)
		ctx.Send(t, Join{Joiner: n.self, Epoch: n.Epoch, Under: under})
	case Busy:
		if from == n.Parent {
			n.Probing = false
		}
	case Unlock:
		if n.LockedBy == from {
			n.LockedBy = None
		}
		if m.Left {
			n.dropChildUpTo(from, m.Epoch)
		}
	}
}

func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {
	if n.LockedBy == peer && !n.cfg.probeLockBug { // probe-lock: the broken peer's lock is forgotten
		n.LockedBy = None
	}
	n.dropChild(peer)
	if n.Status == Joined && peer == n.Parent && n.self != Root {
		ctx.Logf("lost parent %d: join again", peer)
		n.rejoin(ctx)
	}
}

// rejoin starts a spell of joining through the root; the node keeps its
// children.
func (n *Node) rejoin(ctx sim.Context) {
	n.Status, n.Parent = Joining, None
	n.Probing, n.Moving = false, false
	ctx.CancelTimer(MoveTimer)
	n.Epoch++
	ctx.SetTimer(JoinTimer)
	ctx.Send(Root, Join{Joiner: n.self, Epoch: n.Epoch, Under: None})
}

// place takes the joiner as a child, or passes its Join on to a child.
func (n *Node) place(ctx sim.Context, m Join) {
	i, ok := slices.BinarySearch(n.Children, m.Joiner)
	if n.cfg.bt2 && len(n.Children) >= n.cfg.degree {
		ok = false // BT2: a full node passes the join on, even its own child's
	}
	if ok || len(n.Children) < n.cfg.degree {
		if !ok {
			n.Children = slices.Insert(n.Children, i, m.Joiner)
			n.Taken = slices.Insert(n.Taken, i, m.Epoch)
		}
		n.Taken[i] = max(n.Taken[i], m.Epoch) // a stale Join must not make a later Remove drop it
		ctx.Send(m.Joiner, JoinOK{Epoch: m.Epoch})
		return
	}
	m.Under = n.self
	ctx.Send(n.Children[ctx.Choose(len(n.Children))], m)
}

func (n *Node) joinOK(ctx sim.Context, from sim.NodeID, m JoinOK) {
	current := m.Epoch == n.Epoch
	switch {
	case n.Status == Joined && from == n.Parent:
		if n.Moving && current { // the new parent's subtree led back here
			n.endMove(ctx)
		}
	case current && n.Status == Joining:
		n.Status, n.Parent = Joined, from
		ctx.CancelTimer(JoinTimer)
	case current && n.Moving:
		old := n.Parent
		n.Parent, n.Moving = from, false
		n.Moved = true
		ctx.CancelTimer(MoveTimer)
		ctx.Send(old, Unlock{Left: true, Epoch: n.Epoch})
	default:
		ctx.Send(from, Remove{Epoch: m.Epoch})
	}
}

// endMove gives a move up and frees the parent's lock.
func (n *Node) endMove(ctx sim.Context) {
	n.Moving = false
	n.Epoch++ // a late acceptance of this move is refused
	ctx.CancelTimer(MoveTimer)
	ctx.Send(n.Parent, Unlock{})
}

// dropChildUpTo drops child c if it was last taken in spell epoch or an
// earlier one: a Remove or a Left that crossed a later acceptance on the
// way must not undo it.
func (n *Node) dropChildUpTo(c sim.NodeID, epoch int) {
	if i, ok := slices.BinarySearch(n.Children, c); ok && n.Taken[i] <= epoch {
		n.dropChild(c)
	}
}

func (n *Node) dropChild(c sim.NodeID) {
	if i, ok := slices.BinarySearch(n.Children, c); ok {
		n.Children = slices.Delete(n.Children, i, i+1)
		n.Taken = slices.Delete(n.Taken, i, i+1)
	}
}

// NoLoops is the safety property.
var NoLoops = properties.Always("no-loops",
	"following parent pointers from any node never cycles (the root is its own parent)",
	func(s *sim.State) error {
		loop := properties.PointerLoop(s, func(id sim.NodeID) (sim.NodeID, bool) {
			p := properties.Node[*Node](s, id).Parent
			return p, !(p == None || p == id && id == Root)
		})
		if loop != "" {
			return fmt.Errorf("parent pointers loop: %s", loop)
		}
		return nil
	})

// OneTree is the liveness property: one tree rooted at node 0 spans every
// node.
var OneTree = properties.Eventually("one-tree",
	"every node is joined, parent and child pointers agree, and every node reaches root 0",
	oneTree)

// oneTree is OneTree's predicate. It allocates nothing: a walk asks it at
// every step.
func oneTree(s *sim.State) bool {
	for id := range sim.NodeID(s.N()) {
		n := properties.Node[*Node](s, id)
		if n.Status != Joined {
			return false
		}
		if id != Root {
			if _, ok := slices.BinarySearch(properties.Node[*Node](s, n.Parent).Children, id); !ok {
				return false
			}
		}
		for _, c := range n.Children {
			if properties.Node[*Node](s, c).Parent != id {
				return false
			}
		}
	}
	// Every node reaches the root within n steps: no loop.
	for id := range sim.NodeID(s.N()) {
		cur := id
		for range s.N() {
			cur = properties.Node[*Node](s, cur).Parent
		}
		if cur != Root {
			return false
		}
	}
	return true
}

// LocksReleased is the liveness property of Overcast's probe lock.
var LocksReleased = properties.EventuallyEach("locks-released",
	"every node's lock is free",
	func(n *Node) bool { return n.LockedBy == None })

// Moved is the canary: reorganisation happens at all.
var Moved = properties.SometimesNode("moved", "some node moved under a new parent",
	func(n *Node) bool { return n.Moved })

// System is Overcast as livecheck checks it.
var System = protocol.System{
	Name:         "overcast",
	Doc:          "BrokenTree/Overcast: a tree rooted at node 0, joins passed down, periodic moves under a sibling or the grandparent behind a lock at the parent",
	DefaultNodes: 3,
	MinNodes:     2,
	// Checked correct up to 5 nodes (see the package comment); beyond,
	// the rules that keep a Join out of the joiner's subtree are unchecked,
	// and the system is offered only where a finding is the user's.
	MaxNodes:     5,
	DefaultDepth: 12,
	PrefixDepth:  6,
	Bugs: []protocol.Bug{
		{Name: "BT1", Doc: "the parent grants its lock while another child holds it: two siblings move under each other (no-loops)",
			Needs: protocol.Needs{Nodes: 3}},
		{Name: "BT2", Doc: "a full node passes on a join from its own child, which can come down to the joiner itself (no-loops; shows with degree 1)",
			Needs: protocol.Needs{Nodes: 3, Params: map[string]string{"degree": "1"}}},
		{Name: "probe-lock", Doc: "a broken connection to the lock holder leaves the lock taken for ever (locks-released; needs a socket error)",
			Needs: protocol.Needs{Nodes: 3, Budget: sim.Budget{Errors: 1}}},
	},
	Params: []protocol.Param{
		{Name: "degree", Doc: "the most children a node takes", Default: "2", Int: true, Min: 1},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		c := &config{degree: cfg.IntParam("degree"), bt1: cfg.HasBug("BT1"), bt2: cfg.HasBug("BT2"), probeLockBug: cfg.HasBug("probe-lock")}
		return &protocol.Model{
			Spec: sim.Spec{
				New:       func(id sim.NodeID) sim.Node { return &Node{self: id, cfg: c} },
				Transport: sim.Stream,
			},
			Properties: []properties.Property{NoLoops, OneTree, LocksReleased, Moved},
		}, nil
	},
}
