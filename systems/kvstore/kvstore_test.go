package kvstore_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/kvstore"
)

// Each bug is found alone at the default configuration as "not
// linearizable", at the depth and state count pinned here, its message
// naming the operation that cannot be ordered and the one before it;
// the trace replays to the same violation.
func TestBugsFound(t *testing.T) {
	// The three slips show the same history: client 0's put(x,1) is
	// acknowledged, then client 1's get(x) returns the 0 before it.
	const msg = "node 3: not linearizable (kv on key x): client 1's get(x) returned 0, which no order of the operations allows; " +
		"the operation: client 1: get(x) -> 0 (3-4); completed before it: client 0: put(x,1) -> 0 (1-2); the spec's state before it can be: 1"
	cases := []struct {
		bug    string
		steps  int
		states int64
	}{
		{"read-backup", 8, 4837},
		{"early-ack", 8, 6569},
		{"stale-lease", 11, 23900},
	}
	for _, c := range cases {
		t.Run(c.bug, func(t *testing.T) {
			res, err := livecheck.Check(&kvstore.System, livecheck.Options{Time: livecheck.NoTimeLimit,
				Config: livecheck.Config{Bugs: []string{c.bug}}, Seed: 1, NoWalks: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != livecheck.SafetyViolation || res.Property != "linearizable" || res.Message != msg {
				t.Fatalf("%s of %s: %s\nwant a safety violation of linearizable: %s", res.Verdict, res.Property, res.Message, msg)
			}
			if len(res.Path) != c.steps || res.Stats.States != c.states {
				t.Errorf("found after %d steps, %d states; want %d and %d", len(res.Path), res.Stats.States, c.steps, c.states)
			}
			// The trace replays to the same violation.
			rep, err := livecheck.Replay(&kvstore.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != livecheck.SafetyViolation || rep.Message != msg {
				t.Errorf("replayed: %s: %s", rep.Verdict, rep.Message)
			}
		})
	}
}

// The correct store is silent at the default depth, and with a reset,
// a drop and a partition over 30 seeds (the seeds vary the walks) at a
// smaller depth, with 3 clients.
func TestCorrectSilent(t *testing.T) {
	res, err := livecheck.Check(&kvstore.System, livecheck.Options{Time: livecheck.NoTimeLimit, Seed: 1, NoWalks: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.OK || res.Stats.States != 148262 {
		t.Errorf("%s (%s), %d states; want ok, 148262", res.Verdict, res.Message, res.Stats.States)
	}
	seeds := int64(30)
	if testing.Short() {
		seeds = 3
	}
	cfg := livecheck.Config{Budget: sim.Budget{Resets: 1, Drops: 1, Partitions: 1}, Params: map[string]string{"clients": "3"}}
	for seed := int64(1); seed <= seeds; seed++ {
		res, err := livecheck.Check(&kvstore.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Seed: seed, Depth: 7, WalkDepth: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK {
			t.Fatalf("seed %d: %s of %s: %s", seed, res.Verdict, res.Property, res.Message)
		}
	}
}

// A bad parameter is an error that says what is valid.
func TestBadParam(t *testing.T) {
	_, err := livecheck.Check(&kvstore.System, livecheck.Options{Config: livecheck.Config{Params: map[string]string{"history": "maybe"}}})
	if err == nil || !strings.Contains(err.Error(), "--history must be on or off") {
		t.Errorf("history=maybe: %v", err)
	}
}
