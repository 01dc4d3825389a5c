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
