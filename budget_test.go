package livecheck_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/internal/tbrec"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
)

// slowly is a correct protocol too large to search: each node's timer
// appends a digit it chooses to its value, for ever, and takes a
// millisecond to do so. A check of it at the default settings ends only
// by its budget.
type slowly struct {
	sim.BaseNode
	V int64
}

func (n *slowly) Init(ctx sim.Context) { ctx.SetTimer("digit") }
func (n *slowly) Timer(ctx sim.Context, _ string) {
	time.Sleep(time.Millisecond)
	n.V = n.V*10 + int64(ctx.Choose(10))
	ctx.SetTimer("digit")
}

var slowSystem = &livecheck.System{Name: "slowly", DefaultNodes: 2, Build: func(livecheck.Config) (*livecheck.Model, error) {
	return &livecheck.Model{
		Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &slowly{} }},
		Properties: []properties.Property{properties.Always("fine", "nothing to break", func(*sim.State) error { return nil })},
	}, nil
}}

// testWithin runs livecheck.Test of sys in a recorder whose deadline is
// left away, and fails t if it has not returned a minute past it (before
// Test had a budget, it ran until go test killed it, with no report).
func testWithin(t *testing.T, left time.Duration, sys *livecheck.System, opts ...livecheck.TestOption) (*tbrec.Recorder, time.Duration) {
	t.Helper()
	rec := &tbrec.Recorder{TB: t, Test: t.Name(), Until: time.Now().Add(left)}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		livecheck.Test(rec, sys, append(opts, livecheck.WithTraceDir(t.TempDir()))...)
	}()
	select {
	case <-done:
	case <-time.After(left + time.Minute):
		t.Fatalf("livecheck.Test still runs %v after it started, its deadline %v away", left+time.Minute, left)
	}
	return rec, time.Since(start)
}

// livecheck.Test has the command's budget and keeps within go test's
// deadline, with room to report: 16 s before it, a 6 s budget (a margin
// of 10 s). The search, cut at three quarters of it, passes to the depth
// it completed and says what it covered, in the command's words; asked
// for the whole bound (MinDepth), it fails the test, naming the flag.
func TestTestKeepsWithinTheDeadline(t *testing.T) {
	rec, took := testWithin(t, 16*time.Second, slowSystem)
	t.Logf("ended after %v: %q", took, rec.Logs)
	want := regexp.MustCompile(`^livecheck: slowly: ok: no violation to depth ([0-9]+), complete to depth ([0-9]+): every state within [0-9]+ steps? explored \([0-9,]+ states?\)(; depth [0-9]+ partly explored: [0-9,]+ states? found from [0-9,]+ of those at depth [0-9]+)?; not to the depth bound [0-9]+: the search used its three quarters of the time budget \(--time [0-9.]+s\) \(--min-depth K fails a check that cannot complete depth K\)\n`)
	if len(rec.Fatals) != 0 || len(rec.Logs) != 1 || !want.MatchString(rec.Logs[0]) {
		t.Fatalf("fatals %q, logs %q\nwant a log that matches %s", rec.Fatals, rec.Logs, want)
	}
	depth, _ := strconv.Atoi(testDepth()) // the whole bound
	rec, took = testWithin(t, 16*time.Second, slowSystem, livecheck.WithOptions(livecheck.Options{MinDepth: depth}))
	t.Logf("ended after %v: %q", took, rec.Fatals)
	wantFatal := regexp.MustCompile(`^livecheck: slowly: inconclusive: the search used its three quarters of the time budget \(--time [0-9.]+s\): every state within [0-9]+ steps? explored \([0-9,]+ states?\), no violation; depth [0-9]+ partly explored(: [0-9,]+ states? found from [0-9,]+ of those at depth [0-9]+)?; the check must complete depth ` +
		strconv.Itoa(depth) + ` \(--min-depth ` + strconv.Itoa(depth) + `\): give it more time \(--time\) or states \(--max-states\), or ask for less \(--min-depth\) \(AllowInconclusive lets this pass\)$`)
	if len(rec.Fatals) != 1 || !wantFatal.MatchString(rec.Fatals[0]) {
		t.Fatalf("fatals %q\nwant one that matches %s", rec.Fatals, wantFatal)
	}
}

