package etcdraft_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// The correct adapter is silent with PreVote and CheckQuorum each on and
// off, with no failure, one reset, one drop and one partition: no safety
// violation within the depth, and every walk from the bound reaches a
// state where every node knows one leader and every acknowledged proposal
// is applied everywhere (never a suspect, let alone "dead"). The search is
// bounded by depth (6) and the walks by steps (1,000, stopping once live),
// not by the clock. Seeds 1-3 (1-10 with LIVECHECK_SLOW_TESTS=1); -short
// skips it.
func TestCorrectSilent(t *testing.T) {
	if testing.Short() {
		t.Skip("48 checks of raft: runs without -short")
	}
	seeds := 3
	if os.Getenv("LIVECHECK_SLOW_TESTS") != "" {
		seeds = 10
	}
	for _, pv := range []string{"on", "off"} {
		for _, cq := range []string{"on", "off"} {
			for _, f := range []struct {
				name   string
				budget sim.Budget
			}{{"none", sim.Budget{}}, {"reset", sim.Budget{Resets: 1}}, {"drop", sim.Budget{Drops: 1}}, {"partition", sim.Budget{Partitions: 1}}} {
				t.Run(fmt.Sprintf("prevote=%s,checkquorum=%s,%s", pv, cq, f.name), func(t *testing.T) {
					t.Parallel()
					cfg := livecheck.Config{Nodes: 3, Params: map[string]string{"prevote": pv, "checkquorum": cq}, Budget: f.budget}
					for seed := int64(1); seed <= int64(seeds); seed++ {
						res, err := livecheck.Check(&etcdraft.System, livecheck.Options{Config: cfg, Seed: seed, Time: livecheck.NoTimeLimit,
							Depth: 6, WalkDepth: 1000, StopAtLive: true})
						if err != nil {
							t.Fatal(err)
						}
						if res.Verdict != livecheck.OK || res.Live.Suspects != 0 {
							t.Errorf("seed %d: %s of %q, %d suspects: %s", seed, res.Verdict, res.Property, res.Live.Suspects, res.Message)
						}
					}
				})
			}
		}
	}
}
