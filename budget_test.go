package livecheck_test

import (
	"regexp"
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
// of 10 s). The search, cut at three quarters of it, says what it
// covered, in the command's words, and fails the test.
func TestTestKeepsWithinTheDeadline(t *testing.T) {
	rec, took := testWithin(t, 16*time.Second, slowSystem)
	t.Logf("ended after %v: %q", took, rec.Fatals)
	want := regexp.MustCompile(`^livecheck: slowly: inconclusive: the search used its three quarters of the time budget \(--time [0-9.]+s\): every state within [0-9]+ steps? explored \([0-9,]+ states?\), no violation; depth [0-9]+ partly explored \(AllowInconclusive lets this pass\)$`)
	if len(rec.Fatals) != 1 || !want.MatchString(rec.Fatals[0]) {
		t.Fatalf("fatals %q\nwant one that matches %s", rec.Fatals, want)
	}
}

// The budget reaches the critical search under livecheck.Test too, and
// the test's log has the check's progress as the command prints it.
func TestTestBudgetReachesTheCriticalSearch(t *testing.T) {
	// On a busy machine the budget may run out during the walks, before
	// the critical search: then the deadline is put further off, a few
	// times, until it ends there.
	for _, d := range []time.Duration{14 * time.Second, 40 * time.Second, 120 * time.Second} {
		rec, took := testWithin(t, d, &randtree.System,
			livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Nodes: 4, Bugs: []string{"RT3"}}, WalkDepth: 100000}))
		t.Logf("deadline in %v: ended after %v: %q", d, took, rec.Fatals)
		if len(rec.Fatals) == 1 && strings.Contains(rec.Fatals[0], ") ran out during the walks") {
			continue
		}
		if len(rec.Fatals) != 1 || !strings.HasPrefix(rec.Fatals[0], "livecheck: randtree: inconclusive: the time budget (--time ") ||
			!strings.Contains(rec.Fatals[0], ") ran out during the critical-transition search of a path of ") {
			t.Fatalf("fatals %q", rec.Fatals)
		}
		if !slicesContainsPrefix(rec.Logs, "livecheck: critical: ") {
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
