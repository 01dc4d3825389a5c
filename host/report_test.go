package host_test

import (
	"math/rand/v2"
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
)

// Every bundled system's node states, along a random walk, cross a
// state report unchanged (the same fingerprint), so that 'cluster'
// evaluates the properties on the states the nodes have.
func TestStateReportsBundled(t *testing.T) {
	for _, sys := range systems.All() {
		w, err := host.NewWatcher(sys, protocol.Config{})
		if err != nil {
			t.Fatalf("%s: %v", sys.Name, err)
		}
		m := w.Model
		world, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		world.Chooser = func(n int) int { return rng.IntN(n) }
		s, err := world.InitialFrom(nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf []sim.Event
		for step := 0; step < 200; step++ {
			for i := 0; i < s.N(); i++ {
				n := s.Node(sim.NodeID(i))
				b, err := host.EncodeState(n)
				if err != nil {
					t.Fatalf("%s node %d: %v", sys.Name, i, err)
				}
				fresh := m.Spec.New(sim.NodeID(i))
				if err := host.DecodeState(b, fresh); err != nil {
					t.Fatalf("%s node %d: %v", sys.Name, i, err)
				}
				if sim.Fingerprint(fresh) != sim.Fingerprint(n) {
					t.Fatalf("%s node %d: sent %s, got %s", sys.Name, i, sim.Dump(n), sim.Dump(fresh))
				}
			}
			buf = world.Enabled(s, buf[:0])
			if len(buf) == 0 {
				break
			}
			next, err := world.Apply(s, buf[rng.IntN(len(buf))], nil)
			if err != nil {
				break
			}
			s = next
		}
	}
}
