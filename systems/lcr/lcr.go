// Package lcr is LeLann-Chang-Roberts leader election on a unidirectional
// ring. Each node has a distinct id. When the driver starts a node, it sends
// its id to its successor. A node forwards an id larger than its own and
// drops a smaller one; a node that receives its own id back knows that id
// went round the whole ring unbeaten, so it is the largest: it becomes
// leader and sends an announcement round the ring, which every other node
// records and forwards until it comes back to the leader.
//
// Messages travel on streams (FIFO per pair of nodes), as in the classic
// setting. Node i's successor is node i+1 mod N; the id assignment is the
// parameter ids (default: N, 1, 2, ..., N-1, so the largest id starts at
// node 0 and must travel the whole ring).
//
// Injectable bugs:
//
//   - no-discard: the comparison that drops smaller ids is `!=` where `>`
//     belongs, so a node forwards every id but its own. Every id then makes
//     it round the ring and every node elects itself: several leaders.
//   - ignore-early: a node drops every message that arrives before the
//     driver started it (an initialisation guard that returns instead of
//     letting the message wake the node). If the largest id or the leader's
//     announcement reaches a node that is still asleep, it is lost, and the
//     election never completes: a liveness bug, safe all along.
package lcr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Elect carries a candidate's id round the ring.
type Elect struct{ ID int }

// Leader announces the elected leader's id.
type Leader struct{ ID int }

// Start is the driver's call that wakes a node.
type Start struct{}

// Node is one LCR process.
type Node struct {
	ID      int  // this node's id
	Started bool // the driver has woken it and it sent its id
	Leader  bool // it believes it is the leader
	Known   int  // the leader's id once known, 0 before
	Done    bool // the leader's announcement came back (leader only)

	noDiscard   bool `livecheck:"-"` // bug no-discard: configuration, not state
	ignoreEarly bool `livecheck:"-"` // bug ignore-early
}

func (n *Node) next(ctx sim.Context) sim.NodeID {
	return (ctx.Self() + 1) % sim.NodeID(ctx.Nodes())
}

func (n *Node) Init(ctx sim.Context) {}

func (n *Node) App(ctx sim.Context, call sim.AppCall) {
	if n.Started {
		return
	}
	n.Started = true
	ctx.Send(n.next(ctx), Elect{ID: n.ID})
}

func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if n.ignoreEarly && !n.Started {
		ctx.Logf("not started yet: ignore %v", msg)
		return
	}
	switch m := msg.(type) {
	case Elect:
		switch {
		case m.ID == n.ID:
			n.Leader = true
			n.Known = n.ID
			ctx.Logf("my id %d came back: I am the leader", n.ID)
			ctx.Send(n.next(ctx), Leader{ID: n.ID})
		case m.ID > n.ID || (n.noDiscard && m.ID != n.ID):
			ctx.Send(n.next(ctx), m)
		default:
			ctx.Logf("drop id %d, smaller than mine", m.ID)
		}
	case Leader:
		if m.ID == n.ID {
			n.Done = true
			return
		}
		n.Known = m.ID
		ctx.Send(n.next(ctx), m)
	}
}

func (n *Node) Timer(ctx sim.Context, name string)     {}
func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {}

// DefaultIDs returns the default id assignment for n nodes: n, 1, 2, ..., n-1.
func DefaultIDs(n int) []int {
	ids := make([]int, n)
	ids[0] = n
	for i := 1; i < n; i++ {
		ids[i] = i
	}
	return ids
}

func parseIDs(s string, n int) ([]int, error) {
	if s == "" {
		return DefaultIDs(n), nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("--ids lists %d ids for %d nodes; give one positive id per node, comma-separated", len(parts), n)
	}
	ids := make([]int, n)
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--ids: %q is not a positive integer", p)
		}
		if slices.Contains(ids[:i], v) {
			return nil, fmt.Errorf("--ids: id %d appears twice; ids must be distinct", v)
		}
		ids[i] = v
	}
	return ids, nil
}

