package properties_test

import (
	"fmt"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// replica is a node of a replicated log, as a property sees it.
type replica struct {
	sim.BaseNode
	Term   int
	Leader bool
	Commit int
	Log    []string
}

// state builds a system state from node states, as a property gets it.
func state(nodes ...*replica) *sim.State {
	ns := make([]sim.Node, len(nodes))
	for i, n := range nodes {
		ns[i] = n
	}
	return sim.NewState(ns)
}

// Nodes reads every node state as the system's own type.
func ExampleNodes() {
	s := state(&replica{Term: 2}, &replica{Term: 3, Leader: true})
	for i, n := range properties.Nodes[*replica](s) {
		fmt.Println(i, n.Term, n.Leader)
	}
	// Output:
	// 0 2 false
	// 1 3 true
}

// AlwaysEach checks every node on its own.
func ExampleAlwaysEach() {
	committed := properties.AlwaysEach("commit-in-log", "no node commits past its log",
		func(n *replica) error {
			if n.Commit > len(n.Log) {
				return fmt.Errorf("commit %d past a log of %d", n.Commit, len(n.Log))
			}
			return nil
		})
	fmt.Println(committed.Check(state(&replica{Commit: 1, Log: []string{"a"}}, &replica{})))
	fmt.Println(committed.Check(state(&replica{Commit: 1, Log: []string{"a"}}, &replica{Commit: 2, Log: []string{"a"}})))
	// Output:
	// <nil>
	// node 1: commit 2 past a log of 1
}

// AlwaysPairs checks every pair of nodes: here, that two logs agree on
// their common prefix.
func ExampleAlwaysPairs() {
	agree := properties.AlwaysPairs("logs-agree", "logs agree where both have entries",
		func(a, b *replica) error {
			for i := range min(len(a.Log), len(b.Log)) {
				if a.Log[i] != b.Log[i] {
					return fmt.Errorf("entry %d is %q and %q", i, a.Log[i], b.Log[i])
				}
			}
			return nil
		})
	fmt.Println(agree.Check(state(&replica{Log: []string{"x"}}, &replica{Log: []string{"x", "y"}}, &replica{Log: []string{"x", "z"}})))
	// Output:
	// nodes 1 and 2: entry 1 is "y" and "z"
}

// AtMostOne says one node at a time: here, one leader.
func ExampleAtMostOne() {
	oneLeader := properties.AtMostOne("one-leader", "at most one node is leader",
		func(n *replica) bool { return n.Leader })
	fmt.Println(oneLeader.Check(state(&replica{Leader: true}, &replica{}, &replica{})))
	fmt.Println(oneLeader.Check(state(&replica{Leader: true}, &replica{}, &replica{Leader: true})))
	// Output:
	// <nil>
	// nodes 0 and 2 at once
}

// EventuallyEach is a liveness property over every node.
func ExampleEventuallyEach() {
	caughtUp := properties.EventuallyEach("caught-up", "every node has the entry",
		func(n *replica) bool { return len(n.Log) > 0 })
	fmt.Println(caughtUp.Live(state(&replica{Log: []string{"a"}}, &replica{})))
	fmt.Println(caughtUp.Live(state(&replica{Log: []string{"a"}}, &replica{Log: []string{"a"}})))
	// Output:
	// false
	// true
}

// reqNode asks on its timer "ask" and is answered on its timer "answer".
type reqNode struct {
	sim.BaseNode
	Asked, Answered bool
}

func (n *reqNode) Init(ctx sim.Context) { ctx.SetTimer("ask") }

func (n *reqNode) Timer(ctx sim.Context, name string) {
	if name == "ask" {
		n.Asked = true
		ctx.SetTimer("answer")
		return
	}
	n.Answered = true
}

// LeadsTo is live where no P waits for its Q. livecheck binds it to a
// monitor of the world itself; a world built by hand takes Bind.
func ExampleLeadsTo() {
	answered := properties.LeadsTo("answered", "every request is answered",
		func(s *sim.State) bool { return properties.Node[*reqNode](s, 0).Asked },
		func(s *sim.State) bool { return properties.Node[*reqNode](s, 0).Answered })
	spec := sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &reqNode{} }}
	props := properties.Bind(&spec, []properties.Property{answered})
	w, _ := sim.NewWorld(spec)
	s, _ := w.Initial()
	for _, timer := range []string{"ask", "answer"} {
		s, _ = w.Apply(s, sim.Event{Kind: sim.Timer, Timer: timer}, nil)
		fmt.Println(timer, props[0].IsLive(s))
	}
	// Output:
	// ask false
	// answer true
}
