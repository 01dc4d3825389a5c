package sim_test

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// A state made from another shares what its step left as it was: the
// search keeps some states (k) and gives back the states they were made
// from (p), pinned to them first. Pinned, p goes back without what k
// shares, its network and the node state its own step made, so that the
// steps after do not write over k; the rest of p is reused.
func TestPinKeepsWhatIsShared(t *testing.T) {
	w, s0 := newWorld(t, sim.Spec{Nodes: 3, Transport: sim.Datagram, New: func(sim.NodeID) sim.Node { return &quietNode{} }})
	w.NoStepCache = true
	step := func(s *sim.State, kind sim.Kind, node sim.NodeID) *sim.State {
		t.Helper()
		for _, ev := range w.Enabled(s, nil) {
			if ev.Kind == kind && ev.Node == node {
				n, err := w.Apply(s, ev, nil)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatalf("no %v at node %d in\n%s", kind, node, s.Dump())
		return nil
	}
	// p: node 1 gets a greeting (a new network, a new node 1); k: node 2's
	// timer, which leaves the network and node 1 as p has them.
	p := step(s0, sim.Deliver, 1)
	k := step(p, sim.Timer, 2)
	if &p.InFlight()[0] != &k.InFlight()[0] || p.Node(1) != k.Node(1) {
		t.Fatal("k does not share p's network and node 1")
	}
	want := k.Dump()
	w.Pin(p, k)
	w.Discard(p)
	// Steps that reuse what was given back, each state given back too.
	for range 4 {
		for _, ev := range w.Enabled(s0, nil) {
			n, err := w.Apply(s0, ev, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := step(n, sim.Deliver, ev.Node)
			w.Discard(m)
			w.Discard(n)
		}
	}
	if got := k.Dump(); got != want {
		t.Fatalf("the kept state changed:\n%s\nwant\n%s", got, want)
	}
}
