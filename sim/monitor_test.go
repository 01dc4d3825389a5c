package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// pinger is node 0 of the monitor tests: its timer "go" sends a ping to
// node 1, which ignores it, so that a state after the ping is delivered
// has the same nodes and network whether or not a monitor saw it in
// flight.
type pinger struct {
	sim.BaseNode
	Sent bool
}

type ping struct{}

func (p *pinger) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.SetTimer("go")
	}
}

func (p *pinger) Timer(ctx sim.Context, name string) {
	p.Sent = true
	ctx.Send(1, ping{})
}

// pingInFlight is P of the monitor tests.
func pingInFlight(s *sim.State) bool { return len(s.InFlight()) > 0 }

func never(*sim.State) bool { return false }

// monitorWorld is three pingers (1 and 2 symmetric when sym), watched by
// one monitor whose P is p and whose Q never holds.
func monitorWorld(t *testing.T, p func(*sim.State) bool, sym bool) *sim.World {
	t.Helper()
	spec := sim.Spec{Nodes: 3, New: func(sim.NodeID) sim.Node { return &pinger{} },
		Monitors: []sim.Monitor{{Name: "m", P: p, Q: never}}}
	if sym {
		spec.Symmetry = [][]sim.NodeID{{1, 2}}
	}
	w, err := sim.NewWorld(spec)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The bit follows pending = (pending || P) && !Q along a path, in Apply
// and in Step (walks read it unsealed), and is part of the fingerprint
// and of the key: the same nodes and network with the bit set and clear
// are two states.
func TestMonitorBit(t *testing.T) {
	fire := sim.Event{Kind: sim.Timer, Node: 0, Timer: "go"}
	for _, sym := range []bool{false, true} {
		ends := map[bool]*sim.State{}
		for _, watch := range []bool{false, true} {
			p := never
			if watch {
				p = pingInFlight
			}
			w := monitorWorld(t, p, sym)
			s0, err := w.Initial()
			if err != nil {
				t.Fatal(err)
			}
			s1, err := w.Apply(s0, fire, nil)
			if err != nil {
				t.Fatal(err)
			}
			deliver := sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: s1.InFlight()[0].FP}
			s2, err := w.Apply(s1, deliver, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s0.Pending(0) || s1.Pending(0) != watch || s2.Pending(0) != watch || s2.Pending(1) {
				t.Fatalf("sym %v watch %v: pending %v %v %v", sym, watch, s0.Pending(0), s1.Pending(0), s2.Pending(0))
			}
			own := w.Own(s0)
			if err := w.Step(own, fire, nil); err != nil || own.Pending(0) != watch {
				t.Fatalf("sym %v watch %v: Step leaves pending %v (%v)", sym, watch, own.Pending(0), err)
			}
			if err := w.Seal(own); err != nil || own.Fingerprint() != s1.Fingerprint() || w.Key(own) != s1.Key() {
				t.Fatalf("sym %v watch %v: the state made by Step is not the one made by Apply (%v)", sym, watch, err)
			}
			ends[watch] = s2
		}
		a, b := ends[false], ends[true]
		if a.Dump() != b.Dump() {
			t.Fatalf("sym %v: the two ends differ in more than the bit:\n%s\n%s", sym, a.Dump(), b.Dump())
		}
		if a.Fingerprint() == b.Fingerprint() || a.Key() == b.Key() {
			t.Fatalf("sym %v: the bit is not hashed: fingerprints %x %x, keys %x %x", sym, a.Fingerprint(), b.Fingerprint(), a.Key(), b.Key())
		}
	}
}

// A monitor that panics fails the step with a *MonitorPanic; a spec with
// a monitor short of P or Q, or with more than MaxMonitors, is refused.
func TestMonitorErrors(t *testing.T) {
	boom := errors.New("boom")
	w := monitorWorld(t, func(s *sim.State) bool {
		if pingInFlight(s) {
			panic(boom)
		}
		return false
	}, false)
	s0, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Apply(s0, sim.Event{Kind: sim.Timer, Node: 0, Timer: "go"}, nil)
	var mp *sim.MonitorPanic
	if !errors.As(err, &mp) || mp.Monitor != "m" || !errors.Is(err, boom) {
		t.Fatalf("Apply: %v", err)
	}
	spec := sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &pinger{} }, Monitors: []sim.Monitor{{Name: "m", P: never}}}
	if _, err := sim.NewWorld(spec); err == nil || err.Error() != "monitor 0 (m) needs both P and Q" {
		t.Fatalf("no Q: %v", err)
	}
	spec.Monitors = make([]sim.Monitor, sim.MaxMonitors+1)
	if _, err := sim.NewWorld(spec); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Fatalf("too many: %v", err)
	}
}
