package sim_test

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// plainNode is a node of plain values: a step that leaves it as it was
// shares the parent's node object and fingerprint (World.unchanged).
type plainNode struct {
	Seen, Sum int
	note      int `livecheck:"-"`
}

type bump struct{ By int }

func (n *plainNode) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.Send(1, bump{0}) // changes nothing at node 1
		ctx.Send(1, bump{2})
		ctx.Send(2, bump{-1}) // changes only an excluded field
	}
}

func (n *plainNode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch b := msg.(bump).By; {
	case b > 0:
		n.Seen++
		n.Sum += b
	case b < 0:
		n.note++
	}
}
func (n *plainNode) Timer(sim.Context, string)     {}
func (n *plainNode) App(sim.Context, sim.AppCall)  {}
func (n *plainNode) Error(sim.Context, sim.NodeID) {}

// TestUnchangedNodeShared checks that a step whose handler leaves its node
// byte for byte as it was keeps the parent's node object and fingerprints,
// that a step that changes anything (an excluded field included) gets a
// node of its own, and that the state's fingerprint is in each case the
// one a full rehash gives.
func TestUnchangedNodeShared(t *testing.T) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 3, Transport: sim.Datagram, New: func(sim.NodeID) sim.Node { return &plainNode{} }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	evs := w.Enabled(s, nil)
	if len(evs) != 3 {
		t.Fatalf("%d events enabled, want 3 deliveries", len(evs))
	}
	for _, ev := range evs {
		next, err := w.Apply(s, ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		msg := w.Last().Msg.(bump)
		shared := next.Node(ev.Node) == s.Node(ev.Node)
		if want := msg.By == 0; shared != want {
			t.Errorf("%v (%+v): node shared with the parent %v, want %v", ev, msg, shared, want)
		}
		if shared && next.NodeFingerprint(ev.Node) != s.NodeFingerprint(ev.Node) {
			t.Errorf("%v: shared node with another fingerprint", ev)
		}
		// The same step in place, every node hashed again.
		own := w.Own(s)
		if err := w.Step(own, ev, nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Seal(own); err != nil {
			t.Fatal(err)
		}
		if own.Fingerprint() != next.Fingerprint() {
			t.Errorf("%v: fingerprint %x, %x when hashed again", ev, next.Fingerprint(), own.Fingerprint())
		}
		w.Discard(next)
		// The parent is intact after its child is given back.
		if n := s.Node(ev.Node).(*plainNode); *n != (plainNode{}) {
			t.Errorf("%v: parent's node changed to %+v", ev, *n)
		}
	}
}
