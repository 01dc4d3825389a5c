package sim_test

import (
	"strconv"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/paxos"
)

// permutations returns every ordering of ids.
func permutations(ids []sim.NodeID) [][]sim.NodeID {
	if len(ids) <= 1 {
		return [][]sim.NodeID{append([]sim.NodeID(nil), ids...)}
	}
	var out [][]sim.NodeID
	for i := range ids {
		rest := append(append([]sim.NodeID(nil), ids[:i]...), ids[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]sim.NodeID{ids[i]}, p...))
		}
	}
	return out
}

// Every reachable state of Paxos with interchangeable acceptors: two
// states have the same key exactly when they are renamings of each other,
// that is when their least fingerprint over every renaming (the class,
// computed the slow way) is the same.
func TestKeysAreRenamingClasses(t *testing.T) {
	for _, tc := range []struct {
		proposers, acceptors int
		states, classes      int
	}{{1, 3, 282, 65}, {2, 2, 516, 280}, {1, 4, 1081, 106}} {
		nodes := tc.proposers + tc.acceptors + 1
		_, m, err := paxos.System.Model(livecheck.Config{Nodes: nodes, Params: map[string]string{
			"proposers": strconv.Itoa(tc.proposers), "roles": "split"}})
		if err != nil {
			t.Fatal(err)
		}
		w, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatal(err)
		}
		group := m.Spec.Symmetry[0]
		var perms [][]sim.NodeID
		for _, p := range permutations(group) {
			full := make([]sim.NodeID, nodes)
			for i := range full {
				full[i] = sim.NodeID(i)
			}
			for j, id := range group {
				full[id] = p[j]
			}
			perms = append(perms, full)
		}
		class := func(s *sim.State) uint64 {
			least := ^uint64(0)
			for _, p := range perms {
				least = min(least, w.RenamedKey(s, p))
			}
			return least
		}
		s0, err := w.Initial()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[uint64]bool{s0.Fingerprint(): true}
		keyClass := map[uint64]uint64{}
		classKey := map[uint64]uint64{}
		queue := []*sim.State{s0}
		var evs []sim.Event
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			k, c := s.Key(), class(s)
			if old, ok := keyClass[k]; ok && old != c {
				t.Fatalf("%dx%d: key %x stands for two classes of states, one of them:\n%s", tc.proposers, tc.acceptors, k, s.Dump())
			}
			if old, ok := classKey[c]; ok && old != k {
				t.Fatalf("%dx%d: one class of states has keys %x and %x, one of them:\n%s", tc.proposers, tc.acceptors, old, k, s.Dump())
			}
			keyClass[k], classKey[c] = c, k
			evs = w.Enabled(s, evs[:0])
			for _, ev := range evs {
				next, err := w.Apply(s, ev, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !seen[next.Fingerprint()] {
					seen[next.Fingerprint()] = true
					queue = append(queue, next)
				}
			}
		}
		if tc.states != 0 && (len(seen) != tc.states || len(classKey) != tc.classes) {
			t.Errorf("%dx%d: %d states in %d classes, want %d in %d", tc.proposers, tc.acceptors, len(seen), len(classKey), tc.states, tc.classes)
		}
		t.Logf("%dx%d: %d states in %d classes", tc.proposers, tc.acceptors, len(seen), len(classKey))
	}
}

// relayMsg names a node.
type relayMsg struct{ N sim.NodeID }

// relayNode is one of two small systems of 4 nodes whose members are 2
// and 3, built so that a stream's queue holds the same messages in either
// order. In the first (Forward false), nodes 0 and 1 tell each member
// their ids, and a member passes each on to node 0: a member's queue to
// node 0 holds the ids in the order it received them. In the second
// (Forward true), each member says hello to node 0, which passes the
// sender's id on to node 1: the queue from 0 to 1 names the members in
// the order node 0 heard from them.
type relayNode struct {
	sim.BaseNode
	Member, Forward bool
}

func (n *relayNode) Init(ctx sim.Context) {
	switch {
	case n.Forward && n.Member:
		ctx.Send(0, relayMsg{-1})
	case !n.Forward && !n.Member:
		ctx.Send(2, relayMsg{ctx.Self()})
		ctx.Send(3, relayMsg{ctx.Self()})
	}
}

func (n *relayNode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch {
	case n.Forward && ctx.Self() == 0:
		ctx.Send(1, relayMsg{from})
	case !n.Forward && n.Member:
		ctx.Send(0, msg)
	}
}

// Two states that differ only in the order of a queue, each a renaming of
// the other (swap the members), have the same key: members alike in
// everything a multiset of messages shows are not interchangeable when a
// queue tells them apart (a queue from each to node 0 with the same
// messages in other orders; a queue from node 0 that names them in other
// orders).
func TestKeysQueueOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forward bool
		a, b    [][2]sim.NodeID // deliveries, from and to
	}{
		{"queues from members", false,
			[][2]sim.NodeID{{0, 2}, {1, 2}, {1, 3}, {0, 3}}, [][2]sim.NodeID{{1, 2}, {0, 2}, {0, 3}, {1, 3}}},
		{"a queue naming members", true,
			[][2]sim.NodeID{{2, 0}, {3, 0}}, [][2]sim.NodeID{{3, 0}, {2, 0}}},
	} {
		spec := sim.Spec{
			Nodes:     4,
			New:       func(id sim.NodeID) sim.Node { return &relayNode{Member: id >= 2, Forward: tc.forward} },
			Transport: sim.Stream,
			Symmetry:  [][]sim.NodeID{{2, 3}},
		}
		w, err := sim.NewWorld(spec)
		if err != nil {
			t.Fatal(err)
		}
		run := func(deliveries [][2]sim.NodeID) *sim.State {
			s, err := w.Initial()
			if err != nil {
				t.Fatal(err)
			}
		next:
			for _, d := range deliveries {
				for _, ev := range w.Enabled(s, nil) {
					if ev.Kind == sim.Deliver && ev.Peer == d[0] && ev.Node == d[1] {
						if s, err = w.Apply(s, ev, nil); err != nil {
							t.Fatal(err)
						}
						continue next
					}
				}
				t.Fatalf("%s: no message from %d to %d in flight:\n%s", tc.name, d[0], d[1], s.Dump())
			}
			return s
		}
		a, b := run(tc.a), run(tc.b)
		if a.Fingerprint() == b.Fingerprint() {
			t.Fatalf("%s: the two orders make the same state:\n%s", tc.name, a.Dump())
		}
		if w.RenamedKey(a, []sim.NodeID{0, 1, 3, 2}) != w.RenamedKey(b, []sim.NodeID{0, 1, 2, 3}) {
			t.Fatalf("%s: the states are not renamings of each other:\n%s\n%s", tc.name, a.Dump(), b.Dump())
		}
		if a.Key() != b.Key() {
			t.Errorf("%s: renamings of each other have keys %x and %x:\n%s\n%s", tc.name, a.Key(), b.Key(), a.Dump(), b.Dump())
		}
	}
}
