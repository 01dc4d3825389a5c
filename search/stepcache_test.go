package search_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
	"github.com/livecheck/livecheck/systems/onepaxos"
	"github.com/livecheck/livecheck/systems/transport"
)

// The step cache answers the steps of stacked nodes (transport's and
// OnePaxos's layers) as it does a plain node's: the search makes the same
// states, transitions, periphery, closed dead region and violation with
// it as without it, correct and with each bug, on 1 and 2 workers.
func TestStepCacheStacksSame(t *testing.T) {
	defer func() { noStepCache = false }()
	noFaults := sim.Budget{}
	acc := map[string]string{"acceptor-change": "on"}
	for _, tc := range []struct {
		name string
		sys  *livecheck.System
		cfg  livecheck.Config
		opts search.Options
	}{
		{"transport", &transport.System, livecheck.Config{}, search.Options{Depth: 24}},
		{"transport reduced", &transport.System, livecheck.Config{}, search.Options{Depth: 26, Reduce: true}},
		{"transport syn-dup", &transport.System, livecheck.Config{Bugs: []string{"syn-dup"}, Budget: noFaults}, search.Options{Depth: 30}},
		{"transport syn-order", &transport.System, livecheck.Config{Bugs: []string{"syn-order"}}, search.Options{Depth: 22}},
		{"transport stale-retransmit", &transport.System, livecheck.Config{Bugs: []string{"stale-retransmit"}, Budget: noFaults}, search.Options{Depth: 30}},
		{"onepaxos", &onepaxos.System, livecheck.Config{}, search.Options{Depth: 14}},
		{"onepaxos acceptor change", &onepaxos.System, livecheck.Config{Params: acc}, search.Options{Depth: 13, Reduce: true}},
		{"onepaxos init-acceptor", &onepaxos.System, livecheck.Config{Bugs: []string{"init-acceptor"}, Budget: noFaults}, search.Options{Depth: 20}},
		{"onepaxos forget-proposal", &onepaxos.System, livecheck.Config{Bugs: []string{"forget-proposal"}, Params: acc}, search.Options{Depth: 14, Reduce: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range []int{1, 2} {
				noStepCache = true
				off := search1(t, tc.sys, tc.cfg, tc.opts, w)
				noStepCache = false
				on := search1(t, tc.sys, tc.cfg, tc.opts, w)
				if !reflect.DeepEqual(off.stats, on.stats) || !reflect.DeepEqual(off.pairs, on.pairs) || off.res.Dead != on.res.Dead ||
					off.res.Complete != on.res.Complete || off.res.Exhausted != on.res.Exhausted {
					t.Fatalf("%d workers: without the cache %+v dead %x\nwith it %+v dead %x", w, off.stats, off.res.Dead, on.stats, on.res.Dead)
				}
				v, u := off.res.Violation, on.res.Violation
				if (v == nil) != (u == nil) || v != nil && (v.Property != u.Property || v.Path.Hash() != u.Path.Hash()) {
					t.Fatalf("%d workers: violation %v without the cache, %v with it", w, v, u)
				}
				if w == 1 {
					t.Logf("%d states, %d transitions, violation %v, dead %x", on.stats.States, on.stats.Transitions, u != nil, on.res.Dead)
				}
			}
		})
	}
}

// The step cache stands in for the handlers it answers on every bundled
// system: each one's search, correct and with each bug, its default
// configuration, unreduced and reduced, makes the same states,
// transitions, periphery and violation with the cache as without it (a
// check of the cache, whose answers the other cross-checks take as
// given: the oracle steps through the same worlds).
func TestStepCacheSameEverySystem(t *testing.T) {
	defer func() { noStepCache = false }()
	maxStates := 6000
	if testing.Short() {
		maxStates = 1500
	}
	searches, violated := 0, 0
	for _, sys := range systems.All() {
		cfgs := []livecheck.Config{{}}
		for _, b := range sys.Bugs {
			bug := b.Name
			if b.Arg != "" {
				bug += "=" + b.Example
			}
			cfgs = append(cfgs, livecheck.Config{Bugs: []string{bug}})
		}
		for _, cfg := range cfgs {
			for _, reduce := range []bool{false, true} {
				name := fmt.Sprintf("%s %v reduce=%v", sys.Name, cfg.Bugs, reduce)
				opts := search.Options{Depth: 1000, MaxStates: maxStates, Reduce: reduce}
				noStepCache = true
				off := search1(t, sys, cfg, opts, 1)
				noStepCache = false
				on := search1(t, sys, cfg, opts, 1)
				if !reflect.DeepEqual(off.stats, on.stats) || !reflect.DeepEqual(off.pairs, on.pairs) || off.res.Dead != on.res.Dead {
					t.Fatalf("%s: without the cache %+v dead %x\nwith it %+v dead %x", name, off.stats, off.res.Dead, on.stats, on.res.Dead)
				}
				v, u := off.res.Violation, on.res.Violation
				if (v == nil) != (u == nil) || v != nil && (v.Property != u.Property || v.Path.Hash() != u.Path.Hash()) {
					t.Fatalf("%s: violation %v without the cache, %v with it", name, v, u)
				}
				searches++
				if u != nil {
					violated++
				}
			}
		}
	}
	// Worth something only if some searches end at a violation, and
	// some do not.
	t.Logf("%d searches, %d of them ended at a violation", searches, violated)
	if violated < searches/8 || violated > searches/2 {
		t.Errorf("%d of %d searches ended at a violation", violated, searches)
	}
}
