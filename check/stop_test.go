package check_test

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/systems/randtree"
)

// An interrupt that comes while the critical-transition search runs (its
// probes and dead tests, millions of steps at large walk depths) ends it:
// the check is inconclusive, says it was interrupted there, and reports no
// violation it did not finish showing. Options.Interrupted flips on the
// third time it is asked after the critical search began, which is from
// inside the search: the main world asks every sim.StopEvery steps.
func TestInterruptDuringCriticalSearch(t *testing.T) {
	var mu sync.Mutex
	critical, asked := false, 0
	opts := check.Options{
		Config:  protocol.Config{Nodes: 4, Bugs: []string{"RT3"}},
		Workers: 1,
		Progress: func(p check.Progress) {
			mu.Lock()
			defer mu.Unlock()
			critical = critical || p.Phase == "critical"
		},
		Interrupted: func() bool {
			mu.Lock()
			defer mu.Unlock()
			if critical {
				asked++
			}
			return asked >= 3
		},
	}
	res, err := check.Check(&randtree.System, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !critical {
		t.Fatalf("no progress of phase critical: %s %s", res.Verdict, res.Message)
	}
	if res.Verdict != check.Inconclusive || !res.Interrupted || res.Path != nil || res.Critical != nil {
		t.Fatalf("interrupted during the critical search: %s (interrupted %v, path of %d steps), want inconclusive, interrupted, no path: %s",
			res.Verdict, res.Interrupted, len(res.Path), res.Message)
	}
	if want := "the check was interrupted during the critical-transition search of a path of "; !strings.HasPrefix(res.Message, want) {
		t.Fatalf("message %q, want it to begin %q", res.Message, want)
	}
	t.Logf("%s; Interrupted asked %d times after the critical search began", res.Message, asked)
}

// called says whether a function whose name has name is on the stack.
func called(name string) bool {
	pcs := make([]uintptr, 64)
	fr := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := fr.Next()
		if strings.Contains(f.Function, name) {
			return true
		}
		if !more {
			return false
		}
	}
}

// Every phase after the search asks Options.Interrupted: here it says so
// the first time a phase asks. Stopped in the walks, the critical search,
// a probe, a dead test or the replay that confirms the violation, the
// check is inconclusive and says where it was; stopped while it shortens
// the path of a violation it confirmed, it reports the violation, not
// shortened.
func TestInterruptInEveryPhase(t *testing.T) {
	for _, tc := range []struct {
		in, during string // a function of the phase; what the report says
	}{
		{"check.(*periWalker).walk", "the walks"},
		{"critical.Search", "the critical-transition search of a path of 5,010 steps"},
		{"critical.(*searcher).probe", "the critical-transition search of a path of 5,010 steps"},
		{"critical.(*searcher).test", "the critical-transition search of a path of 5,010 steps"},
		{"check.replayEach", "the replay that confirms the liveness violation it found"},
		{"check.shorten", ""},
	} {
		var mu sync.Mutex
		asked := false
		res, err := check.Check(&randtree.System, check.Options{Config: protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}, Time: check.NoTimeLimit,
			Interrupted: func() bool {
				mu.Lock()
				defer mu.Unlock()
				asked = asked || called(tc.in)
				return asked
			}})
		if err != nil {
			t.Fatal(err)
		}
		if !asked {
			t.Errorf("%s never asked whether to stop (renamed? this test names it)", tc.in)
			continue
		}
		if tc.during == "" {
			if res.Verdict != check.LivenessViolation || res.Critical == nil || res.Shortened != nil {
				t.Errorf("stopped in %s: %s (shortened %v), want the violation, not shortened: %s", tc.in, res.Verdict, res.Shortened != nil, res.Message)
			}
			continue
		}
		if want := "the check was interrupted during " + tc.during; res.Verdict != check.Inconclusive || !res.Interrupted || !strings.HasPrefix(res.Message, want) {
			t.Errorf("stopped in %s: %s: %s\nwant inconclusive: %s...", tc.in, res.Verdict, res.Message, want)
		}
	}
}

// jumpClock is a clock that stands still until when() first says so,
// then stands at start+by: the time budget runs out (or its walks' share
// does) at that point, the same on any machine.
func jumpClock(o check.Options, by time.Duration, when func() bool) check.Options {
	start := time.Now()
	var jumped atomic.Bool
	return check.WithClock(o, func() time.Time {
		if jumped.Load() || when() {
			jumped.Store(true)
			return start.Add(by)
		}
		return start
	})
}

