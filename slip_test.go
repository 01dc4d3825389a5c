package livecheck_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
)

// replicate is a primary (node 0) that replicates its value to a backup
// (node 1) and retries until the backup acknowledges the latest version.
// The driver makes one update (version 2) after the first (version 1).
// With the bug stale-ack, an ack that carries no news (the version before
// the update) cancels the retry timer anyway, without setting it again:
// the primary stops retrying, and one dropped Replicate of version 2 is
// then never sent again.
type replicaNode struct {
	Version int  // the primary's latest version
	Have    int  // the backup's
	Acked   bool // the primary: the backup has the latest version
	stale   bool `livecheck:"-"`
}

type (
	Replicate struct{ V int }
	Ack       struct{ V int }
	Update    struct{}
)

func (n *replicaNode) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		n.Version = 1
		ctx.Send(1, Replicate{V: 1})
		ctx.SetTimer("retry")
	}
}

func (n *replicaNode) App(ctx sim.Context, call sim.AppCall) {
	n.Version++
	n.Acked = false
	ctx.Send(1, Replicate{V: n.Version})
	ctx.SetTimer("retry")
}

func (n *replicaNode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Replicate:
		n.Have = max(n.Have, m.V)
		ctx.Send(from, Ack{V: m.V})
	case Ack:
		switch {
		case m.V == n.Version:
			n.Acked = true
			ctx.CancelTimer("retry")
		case n.stale:
			ctx.CancelTimer("retry") // the slip: an ack with no news stops the retries
		}
	}
}

func (n *replicaNode) Timer(ctx sim.Context, name string) {
	if !n.Acked {
		ctx.Send(1, Replicate{V: n.Version})
		ctx.SetTimer("retry")
	}
}

func (n *replicaNode) Error(ctx sim.Context, peer sim.NodeID) {}

func replicaSystem() *livecheck.System {
	return &livecheck.System{
		Name: "replica", Doc: "a primary and a backup, with retries", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Bugs: []livecheck.Bug{{Name: "stale-ack", Doc: "an ack of an old version cancels the retry timer"}},
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			stale := cfg.HasBug("stale-ack")
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &replicaNode{stale: stale} }, Calls: []sim.Call{{To: 0, Call: Update{}}}},
				Properties: []properties.Property{
					properties.Eventually("replicated", "the backup holds the update", func(s *sim.State) bool {
						return properties.Node[*replicaNode](s, 0).Version == 2 && properties.Node[*replicaNode](s, 1).Have == 2
					}),
				},
			}, nil
		},
	}
}

