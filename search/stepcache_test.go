package search_test

import (
	"reflect"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
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