// The diagnosis has its share of the budget. RT3 on 4 nodes: the walks
// find a path that never becomes live, the critical search finds its
// critical step, then the check confirms it, shortens the path and looks
// for its slip and its recovery odds.
//   - The budget runs out after the critical search (here while the path
//     is shortened): the slip and the odds, bounded in steps, run on, and
//     the report and the trace file have both.
//   - The walks' seven eighths of the budget run out as the critical
//     search begins: it goes on in the last eighth, and finds the step.
//   - The budget runs out during the critical search: the check is
//     inconclusive and says so, in one line.
func TestDiagnosisHasItsShare(t *testing.T) {
	opts := check.Options{Config: protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}, Time: time.Minute}
	var mu sync.Mutex
	inCritical := false
	opts.Progress = func(p check.Progress) {
		mu.Lock()
		defer mu.Unlock()
		inCritical = inCritical || p.Phase == "critical"
	}
	critical := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inCritical
	}
	reset := func() {
		mu.Lock()
		defer mu.Unlock()
		inCritical = false
	}

	res, err := check.Check(&randtree.System, jumpClock(opts, time.Hour, func() bool { return called("check.shorten") }))
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != check.LivenessViolation || cx == nil || cx.Slip == nil || cx.Odds == nil || cx.NoSlip != "" || cx.NoOdds != "" {
		t.Fatalf("budget spent after the critical search: %s (%s), critical %v; want the violation with its slip and odds", res.Verdict, res.Message, cx != nil)
	}
	rep := res.Report("", "")
	var b strings.Builder
	reports.WriteCheck(&b, rep, false)
	for _, want := range []string{"\nslip: step ", "\nrecovery odds: of 20 walks of "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report has no %q:\n%s", want, b.String())
		}
	}
	dead, _, err := res.WriteTraces(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := reports.ReadTraceFile(dead)
	if err != nil || tr.Critical == nil || tr.Critical.Slip == nil || tr.Critical.Slip.Reason != rep.Critical.Slip.Reason ||
		tr.Critical.Odds == nil || !slices.Equal(tr.Critical.Odds.Recovered, rep.Critical.Odds.Recovered) {
		t.Fatalf("the trace file does not hold the slip and the odds the report gave: %v %+v", err, tr)
	}

	// Past their eighth beyond the budget, the odds stop, and say why;
	// the violation stands, with its slip.
	res, err = check.Check(&randtree.System, jumpClock(opts, time.Minute+time.Minute/8+time.Nanosecond, func() bool { return called("check.oddsOf") }))
	if err != nil {
		t.Fatal(err)
	}
	if cx := res.Critical; res.Verdict != check.LivenessViolation || cx == nil || cx.Slip == nil || cx.Odds != nil || cx.NoSlip != "" ||
		cx.NoOdds != "their eighth of the time budget past its end (--time 1m0s) ran out" {
		t.Fatalf("budget and its eighth spent in the odds: %s (%s), critical %+v; want the violation with its slip, no odds, and why", res.Verdict, res.Message, cx)
	}

	reset()
	res, err = check.Check(&randtree.System, jumpClock(opts, time.Minute-time.Minute/8+time.Nanosecond, critical))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.LivenessViolation || res.Critical == nil || res.Critical.Slip == nil || res.Critical.Odds == nil {
		t.Fatalf("the walks' share spent as the critical search began: %s: %s; want the violation with its critical step, slip and odds", res.Verdict, res.Message)
	}

	reset()
	res, err = check.Check(&randtree.System, jumpClock(opts, time.Hour, critical))
	if err != nil {
		t.Fatal(err)
	}
	if want := "the time budget (--time 1m0s) ran out during the critical-transition search of a path of 5,010 steps that never became live: "; res.Verdict != check.Inconclusive || !strings.HasPrefix(res.Message, want) {
		t.Fatalf("budget spent in the critical search: %s: %s\nwant inconclusive: %s...", res.Verdict, res.Message, want)
	}
}

// Where the slip or the odds cannot finish (the user interrupts them),
// the report says which, and why, a line each, and so does the trace.
func TestUnfinishedDiagnosisSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		in           string
		slip, odds   bool
		slipWhy, odd string
	}{
		{"check.slipOf", false, false, "the check was interrupted", "the check was interrupted"},
		{"check.oddsOf", true, false, "", "the check was interrupted"},
	} {
		var mu sync.Mutex
		asked := false
		res, err := check.Check(&randtree.System, check.Options{Config: protocol.Config{Nodes: 4, Bugs: []string{"RT3"}}, Time: check.NoTimeLimit,
			Interrupted: func() bool {
				mu.Lock()
				defer mu.Unlock()
				asked = asked || called(tc.in)
				return asked
			}})
		if err != nil {
			t.Fatal(err)
		}
		cx := res.Critical
		if res.Verdict != check.LivenessViolation || cx == nil || (cx.Slip != nil) != tc.slip || (cx.Odds != nil) != tc.odds || cx.NoSlip != tc.slipWhy || cx.NoOdds != tc.odd {
			t.Fatalf("interrupted in %s: %s (%s), critical %+v", tc.in, res.Verdict, res.Message, cx)
		}
		var b strings.Builder
		reports.WriteCheck(&b, res.Report("", ""), false)
		var want []string
		if tc.slipWhy != "" {
			want = append(want, "\nslip: not known: its search did not finish: "+tc.slipWhy+"\n")
		}
		want = append(want, "\nrecovery odds: not known: their walks did not finish: "+tc.odd+"\n")
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("interrupted in %s: no %q in the report:\n%s", tc.in, w, b.String())
			}
		}
		dead, _, err := res.WriteTraces(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		tr, err := reports.ReadTraceFile(dead)
		if err != nil || tr.Version != 6 || tr.Critical.SlipUnfinished != tc.slipWhy || tr.Critical.OddsUnfinished != tc.odd {
			t.Fatalf("interrupted in %s: the trace (%v) says %+v", tc.in, err, tr.Critical)
		}
	}
}