// The budget reaches the critical search under livecheck.Test too, and
// the test's log has the check's progress as the command prints it.
func TestTestBudgetReachesTheCriticalSearch(t *testing.T) {
	// On a busy machine the budget may run out during the walks, before
	// the critical search (the check then passes on the walks it took):
	// then the deadline is put further off, a few times, until it ends
	// there.
	for _, d := range []time.Duration{14 * time.Second, 40 * time.Second, 120 * time.Second} {
		rec, took := testWithin(t, d, &randtree.System,
			livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}, WalkDepth: 100000}))
		t.Logf("deadline in %v: ended after %v: %q", d, took, rec.Fatals)
		if len(rec.Fatals) == 0 && len(rec.Logs) > 0 && strings.Contains(rec.Logs[len(rec.Logs)-1], "ran out; the others were not walked from") {
			continue
		}
		// The budget runs out during the critical search, or, where the
		// walks left it time enough, cuts the dead test to fit what is
		// left (a faster walk, 2026-11-29, made that the usual end).
		ranOut := len(rec.Fatals) == 1 && strings.HasPrefix(rec.Fatals[0], "livecheck: randtree: inconclusive: the time budget (--time ") &&
			strings.Contains(rec.Fatals[0], ") ran out during the critical-transition search of a path of ")
		cut := len(rec.Fatals) == 1 && strings.HasPrefix(rec.Fatals[0], "livecheck: randtree: inconclusive: a suspect: ") &&
			strings.Contains(rec.Fatals[0], "the dead test was cut to fit the time budget")
		if !ranOut && !cut {
			t.Fatalf("fatals %q", rec.Fatals)
		}
		if ranOut && !slicesContainsPrefix(rec.Logs, "livecheck: critical: ") {
			t.Fatalf("no progress of the critical search in the log: %q", rec.Logs)
		}
		return
	}
	t.Fatal("the time budget ran out during the walks each time: the machine is too busy to test this")
}

func slicesContainsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// elector is a leader election of the kind a new user writes first (terms,
// votes, heartbeats): a node whose election timer fires starts a new term
// and asks the others for their vote; a majority makes it leader, and its
// heartbeats tell the others. Terms grow for ever, so its space never
// ends: the search to depth 20 does not fit a budget, whatever it is.
// With double-vote, a node votes for every candidate of a term, and two
// leaders of one term follow within 6 steps.
type elector struct {
	sim.BaseNode
	Term     int
	VotedFor sim.NodeID // -1: none in this term
	Votes    int
	Leader   bool
	Known    bool // knows the leader of its term (or is it)
	Double   bool // the bug
}

type (
	voteReq   struct{ Term int }
	vote      struct{ Term int }
	heartbeat struct{ Term int }
)

func (n *elector) Init(ctx sim.Context) {
	n.VotedFor = -1
	ctx.SetTimer("elect")
}

func (n *elector) others(ctx sim.Context, msg any) {
	for i := range ctx.Nodes() {
		if id := sim.NodeID(i); id != ctx.Self() {
			ctx.Send(id, msg)
		}
	}
}

// newTerm moves the node to term t, a follower that has voted for no one.
func (n *elector) newTerm(ctx sim.Context, t int) {
	if n.Leader {
		ctx.CancelTimer("beat")
		ctx.SetTimer("elect")
	}
	n.Term, n.VotedFor, n.Votes, n.Leader, n.Known = t, -1, 0, false, false
}

func (n *elector) Timer(ctx sim.Context, name string) {
	if name == "beat" {
		n.others(ctx, heartbeat{n.Term})
		ctx.SetTimer("beat")
		return
	}
	n.newTerm(ctx, n.Term+1)
	n.VotedFor, n.Votes = ctx.Self(), 1
	n.others(ctx, voteReq{n.Term})
	ctx.SetTimer("elect")
}

func (n *elector) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case voteReq:
		if m.Term > n.Term {
			n.newTerm(ctx, m.Term)
		}
		if m.Term == n.Term && (n.VotedFor == -1 || n.VotedFor == from || n.Double) {
			n.VotedFor = from
			ctx.Send(from, vote{m.Term})
		}
	case vote:
		if m.Term != n.Term || n.Leader || n.VotedFor != ctx.Self() {
			return
		}
		if n.Votes++; 2*n.Votes > ctx.Nodes() {
			n.Leader, n.Known = true, true
			ctx.CancelTimer("elect")
			ctx.SetTimer("beat")
			n.others(ctx, heartbeat{n.Term})
		}
	case heartbeat:
		if m.Term > n.Term {
			n.newTerm(ctx, m.Term)
		}
		if m.Term == n.Term {
			n.Known = true
		}
	}
}

