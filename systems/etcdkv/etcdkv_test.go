package etcdkv_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdkv"
)

// bugConfig is lease-read's configuration without the bug: the settings
// its needs supply (CheckQuorum and PreVote off, one partition).
var bugConfig = livecheck.Config{Params: map[string]string{"checkquorum": "off", "prevote": "off"}, Budget: sim.Budget{Partitions: 1}}

// lease-read alone, as `livecheck check etcdkv --bug lease-read` runs it
// with no time limit, is found as "not linearizable" by a walk from the
// depth bound, after 30 steps: client 0's put(x,1) is acknowledged
// through leader 0; node 1, elected in term 2 with the put in its log
// but not yet committed in its term, answers client 1's get from its
// store, 0. The message and the report name the stale get and the put
// it missed, on the steps of the path; the trace replays to the same
// violation and the same operations.
func TestLeaseReadFound(t *testing.T) {
	res, err := livecheck.Check(&etcdkv.System, livecheck.Options{Time: livecheck.NoTimeLimit,
		Config: livecheck.Config{Bugs: []string{"lease-read"}}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	const msg = "node 3: not linearizable (kv on key x): client 1's get(x) returned 0, which no order of the operations allows; " +
		"the operation: client 1: get(x) -> 0 (3-5); completed before it: client 0: put(x,1) -> 0 (1-2); " +
		"concurrent with it: client 0: get(x) pending (from 4); the spec's state before it can be: 1"
	if res.Verdict != livecheck.SafetyViolation || res.Property != "linearizable" || res.Message != msg {
		t.Fatalf("%s of %s: %s\nwant a safety violation of linearizable: %s", res.Verdict, res.Property, res.Message, msg)
	}
	if len(res.Path) != 30 {
		t.Errorf("found after %d steps, want 30", len(res.Path))
	}
	want := []string{
		"client 0: put(x,1) -> 0 (steps 7-13) before",
		"client 1: get(x) -> 0 (steps 15-30) illegal",
		"client 0: get(x) pending (from step 17) concurrent",
	}
	check := func(what string, h *reports.History) {
		t.Helper()
		var got []string
		for _, o := range h.Operations {
			got = append(got, o.String()+" "+o.Role)
		}
		if !slices.Equal(got, want) || h.Illegal != 1 {
			t.Errorf("%s: operations %q, illegal %d; want %q, 1", what, got, h.Illegal, want)
		}
	}
	check("the check", res.Report("", "").History)
	rep, err := livecheck.ReplayFrom(&etcdkv.System, res.Config, res.Init, res.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != livecheck.SafetyViolation || rep.Message != msg {
		t.Errorf("replayed: %s: %s", rep.Verdict, rep.Message)
	}
	check("the replay", rep.History)
}

// The correct store is silent at lease-read's settings over seeds 1-3
// (1-30 with LIVECHECK_SLOW_TESTS=1; seed 1 with -short): no safety
// violation within depth 6, and every walk from the bound (1,000 steps)
// reaches a state where the replicas know one leader and every
// acknowledged put is applied everywhere, then goes on checking safety
// for twice the steps it took (the default), as the walk that finds
// lease-read does. About 9 s of CPU a seed. It is a smaller check than
// the one that finds the bug (depth 8, walks of 5,000 steps), which
// walks from every state at its bound: the correct store's take the
// minute of the default budget, and end when it does, so what they
// cover would depend on the machine's speed.
func TestCorrectSilent(t *testing.T) {
	// 3 seeds in the long tier: systems_test's TestCorrectSilentAtBugConfigs
	// runs 30 at these settings, walks stopping at recovery.
	seeds := int64(3)
	if testing.Short() {
		seeds = 1
	}
	if os.Getenv("LIVECHECK_SLOW_TESTS") != "" {
		seeds = 30
	}
	for seed := int64(1); seed <= seeds; seed++ {
		res, err := livecheck.Check(&etcdkv.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: bugConfig, Seed: seed,
			Depth: 6, WalkDepth: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK || res.Live.Suspects != 0 {
			t.Errorf("seed %d: %s of %q, %d suspects: %s", seed, res.Verdict, res.Property, res.Live.Suspects, res.Message)
		}
	}
}

// The search with linearizable reaches exactly these states at depth 8,
// at the defaults (2 clients x 2 operations, PreVote and CheckQuorum on),
// with the history recorded (on) and without (off): a change in either
// number must be explained. They are equal because no operation returns
// within 8 steps (an election, then a round of raft, come first; none
// does within 10 with PreVote off either), and the history adds only
// what returned to what the sessions' state already holds.
func TestStates(t *testing.T) {
	for _, c := range []struct {
		history string
		states  int64
	}{{"on", 39842}, {"off", 39842}} {
		cfg := livecheck.Config{Params: map[string]string{"history": c.history}}
		res, err := livecheck.Check(&etcdkv.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Seed: 1, Depth: 8, NoWalks: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK || res.Stats.States != c.states {
			t.Errorf("history %s: %s (%s), %d states; want ok, %d", c.history, res.Verdict, res.Message, res.Stats.States, c.states)
		}
	}
}

// A bad parameter is an error that says what is valid.
func TestBadParam(t *testing.T) {
	for param, want := range map[string]string{"history": "--history must be on or off", "checkquorum": "--checkquorum must be on or off"} {
		_, err := livecheck.Check(&etcdkv.System, livecheck.Options{Config: livecheck.Config{Params: map[string]string{param: "maybe"}}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=maybe: %v", param, err)
		}
	}
}
