package search_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/paxos"
)

// run searches paxos (3 nodes, 2 proposers, the given bugs) to depth with
// the given number of workers, and returns the result with what the
// periphery holds, made again: one path per state.
func run(t *testing.T, workers, depth, maxStates int, bugs ...string) (*search.Result, []string) {
	t.Helper()
	_, m, err := paxos.System.Model(livecheck.Config{Nodes: 3, Bugs: bugs, Params: map[string]string{"proposers": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	world := func() *sim.World {
		w, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	opts := search.Options{Depth: depth, MaxStates: maxStates, Properties: m.Properties}
	for range workers - 1 {
		opts.Workers = append(opts.Workers, search.Worker{World: world()})
	}
	w := world()
	res, err := search.Global(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	var periphery []string
	for i := range res.Periphery.Len() {
		f, err := res.Periphery.At(w, i)
		if err != nil {
			t.Fatal(err)
		}
		periphery = append(periphery, fmt.Sprintf("%x %x", f.Path.Hash(), f.State.Fingerprint()))
	}
	res.Stats.Elapsed, res.Stats.Workers = 0, 0
	return res, periphery
}

// The search's levels are cut into chunks that the workers take in any
// order; what it finds must not depend on how many there are. Paxos at 3
// nodes and 2 proposers has levels of thousands of states: many chunks.
func TestWorkersSameResult(t *testing.T) {
	for _, tc := range []struct {
		name             string
		depth, maxStates int
		bugs             []string
		states           int64
		covered          int
	}{
		{"complete", 10, 0, nil, 7975, 10},
		{"max-states", 10, 5000, nil, 3223, 9},
		{"violation", 12, 0, []string{"quorum=1"}, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, p1 := run(t, 1, tc.depth, tc.maxStates, tc.bugs...)
			three, p3 := run(t, 3, tc.depth, tc.maxStates, tc.bugs...)
			if !reflect.DeepEqual(one.Stats, three.Stats) || one.Depth != three.Depth || one.Complete != three.Complete {
				t.Fatalf("1 worker: %+v\n3 workers: %+v", one.Stats, three.Stats)
			}
			if !reflect.DeepEqual(p1, p3) {
				t.Fatalf("the periphery differs: %d states with 1 worker, %d with 3", len(p1), len(p3))
			}
			if tc.states >= 0 && (one.Stats.States != tc.states || one.Depth != tc.covered) {
				t.Fatalf("%d states, depth %d covered; want %d, %d", one.Stats.States, one.Depth, tc.states, tc.covered)
			}
			if tc.bugs != nil {
				v1, v3 := one.Violation, three.Violation
				if v1 == nil || v3 == nil || v1.Property != "agreement" || v1.Path.Hash() != v3.Path.Hash() || v1.Message != v3.Message {
					t.Fatalf("violations differ or missing: %+v / %+v", v1, v3)
				}
			}
		})
	}
}
