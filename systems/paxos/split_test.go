package paxos_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/paxos"
)

// splitCfg is the split-roles configuration with p proposers and k
// acceptors.
func splitCfg(p, k int, bugs ...string) livecheck.Config {
	return livecheck.Config{Nodes: p + k + 1, Bugs: bugs, Params: map[string]string{"roles": "split", "proposers": fmt.Sprint(p)}}
}

// With split roles, messages go only where a role needs them, and the
// learner goes on counting after its choice: a quorum of another ballot
// with another value is a conflict, and votes past a ballot's quorum
// change nothing.
func TestSplitByHand(t *testing.T) {
	h := start(t, splitCfg(2, 3)) // proposers 0 and 1, acceptors 2 to 4, learner 5
	same(t, "the proposal sends", h.propose(0),
		"0->2 Prepare{Ballot:1}", "0->3 Prepare{Ballot:1}", "0->4 Prepare{Ballot:1}")
	same(t, "a prepare sends", h.deliver(0, 2, paxos.Prepare{Ballot: 1}),
		"2->0 Promise{Ballot:1 AcceptedBallot:0 AcceptedValue:0}")
	h.deliver(0, 3, paxos.Prepare{Ballot: 1})
	h.deliver(2, 0, paxos.Promise{Ballot: 1})
	same(t, "the quorum's Accept", h.deliver(3, 0, paxos.Promise{Ballot: 1}),
		"0->2 Accept{Ballot:1 Value:100}", "0->3 Accept{Ballot:1 Value:100}", "0->4 Accept{Ballot:1 Value:100}")
	for _, a := range []sim.NodeID{2, 3, 4} {
		same(t, "an accept sends", h.deliver(0, a, paxos.Accept{Ballot: 1, Value: 100}),
			fmt.Sprintf("%d->5 Accepted{Ballot:1 Value:100}", a))
	}
	h.want(2, func(n *paxos.Node) { n.Promised, n.AccBallot, n.AccValue = 1, 1, 100 })

	// The learner: one vote is no quorum, two are, a third changes nothing.
	for _, a := range []sim.NodeID{2, 3} {
		same(t, "a vote sends", h.deliver(a, 5, paxos.Accepted{Ballot: 1, Value: 100}))
	}
	h.want(5, func(n *paxos.Node) { n.Votes[0], n.Chosen = 0b1100, 100 })
	h.deliver(4, 5, paxos.Accepted{Ballot: 1, Value: 100})
	h.want(5, func(n *paxos.Node) { n.Votes[0], n.Chosen = 0b1100, 100 })
	if got, want := sim.Dump(h.s.Node(5)), "learner{votes:b1={2,3} chosen:100}"; got != want {
		t.Fatalf("dump:\n\t%s\nwant\n\t%s", got, want)
	}
	if got, want := sim.Dump(h.s.Node(0)), "proposer{ballot:1 value:100 promises:{2,3} adopt:- phase2:true}"; got != want {
		t.Fatalf("dump:\n\t%s\nwant\n\t%s", got, want)
	}
	if !paxos.Chosen.IsLive(h.s) {
		t.Fatal("chosen does not hold once the learner chose")
	}
}

// The split-roles spaces, exhausted and pinned: every state, and with
// the acceptors' symmetry, every class of states that are renamings of
// each other (with and without sleep sets, which keep the states). States
// and live states are sets, so they do not depend on the order of the
// search; transitions do, and are not pinned. 2 proposers and 3
// acceptors is the configuration that bench/spin compares with Spin.
func TestSplitStateCounts(t *testing.T) {
	for _, tc := range []struct {
		proposers, acceptors int
		bugs                 []string
		states, live         int64
		classes, liveClasses int64
	}{
		{1, 3, nil, 282, 81, 65, 18},
		{2, 1, nil, 44, 13, 44, 13},
		{2, 2, nil, 516, 49, 280, 31},
		{2, 3, nil, 170572, 69021, 29378, 11895},
		// With one acceptor a quorum of 1 is the majority: still safe.
		{2, 1, []string{"quorum=1"}, 44, 13, 44, 13},
	} {
		t.Run(fmt.Sprintf("%dx%d%v", tc.proposers, tc.acceptors, tc.bugs), func(t *testing.T) {
			_, m, err := paxos.System.Model(splitCfg(tc.proposers, tc.acceptors, tc.bugs...))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				symmetry, sleep bool
				states, live    int64
			}{{false, false, tc.states, tc.live}, {true, false, tc.classes, tc.liveClasses}, {true, true, tc.classes, tc.liveClasses}} {
				spec := m.Spec
				if !c.symmetry {
					spec.Symmetry = nil
				}
				w, err := sim.NewWorld(spec)
				if err != nil {
					t.Fatal(err)
				}
				res, err := search.Global(w, search.Options{Depth: 100, Properties: m.Properties, Reduce: c.sleep})
				if err != nil {
					t.Fatal(err)
				}
				if res.Violation != nil || !res.Complete || !res.Exhausted {
					t.Fatalf("symmetry %v sleep %v: violation %+v, complete %v, exhausted %v; want none, complete and exhausted", c.symmetry, c.sleep, res.Violation, res.Complete, res.Exhausted)
				}
				if st := res.Stats; st.States != c.states || st.Live != c.live {
					t.Fatalf("symmetry %v sleep %v: %d states, %d live; want %d and %d", c.symmetry, c.sleep, st.States, st.Live, c.states, c.live)
				}
			}
		})
	}
}

