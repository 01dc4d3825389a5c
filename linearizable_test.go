package livecheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/systems"
)

// TestLinearizabilityReport: each bug of kvstore is reported with the
// operations that cannot be ordered, on the steps of its path: client
// 0's put(x,1) returned before client 1's get(x) was invoked, and the
// get returned 0; the longest linearizable prefix is every event before
// that response, the put alone in its order. `check --json` has them
// under history; the text names them with their steps, and replay's
// text too; `replay TRACE --json` and the page of `report TRACE --html`
// have the same history;
// and in the browser the page draws it as a timeline (issue 38).
func TestLinearizabilityReport(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		code := livecheck.Run(args, &out, &errb, systems.All()...)
		if errb.Len() > 0 {
			t.Logf("%v: stderr %s", args, errb.String())
		}
		return out.String(), code
	}
	history := func(put, get [2]int) *reports.History {
		return &reports.History{Node: 3, Spec: "kv", Key: "x", Illegal: 1, States: []string{"1"},
			Operations: []reports.Operation{
				{Client: 0, Key: "x", Input: "put(x,1)", Output: "0", InvokeStep: put[0], ReturnStep: put[1], Role: "before"},
				{Client: 1, Key: "x", Input: "get(x)", Output: "0", InvokeStep: get[0], ReturnStep: get[1], Role: "illegal"},
			},
			Prefix: reports.HistoryPrefix{Events: 3, Ordered: true, Order: []int{0}}}
	}
	cases := []struct {
		bug  string
		want *reports.History
	}{
		{"read-backup", history([2]int{1, 5}, [2]int{6, 8})},
		{"early-ack", history([2]int{1, 3}, [2]int{4, 8})},
		{"stale-lease", history([2]int{4, 8}, [2]int{9, 11})},
	}
	for _, c := range cases {
		t.Run(c.bug, func(t *testing.T) {
			out, code := run("check", "kvstore", "--bug", c.bug, "--json", "-q", "--out", dir)
			var rep reports.Check
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != livecheck.ExitViolation {
				t.Fatalf("exit %d, %v: %s", code, err, out)
			}
			if !reflect.DeepEqual(rep.History, c.want) {
				t.Errorf("history\n%+v\nwant\n%+v", rep.History, c.want)
			}
			// The trace replays to the same violation and history.
			out, code = run("replay", rep.Trace, "--json")
			var rp reports.Replay
			if err := json.Unmarshal([]byte(out), &rp); err != nil || code != livecheck.ExitViolation || !rp.Reproduced {
				t.Fatalf("replay: exit %d, %v: %s", code, err, out)
			}
			if !reflect.DeepEqual(rp.History, c.want) {
				t.Errorf("replay's history\n%+v\nwant\n%+v", rp.History, c.want)
			}
		})
	}

	// The text, for read-backup; and its pages.
	page := filepath.Join(dir, "check.html")
	out, code := run("check", "kvstore", "--bug", "read-backup", "-q", "--out", dir, "--html", page)
	const text = `operations that cannot be ordered (node 3's history, spec kv, key x):
  client 1: get(x) -> 0 (steps 6-8): no order allows it; the state before its response can be 1
  client 0: put(x,1) -> 0 (steps 1-5): completed before it
longest linearizable prefix: every event before step 8's response (3 events); one order of its operations on the key: client 0's put(x,1) -> 0
`
	if code != livecheck.ExitViolation || !strings.Contains(out, text) {
		t.Errorf("exit %d; the text has no\n%s\n%s", code, text, out)
	}
	if out, _ := run("replay", lineAfter(out, "trace: ")); !strings.Contains(out, text) {
		t.Errorf("replay's text has no\n%s\n%s", text, out)
	}
	want := cases[0].want
	if g := graphOfPage(t, page); !reflect.DeepEqual(g.History, want) {
		t.Errorf("check --html: history %+v", g.History)
	}
	page2 := filepath.Join(dir, "report.html")
	if _, code := run("report", lineAfter(out, "trace: "), "--html", page2); code != livecheck.ExitOK {
		t.Fatalf("report --html: exit %d", code)
	}
	if g := graphOfPage(t, page2); !reflect.DeepEqual(g.History, want) {
		t.Errorf("report --html: history %+v", g.History)
	}
	t.Run("browser", func(t *testing.T) { timelineBrowserTest(t, page, want) })
}

