package paxos_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/paxos"
)

// harness drives a world by hand, one event at a time.
type harness struct {
	t *testing.T
	m *livecheck.Model
	w *sim.World
	s *sim.State
}

func start(t *testing.T, cfg livecheck.Config) *harness {
	t.Helper()
	_, m, err := paxos.System.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, m: m, w: w, s: s}
}

// apply applies ev and returns what it sent, as "from->to Msg", sorted.
func (h *harness) apply(ev sim.Event) []string {
	h.t.Helper()
	next, err := h.w.Apply(h.s, ev, nil)
	if err != nil {
		h.t.Fatalf("%v: %v", ev, err)
	}
	h.s = next
	var sent []string
	for _, e := range h.w.Last().Sent {
		sent = append(sent, fmt.Sprintf("%d->%d %s", e.From, e.To, sim.Dump(e.Msg)))
	}
	slices.Sort(sent)
	return sent
}

// propose makes node id's driver call, which must be enabled.
func (h *harness) propose(id sim.NodeID) []string {
	h.t.Helper()
	for _, ev := range h.w.Enabled(h.s, nil) {
		if ev.Kind == sim.App && ev.Node == id {
			return h.apply(ev)
		}
	}
	h.t.Fatalf("no driver call enabled at node %d", id)
	return nil
}

func (h *harness) deliver(from, to sim.NodeID, msg sim.Message) []string {
	h.t.Helper()
	return h.apply(sim.Event{Kind: sim.Deliver, Node: to, Peer: from, Msg: sim.Fingerprint(msg)})
}

// want says node id's state is a fresh node of this configuration with the
// changes edit makes.
func (h *harness) want(id sim.NodeID, edit func(n *paxos.Node)) {
	h.t.Helper()
	want := h.m.Spec.New(id).(*paxos.Node)
	edit(want)
	if got := h.s.Node(id).(*paxos.Node); *got != *want {
		h.t.Fatalf("node %d is\n\t%s\nwant\n\t%s", id, sim.Dump(got), sim.Dump(want))
	}
}

func (h *harness) inFlight() []string {
	var out []string
	for _, e := range h.s.InFlight() {
		out = append(out, fmt.Sprintf("%d->%d %s", e.From, e.To, sim.Dump(e.Msg)))
	}
	slices.Sort(out)
	return out
}