// Both bugs break agreement with split roles too: the learner learns a
// second value. The path replays to the same violation.
func TestSplitBugsFound(t *testing.T) {
	for _, tc := range []struct {
		bug       string
		acceptors int
	}{
		{"quorum=1", 2},
		{"last-promise", 3},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			res, err := livecheck.Check(&paxos.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: splitCfg(2, tc.acceptors, tc.bug), Depth: 100, NoWalks: true})
			if err != nil {
				t.Fatal(err)
			}
			learner := 2 + tc.acceptors
			// Either value may be learned first: the learner's deliveries
			// are postponed (an observer), which changes the order found.
			want := fmt.Sprintf("node %d chose 100, then a quorum of another ballot accepted 101", learner)
			other := fmt.Sprintf("node %d chose 101, then a quorum of another ballot accepted 100", learner)
			if res.Verdict != livecheck.SafetyViolation || res.Property != "agreement" || res.Message != want && res.Message != other {
				t.Fatalf("got %s of %q (%s), want a safety violation of agreement: %s", res.Verdict, res.Property, res.Message, want)
			}
			rep, err := livecheck.Replay(&paxos.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Reproduces(livecheck.SafetyViolation, "agreement") || rep.Message != res.Message || len(rep.Steps) != len(res.Path) {
				t.Fatalf("replay reached %s of %q (%s) in %d steps; want the search's %q in %d", rep.Verdict, rep.Property, rep.Message, len(rep.Steps), res.Message, len(res.Path))
			}
			if got := sim.Dump(rep.Final.Node(sim.NodeID(learner))); !strings.HasSuffix(got, " chosen:100 conflict:101}") && !strings.HasSuffix(got, " chosen:101 conflict:100}") {
				t.Fatalf("the learner ends as %s, want 100 and 101 chosen and in conflict", got)
			}
		})
	}
}

// Local model checking checks agreement of split roles without its
// pairwise form, which cannot see a learner's conflict with itself.
func TestSplitLocalFindsQuorum(t *testing.T) {
	res, err := livecheck.Check(&paxos.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: splitCfg(2, 2, "quorum=1"), Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "agreement" || !strings.Contains(res.Message, "accepted 101") {
		t.Fatalf("local mode: %s of %q (%s), want a safety violation of agreement", res.Verdict, res.Property, res.Message)
	}
}

func TestSplitConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  livecheck.Config
		want string
	}{
		{livecheck.Config{Params: map[string]string{"roles": "some"}}, `--roles must be all or split, not "some"`},
		{splitCfg(2, 0), "--roles split with 2 proposers needs at least 4 nodes (the proposers, one acceptor or more, the learner), not 3; --nodes 6 gives 3 acceptors"},
		{splitCfg(2, 3, "quorum=4"), `the quorum size K in --bug quorum=K must be a whole number from 1 to 3 (the number of acceptors), not "4"`},
	} {
		_, err := livecheck.Check(&paxos.System, livecheck.Options{Config: tc.cfg})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

// The learner of split roles is an observer: with its deliveries
// postponed the search keeps fewer states (pinned), says so, and still
// finds no violation in the correct protocol.
func TestSplitObservers(t *testing.T) {
	for _, tc := range []struct {
		acceptors int
		reduce    string
		states    int64
		postponed bool
	}{
		{2, "none", 516, false},
		{2, "observers", 314, true},
		{2, "sleep,symmetry", 280, false},
		{2, "", 175, true}, // the default: sleep,symmetry,observers
		{3, "", 4798, true},
	} {
		res, err := livecheck.Check(&paxos.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: splitCfg(2, tc.acceptors), Depth: 1000, NoWalks: true, Reduce: tc.reduce})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK || !res.Exhausted || res.Stats.States != tc.states || (res.Stats.Postponed > 0) != tc.postponed {
			t.Errorf("2x%d --reduce %q: %s, exhausted %v, %d states, %d postponed; want ok, exhausted, %d states, postponed %v",
				tc.acceptors, tc.reduce, res.Verdict, res.Exhausted, res.Stats.States, res.Stats.Postponed, tc.states, tc.postponed)
		}
	}
}