var electionSystem = &livecheck.System{Name: "election", DefaultNodes: 3, MinNodes: 2, MaxNodes: 5,
	Bugs: []livecheck.Bug{{Name: "double-vote", Doc: "a node votes for every candidate of a term"}},
	Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
		double := cfg.HasBug("double-vote")
		return &livecheck.Model{
			Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &elector{Double: double} }},
			Properties: []properties.Property{
				properties.AlwaysPairs("one-leader-a-term", "no two leaders of the same term", func(a, b *elector) error {
					if a.Leader && b.Leader && a.Term == b.Term {
						return fmt.Errorf("two leaders of term %d", a.Term)
					}
					return nil
				}),
				properties.EventuallyEach("leader-known", "every node knows the leader of its term", func(n *elector) bool { return n.Known }),
			},
		}, nil
	}}

// A correct protocol whose space does not fit the budget passes
// livecheck.Test at the defaults, to the deepest level its search could
// complete, and says so ("complete to depth k"); asked for a depth it
// cannot complete (MinDepth) it fails, naming the flag; its buggy version
// fails. The budget is one of states, so that the depth reached does not
// depend on the machine; a time budget cuts the search the same way
// (and keeps what it expanded of the level it cut).
func TestCorrectProtocolPassesToTheDepthItCompletes(t *testing.T) {
	budget := livecheck.Options{MaxStates: 3000}
	dir := t.TempDir()
	rec := &tbrec.Recorder{TB: t, Test: "TestElection"}
	livecheck.Test(rec, electionSystem, livecheck.WithTraceDir(dir), livecheck.WithOptions(budget))
	want := regexp.MustCompile(`^livecheck: election: ok: no violation to depth ([0-9]+), complete to depth ([0-9]+): every state within [0-9]+ steps explored \([0-9,]+ states\); walks from all [0-9,]+ states at depth [0-9]+ that are not live reached a live state; not to the depth bound ` +
		testDepth() + `: depth [0-9]+ would pass the limit of 3,000 states \(--max-states\) \(--min-depth K fails a check that cannot complete depth K\)\n`)
	if len(rec.Fatals) != 0 || len(rec.Logs) != 1 || !want.MatchString(rec.Logs[0]) {
		t.Fatalf("the correct election: fatals %q, logs %q\nwant a log that matches %s", rec.Fatals, rec.Logs, want)
	}
	m := want.FindStringSubmatch(rec.Logs[0])
	k, _ := strconv.Atoi(m[1])
	if m[1] != m[2] || k < 3 {
		t.Fatalf("complete to depth %s and %s: want the same, at least 3", m[1], m[2])
	}
	t.Logf("%s", rec.Logs[0])

	// The same check, asked for one more level than it completes.
	short := budget
	short.MinDepth = k + 1
	rec = &tbrec.Recorder{TB: t, Test: "TestElection"}
	livecheck.Test(rec, electionSystem, livecheck.WithTraceDir(dir), livecheck.WithOptions(short))
	wantFatal := fmt.Sprintf("; the check must complete depth %d (--min-depth %d): give it more time (--time) or states (--max-states), or ask for less (--min-depth) (AllowInconclusive lets this pass)", k+1, k+1)
	if len(rec.Fatals) != 1 || !strings.HasPrefix(rec.Fatals[0], "livecheck: election: inconclusive: ") || !strings.HasSuffix(rec.Fatals[0], wantFatal) {
		t.Fatalf("min depth %d: fatals %q, want one that ends %q", k+1, rec.Fatals, wantFatal)
	}

	// The buggy version fails under the same budget.
	buggy := budget
	buggy.Config.Bugs = []string{"double-vote"}
	rec = &tbrec.Recorder{TB: t, Test: "TestElection"}
	livecheck.Test(rec, electionSystem, livecheck.WithTraceDir(dir), livecheck.WithOptions(buggy))
	if len(rec.Fatals) != 1 || !strings.Contains(rec.Fatals[0], "\n\nsafety-violation of one-leader-a-term: nodes 0 and 2: two leaders of term 1\n") {
		t.Fatalf("double-vote: fatals %q, want a safety violation of one-leader-a-term", rec.Fatals)
	}
}