func same(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n\t%s\nwant\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// toAll is msg sent by from to every node of three.
func toAll(from int, msg string) []string {
	return []string{fmt.Sprintf("%d->0 %s", from, msg), fmt.Sprintf("%d->1 %s", from, msg), fmt.Sprintf("%d->2 %s", from, msg)}
}

// One proposal on three nodes, every message delivered in one order: the
// value is chosen everywhere and the late messages change nothing.
func TestOneProposalByHand(t *testing.T) {
	h := start(t, livecheck.Config{})
	h.want(0, func(n *paxos.Node) {})
	if evs := h.w.Enabled(h.s, nil); len(evs) != 1 || evs[0].Kind != sim.App || evs[0].Node != 0 {
		t.Fatalf("enabled at the start: %v, want node 0's proposal only", evs)
	}

	same(t, "the proposal sends", h.propose(0), toAll(0, "Prepare{Ballot:1}")...)
	h.want(0, func(n *paxos.Node) { n.Ballot, n.Value = 1, 100 })

	for i := range sim.NodeID(3) {
		same(t, "prepare sends", h.deliver(0, i, paxos.Prepare{Ballot: 1}),
			fmt.Sprintf("%d->0 Promise{Ballot:1 AcceptedBallot:0 AcceptedValue:0}", i))
	}
	h.want(2, func(n *paxos.Node) { n.Promised = 1 })

	// One promise is no quorum; the second is, and phase 2 starts with the
	// proposer's own value since no acceptor accepted anything.
	same(t, "first promise sends", h.deliver(0, 0, paxos.Promise{Ballot: 1}))
	same(t, "second promise sends", h.deliver(1, 0, paxos.Promise{Ballot: 1}), toAll(0, "Accept{Ballot:1 Value:100}")...)
	same(t, "a promise after the quorum sends", h.deliver(2, 0, paxos.Promise{Ballot: 1}))
	h.want(0, func(n *paxos.Node) {
		n.Promised, n.Ballot, n.Value, n.Promises, n.Phase2 = 1, 1, 100, 0b011, true
	})

	for i := range sim.NodeID(3) {
		same(t, "accept sends", h.deliver(0, i, paxos.Accept{Ballot: 1, Value: 100}), toAll(int(i), "Accepted{Ballot:1 Value:100}")...)
	}
	h.want(1, func(n *paxos.Node) { n.Promised, n.AccBallot, n.AccValue = 1, 1, 100 })

	acc := paxos.Accepted{Ballot: 1, Value: 100}
	for i := range sim.NodeID(3) {
		h.deliver(2, i, acc)
		h.want(i, func(n *paxos.Node) {
			if i == 0 {
				n.Ballot, n.Value, n.Promises, n.Phase2 = 1, 100, 0b011, true
			}
			n.Promised, n.AccBallot, n.AccValue = 1, 1, 100
			n.Votes[0] = 0b100 // ballot 1: acceptor 2
		})
		h.deliver(0, i, acc)
		if c := h.s.Node(i).(*paxos.Node).Chosen; c != 100 {
			t.Fatalf("node %d chose %d after a quorum of Accepted, want 100", i, c)
		}
		h.deliver(1, i, acc) // after the choice: ignored
	}
	for i := range sim.NodeID(3) {
		h.want(i, func(n *paxos.Node) {
			if i == 0 {
				n.Ballot, n.Value, n.Promises, n.Phase2 = 1, 100, 0b011, true
			}
			n.Promised, n.AccBallot, n.AccValue = 1, 1, 100
			n.Votes[0], n.Chosen = 0b101, 100
		})
	}
	same(t, "in flight at the end", h.inFlight())
	if evs := h.w.Enabled(h.s, nil); len(evs) != 0 {
		t.Fatalf("enabled at the end: %v, want nothing", evs)
	}
	if !paxos.Chosen.IsLive(h.s) {
		t.Fatal("chosen does not hold once every node chose")
	}
	if err := paxos.Agreement.CheckSafety(h.s); err != nil {
		t.Fatal(err)
	}
	if got, want := sim.Dump(h.s.Node(0)), "acceptor{promised:1 accepted:100@b1} proposer{ballot:1 value:100 promises:{0,1} adopt:- phase2:true} learner{votes:b1={0,2} chosen:100}"; got != want {
		t.Fatalf("dump:\n\t%s\nwant\n\t%s", got, want)
	}
}

// The run that tells last-promise from the correct proposer: ballot 1 gets
// value 100 chosen by acceptors 0 and 1; the proposer of ballot 2 then hears
// first from acceptor 1, which accepted 100, and last from acceptor 2, which
// accepted nothing. The correct proposer carries 100 forward; the buggy one
// proposes its own 101 and a second value is chosen.
func TestCarryForwardByHand(t *testing.T) {
	for _, tc := range []struct {
		bug    string
		value  int
		broken bool
	}{
		{"", 100, false},
		{"last-promise", 101, true},
	} {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			cfg := livecheck.Config{Params: map[string]string{"proposers": "2"}}
			if tc.bug != "" {
				cfg.Bugs = []string{tc.bug}
			}
			h := start(t, cfg)
			h.propose(0)
			for _, i := range []sim.NodeID{0, 1} {
				h.deliver(0, i, paxos.Prepare{Ballot: 1})
				h.deliver(i, 0, paxos.Promise{Ballot: 1})
			}
			for _, i := range []sim.NodeID{0, 1} {
				h.deliver(0, i, paxos.Accept{Ballot: 1, Value: 100})
			}
			for _, i := range []sim.NodeID{0, 1} {
				h.deliver(i, 0, paxos.Accepted{Ballot: 1, Value: 100})
			}
			h.want(0, func(n *paxos.Node) {
				n.Promised, n.AccBallot, n.AccValue = 1, 1, 100
				n.Ballot, n.Value, n.Promises, n.Phase2 = 1, 100, 0b011, true
				n.Votes[0], n.Chosen = 0b011, 100
			})

			h.propose(1)
			same(t, "acceptor 1 promises", h.deliver(1, 1, paxos.Prepare{Ballot: 2}),
				"1->1 Promise{Ballot:2 AcceptedBallot:1 AcceptedValue:100}")
			same(t, "acceptor 2 promises", h.deliver(1, 2, paxos.Prepare{Ballot: 2}),
				"2->1 Promise{Ballot:2 AcceptedBallot:0 AcceptedValue:0}")
			h.deliver(1, 1, paxos.Promise{Ballot: 2, AcceptedBallot: 1, AcceptedValue: 100})
			accept := fmt.Sprintf("Accept{Ballot:2 Value:%d}", tc.value)
			same(t, "the quorum's Accept", h.deliver(2, 1, paxos.Promise{Ballot: 2}), toAll(1, accept)...)

			for _, i := range []sim.NodeID{1, 2} {
				h.deliver(1, i, paxos.Accept{Ballot: 2, Value: tc.value})
			}
			for _, i := range []sim.NodeID{1, 2} {
				h.deliver(i, 1, paxos.Accepted{Ballot: 2, Value: tc.value})
			}
			if c := h.s.Node(1).(*paxos.Node).Chosen; c != tc.value {
				t.Fatalf("node 1 chose %d, want %d", c, tc.value)
			}
			err := paxos.Agreement.CheckSafety(h.s)
			if !tc.broken {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != "node 0 chose 100 but node 1 chose 101" {
				t.Fatalf("agreement says %v, want node 0 chose 100 but node 1 chose 101", err)
			}
		})
	}
}

