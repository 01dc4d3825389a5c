// Package prefix makes live prefixes: paths from the initial state, walked
// with failures disabled, that reach a state where the liveness property
// holds and keep it for a while. Many liveness bugs only show after a
// system first became live (a ring forms, then a node crashes and cannot
// rejoin); a check started from the end of a prefix reaches them, where an
// exhaustive search from the initial state never gets that far.
//
// # Usage
//
//	ps, err := prefix.Generate(world, s0, live, chooser, prefix.Options{Count: 5, Settle: 50})
//	// ps[i].Path replays from s0 to a live state; write each as a trace file
package prefix

import (
	"fmt"

	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// Options for Generate. Zero values take the defaults.
type Options struct {
	// Count is the number of distinct prefixes wanted (default 1).
	Count int
	// Settle is how many steps the liveness property must keep holding
	// after it first holds (default 0: the first live state ends it).
	Settle int
	// MaxSteps bounds each walk (default 100,000).
	MaxSteps int
	// MaxWalks bounds the walks tried for Count distinct prefixes
	// (default 20 per prefix).
	MaxWalks int
	Seed     uint64
}

// A Prefix is a path that reaches a live state and stays live for the
// settle steps.
type Prefix struct {
	Path sim.Path
	// FirstLive is the step after which the state was first live.
	FirstLive int
	// Walk is the number of the walk that made it (its seed derives from
	// the options' seed and this number).
	Walk int
}

// Generate walks from s0 in w, whose failure budget should be zero, until
// it has Count distinct prefixes. It fails if the walks do not get there.
func Generate(w *sim.World, s0 *sim.State, live func(*sim.State) bool, chooser walk.Chooser, opts Options) ([]Prefix, error) {
	if opts.Count <= 0 {
		opts.Count = 1
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 100_000
	}
	if opts.MaxWalks <= 0 {
		opts.MaxWalks = 20 * opts.Count
	}
	wk := walk.New(w, live, chooser, 0)
	var out []Prefix
	seen := map[uint64]bool{}
	for i := 0; len(out) < opts.Count && i < opts.MaxWalks; i++ {
		wk.Reseed(walk.Seed(opts.Seed, uint64(i)))
		p, first, err := one(wk, s0, opts)
		if err != nil {
			return out, err
		}
		if p == nil {
			continue
		}
		if h := p.Hash(); !seen[h] {
			seen[h] = true
			out = append(out, Prefix{Path: p, FirstLive: first, Walk: i})
		}
	}
	if len(out) < opts.Count {
		return out, fmt.Errorf("%d walks of up to %d steps made only %d distinct prefixes that become live and stay live for %d steps; raise --max-steps or lower --settle",
			opts.MaxWalks, opts.MaxSteps, len(out), opts.Settle)
	}
	return out, nil
}

// one walks until the state has been live for Settle steps in a row.
func one(wk *walk.Walker, s *sim.State, opts Options) (sim.Path, int, error) {
	wk.Settle = opts.Settle
	r, err := wk.Walk(s, opts.MaxSteps, true, true)
	if err != nil {
		return nil, 0, fmt.Errorf("a walk hit a handler error before the system became live: %w", err)
	}
	if r.LiveAt < 0 || r.Stuck || r.Steps == opts.MaxSteps && !settled(r, opts) {
		return nil, 0, nil
	}
	return r.Path, r.LiveAt, nil
}

// settled says whether a walk that used all its steps ended settled.
func settled(r *walk.Result, opts Options) bool {
	return r.LiveAt >= 0 && r.Steps-r.LiveAt >= opts.Settle
}
