package kvstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
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

// Walks check the history on every step they take: a History checks
// itself as it records, and a walk checks the safety properties on each
// state it reaches. With a liveness property beside linearizable (every
// session's operations return) and a search bound too shallow for the
// stale read, a walk from the depth bound finds it; the report puts the
// operations on the walk's steps, and the trace replays.
func TestWalkFindsStaleRead(t *testing.T) {
	sys := kvstore.System
	build := sys.Build
	sys.Build = func(cfg protocol.Config) (*protocol.Model, error) {
		m, err := build(cfg)
		if err != nil {
			return nil, err
		}
		// The driver's calls are always enabled until made: every
		// state recovers.
		m.Properties = append(m.Properties, properties.EventuallyEach("called", "the driver hands each session its operations",
			func(c *kvstore.Clients) bool {
				return !slices.ContainsFunc(c.Sessions, func(s kvstore.Session) bool { return s.Seq+len(s.Queue) < 2 })
			}))
		return m, nil
	}
	res, err := livecheck.Check(&sys, livecheck.Options{Time: livecheck.NoTimeLimit,
		Config: livecheck.Config{Bugs: []string{"read-backup"}}, Seed: 1, Depth: 4})
	if err != nil {
		t.Fatal(err)
	}
	const msg = "node 3: not linearizable (kv on key x): client 0's get(x) returned 0, which no order of the operations allows; " +
		"the operation: client 0: get(x) -> 0 (5-7); completed before it: client 0: put(x,1) -> 0 (1-4), client 1: get(x) -> 1 (2-3); " +
		"concurrent with it: client 1: put(x,2) pending (from 6); the spec's state before it can be: 1"
	rep := res.Report("", "")
	if res.Verdict != livecheck.SafetyViolation || res.Message != msg || len(res.Path) != 29 || rep.Liveness == nil || rep.Liveness.FoundAfterLive != 5 {
		t.Fatalf("%s of %s after %d steps: %s; want it found by a walk after 29 steps: %s", res.Verdict, res.Property, len(res.Path), res.Message, msg)
	}
	// A pending write, on the walk's steps; the prefix's order is the
	// write, then the read of 1.
	want := []string{
		"client 0: put(x,1) -> 0 (steps 1-17) before",
		"client 1: get(x) -> 1 (steps 6-11) before",
		"client 0: get(x) -> 0 (steps 19-29) illegal",
		"client 1: put(x,2) pending (from step 24) concurrent",
	}
	check := func(what string, h *reports.History) {
		t.Helper()
		var got []string
		for _, o := range h.Operations {
			got = append(got, o.String()+" "+o.Role)
		}
		if !slices.Equal(got, want) || h.Illegal != 2 || !slices.Equal(h.Prefix.Order, []int{0, 1}) || h.Prefix.Events != 6 {
			t.Errorf("%s: operations %q, illegal %d, prefix %+v; want %q, 2, 6 events in the order [0 1]", what, got, h.Illegal, h.Prefix, want)
		}
	}
	check("the check", rep.History)
	replayed, err := livecheck.Replay(&sys, res.Config, res.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if replayed.Message != msg {
		t.Fatalf("replayed: %s", replayed.Message)
	}
	check("the replay", replayed.History)
}