func TestAgreementPairAndFilter(t *testing.T) {
	chose := func(v int) *paxos.Node { return &paxos.Node{Chosen: v} }
	p := paxos.Agreement
	if p.Filter(0, chose(0)) || !p.Filter(0, chose(100)) {
		t.Fatal("the filter must keep exactly the nodes that chose a value")
	}
	for _, tc := range []struct {
		a, b int
		want string
	}{
		{0, 0, ""}, {0, 101, ""}, {100, 0, ""}, {100, 100, ""},
		{100, 101, "one node chose 100 and another chose 101"},
	} {
		err := p.Pair(chose(tc.a), chose(tc.b))
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("Pair(%d, %d) = %v, want %q", tc.a, tc.b, err, tc.want)
		}
	}
}

// The properties, evaluated on every state of a search, allocate nothing
// on a state that violates none (Agreement's loops over properties.All
// once allocated their bodies, about half the objects of a Paxos search).
func TestPropertiesAllocateNothing(t *testing.T) {
	h := start(t, livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}})
	h.propose(0)
	for _, p := range h.m.Properties {
		if a := testing.AllocsPerRun(100, func() {
			switch {
			case p.Check != nil:
				if err := p.CheckSafety(h.s); err != nil {
					t.Fatal(err)
				}
			case p.Live != nil:
				p.IsLive(h.s)
			}
		}); a != 0 {
			t.Errorf("%s allocates %v times a state", p.Name, a)
		}
	}
}