// timelineBrowserTest opens the page of a linearizability violation in
// a headless Chromium (skipped where there is none, as browserTest is):
// the timeline has a lane per client and a bar per operation, the
// illegal one marked, the longest linearizable prefix shaded up to its
// response; a click on the illegal operation's end points the page at
// the step that returned it (its anchor, selected, its panel saying so),
// and a click on a bar at the step that invoked it.
func timelineBrowserTest(t *testing.T, page string, h *reports.History) {
	ctx, finish := openPage(t, page)
	defer finish()
	count := func(sel string) int {
		t.Helper()
		return evalIn[int](t, ctx, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
	}
	text := func(sel string) string {
		t.Helper()
		return evalIn[string](t, ctx, fmt.Sprintf("document.querySelector(%q).textContent", sel))
	}
	click := func(sel string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatal(err)
		}
	}
	ill := h.Operations[h.Illegal]
	if n := count("#timelinesvg rect.clientlane"); n != 2 {
		t.Errorf("%d client lanes, want 2", n)
	}
	if n := count("#timelinesvg rect.opbar"); n != len(h.Operations) {
		t.Errorf("%d bars, want %d operations", n, len(h.Operations))
	}
	if n := count(fmt.Sprintf("#timelinesvg rect.opbar.illegal[data-client='%d'][data-op='%d']", ill.Client, h.Illegal)); n != 1 || count("#timelinesvg rect.opbar.illegal") != 1 {
		t.Errorf("%d illegal bars of client %d", n, ill.Client)
	}
	if s := text("#timelinesvg"); !strings.Contains(s, "X get(x) \u2192 0") || !strings.Contains(s, "1. put(x,1) \u2192 0") {
		t.Errorf("the timeline's labels: %q", s)
	}
	// The prefix is shaded from the start to the illegal response, which
	// it leaves out: its right edge is left of the illegal bar's end.
	edges := evalIn[[]float64](t, ctx, `(() => { const p = document.getElementById("linprefix").getBBox(), e = document.querySelector("rect.opend.illegal").getBBox(), b = document.querySelector("rect.opbar.illegal").getBBox();
		return [p.x + p.width, e.x, b.x]; })()`)
	if len(edges) != 3 || edges[0] > edges[1]+5 || edges[0] < edges[2] {
		t.Errorf("the prefix ends at x %v, the illegal operation runs from %v to its end at %v", edges[0], edges[2], edges[1])
	}

	// Its end points at the step that returned it.
	click("#timelinesvg a.retlink rect.opend.illegal")
	hash := evalIn[string](t, ctx, "location.hash")
	if want := fmt.Sprintf("#dead-step-%d", ill.ReturnStep); hash != want {
		t.Errorf("after a click on the illegal operation's end, the page points at %q, want %q", hash, want)
	}
	if n := count(fmt.Sprintf("rect.row.selected#dead-step-%d", ill.ReturnStep)); n != 1 {
		t.Errorf("%d rows of step %d selected", n, ill.ReturnStep)
	}
	p := text("#panel")
	for _, want := range []string{fmt.Sprintf("step %d of %d", ill.ReturnStep, ill.ReturnStep), "client 1's get(x) returns 0, which no order of the operations allows"} {
		if !strings.Contains(p, want) {
			t.Errorf("the panel has no %q: %q", want, p)
		}
	}
	// A bar points at the step that invoked it.
	click("#timelinesvg a.oplink rect.opbar[data-op='0']")
	hash = evalIn[string](t, ctx, "location.hash")
	if hash != "#dead-step-1" || !strings.Contains(text("#panel"), "client 0 invokes put(x,1)") {
		t.Errorf("after a click on the put's bar: %q, panel %q", hash, text("#panel"))
	}
}

// evalIn evaluates expr in the page of ctx, as a T.
func evalIn[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
