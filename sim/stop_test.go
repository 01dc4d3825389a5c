package sim_test

import (
	"errors"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// reticker re-arms its one timer each time it fires: it never stops.
type reticker struct {
	sim.BaseNode
	Ticks int
}

func (n *reticker) Init(ctx sim.Context) { ctx.SetTimer("tick") }
func (n *reticker) Timer(ctx sim.Context, _ string) {
	n.Ticks++
	ctx.SetTimer("tick")
}

// TestStop: a world whose Stop says so fails its steps with ErrStopped
// within StopEvery steps, by Apply and by Step alike, leaves the state a
// failed Step was given as it was, and steps again once Stop no longer
// says so.
func TestStop(t *testing.T) {
	w, s := newWorld(t, sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &reticker{} }})
	tick := sim.Event{Kind: sim.Timer, Node: 0, Timer: "tick"}
	stop, asked := false, 0
	w.Stop = func() bool { asked++; return stop }
	for range 3 * sim.StopEvery {
		s = apply(t, w, s, tick)
	}
	if asked != 3 {
		t.Fatalf("Stop asked %d times in %d steps, want 3", asked, 3*sim.StopEvery)
	}
	stop = true
	steps := 0
	var err error
	for ; err == nil && steps <= sim.StopEvery; steps++ {
		var n *sim.State
		if n, err = w.Apply(s, tick, nil); err == nil {
			s = n
		}
	}
	if !errors.Is(err, sim.ErrStopped) || steps > sim.StopEvery {
		t.Fatalf("after Stop said so: %d steps, then %v; want ErrStopped within %d steps", steps, err, sim.StopEvery)
	}
	// Stopped, each step asks again, and fails at once.
	cur := w.Own(s)
	if err := w.Step(cur, tick, nil); !errors.Is(err, sim.ErrStopped) {
		t.Fatalf("Step while stopped: %v, want ErrStopped", err)
	}
	if err := w.Seal(cur); err != nil || cur.Fingerprint() != s.Fingerprint() {
		t.Fatalf("a stopped Step changed its state (%v)", err)
	}
	stop = false
	if _, err := w.Apply(s, tick, nil); err != nil {
		t.Fatalf("Apply once Stop no longer says so: %v", err)
	}
}
