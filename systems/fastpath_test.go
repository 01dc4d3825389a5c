package systems_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
)

// The step's fast paths against a full rehash, on every bundled system at
// its defaults (failures included where it has them) and on split Paxos
// (an observer, and symmetric acceptors): along random runs, each state
// as Apply makes it (a node its handler left as it was shares the
// parent's object and fingerprints; the state's fingerprint is combined
// from its parts) has the fingerprint, node fingerprints and key that
// the same step taken in place on a copy, with every node hashed again,
// gives (Own, Step, Seal); and the state made with World.NoFingerprints,
// as the search makes states again, has them once asked for
// (World.Fingerprint, World.Key). A fast path that hashed what it should
// not, or skipped what changed, fails here.
func TestFastPathsMatchFullRehash(t *testing.T) {
	type config struct {
		sys *protocol.System
		cfg protocol.Config
	}
	var configs []config
	for _, sys := range systems.All() {
		configs = append(configs, config{sys, protocol.Config{}})
	}
	paxos, err := systems.Lookup("paxos")
	if err != nil {
		t.Fatal(err)
	}
	configs = append(configs, config{paxos, protocol.Config{Nodes: 7, Params: map[string]string{"proposers": "2", "roles": "split"}}})
	for _, c := range configs {
		cfg, m, err := c.sys.Model(c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.sys.Name, err)
		}
		w, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatalf("%s: %v", c.sys.Name, err)
		}
		steps := 0
		for seed := uint64(1); seed <= 8; seed++ {
			rng := rand.New(rand.NewPCG(seed, 29))
			s, err := w.Initial()
			if err != nil {
				t.Fatalf("%s: %v", c.sys.Name, err)
			}
			for range 150 {
				evs := w.Enabled(s, nil)
				if len(evs) == 0 {
					break
				}
				ev := evs[rng.IntN(len(evs))]
				next, err := w.Apply(s, ev, nil)
				if err != nil {
					t.Fatalf("%s %+v, seed %d: %v", c.sys.Name, cfg, seed, err)
				}
				choices := slices.Clone(w.Last().Choices)
				where := func(what string) string {
					return c.sys.Name + " (" + w.Describe(s, ev) + "): " + what
				}
				own := w.Own(s)
				if err := w.Step(own, ev, choices); err != nil {
					t.Fatal(where(err.Error()))
				}
				if err := w.Seal(own); err != nil {
					t.Fatal(where(err.Error()))
				}
				w.NoFingerprints = true
				lazy, err := w.Apply(s, ev, choices)
				w.NoFingerprints = false
				if err != nil {
					t.Fatal(where(err.Error()))
				}
				for i := range s.N() {
					id := sim.NodeID(i)
					if a, b, l := next.NodeFingerprint(id), own.NodeFingerprint(id), lazy.NodeFingerprint(id); a != b || l != b {
						t.Fatalf("%s", where("node fingerprints differ"))
					}
				}
				if next.Fingerprint() != own.Fingerprint() || w.Fingerprint(lazy) != own.Fingerprint() {
					t.Fatalf("%s", where("state fingerprints differ"))
				}
				if next.Key() != own.Key() || w.Key(lazy) != own.Key() {
					t.Fatalf("%s", where("keys differ"))
				}
				s = next
				steps++
			}
		}
		if steps < 50 {
			t.Errorf("%s: %d steps checked: the runs end too soon to check much", c.sys.Name, steps)
		}
	}
}
