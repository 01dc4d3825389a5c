package sim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/livecheck/livecheck/internal/randproto"
	"github.com/livecheck/livecheck/sim"
)

// The fingerprint of a state is worked out from parts that the steps keep
// up to date (each node's, and on datagrams the sum of the messages in
// flight), not from the whole state. Held to the naive key, the state's
// dump with the calls made and the failures used, on every transition of
// small random programs: states with one key have one fingerprint, states
// with two keys two; and the same in walks, which step states in place.
// With symmetry, each node's blind fingerprint is its blind hash.
func TestFingerprintMatchesDump(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() {
		seeds = 8
	}
	gens := []struct {
		name string
		gen  func(uint64) *randproto.Program
	}{{"plain", randproto.Generate}, {"faults", randproto.GenerateFaults}, {"symmetric", randproto.GenerateSymmetric}}
	for _, g := range gens {
		for seed := uint64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/%d", g.name, seed), func(t *testing.T) {
				p := g.gen(seed)
				w, err := sim.NewWorld(p.Spec())
				if err != nil {
					t.Fatal(err)
				}
				fingerprintsMatchDumps(t, p, w)
				walkFingerprints(t, p, w, seed)
			})
		}
	}
}

// dumpKey is the naive key of a state, as the oracle's.
func dumpKey(w *sim.World, s *sim.State) string {
	calls := ""
	for c := range w.Spec().Calls {
		calls += fmt.Sprint(s.CallMade(c))
	}
	return fmt.Sprintf("%s calls:%s used:%+v", s.Dump(), calls, s.Used())
}

// fingerprintsMatchDumps searches p's space, up to a few thousand states,
// checking every state it makes.
func fingerprintsMatchDumps(t *testing.T, p *randproto.Program, w *sim.World) {
	t.Helper()
	s0, err := w.Initial()
	if err != nil {
		return // a panic in Init: nothing to step
	}
	byKey, byFP := map[string]uint64{}, map[uint64]string{}
	check := func(s *sim.State) bool {
		if !sim.NetSumOK(s) {
			t.Fatalf("the network sum is not that of the messages in flight:\n%s\n%s", s.Dump(), p)
		}
		if !sim.BlindOK(w, s) {
			t.Fatalf("a node's blind fingerprint is not its blind hash:\n%s\n%s", s.Dump(), p)
		}
		k, fp := dumpKey(w, s), s.Fingerprint()
		if old, ok := byKey[k]; ok {
			if old != fp {
				t.Fatalf("one state, two fingerprints %#x and %#x:\n%s\n%s", old, fp, k, p)
			}
			return false
		}
		if old, ok := byFP[fp]; ok {
			t.Fatalf("two states, one fingerprint %#x:\n%s\n%s\n%s", fp, old, k, p)
		}
		byKey[k], byFP[fp] = fp, k
		return true
	}
	check(s0)
	queue := []*sim.State{s0}
	var evs []sim.Event
	var tape []int
	for len(queue) > 0 && len(byKey) < 3000 {
		s := queue[0]
		queue = queue[1:]
		evs = w.Enabled(s, evs[:0])
		for _, ev := range evs {
			tape = tape[:0]
			for {
				next, err := w.Apply(s, ev, tape)
				if err != nil {
					break // a handler panic: no state
				}
				if check(next) {
					queue = append(queue, next)
				}
				var more bool
				if tape, more = sim.NextTape(w.Last().Choices, w.Last().Bounds, tape); !more {
					break
				}
			}
		}
	}
}

// walkFingerprints runs a few random walks that step one state in place,
// sealing it after each step: its fingerprint must be the one Apply gives
// the same step.
func walkFingerprints(t *testing.T, p *randproto.Program, w *sim.World, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 29))
	for range 5 {
		s, err := w.Initial()
		if err != nil {
			return
		}
		own := w.Own(s)
		var evs []sim.Event
		for range 50 {
			evs = w.Enabled(s, evs[:0])
			if len(evs) == 0 {
				break
			}
			ev := evs[r.IntN(len(evs))]
			next, err := w.Apply(s, ev, nil)
			if err != nil {
				break
			}
			if err := w.Step(own, ev, nil); err != nil {
				t.Fatalf("Step fails where Apply does not: %v\n%s", err, p)
			}
			if err := w.Seal(own); err != nil {
				t.Fatal(err)
			}
			if !sim.NetSumOK(own) || own.Fingerprint() != next.Fingerprint() {
				t.Fatalf("a walk's state after %v: fingerprint %#x, Apply's %#x\n%s\n%s", ev, own.Fingerprint(), next.Fingerprint(), own.Dump(), p)
			}
			s = next
		}
	}
}
