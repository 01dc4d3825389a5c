package etcdraft_test

import (
	"fmt"
	"testing"

	"go.etcd.io/raft/v3"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// newWorld is a world of 3 nodes at the defaults.
func newWorld(t *testing.T) *sim.World {
	t.Helper()
	_, m, err := etcdraft.System.Model(protocol.Config{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// raft draws each election timeout from crypto/rand, in [E, 2E): with
// E = 2, a node whose draw was low campaigns at its second tick, one
// whose draw was high at its third. The world explores both, from the
// first Init on: some initial state has node 0 campaign after two ticks
// (only a low draw reaches it), another has it still a follower after
// two and campaigning after three (only a high draw).
func TestElectionTimeoutExplored(t *testing.T) {
	w := newWorld(t)
	starts, err := w.Starts()
	if err != nil {
		t.Fatal(err)
	}
	// Each of the 3 nodes draws Int(2) in its first Init: 0 and 1, 8
	// initial states; and a run of value 2, which Int masks to 0 and
	// which ends the runs of its draw and of every later one: 4 runs
	// with node 2's, 2 with node 1's, 1 with node 0's. 15 in all.
	if len(starts) != 15 {
		t.Errorf("%d initial states, want 15", len(starts))
	}
	tick := sim.Event{Kind: sim.Timer, Node: 0, Timer: "tick"}
	ticks := func(s *sim.State, k int) raft.StateType {
		for range k {
			if s, err = w.Apply(s, tick, nil); err != nil {
				t.Fatal(err)
			}
		}
		return s.Node(0).(*etcdraft.Node).State
	}
	var low, high int
	for _, st := range starts {
		switch two, three := ticks(st.State, 2), ticks(st.State, 3); {
		case two == raft.StatePreCandidate:
			low++
		case two == raft.StateFollower && three == raft.StatePreCandidate:
			high++
		default:
			t.Fatalf("from initial state %v node 0 is %v after two ticks, %v after three", st.Init, two, three)
		}
	}
	// Node 0 draws low in half of the 14 runs in which its draw is 0
	// or 1, and in the run of its masked 2.
	if low != 8 || high != 7 {
		t.Errorf("%d initial states campaign after two ticks and %d after three, want 8 and 7", low, high)
	}
}

// The checker copies and hashes a node that holds a RawNode with no code
// written for it: a copy ticks apart from its original (raft's tick is a
// method value bound to its raft, rebound to the copy's), and equal nodes
// hash equal.
func TestRawNodeCopies(t *testing.T) {
	w := newWorld(t)
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	orig := s.Node(0).(*etcdraft.Node)
	c := sim.Copy(orig)
	if sim.Fingerprint(c) != sim.Fingerprint(orig) {
		t.Fatalf("a copy hashes %x, its original %x", sim.Fingerprint(c), sim.Fingerprint(orig))
	}
	before := fmt.Sprint(orig.Raft.Status())
	for range 5 {
		c.Raft.Tick()
	}
	if after := fmt.Sprint(orig.Raft.Status()); after != before {
		t.Fatalf("ticking the copy changed the original:\n%s\nbecame\n%s", before, after)
	}
	if c.Raft.BasicStatus().RaftState != raft.StatePreCandidate {
		t.Fatalf("the copy, ticked 5 times, is %v, want a pre-candidate", c.Raft.BasicStatus().RaftState)
	}
	if sim.Fingerprint(c) == sim.Fingerprint(orig) {
		t.Fatal("a copy that campaigned hashes as its original")
	}
}