func check(t testing.TB, nodes, proposers, depth int, bugs ...string) *livecheck.Result {
	t.Helper()
	res, err := livecheck.Check(&paxos.System, livecheck.Options{
		Time:    livecheck.NoTimeLimit,
		Config:  livecheck.Config{Nodes: nodes, Bugs: bugs, Params: map[string]string{"proposers": fmt.Sprint(proposers)}},
		Depth:   depth,
		NoWalks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type counts struct {
	states, transitions int64
	maxDepth            int
	live                int64
}

func pin(t *testing.T, res *livecheck.Result, want counts) {
	t.Helper()
	st := res.Stats
	if got := (counts{st.States, st.Transitions, st.MaxDepth, st.Live}); got != want {
		t.Fatalf("states %d transitions %d max depth %d live %d; want %d %d %d %d",
			got.states, got.transitions, got.maxDepth, got.live, want.states, want.transitions, want.maxDepth, want.live)
	}
}

// The correct protocol's state space, pinned: a change in these numbers
// changes what the search explores and must be explained. Paths go on past
// live states (every node chose), so these count every state within the
// bound. The transitions are pinned without reduction (--reduce none) and
// with sleep sets, which reach the same states with fewer.
func TestCorrectStateCounts(t *testing.T) {
	for _, tc := range []struct {
		nodes, proposers, depth int
		exhausted               bool
		counts
		reduced int64
	}{
		{2, 1, 40, true, counts{34, 63, 11, 1}, 46},
		{2, 2, 40, true, counts{2145, 6700, 22, 322}, 4444},
		{3, 1, 40, true, counts{10974, 47446, 18, 1971}, 20911},
		// Three nodes and two proposers do not exhaust in a test's time:
		// the depth at which quorum=1 is found, with no violation.
		{3, 2, 10, false, counts{7975, 21831, 10, 0}, 13775},
	} {
		t.Run(fmt.Sprintf("nodes=%d,proposers=%d,depth=%d", tc.nodes, tc.proposers, tc.depth), func(t *testing.T) {
			for _, reduce := range []string{"none", "sleep"} {
				res, err := livecheck.Check(&paxos.System, livecheck.Options{
					Time:    livecheck.NoTimeLimit,
					Config:  livecheck.Config{Nodes: tc.nodes, Params: map[string]string{"proposers": fmt.Sprint(tc.proposers)}},
					Depth:   tc.depth,
					NoWalks: true,
					Reduce:  reduce,
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != livecheck.OK || !res.Complete || res.Exhausted != tc.exhausted {
					t.Fatalf("verdict %s (%s), complete %v, exhausted %v; want ok, complete, exhausted %v",
						res.Verdict, res.Message, res.Complete, res.Exhausted, tc.exhausted)
				}
				want := tc.counts
				if reduce == "sleep" {
					want.transitions = tc.reduced
				}
				pin(t, res, want)
			}
		})
	}
}

// The correct protocol with two proposers at the depth where last-promise
// is found: 1,952,263 states, 4.8 million transitions with sleep sets (9.25
// million without, `--reduce none`), about 20 s: -short skips it. (The first pin, 1,951,615 states, came from the
// depth-first search, which missed states first met at the bound and then
// nearer the start; breadth-first counts every state within 18 steps.)
func TestCorrectTwoProposersDeep(t *testing.T) {
	if testing.Short() {
		t.Skip("about 5 million transitions: runs without -short")
	}
	res := check(t, 3, 2, 18)
	if res.Verdict != livecheck.OK || !res.Complete {
		t.Fatalf("verdict %s (%s), complete %v; want ok", res.Verdict, res.Message, res.Complete)
	}
	pin(t, res, counts{1952263, 4817773, 18, 32658})
}

// Both bugs break agreement with two proposers on three nodes; the search
// finds each at the shortest depth where it can show, and the trace
// replays.
func TestBugsFound(t *testing.T) {
	for _, tc := range []struct {
		bug     string
		depth   int
		shorter bool // also check that depth-1 finds nothing (when cheap)
	}{
		{"quorum=1", 10, true},
		{"last-promise", 18, false},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			res := check(t, 3, 2, tc.depth, tc.bug)
			if res.Verdict != livecheck.SafetyViolation || res.Property != "agreement" {
				t.Fatalf("got %s of %q (%s), want a safety violation of agreement", res.Verdict, res.Property, res.Message)
			}
			if len(res.Path) != tc.depth {
				t.Errorf("path of %d steps, want %d", len(res.Path), tc.depth)
			}
			if !strings.Contains(res.Message, "chose 100") || !strings.Contains(res.Message, "chose 101") {
				t.Errorf("message %q does not name both values", res.Message)
			}
			rep, err := livecheck.Replay(&paxos.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Reproduces(livecheck.SafetyViolation, "agreement") || rep.Message != res.Message {
				t.Fatalf("replay reached %s of %q (%s); want the search's %q", rep.Verdict, rep.Property, rep.Message, res.Message)
			}
			if len(rep.Steps) != len(res.Path) {
				t.Errorf("replay stopped after %d steps, the path has %d", len(rep.Steps), len(res.Path))
			}
			// The pairwise form sees the same conflict in the final state.
			var chosen []sim.Node
			for i := range rep.Final.N() {
				if n := rep.Final.Node(sim.NodeID(i)); paxos.Agreement.Filter(sim.NodeID(i), n) {
					chosen = append(chosen, n)
				}
			}
			conflict := false
			for i := range chosen {
				for j := i + 1; j < len(chosen); j++ {
					conflict = conflict || paxos.Agreement.Pair(chosen[i], chosen[j]) != nil
				}
			}
			if !conflict {
				t.Error("no pair of node states in the violating state conflicts")
			}

			// The correct protocol at the same depth is safe (last-promise's
			// depth is too deep for a quick test: see
			// TestCorrectTwoProposersDeep).
			if tc.shorter {
				if res := check(t, 3, 2, tc.depth-1, tc.bug); res.Verdict != livecheck.OK {
					t.Errorf("found at depth %d already: %s (%s)", tc.depth-1, res.Verdict, res.Message)
				}
			}
		})
	}
}

// Both bugs need two proposers: with one, a single value is ever proposed,
// and its proposer's promises carry nothing accepted to choose between.
func TestBugsNeedTwoProposers(t *testing.T) {
	for _, bug := range []string{"last-promise", "quorum=1"} {
		res := check(t, 3, 1, 40, bug)
		if res.Verdict != livecheck.OK || !res.Exhausted {
			t.Errorf("%s with one proposer: %s (%s), exhausted %v; want ok over the whole space", bug, res.Verdict, res.Message, res.Exhausted)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  livecheck.Config
		want string
	}{
		{livecheck.Config{Params: map[string]string{"proposers": "0"}}, `--proposers must be a whole number from 1 to 3 (the number of nodes), not "0"`},
		{livecheck.Config{Params: map[string]string{"proposers": "9"}}, `--proposers must be a whole number from 1 to 3 (the number of nodes), not "9"`},
		{livecheck.Config{Params: map[string]string{"proposers": "two"}}, `--proposers must be a whole number from 1 to 3 (the number of nodes), not "two"`},
		{livecheck.Config{Bugs: []string{"quorum=0"}}, `the quorum size K in --bug quorum=K must be a whole number from 1 to 3 (the number of nodes), not "0"`},
		{livecheck.Config{Bugs: []string{"quorum=x"}}, `the quorum size K in --bug quorum=K must be a whole number from 1 to 3 (the number of nodes), not "x"`},
		{livecheck.Config{Nodes: 5, Bugs: []string{"quorum=6"}}, `the quorum size K in --bug quorum=K must be a whole number from 1 to 5 (the number of nodes), not "6"`},
		{livecheck.Config{Bugs: []string{"quorum"}}, "bug quorum takes a value: quorum=K"},
		{livecheck.Config{Bugs: []string{"last-promise=1"}}, `bug last-promise takes no value`},
		{livecheck.Config{Nodes: 9}, "paxos needs 2 to 8 nodes, not 9"},
		{livecheck.Config{Budget: sim.Budget{Resets: 1}}, "paxos cannot be checked with resets"},
	} {
		_, err := livecheck.Check(&paxos.System, livecheck.Options{Config: tc.cfg})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}