// Issue 26: with one drop allowed, the point of no return of stale-ack is
// the drop of the update, but the slip is the earlier ack of version 1
// that cancelled the retry timer: the report names that step, and says
// the protocol did not tolerate the drop. The correct protocol tolerates
// it.
func TestSlipStaleAck(t *testing.T) {
	t.Parallel()
	cfg := livecheck.Config{Bugs: []string{"stale-ack"}, Budget: sim.Budget{Drops: 1}}
	res, err := livecheck.Check(replicaSystem(), livecheck.Options{Config: cfg, Time: livecheck.NoTimeLimit})
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != livecheck.LivenessViolation || cx == nil {
		t.Fatalf("got %s (%s), want a liveness violation with a critical step", res.Verdict, res.Message)
	}
	if cx.Event.Kind != sim.Drop || cx.EventText != "drop Replicate{V:2} 0->1" {
		t.Fatalf("critical step %d: %s, want the drop of Replicate{V:2}", cx.Step, cx.EventText)
	}
	sl := cx.Slip
	if sl == nil || !sl.Found || sl.Event.Kind != sim.Deliver || sl.EventText != "deliver Ack{V:1} 1->0" || sl.Timer != "retry" || sl.Node != 0 ||
		sl.How != "cancelled" || !sl.Failure || sl.Step >= cx.Step {
		t.Fatalf("slip %+v, want the delivery of Ack{V:1} 1->0 before step %d, which cancelled the retry timer", sl, cx.Step)
	}
	rep := res.Report("T.json", "L.json")
	var b strings.Builder
	reports.WriteCheck(&b, rep, false)
	want := "slip: step " + reports.Thousands(sl.Step) + ", deliver Ack{V:1} 1->0\n    the protocol did not tolerate the failure at step " +
		reports.Thousands(cx.Step) + " (drop Replicate{V:2} 0->1), which timer retry at 0 would have: step " + reports.Thousands(sl.Step) +
		" (deliver Ack{V:1} 1->0) cancelled timer retry at 0 (timers: retry -> (none)); had it still been set, the state after step " +
		reports.Thousands(cx.Step) + " would recover: "
	for _, w := range []string{want, "liveness-violation of replicated: it never holds on this path of 4 steps, and can no longer.\nreplicated: the backup holds the update.\nthe path: the search's 4 steps to a state where nothing can happen.\n\ncritical transition (case C1, the point of no return): step 4 of 4\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no %q in\n%s", w, b.String())
		}
	}
	if j := rep.Critical.Slip; j == nil || !j.Found || j.Step != sl.Step || j.Kind != "deliver" || j.How != "cancelled" || !strings.HasPrefix(j.Reason, "the protocol did not tolerate") {
		t.Errorf("the JSON's slip is %+v", j)
	}

	// The trace records the slip and the odds (version 6), and replay
	// shows them.
	dir := t.TempDir()
	dead, _, err := res.WriteTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := reports.ReadTraceFile(dead)
	if err != nil || tr.Version != 6 || tr.Critical == nil || tr.Critical.Slip == nil || tr.Critical.Slip.Reason != rep.Critical.Slip.Reason ||
		tr.Critical.Odds == nil || !slices.Equal(tr.Critical.Odds.Recovered, rep.Critical.Odds.Recovered) {
		t.Fatalf("trace: %v, %+v", err, tr)
	}
	var out, errs strings.Builder
	if code := livecheck.Run([]string{"replay", dead}, &out, &errs, replicaSystem()); code != livecheck.ExitViolation ||
		!strings.Contains(out.String(), "\nslip: step "+reports.Thousands(sl.Step)+", deliver Ack{V:1} 1->0\n    the protocol did not tolerate the failure at step ") ||
		!strings.Contains(out.String(), "\nrecovery odds: of 20 walks of ") {
		t.Errorf("replay: exit %d\n%s%s", code, out.String(), errs.String())
	}

	// The same seed gives the same slip and the same odds.
	again, err := livecheck.Check(replicaSystem(), livecheck.Options{Config: cfg, Time: livecheck.NoTimeLimit})
	if err != nil || again.Critical == nil || again.Critical.Slip == nil || again.Critical.Odds == nil {
		t.Fatalf("again: %v, %+v", err, again)
	}
	if a, b := again.Report("T.json", "L.json").Critical, rep.Critical; a.Slip.Reason != b.Slip.Reason || !slices.Equal(a.Odds.Recovered, b.Odds.Recovered) {
		t.Errorf("another run gave the slip %q and odds %v, the first %q and %v", a.Slip.Reason, a.Odds.Recovered, b.Slip.Reason, b.Odds.Recovered)
	}
	if od := rep.Critical.Odds; od == nil || od.From != 0 || len(od.Recovered) != cx.Step+1 || od.Recovered[cx.Step] != 0 {
		t.Errorf("odds %+v: want the steps from 0 to the critical one, none recovering after it", od)
	}

	// The same check of the correct protocol passes.
	cfg.Bugs = nil
	res, err = livecheck.Check(replicaSystem(), livecheck.Options{Config: cfg, Time: livecheck.NoTimeLimit})
	if err != nil || res.Verdict != livecheck.OK {
		t.Fatalf("the correct protocol: %v, %s (%s)", err, res.Verdict, res.Message)
	}
}

