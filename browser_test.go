package livecheck_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findBrowser returns a Chromium or Chrome to drive, or "" where there is
// none: $LIVECHECK_BROWSER first, then the usual names on PATH.
func findBrowser() string {
	if b := os.Getenv("LIVECHECK_BROWSER"); b != "" {
		return b
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserTest opens RT3's page in a headless Chromium: it loads without
// console errors or exceptions, draws a lane per node and an arrow per
// delivery once every step is shown, highlights the critical step, draws
// the live path beside it, and a click on the critical step shows the
// state it changes; the slip has its row, its reason and a legend. With
// LIVECHECK_BROWSER_TEST=require (CI), no browser fails the test instead
// of skipping it.
func browserTest(t *testing.T, r *rt3Run) {
	ctx, finish := openPage(t, r.page)
	defer finish()
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).textContent", sel)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	g := r.g
	crit := g.Critical.Step
	if n := count("#col-dead line.lane"); n != g.Nodes {
		t.Errorf("%d lanes in the dead column, want %d", n, g.Nodes)
	}
	if n := count("#col-live line.lane"); n != g.Nodes {
		t.Errorf("%d lanes in the live column, want %d", n, g.Nodes)
	}
	if n := count(fmt.Sprintf("#col-dead rect.row.critical[data-step='%d']", crit)); n != 1 {
		t.Errorf("%d critical rows at step %d", n, crit)
	}
	if n := count("#walkchart rect.bar"); n != 2*len(g.Walks.Tested) {
		t.Errorf("%d bars in the walk chart, want 2 for each of %d tests", n, len(g.Walks.Tested))
	}

	// The initial state, then the critical step: its changed node's state.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#col-dead rect.row[data-step='0']"))); err != nil {
		t.Fatal(err)
	}
	if p := text("#panel"); !strings.Contains(p, "the initial state") || !strings.Contains(p, "node 2: "+g.Dead.Init[2]) {
		t.Errorf("the initial state's panel: %q", p)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#col-dead rect.row.critical"))); err != nil {
		t.Fatal(err)
	}
	p := text("#panel")
	c := g.Dead.Steps[crit-1].Changes[0]
	for _, want := range []string{fmt.Sprintf("step %d of %s", crit, "5,010"), fmt.Sprintf("node %d: %s", c.Node, c.Line), c.Changes[0].String(), "the critical step"} {
		if !strings.Contains(p, want) {
			t.Errorf("the critical step's panel has no %q: %q", want, p)
		}
	}

	// The slip (issue 26): its row marked, its reason on a click, and
	// the legend that says what the marks mean.
	if sl := g.Critical.SlipStep; sl > 0 && sl != crit {
		if n := count(fmt.Sprintf("#col-dead rect.row.slip[data-step='%d']", sl)); n != 1 {
			t.Errorf("%d slip rows at step %d", n, sl)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#col-dead rect.row.slip"))); err != nil {
			t.Fatal(err)
		}
		if p := text("#panel"); !strings.Contains(p, "the slip: "+g.Critical.Slip) {
			t.Errorf("the slip's panel: %q", p)
		}
	} else {
		t.Errorf("the page has no slip before the critical step %d (slip step %d)", crit, sl)
	}
	if l := text("#legend"); !strings.Contains(l, "the critical step") || !strings.Contains(l, "S the slip") || !strings.Contains(l, "drop") {
		t.Errorf("legend %q", l)
	}
	if od := g.Critical.Odds; od == nil || count("#oddschart circle.oddsdot") != len(od.Recovered) ||
		count(fmt.Sprintf("#oddschart circle.oddsdot.critical[data-step='%d']", crit)) != 1 {
		t.Errorf("the odds chart has %d dots and %d at the critical step, the odds %+v", count("#oddschart circle.oddsdot"), count("#oddschart circle.oddsdot.critical"), od)
	}
	if !strings.Contains(text("#summary"), "slip (S), step ") {
		t.Errorf("the summary names no slip: %q", text("#summary"))
	}

	// At 1400 x 1000 no text of a column runs past its edge (issue 26):
	// a column is as wide as its longest label.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	clipped, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => { let n = 0;
		for (const svg of document.querySelectorAll("#graph svg")) {
			const w = +svg.getAttribute("width");
			for (const tx of svg.querySelectorAll("text")) { const b = tx.getBBox(); if (b.x + b.width > w) n++; }
		}
		return n; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if clipped != 0 {
		t.Errorf("%d labels run past their column at 1400 px", clipped)
	}

	// Every step shown: an arrow per delivery.
	deliveries, drops := 0, 0
	for _, st := range g.Dead.Steps {
		switch st.Kind {
		case "deliver":
			deliveries++
		case "drop":
			drops++
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#expandall"))); err != nil {
		t.Fatal(err)
	}
	if n := count("#col-dead rect.row"); n != len(g.Dead.Steps)+1 {
		t.Errorf("%d rows shown, want %d steps and the initial state", n, len(g.Dead.Steps))
	}
	if n := count("#col-dead path.arrow:not(.drop)"); n != deliveries {
		t.Errorf("%d arrows in the dead column, want %d deliveries", n, deliveries)
	}
	if n := count("#col-dead path.arrow.drop"); n != drops {
		t.Errorf("%d drop arrows, want %d", n, drops)
	}
	// Filtering out node 3 takes its lane away.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#filters input[data-node='3']"))); err != nil {
		t.Fatal(err)
	}
	if n := count("#col-dead line.lane"); n != g.Nodes-1 {
		t.Errorf("%d lanes with node 3 filtered out", n)
	}
}

// openPage opens page in a headless Chromium (skipping the test where
// there is none, see browserTest); finish closes it and fails the test
// on any console error or exception the page gave.
func openPage(t *testing.T, page string) (ctx context.Context, finish func()) {
	t.Helper()
	bin := findBrowser()
	if bin == "" {
		if os.Getenv("LIVECHECK_BROWSER_TEST") == "require" {
			t.Fatal("no browser found (chromium on PATH or $LIVECHECK_BROWSER), and LIVECHECK_BROWSER_TEST=require")
		}
		t.Skip("no browser found: install chromium, or set LIVECHECK_BROWSER")
	}
	// Chromium's background connections fail on a closed network and
	// would slow or break the run: every one is turned off.
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1600, 1000))
	bctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(bctx, 60*time.Second)
	stop := func() { cancelT(); cancelB(); cancel() }

	// Every message of the console, read while the page runs.
	var mu sync.Mutex
	var bad []string
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				bad = append(bad, m.String())
				mu.Unlock()
			}
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		stop()
		t.Fatal(err)
	}
	return ctx, func() {
		t.Helper()
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 {
			t.Errorf("console errors: %q", bad)
		}
	}
}
