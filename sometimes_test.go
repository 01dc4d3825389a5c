package livecheck_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/internal/tbrec"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// heard is a reachability property of the counter: node 1 heard n.
func heard(name string, n int) properties.Property {
	return properties.Sometimes(name, "node 1 hears a count", func(s *sim.State) bool {
		return properties.Node[*counter](s, 1).Heard == n
	})
}

// withSometimes is the counter system with reachability properties added.
func withSometimes(props ...properties.Property) *livecheck.System {
	sys := counterSystem("")
	build := sys.Build
	sys.Build = func(cfg livecheck.Config) (*livecheck.Model, error) {
		m, err := build(cfg)
		if err == nil {
			m.Properties = append(m.Properties, props...)
		}
		return m, err
	}
	return sys
}

// The counter's whole space (see TestCounterSpace): node 0's timer fires
// in the 7 states where it counted less than 3, node 1 receives in the
// other 17 transitions; Init ran once per node. Heard 2 is 3 steps away
// (two ticks, the second count delivered); heard 5 never happens.
func TestSometimesAndCoverage(t *testing.T) {
	for _, workers := range []int{1, 3} {
		res, err := livecheck.Check(withSometimes(heard("heard-two", 2), heard("heard-five", 5)),
			livecheck.Options{Depth: 10, Reduce: "none", Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		want := []livecheck.Sometimes{
			{Property: "heard-two", Reached: true, Step: 3, Evaluated: true},
			{Property: "heard-five", Step: -1, Evaluated: true},
		}
		if res.Verdict != livecheck.OK || !reflect.DeepEqual(res.Sometimes, want) {
			t.Fatalf("workers %d: %s, sometimes %+v", workers, res.Verdict, res.Sometimes)
		}
		cov := coverage.Summary{Transitions: 24, Init: 2, Receive: []coverage.Count{{Name: "count", N: 17}},
			Timer: []coverage.Count{{Name: "tick", N: 7}}}
		if res.Coverage == nil || !reflect.DeepEqual(*res.Coverage, cov) || res.Stats.Transitions != 24 || res.WalkCoverage != nil {
			t.Fatalf("workers %d: coverage %+v, walks %+v, %d transitions", workers, res.Coverage, res.WalkCoverage, res.Stats.Transitions)
		}
		if got := res.Unreached(); !reflect.DeepEqual(got, []string{"heard-five"}) {
			t.Fatalf("Unreached = %v", got)
		}

		var text bytes.Buffer
		reports.WriteCheck(&text, res.Report("", ""), false)
		for _, line := range []string{
			"sometimes heard-two: reached at step 3\n",
			"sometimes heard-five: NEVER reached: the check may be vacuous\n",
			"(a reachability property never reached does not change the verdict; livecheck.Test fails on it)\n",
			"coverage (search, 24 transitions): Init 2, Receive 17 (count 17), Timer 7 (tick 7); never ran: App, Error\n",
		} {
			if !strings.Contains(text.String(), line) {
				t.Errorf("the report lacks %q:\n%s", line, text.String())
			}
		}
		var js bytes.Buffer
		if err := reports.WriteJSON(&js, res.Report("", "")); err != nil {
			t.Fatal(err)
		}
		var back struct {
			Sometimes []map[string]any `json:"sometimes"`
			Coverage  struct {
				Search coverage.Summary `json:"search"`
			} `json:"coverage"`
		}
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		wantJS := []map[string]any{
			{"name": "heard-two", "reached": true, "step": 3.0, "by": "search"},
			{"name": "heard-five", "reached": false, "step": -1.0},
		}
		if !reflect.DeepEqual(back.Sometimes, wantJS) || !reflect.DeepEqual(back.Coverage.Search, cov) {
			t.Errorf("JSON: sometimes %v, coverage %+v", back.Sometimes, back.Coverage.Search)
		}
	}
}

// A reachability property beyond the depth bound is reached by a walk
// from the periphery: node 1 hears 3 after at least 4 steps, the search
// stops at 2.
func TestSometimesByWalk(t *testing.T) {
	run := func(workers int) *livecheck.Result {
		res, err := livecheck.Check(withSometimes(heard("heard-three", 3)), livecheck.Options{Depth: 2, Workers: workers, WalkDepth: 50})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(1)
	s := res.Sometimes[0]
	if res.Verdict != livecheck.OK || !s.Reached || !s.ByWalk || s.Step < 4 || res.WalkCoverage == nil {
		t.Fatalf("%s: %+v, walk coverage %+v", res.Verdict, s, res.WalkCoverage)
	}
	// Every walk reaches a live state, where node 1 heard 3: 3 ticks and
	// 3 deliveries, less what the periphery state had done.
	if w := res.WalkCoverage; w.Transitions != res.Live.WalkSteps || w.Init != 0 || len(w.Timer) != 1 || len(w.Receive) != 1 ||
		w.Timer[0].N+w.Receive[0].N != w.Transitions {
		t.Fatalf("walk coverage %+v, %d walk steps", w, res.Live.WalkSteps)
	}
	if three := run(3); !reflect.DeepEqual(three.Sometimes, res.Sometimes) || !reflect.DeepEqual(three.WalkCoverage, res.WalkCoverage) {
		t.Fatalf("3 workers: %+v %+v; 1 worker: %+v %+v", three.Sometimes, three.WalkCoverage, res.Sometimes, res.WalkCoverage)
	}
}

// Test fails a check that passes without reaching a reachability
// property, unless AllowUnreached; one reached passes.
func TestTestFailsUnreached(t *testing.T) {
	dir := t.TempDir()
	rec := &tbrec.Recorder{TB: t, Test: "TestVacuous"}
	livecheck.Test(rec, withSometimes(heard("heard-five", 5)), livecheck.WithTraceDir(dir), livecheck.WithOptions(livecheck.Options{Depth: 10}))
	want := "livecheck: counter: reachability property heard-five was never reached in 15 states and 0 walks: the check may be vacuous"
	if len(rec.Fatals) != 1 || !strings.HasPrefix(rec.Fatals[0], want) || !strings.HasSuffix(rec.Fatals[0], "(AllowUnreached lets this pass)") {
		t.Fatalf("fatals %q", rec.Fatals)
	}
	if len(rec.Logs) != 1 || !strings.Contains(rec.Logs[0], "coverage (search, 19 transitions): Init 2, Receive 12 (count 12), Timer 7 (tick 7)") {
		t.Fatalf("logs %q", rec.Logs)
	}

	rec = &tbrec.Recorder{TB: t, Test: "TestVacuous"}
	livecheck.Test(rec, withSometimes(heard("heard-five", 5)), livecheck.WithTraceDir(dir), livecheck.WithOptions(livecheck.Options{Depth: 10}), livecheck.AllowUnreached())
	if len(rec.Fatals) != 0 || len(rec.Logs) != 2 || !strings.HasPrefix(rec.Logs[1], want) {
		t.Fatalf("with AllowUnreached: fatals %q, logs %q", rec.Fatals, rec.Logs)
	}

	rec = &tbrec.Recorder{TB: t, Test: "TestReached"}
	livecheck.Test(rec, withSometimes(heard("heard-two", 2)), livecheck.WithTraceDir(dir), livecheck.WithOptions(livecheck.Options{Depth: 10}))
	if len(rec.Fatals) != 0 || len(rec.Logs) != 1 || !strings.Contains(rec.Logs[0], "sometimes heard-two: reached at step 3") {
		t.Fatalf("reached: fatals %q, logs %q", rec.Fatals, rec.Logs)
	}
}

// A reachability property that panics is a property error, with the path
// to the state it failed on; in local mode none is evaluated.
func TestSometimesPanicsAndLocal(t *testing.T) {
	bad := properties.Sometimes("bad", "", func(s *sim.State) bool {
		if properties.Node[*counter](s, 0).N == 2 {
			panic("two")
		}
		return false
	})
	res, err := livecheck.Check(withSometimes(bad), livecheck.Options{Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.PropertyError || res.Property != "bad" || len(res.Path) != 2 {
		t.Fatalf("%s of %s in %d steps: %s", res.Verdict, res.Property, len(res.Path), res.Message)
	}
	res, err = livecheck.Check(withSometimes(heard("heard-two", 2)), livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	reports.WriteCheck(&text, res.Report("", ""), false)
	if res.Sometimes[0].Evaluated || len(res.Unreached()) != 0 || !strings.Contains(text.String(), "sometimes heard-two: not evaluated in local mode\n") {
		t.Fatalf("local: %+v\n%s", res.Sometimes, text.String())
	}
}
