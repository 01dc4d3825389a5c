package onepaxos_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/onepaxos"
)

// check runs `check onepaxos --bug init-acceptor [--mode local]` as the
// CLI does with no other flag (the zero budget leaves the configuration
// to the bug's needs), and no time budget.
func check(t *testing.T, opts livecheck.Options) *livecheck.Result {
	t.Helper()
	if opts.Time == 0 {
		opts.Time = livecheck.NoTimeLimit // bounded by depth, not the clock
	}
	res, err := livecheck.Check(&onepaxos.System, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// init-acceptor is found from the initial state in both modes: node 0,
// its own acceptor by its cache, chooses its 100, and node 1 or 2 the 102
// that node 2, made leader by the utility, has accepted by node 1. The
// trace replays to the same violation, whose last step is the Learn of
// 102 from node 1, the real acceptor.
func TestInitAcceptorFound(t *testing.T) {
	for _, tc := range []struct {
		mode, message, last string
		steps               int
	}{
		// Breadth-first: a shortest path, 3 steps of node 0 and 13 of
		// the leader change and of epoch 2.
		{"global", "nodes 0 and 1: one chose 100, the other 102",
			"deliver Carry{Msg:Learn{Epoch:2 Value:102}} 1->1 [utility]", 16},
		{"local", "nodes 0 and 2: one chose 100, the other 102",
			"deliver Carry{Msg:Learn{Epoch:2 Value:102}} 1->2 [utility]", 24},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			res := check(t, livecheck.Options{Config: livecheck.Config{Bugs: []string{"init-acceptor"}, Budget: sim.Budget{}}, Mode: tc.mode})
			if res.Verdict != livecheck.SafetyViolation || res.Property != onepaxos.Agreement.Name || res.Message != tc.message {
				t.Fatalf("got %s of %q (%s), want a safety violation of agreement: %s", res.Verdict, res.Property, res.Message, tc.message)
			}
			if res.Config.Nodes != 3 || livecheck.Counts(res.Config.Budget) != (sim.Budget{}) {
				t.Errorf("found at %d nodes, budget %+v; want 3 nodes, no failures", res.Config.Nodes, res.Config.Budget)
			}
			rep, err := livecheck.Replay(&onepaxos.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != res.Verdict || rep.Property != res.Property || rep.Message != res.Message || len(rep.Steps) != tc.steps || len(res.Path) != tc.steps {
				t.Fatalf("the trace of %d steps replays to %s of %q (%s) after %d; want %d steps", len(res.Path), rep.Verdict, rep.Property, rep.Message, len(rep.Steps), tc.steps)
			}
			if last := rep.Steps[len(rep.Steps)-1].Text; last != tc.last {
				t.Errorf("the last step is %q, want %q", last, tc.last)
			}
			// Node 0 accepted its own proposal: it was its own acceptor.
			n0 := properties.Node[*onepaxos.Replica](rep.Final, 0)
			if n0.AccEpoch != 1 || n0.AccValue != 100 || n0.Chosen != 100 {
				t.Errorf("node 0 at the end: %+v; want it to have accepted and chosen 100 in epoch 1", *n0)
			}
		})
	}
}

// The steps of the stack name the layer that handled them, and log lines
// the layer that wrote them: the driver's calls go to 1Paxos, the
// network's messages to the utility, which proposes the leader change to
// the Paxos of its first slot, tags that Paxos's messages and log lines
// with the slot, and hands the decision up.
func TestStepsNameLayers(t *testing.T) {
	t.Parallel()
	res := check(t, livecheck.Options{Config: livecheck.Config{Bugs: []string{"init-acceptor"}, Budget: sim.Budget{}}})
	rep, err := livecheck.Replay(&onepaxos.System, res.Config, res.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var texts, logs []string
	for _, s := range rep.Steps {
		texts = append(texts, s.Text)
		logs = append(logs, s.Logs...)
	}
	for _, want := range []string{
		"app Propose{Value:100} at 0 [onepaxos]",
		"app Suspect{} at 2 [onepaxos]",
		"deliver Slot{Index:0 Msg:Prepare{Ballot:3}} 2->1 [utility]",
		"deliver Carry{Msg:Accept{Epoch:1 Value:100}} 0->0 [utility]",
	} {
		if !slices.Contains(texts, want) {
			t.Errorf("no step %q among %q", want, texts)
		}
	}
	for _, want := range []string{
		"2 utility: propose {Leader:2} in slot 0 (value 1002)",
		"2 utility: slot 0: chose 1002 (ballot 3 accepted by {0,1})",
		"2 onepaxos: leader of epoch 2 with acceptor 1",
		"0 onepaxos: chose 100 (epoch 1, accepted by 0)",
	} {
		if !slices.Contains(logs, want) {
			t.Errorf("no log line %q among %q", want, logs)
		}
	}
	if d := sim.DumpNode(rep.Final, 2); !strings.HasPrefix(d, "utility:{slot0{acceptor{") || !strings.Contains(d, " proposer{ballot:3 value:1002 ") ||
		!strings.Contains(d, " learner{votes:b3={0,1} chosen:1002}} slot1{acceptor{promised:0 accepted:-} learner{votes:-}}} onepaxos:{Leader:2 Acceptor:1 Epoch:2 Prepared:true Proposed:102 ") {
		t.Errorf("node 2 dumps as %s", d)
	}
}

// The correct version is silent at the bug's configuration: in global
// mode over seeds 1-10 (silentSeeds), with the leader
// change reached (the canary); in local mode it is proved, every
// preliminary violation refuted by a real-run search of 11.4M steps,
// which the default budget of 2M leaves undecided (inconclusive).
func TestCorrectSilent(t *testing.T) {
	seeds := silentSeeds()
	cfg, err := onepaxos.System.Normalize(livecheck.Config{Bugs: []string{"init-acceptor"}, Budget: sim.Budget{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bugs = nil
	t.Run("global", func(t *testing.T) {
		t.Parallel()
		for seed := int64(1); seed <= seeds; seed++ {
			res := check(t, livecheck.Options{Config: cfg, Seed: seed})
			if res.Verdict != livecheck.OK || !res.Complete {
				t.Fatalf("seed %d: %s of %q: %s", seed, res.Verdict, res.Property, res.Message)
			}
			if len(res.Sometimes) != 1 || !res.Sometimes[0].Reached || res.Sometimes[0].Step != 9 {
				t.Errorf("seed %d: canary %+v, want leader-changed reached at step 9", seed, res.Sometimes)
			}
		}
	})
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		if testing.Short() {
			t.Skip("a local check of 6 s")
		}
		res := check(t, livecheck.Options{Config: cfg, Mode: "local", MaxVerify: 20_000_000})
		if res.Verdict != livecheck.OK || !res.Complete {
			t.Fatalf("%s of %q: %s", res.Verdict, res.Property, res.Message)
		}
		if l := res.Local; l.Preliminary != 132_858 || l.Refuted != 116_538 || l.GaveUp != 0 || l.Sequences != 11_362_427 {
			t.Errorf("local: %d preliminary, %d refuted by summaries, %d verifications gave up, %d steps; want 132858, 116538, 0, 11362427",
				l.Preliminary, l.Refuted, l.GaveUp, l.Sequences)
		}
		res = check(t, livecheck.Options{Config: cfg, Mode: "local"})
		if res.Verdict != livecheck.Inconclusive || !strings.Contains(res.Message, "ran out of its budget") {
			t.Errorf("at the default verification budget: %s (%s), want inconclusive, out of budget", res.Verdict, res.Message)
		}
	})
}

// The state space of the correct version, pinned at depth 10 (its whole
// space is 790,572 states within 29 steps): a change in these numbers
// changes what the search explores and must be explained.
func TestStateCounts(t *testing.T) {
	t.Parallel()
	res := check(t, livecheck.Options{Depth: 10, NoWalks: true})
	if res.Verdict != livecheck.OK || res.Stats.States != 2358 || res.Stats.Transitions != 4803 {
		t.Errorf("depth 10: %s, %d states, %d transitions; want ok, 2358 and 4803", res.Verdict, res.Stats.States, res.Stats.Transitions)
	}
}

// The correct version's whole state space, searched to its end (no path
// is longer than 29 steps: nothing is retried), holds no violation, and
// every state where nothing more can happen is live: chosen holds in
// every run. About 5 s on an idle core: -short skips it.
func TestCorrectWholeSpace(t *testing.T) {
	if testing.Short() {
		t.Skip("790,572 states: runs without -short")
	}
	res := check(t, livecheck.Options{Depth: 40, NoWalks: true})
	if res.Verdict != livecheck.OK || !res.Exhausted || res.Stats.States != 790_572 || res.Stats.MaxDepth != 29 {
		t.Errorf("%s (%s), exhausted %v, %d states, depth %d; want ok, exhausted, 790572 states within 29 steps",
			res.Verdict, res.Message, res.Exhausted, res.Stats.States, res.Stats.MaxDepth)
	}
}

// --max-verify reaches local mode's verification: 1,000 steps leave the
// correct version's candidates undecided (exit 3, and the message says
// what to raise); 0 is a usage error, one line, exit 2.
func TestMaxVerifyFlag(t *testing.T) {
	for _, tc := range []struct {
		flag, stderr, stdout string
		code                 int
	}{
		{"0", "livecheck check: --max-verify must be at least 1\n", "", livecheck.ExitUsage},
		{"1000", "", "the search for a real run to the others ran out of its budget, so they are neither reported nor ruled out (raise --max-verify, or try --mode global)", livecheck.ExitInconclusive},
	} {
		var out, errs bytes.Buffer
		code := livecheck.Run([]string{"check", "onepaxos", "--mode", "local", "--quiet", "--out", t.TempDir(), "--max-verify", tc.flag}, &out, &errs, &onepaxos.System)
		if code != tc.code || errs.String() != tc.stderr || !strings.Contains(out.String(), tc.stdout) {
			t.Errorf("--max-verify %s: exit %d, stderr %q, stdout %q; want %d, %q, %q", tc.flag, code, errs.String(), out.String(), tc.code, tc.stderr, tc.stdout)
		}
	}
}

// Resets are refused with a message naming them, as Paxos refuses them.
func TestResetsRefused(t *testing.T) {
	_, err := livecheck.Check(&onepaxos.System, livecheck.Options{Config: livecheck.Config{Budget: sim.Budget{Resets: 1}}})
	if err == nil || !strings.Contains(err.Error(), "cannot be checked with resets") {
		t.Errorf("resets: %v, want an error refusing them", err)
	}
}

// The bugs of the acceptor change are found in global mode with no other
// flag (their needs turn the change on), by a walk from the depth bound:
// 100 is chosen through node 1 in epoch 1, node 2 leads epoch 2 and
// replaces node 1 with node 0, and has node 0 accept its own 102 in
// epoch 3 (node 0 and another node choose 100 and 102). With
// forget-proposal node 2 carried 100 into epoch 2 and then forgot it;
// with replace-early it asked for the change before it heard from node 1
// at all. Each trace replays to the same violation.
func TestAcceptorChangeBugsFound(t *testing.T) {
	for _, tc := range []struct {
		bug, message string
		logs         []string
	}{
		{"forget-proposal", "nodes 0 and 2: one chose 100, the other 102", []string{
			"2 onepaxos: epoch 2 carries forward 100 accepted in epoch 1",
			"2 onepaxos: acceptor 1 suspected: ask the utility to make 0 acceptor",
			"2 utility: propose {Acceptor:0} in slot 1 (value 2000)",
			"2 onepaxos: leader of epoch 3 with acceptor 0",
		}},
		{"replace-early", "nodes 0 and 2: one chose 100, the other 102", []string{
			"2 onepaxos: acceptor 1 suspected: ask the utility to make 0 acceptor",
			"2 utility: propose {Acceptor:0} in slot 1 (value 2000)",
			"2 onepaxos: leader of epoch 3 with acceptor 0",
			"2 onepaxos: chose 102 (epoch 3, accepted by 0)",
		}},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			res := check(t, livecheck.Options{Config: livecheck.Config{Bugs: []string{tc.bug}, Budget: sim.Budget{}}})
			if res.Verdict != livecheck.SafetyViolation || res.Property != onepaxos.Agreement.Name || res.Message != tc.message {
				t.Fatalf("got %s of %q (%s), want a safety violation of agreement: %s", res.Verdict, res.Property, res.Message, tc.message)
			}
			if res.Config.Nodes != 3 || res.Config.Param("acceptor-change") != "on" {
				t.Errorf("found at %d nodes, params %v; want 3 nodes, acceptor-change on", res.Config.Nodes, res.Config.Params)
			}
			rep, err := livecheck.Replay(&onepaxos.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != res.Verdict || rep.Property != res.Property || rep.Message != res.Message || len(rep.Steps) != len(res.Path) {
				t.Fatalf("the trace of %d steps replays to %s of %q (%s) after %d", len(res.Path), rep.Verdict, rep.Property, rep.Message, len(rep.Steps))
			}
			var logs []string
			for _, s := range rep.Steps {
				logs = append(logs, s.Logs...)
			}
			for _, want := range tc.logs {
				if !slices.Contains(logs, want) {
					t.Errorf("no log line %q among %q", want, logs)
				}
			}
			// Node 0, the backup, accepted 102 in epoch 3; node 1, the
			// old acceptor, accepted 100 in epoch 1 (and maybe again in
			// epoch 2).
			n0, n1 := properties.Node[*onepaxos.Replica](rep.Final, 0), properties.Node[*onepaxos.Replica](rep.Final, 1)
			if n0.AccEpoch != 3 || n0.AccValue != 102 || n1.AccValue != 100 {
				t.Errorf("at the end node 0 is %+v, node 1 %+v; want node 0 to have accepted 102 in epoch 3, node 1 100", *n0, *n1)
			}
		})
	}
}

// The parameter acceptor-change takes on and off; anything else, or a
// bug of the acceptor change with it off, is refused with a message saying what
// is valid.
func TestAcceptorChangeParam(t *testing.T) {
	for _, tc := range []struct {
		value, bug, err string
	}{
		{"yes", "", "--acceptor-change must be on or off, not \"yes\""},
		{"off", "forget-proposal", "bug forget-proposal needs --acceptor-change on"},
		{"", "replace-early", "bug replace-early needs --acceptor-change on"},
	} {
		cfg := livecheck.Config{Params: map[string]string{"acceptor-change": tc.value}}
		if tc.bug != "" {
			cfg.Bugs = []string{tc.bug}
		}
		_, err := livecheck.Check(&onepaxos.System, livecheck.Options{Config: cfg, Depth: 1, NoWalks: true})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("acceptor-change=%s, bug %q: %v, want an error saying %q", tc.value, tc.bug, err, tc.err)
		}
	}
}

// onConfig is forget-proposal's configuration (acceptor change on)
// without the bug: the correct version at the settings that find it.
// silentSeeds is how many seeds the silent tests take: 1 with -short,
// 10 in the long tier (each check of the acceptor change costs 13 s of
// CPU, 30 seeds of both tests 10 minutes), 30 with LIVECHECK_SLOW_TESTS=1.
func silentSeeds() int64 {
	switch {
	case testing.Short():
		return 1
	case os.Getenv("LIVECHECK_SLOW_TESTS") != "":
		return 30
	}
	return 10
}

func onConfig(t *testing.T) livecheck.Config {
	t.Helper()
	cfg, err := onepaxos.System.Normalize(livecheck.Config{Bugs: []string{"forget-proposal"}, Budget: sim.Budget{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bugs = nil
	return cfg
}

// With the acceptor change on, the correct version is silent in global
// mode over seeds 1-10 (silentSeeds): the backup takes over (the
// canary acceptor-changed, reached by a walk past the depth bound) and
// every node chooses (chosen holds on every walk). In local mode it is
// inconclusive, never a violation: the pairs of node states outgrow the
// memory bound before the search ends.
func TestAcceptorChangeSilent(t *testing.T) {
	cfg := onConfig(t)
	t.Run("global", func(t *testing.T) {
		t.Parallel()
		seeds := silentSeeds()
		for seed := int64(1); seed <= seeds; seed++ {
			res := check(t, livecheck.Options{Config: cfg, Seed: seed})
			if res.Verdict != livecheck.OK || !res.Complete {
				t.Fatalf("seed %d: %s of %q: %s", seed, res.Verdict, res.Property, res.Message)
			}
			if len(res.Sometimes) != 2 || !res.Sometimes[0].Reached || res.Sometimes[0].Step != 9 ||
				res.Sometimes[1].Property != onepaxos.AcceptorChanged.Name || !res.Sometimes[1].Reached || !res.Sometimes[1].ByWalk {
				t.Errorf("seed %d: canaries %+v, want leader-changed at step 9 and acceptor-changed by a walk", seed, res.Sometimes)
			}
		}
	})
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		if testing.Short() {
			t.Skip("a local check of 1 GB")
		}
		res := check(t, livecheck.Options{Config: cfg, Mode: "local", MaxMemory: 1 << 30})
		if res.Verdict != livecheck.Inconclusive && res.Verdict != livecheck.OK {
			t.Fatalf("%s of %q: %s; want inconclusive or ok", res.Verdict, res.Property, res.Message)
		}
	})
}

// The state space with the acceptor change on, pinned at depth 13, the
// first where the slot of the AcceptorChange is at work: node 2 can ask
// for the change at step 12 at the earliest (its two calls, 8 steps for
// the utility to decide the leader change, 2 for phase 1 with node 1),
// and one of its slot-1 Prepares be delivered at step 13. A change in these
// numbers changes what the search explores and must be explained.
func TestAcceptorChangeStateCounts(t *testing.T) {
	t.Parallel()
	res := check(t, livecheck.Options{Config: onConfig(t), Depth: 13, NoWalks: true})
	if res.Verdict != livecheck.OK || res.Stats.States != 28_598 || res.Stats.Transitions != 86_195 {
		t.Errorf("depth 13: %s, %d states, %d transitions; want ok, 28598 and 86195", res.Verdict, res.Stats.States, res.Stats.Transitions)
	}
}
