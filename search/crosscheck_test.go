package search

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/livecheck/livecheck/internal/oracle"
	"github.com/livecheck/livecheck/internal/randproto"
	"github.com/livecheck/livecheck/sim"
)

// The randomized cross-check of the search's fast paths (issue 29): on
// small random programs (randproto), the exhaustive search on 1 and on 2
// workers, keeping states between levels as it does, keeping the first
// few of each level only (its other states are made again from states
// made again, and from kept ones: the chain recycles the node states and
// networks of the states it drops, unless a kept state may share them),
// or keeping none, with the step cache (sim/stepcache.go) or running
// every handler, finds the same states, by fingerprint, and the same statistics; and without symmetry
// its fingerprints are those of the oracle's states, found by a plain
// search that keys states on their dumps.

// engineSeeds is how many seeds of each generator the test runs (a
// fifth with -short).
const engineSeeds = 100

func TestCrossCheckEngines(t *testing.T) {
	seeds := uint64(engineSeeds)
	if testing.Short() {
		seeds /= 5
	}
	gens := []struct {
		name string
		gen  func(uint64) *randproto.Program
	}{{"plain", randproto.Generate}, {"faults", randproto.GenerateFaults}, {"symmetric", randproto.GenerateSymmetric},
		{"observer", randproto.WithObserver}, {"crashes", randproto.GenerateCrashes}}
	checked := 0
	for _, g := range gens {
		for seed := uint64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/%d", g.name, seed), func(t *testing.T) {
				if engineCheck(t, g.gen(seed)) {
					checked++
				}
			})
		}
	}
	if checked < len(gens)*int(seeds)/2 {
		t.Errorf("only %d of %d programs were compared with the oracle: tune the generator or the cap", checked, len(gens)*int(seeds))
	}
}

// engineCheck searches p's whole space in every configuration and
// compares. It returns whether the oracle's states were compared too.
func engineCheck(t *testing.T, p *randproto.Program) bool {
	t.Helper()
	spec := p.Spec()
	w, err := sim.NewWorld(spec)
	if err != nil {
		t.Fatalf("%v\n%s", err, p)
	}
	// The oracle runs every handler: no step cache.
	w.NoStepCache = true
	var want []uint64
	orc, err := oracle.Explore(w, nil, 3000)
	switch {
	case errors.Is(err, oracle.ErrTooBig):
		orc = nil
	case err != nil:
		t.Fatalf("oracle: %v\n%s", err, p)
	case len(orc.Violated) == 0 && len(spec.Symmetry) == 0:
		for _, s := range orc.All {
			want = append(want, s.Fingerprint())
		}
		slices.Sort(want)
		want = slices.Compact(want)
	}
	if orc == nil {
		return false // too large to search again and again here
	}
	defer func(k, b int) { maxKept, succBatch = k, b }(maxKept, succBatch)
	configs := []struct {
		keep, batch, workers int
		noCache              bool // every handler run, none from the step cache
	}{
		{maxKept, succBatch, 1, false}, {maxKept, succBatch, 1, true}, {maxKept, succBatch, 2, false}, {2, succBatch, 1, false},
		{2, 1, 2, false}, {0, 3, 1, true}, {0, succBatch, 2, false},
	}
	for _, reduce := range []bool{false, true} {
		var first *Result
		for _, cf := range configs {
			keep, workers := cf.keep, cf.workers
			maxKept, succBatch = cf.keep, cf.batch
			opts := Options{Depth: 1000, Fingerprints: true, Reduce: reduce, Observers: len(spec.Observers) > 0}
			for range workers - 1 {
				x, err := sim.NewWorld(spec)
				if err != nil {
					t.Fatal(err)
				}
				x.NoStepCache = cf.noCache
				opts.Workers = append(opts.Workers, Worker{World: x})
			}
			x, err := sim.NewWorld(spec)
			if err != nil {
				t.Fatal(err)
			}
			x.NoStepCache = cf.noCache
			res, err := Global(x, opts)
			if err != nil {
				t.Fatalf("keep %d, %d workers: %v\n%s", keep, workers, err, p)
			}
			if want != nil && !opts.Observers && !slices.Equal(res.Fingerprints, want) {
				t.Fatalf("reduce %v, %+v: %d states, the oracle %d (%d distinct fingerprints)\n%s",
					reduce, cf, res.Stats.States, orc.States, len(want), p)
			}
			if first == nil {
				first = res
				continue
			}
			if !slices.Equal(res.Fingerprints, first.Fingerprints) || res.Stats.Transitions != first.Stats.Transitions ||
				res.Stats.Slept != first.Stats.Slept || (res.Violation == nil) != (first.Violation == nil) || res.Depth != first.Depth {
				t.Fatalf("reduce %v, keep %d, %d workers: %d states, %d transitions, %d slept, depth %d, violation %v; as the search keeps states, on 1 worker: %d, %d, %d, %d, %v\n%s",
					reduce, keep, workers, res.Stats.States, res.Stats.Transitions, res.Stats.Slept, res.Depth, res.Violation != nil,
					first.Stats.States, first.Stats.Transitions, first.Stats.Slept, first.Depth, first.Violation != nil, p)
			}
		}
	}
	return want != nil
}