// Issue 26: on bundled liveness bugs, the slip named is the step the
// bug's code runs in, or the report says plainly that it found none; the
// text report of the dead path fits in 70 lines. lcr's ignore-early and
// RT10 run their bug in the critical step itself (a message the node
// does nothing with); partition-forget runs its in the handler of the
// socket error, a failure, and syn-order in the call that reuses a
// connection's id: neither took away a timer or a message before.
func TestSlipOfBundledBugs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		system string
		cfg    livecheck.Config
		slow   bool
		// want is the slip's event, "" for none found; state, the name
		// of the node's state before it, if any.
		want, how, state, reason string
		// headline is the report's first line after the configuration.
		headline string
	}{
		{"lcr", livecheck.Config{Bugs: []string{"ignore-early"}}, false, "deliver Elect{ID:2} 0->1", "ignored", "",
			"the slip is the critical step itself: step 2 delivered Elect{ID:2} 0->1, and node 1 did nothing with it; had it still been in flight, the state would be the one before step 2, which recovers",
			"liveness-violation of elected: it never holds on this path of 4 steps, and can no longer.\nelected: one node is leader and every node knows its id.\nthe path: the search's 4 steps to a state where nothing can happen.\n"},
		{"randtree", livecheck.Config{Bugs: []string{"RT10"}, Params: map[string]string{"peers": "all"}}, true, "deliver Remove{} 2->1", "ignored", "joining",
			"the slip is the critical step itself: step 24 delivered Remove{} 2->1, and node 1 did nothing with it while it was joining; ",
			"liveness-violation of single-tree: it never holds on this path of 5,010 steps, and can no longer.\nsingle-tree: every node is joined, all agree on one root, parent and child pointers agree, and the root reaches every node.\nthe path: the search's 10 steps to its depth bound, then a walk of 5,000 steps from there.\n"},
		{"ring", livecheck.Config{Bugs: []string{"partition-forget"}}, true, "", "", "",
			"no slip found: the protocol did not tolerate the failure at step 4 (socket-error 0<->1), and the one timer or message the path lost before it does not make the state after step 4 recover when put back",
			"liveness-violation of ring-formed: it never holds on this path of 4 steps, and can no longer.\n"},
		{"transport", livecheck.Config{Bugs: []string{"syn-order"}}, false, "", "", "",
			"no slip found: the path lost no timer or message by step 5 that is still missing after step 5",
			"liveness-violation of all-delivered: it can never hold again on this path of 7 steps.\n"},
	} {
		t.Run(tc.system+"-"+strings.Join(tc.cfg.Bugs, ","), func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("seconds a check")
			}
			t.Parallel()
			res, err := livecheck.Check(bundled(t, tc.system), livecheck.Options{Config: tc.cfg, Time: livecheck.NoTimeLimit})
			if err != nil {
				t.Fatal(err)
			}
			cx := res.Critical
			if res.Verdict != livecheck.LivenessViolation || cx == nil || cx.Slip == nil {
				t.Fatalf("got %s (%s), critical %+v: want a liveness violation with a critical step and a slip search", res.Verdict, res.Message, cx)
			}
			sl := cx.Slip
			switch {
			case tc.want == "" && sl.Found:
				t.Errorf("slip at step %d (%s), want none found", sl.Step, sl.EventText)
			case tc.want != "" && (!sl.Found || sl.EventText != tc.want || sl.Step != cx.Step || !sl.Critical || sl.How != tc.how || reports.StateName(sl.State) != tc.state):
				t.Errorf("slip %+v at critical step %d, want %q (%s) at the critical step, the node %q before it", sl, cx.Step, tc.want, tc.how, tc.state)
			}
			rep := res.Report("T.json", "L.json")
			var b strings.Builder
			reports.WriteCheck(&b, rep, false)
			text := b.String()
			if !strings.Contains(text, "\n\n"+tc.headline) {
				t.Errorf("no %q in\n%s", tc.headline, text)
			}
			if !strings.Contains(text, tc.reason) || !strings.Contains(rep.Critical.Slip.Reason, tc.reason) {
				t.Errorf("no %q in the reason %q, or in\n%s", tc.reason, rep.Critical.Slip.Reason, text)
			}
			if n := strings.Count(text, "\n"); n > 70 {
				t.Errorf("%d lines:\n%s", n, text)
			}
		})
	}
}

