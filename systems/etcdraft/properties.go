package etcdraft

import (
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// OneLeaderPerTerm is election safety over time: no term has two leaders,
// whether at once or one after the other. Each node records the terms in
// which it became leader (Node.Led, kept across resets), so a leader of
// term T that stepped down or restarted before another node led T is
// still caught, and so is a node that leads a term twice or a lower term
// after a higher one (a term forgotten).
var OneLeaderPerTerm = func() properties.Property {
	p := properties.Always("one-leader-per-term", "no two nodes ever lead the same term, and a node leads each term once, in increasing order",
		oneLeaderPerTerm)
	p.Filter = func(_ sim.NodeID, n sim.Node) bool {
		x, ok := n.(*Node)
		return ok && len(x.Led) > 0
	}
	p.Pair = func(a, b sim.Node) error {
		x, y := a.(*Node), b.(*Node)
		if err := ledOnce(x); err != nil {
			return err
		}
		if err := ledOnce(y); err != nil {
			return err
		}
		return ledApart(x, y)
	}
	return p
}()

func oneLeaderPerTerm(s *sim.State) error {
	for i, n := range properties.All[*Node](s) {
		if err := ledOnce(n); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		for j := i + 1; j < sim.NodeID(s.N()); j++ {
			if err := ledApart(n, properties.Node[*Node](s, j)); err != nil {
				return fmt.Errorf("nodes %d and %d: %w", i, j, err)
			}
		}
	}
	return nil
}

// ledOnce says whether n led each term once, in increasing order.
func ledOnce(n *Node) error {
	for k := 1; k < len(n.Led); k++ {
		if n.Led[k] <= n.Led[k-1] {
			return fmt.Errorf("led term %d after term %d", n.Led[k], n.Led[k-1])
		}
	}
	return nil
}

// ledApart says whether a and b never led the same term.
func ledApart(a, b *Node) error {
	for _, t := range a.Led {
		if slices.Contains(b.Led, t) {
			return fmt.Errorf("both led term %d", t)
		}
	}
	return nil
}

// AppliedAgree is state machine safety: each node applies the entries at
// indexes 1, 2, 3, ... once each, and two nodes never apply different
// entries at the same index. A node applies only what is committed, and
// rebuilds what it applied from its disk after a restart, so this also
// says that a committed entry is never replaced.
var AppliedAgree = func() properties.Property {
	p := properties.Always("applied-agree", "every node applies the entries at indexes 1, 2, 3, ... in order, and no two nodes apply different entries at one index",
		appliedAgree)
	p.Filter = func(_ sim.NodeID, n sim.Node) bool {
		x, ok := n.(*Node)
		return ok && len(x.Applied) > 0
	}
	p.Pair = func(a, b sim.Node) error {
		x, y := a.(*Node), b.(*Node)
		if err := appliedInOrder(x); err != nil {
			return err
		}
		if err := appliedInOrder(y); err != nil {
			return err
		}
		return appliedSame(x, y)
	}
	return p
}()

func appliedAgree(s *sim.State) error {
	for i, n := range properties.All[*Node](s) {
		if err := appliedInOrder(n); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		for j := i + 1; j < sim.NodeID(s.N()); j++ {
			if err := appliedSame(n, properties.Node[*Node](s, j)); err != nil {
				return fmt.Errorf("nodes %d and %d: %w", i, j, err)
			}
		}
	}
	return nil
}

// appliedInOrder says whether n applied the entries at indexes 1, 2, 3, ...
func appliedInOrder(n *Node) error {
	for k, e := range n.Applied {
		if e.Index != uint64(k)+1 {
			return fmt.Errorf("applied %v as its entry number %d", e, k+1)
		}
	}
	return nil
}

// appliedSame says whether a and b applied the same entries as far as
// both applied (each in order, which appliedInOrder checks).
func appliedSame(a, b *Node) error {
	for k := range min(len(a.Applied), len(b.Applied)) {
		if a.Applied[k] != b.Applied[k] {
			return fmt.Errorf("applied %v and %v", a.Applied[k], b.Applied[k])
		}
	}
	return nil
}

// LeaderKnown is the liveness of elections: eventually every node knows
// the same leader in the same term, and that node is leader in it.
var LeaderKnown = properties.Eventually("leader-known", "every node knows one leader in one term, and that node leads it",
	func(s *sim.State) bool {
		var term, lead uint64
		for _, n := range properties.All[*Node](s) {
			if lead == 0 {
				term, lead = n.Term, n.Lead
			}
			if n.Lead == 0 || n.Lead != lead || n.Term != term {
				return false
			}
		}
		l := properties.Node[*Node](s, NodeID(lead))
		return l.State == raft.StateLeader && l.Term == term
	})

// AckedApplied is the liveness of the service: every proposal
// acknowledged to its client is eventually applied by every node. It
// speaks of acknowledged proposals only: raft drops a proposal made while
// no leader is known (documented), and loses one it took but did not
// commit when its leader falls, and neither is owed to anyone.
var AckedApplied = properties.Eventually("acked-applied", "every acknowledged proposal is applied by every node",
	func(s *sim.State) bool {
		for _, n := range properties.All[*Node](s) {
			for _, id := range n.Acked {
				for _, m := range properties.All[*Node](s) {
					if !slices.ContainsFunc(m.Applied, func(e Entry) bool { return e.ID == id }) {
						return false
					}
				}
			}
		}
		return true
	})

// LeaderElected and ProposalAcked are canaries: a check that never
// elected a leader, or never acknowledged a proposal, passed the other
// properties without showing much.
var (
	LeaderElected = properties.SometimesNode("leader-elected", "some node is leader",
		func(n *Node) bool { return n.State == raft.StateLeader })
	ProposalAcked = properties.SometimesNode("proposal-acked", "some proposal is acknowledged to its client",
		func(n *Node) bool { return len(n.Acked) > 0 })
)

// Properties are the system's properties.
var Properties = []properties.Property{OneLeaderPerTerm, AppliedAgree, LeaderKnown, AckedApplied, LeaderElected, ProposalAcked}