// OneLeader is the safety property: at most one node believes it is leader,
// and nodes that know a leader agree on it.
var OneLeader = properties.Always("one-leader",
	"at most one node believes it is leader, and nodes that know a leader agree on it",
	func(s *sim.State) error {
		var leaders []int
		known := 0
		for i := range s.N() {
			n := properties.Node[*Node](s, sim.NodeID(i))
			if n.Leader {
				leaders = append(leaders, i)
			}
			if n.Known != 0 {
				if known != 0 && n.Known != known {
					return fmt.Errorf("nodes disagree on the leader: one knows id %d, node %d knows id %d", known, i, n.Known)
				}
				known = n.Known
			}
		}
		if len(leaders) > 1 {
			return fmt.Errorf("nodes %v all believe they are leader", leaders)
		}
		return nil
	})

func init() {
	// The pairwise form, for local model checking: two node states
	// conflict if both believe they lead or they know different leaders.
	OneLeader.Filter = func(_ sim.NodeID, n sim.Node) bool {
		x := n.(*Node)
		return x.Leader || x.Known != 0
	}
	OneLeader.Pair = func(a, b sim.Node) error {
		x, y := a.(*Node), b.(*Node)
		switch {
		case x.Leader && y.Leader:
			return fmt.Errorf("ids %d and %d both believe they are leader", x.ID, y.ID)
		case x.Known != 0 && y.Known != 0 && x.Known != y.Known:
			return fmt.Errorf("nodes disagree on the leader: ids %d and %d", x.Known, y.Known)
		}
		return nil
	}
}

// Elected is the liveness property: one leader is elected and every node
// knows it.
var Elected = properties.Eventually("elected",
	"one node is leader and every node knows its id",
	func(s *sim.State) bool {
		leader := 0
		for i := range s.N() {
			if n := properties.Node[*Node](s, sim.NodeID(i)); n.Leader {
				if leader != 0 {
					return false
				}
				leader = n.ID
			}
		}
		if leader == 0 {
			return false
		}
		for i := range s.N() {
			if properties.Node[*Node](s, sim.NodeID(i)).Known != leader {
				return false
			}
		}
		return true
	})

// System is LCR as livecheck checks it.
var System = protocol.System{
	Name:         "lcr",
	Doc:          "LeLann-Chang-Roberts leader election on a unidirectional ring",
	DefaultNodes: 3,
	MinNodes:     2,
	MaxNodes:     12,
	Bugs: []protocol.Bug{
		// Two nodes show both: each id goes round a ring of two.
		{Name: "no-discard", Doc: "forwards every id but its own instead of only larger ones: several leaders",
			Needs: protocol.Needs{Nodes: 2}},
		{Name: "ignore-early", Doc: "drops messages that arrive before the node is started: the election may never complete",
			Needs: protocol.Needs{Nodes: 2}},
	},
	Params: []protocol.Param{
		{Name: "ids", Doc: "the nodes' ids in ring order, comma-separated (default: N,1,2,...,N-1)"},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		ids, err := parseIDs(cfg.Param("ids"), cfg.Nodes)
		if err != nil {
			return nil, err
		}
		noDiscard, ignoreEarly := cfg.HasBug("no-discard"), cfg.HasBug("ignore-early")
		calls := make([]sim.Call, cfg.Nodes)
		for i := range calls {
			calls[i] = sim.Call{To: sim.NodeID(i), Call: Start{}}
		}
		return &protocol.Model{
			Spec: sim.Spec{
				New: func(id sim.NodeID) sim.Node {
					return &Node{ID: ids[id], noDiscard: noDiscard, ignoreEarly: ignoreEarly}
				},
				Transport: sim.Stream,
				Calls:     calls,
			},
			Properties: []properties.Property{OneLeader, Elected},
		}, nil
	},
}