// bundled is the bundled system named name.
func bundled(t *testing.T, name string) *livecheck.System {
	t.Helper()
	for _, s := range systems.All() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no system %q", name)
	return nil
}

// Issue 26: on the page of the stale-ack check, a drop is drawn in the
// row of the step that dropped it (an x beside the receiver's lane), the
// slip's row is marked, and a node without timers says so.
func TestSlipPage(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "p.html")
	var out, errs strings.Builder
	if code := livecheck.Run([]string{"check", "replica", "--bug", "stale-ack", "--drops", "1", "--time", "0", "-q", "--out", dir, "--html", page}, &out, &errs, replicaSystem()); code != livecheck.ExitViolation {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errs.String())
	}
	ctx, finish := openPage(t, page)
	defer finish()
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("#col-dead g.step:has(rect.row[data-step='4']) text.mark"); n != 1 {
		t.Errorf("%d marks in the row of the drop, step 4, want its x", n)
	}
	if n := count("#col-dead rect.row.slip[data-step='3']"); n != 1 {
		t.Errorf("%d slip rows at step 3", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#col-dead rect.row[data-step='4']"))); err != nil {
		t.Fatal(err)
	}
	p, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.querySelector('#panel').textContent"))
	if err != nil || !strings.Contains(p, "node 0: replicaNode{Version:2 Have:0 Acked:false}  (no timers)") {
		t.Errorf("the drop's panel: %q (%v)", p, err)
	}
}

// Issue 39: the report tells one story. Where the critical search showed
// that the state before the critical step recovers, every state before
// it on the path recovers too, so the recovery odds never say 0 of 20
// there (a + says none of the walks did, and why the state recovers
// anyway); and one line puts the slip, the fall of the odds, the last
// state that can recover and the critical step in the path's order. On
// RT3, RT10 and the ring's rejoin-self, seeds 1 to 10 (under -short, 1
// and 2, and rejoin-self on 1).
func TestOddsTellOneStory(t *testing.T) {
	t.Parallel()
	seeds := 10
	if testing.Short() {
		seeds = 2
	}
	for _, tc := range []struct {
		system, bug string
		nodes       int // 0: the bug's needs, then the system's
		short       int // seeds under -short
	}{
		{"randtree", "RT3", 0, 2},
		{"randtree", "RT3", 4, 2}, // the README's
		{"randtree", "RT10", 0, 2},
		{"ring", "rejoin-self", 0, 1},
	} {
		for seed := 1; seed <= seeds; seed++ {
			if testing.Short() && seed > tc.short {
				continue
			}
			t.Run(fmt.Sprintf("%s-%s-%dnodes-seed%d", tc.system, tc.bug, tc.nodes, seed), func(t *testing.T) {
				t.Parallel()
				cfg := livecheck.Config{Bugs: []string{tc.bug}, Nodes: tc.nodes}
				res, err := livecheck.Check(bundled(t, tc.system), livecheck.Options{Config: cfg, Seed: int64(seed), Time: livecheck.NoTimeLimit})
				if err != nil {
					t.Fatal(err)
				}
				cx := res.Critical
				if res.Verdict != livecheck.LivenessViolation || cx == nil || cx.Odds == nil || cx.Alive == nil || !cx.Alive.Live {
					t.Fatalf("%s (%s): want a liveness violation with its critical step, the state before it shown to recover, and odds", res.Verdict, res.Message)
				}
				var b strings.Builder
				reports.WriteCheck(&b, res.Report("T.json", "L.json"), false)
				text := b.String()
				zeros, pluses := oddsBefore(t, text, cx.Step)
				if len(zeros) > 0 {
					t.Errorf("odds of 0 after steps %v, before the critical step %d, whose state before recovers:\n%s", zeros, cx.Step, text)
				}
				if pluses > 0 && !strings.Contains(text, "\n  +: none of the 20 walks recovered, yet the state does: the path leads from it to the state after step "+reports.Thousands(cx.Step-1)+", and ") {
					t.Errorf("%d figures +, and no line that says what + means:\n%s", pluses, text)
				}
				story := "\nalong the path: "
				i := strings.Index(text, story)
				if i < 0 {
					t.Fatalf("no line %q:\n%s", story, text)
				}
				line := text[i+1 : i+1+strings.Index(text[i+1:], "\n")]
				want := fmt.Sprintf("after step %s: the last state that can recover; step %s: ", reports.Thousands(cx.Step-1), reports.Thousands(cx.Step))
				if sl := cx.Slip; sl != nil && sl.Found && sl.Step == cx.Step {
					want += "the slip (takes "
				}
				if !strings.Contains(line, want) || !strings.HasSuffix(line, "the critical step (no way back after it).") {
					t.Errorf("the story %q: want it to hold %q and end with the critical step", line, want)
				}
				if sl := cx.Slip; sl != nil && sl.Found && sl.Step < cx.Step && !strings.Contains(line, fmt.Sprintf("step %s: the slip (takes ", reports.Thousands(sl.Step))) {
					t.Errorf("the story %q does not place the slip, step %d", line, sl.Step)
				}
				t.Logf("%s; odds + %d", line, pluses)
			})
		}
	}
}

