package sim_test

import (
	"errors"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// An observer that sends panics in its handler, a finding that names it;
// the others send as before. Observers out of range or listed twice are
// refused.
func TestObservers(t *testing.T) {
	for _, tc := range []struct {
		observers []sim.NodeID
		err       string
	}{
		{[]sim.NodeID{3}, "observer node 3 is not a node: nodes are 0 to 2"},
		{[]sim.NodeID{1, 1}, "observer node 1 is listed twice"},
	} {
		_, err := sim.NewWorld(sim.Spec{Nodes: 3, New: func(sim.NodeID) sim.Node { return &pinger{} }, Observers: tc.observers})
		if err == nil || err.Error() != tc.err {
			t.Errorf("observers %v: error %v, want %q", tc.observers, err, tc.err)
		}
	}
	fire := sim.Event{Kind: sim.Timer, Node: 0, Timer: "go"}
	for _, obs := range []sim.NodeID{0, 1} {
		w, err := sim.NewWorld(sim.Spec{Nodes: 3, New: func(sim.NodeID) sim.Node { return &pinger{} }, Observers: []sim.NodeID{obs}})
		if err != nil {
			t.Fatal(err)
		}
		if !w.Observer(obs) || w.Observer(2) {
			t.Errorf("Observer(%d) %v, Observer(2) %v", obs, w.Observer(obs), w.Observer(2))
		}
		s, err := w.Initial()
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Apply(s, fire, nil)
		var hp *sim.HandlerPanic
		switch {
		case obs == 0 && (!errors.As(err, &hp) || hp.Node != 0 || hp.Error() != "node 0 panicked in Timer: Send to node 1: node 0 is an observer (Spec.Observers), which never sends"):
			t.Errorf("observer 0 sends: %v", err)
		case obs == 1 && err != nil:
			t.Errorf("node 0 sends to observer 1: %v", err)
		}
	}
}