// oddsBefore reads the recovery odds of a text report: the steps before
// critical whose figure is 0, and how many figures are +.
func oddsBefore(t *testing.T, text string, critical int) (zeros []int, pluses int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "  after step ") || !strings.HasPrefix(lines[i+1], "  recover ") {
			continue
		}
		steps := strings.Fields(strings.TrimPrefix(lines[i], "  after step "))
		figs := strings.Fields(strings.TrimPrefix(lines[i+1], "  recover "))
		if len(steps) != len(figs) {
			t.Fatalf("odds rows of %d steps and %d figures:\n%s\n%s", len(steps), len(figs), lines[i], lines[i+1])
		}
		for k, st := range steps {
			n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSuffix(st, "*"), ",", ""))
			if err != nil {
				t.Fatalf("odds step %q: %v", st, err)
			}
			switch {
			case figs[k] == "+":
				pluses++
			case figs[k] == "0" && n < critical:
				zeros = append(zeros, n)
			}
		}
	}
	return zeros, pluses
}

// Issue 40, item 2: the slip's candidates walk on every worker's world,
// and the odds' states are shared out among them; what they find does
// not depend on how many: the same slip, its evidence and the same odds,
// walk for walk, on 1 worker and on 3.
func TestSlipAndOddsOnWorkers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		system, bug string
		seed        int64
	}{
		{"ring", "rejoin-self", 1},
		{"randtree", "RT3", 2},
		{"lcr", "ignore-early", 1},
	} {
		t.Run(tc.system+"-"+tc.bug, func(t *testing.T) {
			t.Parallel()
			var got [2]*livecheck.Critical
			for i, workers := range []int{1, 3} {
				res, err := livecheck.Check(bundled(t, tc.system), livecheck.Options{Config: livecheck.Config{Bugs: []string{tc.bug}}, Seed: tc.seed, Workers: workers, Time: livecheck.NoTimeLimit})
				if err != nil {
					t.Fatal(err)
				}
				if got[i] = res.Critical; got[i] == nil || got[i].Slip == nil || got[i].Odds == nil {
					t.Fatalf("%d workers: %s (%s): want a critical step with its slip and odds", workers, res.Verdict, res.Message)
				}
			}
			if a, b := got[0].Slip, got[1].Slip; !reflect.DeepEqual(a, b) {
				t.Errorf("the slip on 1 worker:\n%+v\non 3:\n%+v", a, b)
			}
			if a, b := got[0].Odds, got[1].Odds; !reflect.DeepEqual(a, b) {
				t.Errorf("the odds on 1 worker:\n%+v\non 3:\n%+v", a, b)
			}
		})
	}
}
