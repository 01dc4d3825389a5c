package livecheck_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems"
)

// maxRT3Page is issue 13's bound on the size of RT3's HTML report.
const maxRT3Page = 5 << 20

// graphOfPage reads the data an HTML report embeds.
func graphOfPage(t *testing.T, file string) *reports.Graph {
	t.Helper()
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const open = `<script type="application/json" id="data">`
	_, rest, ok := bytes.Cut(page, []byte(open))
	data, _, ok2 := bytes.Cut(rest, []byte("</script>"))
	if !ok || !ok2 {
		t.Fatalf("%s embeds no data", file)
	}
	var g reports.Graph
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// rt3 is the randtree RT3 check of issue 13's done-when, with its page,
// trace files and the page's data, made once: the check takes seconds.
type rt3Run struct {
	dir, page, trace, live string
	t                      *reports.Trace
	g                      *reports.Graph
}

func runRT3(t *testing.T) *rt3Run {
	t.Helper()
	r := &rt3Run{dir: t.TempDir()}
	r.page = filepath.Join(r.dir, "out.html")
	var out, errb bytes.Buffer
	code := livecheck.Run([]string{"check", "randtree", "--bug", "RT3", "--nodes", "4", "-q", "--out", r.dir, "--html", r.page}, &out, &errb, systems.All()...)
	if code != livecheck.ExitViolation {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	var err error
	r.trace = lineAfter(out.String(), "trace: ")
	r.live = lineAfter(out.String(), "nearest live path: ")
	if r.t, err = reports.ReadTraceFile(r.trace); err != nil {
		t.Fatal(err)
	}
	r.g = graphOfPage(t, r.page)
	return r
}

func lineAfter(text, prefix string) string {
	for l := range strings.Lines(text) {
		if s, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// TestHTMLReport: `check randtree --bug RT3 --nodes 4 --html FILE`
// writes a page of at most 5 MB whose data is the whole dead path, every
// delivery tied to the step that sent its message, per-step changes that
// rebuild the replay's states, the live path beside it, and the critical
// search's tests; `report TRACE --html` gives the same path from the
// trace files; bad input exits 2 with one line.
func TestHTMLReport(t *testing.T) {
	if testing.Short() {
		t.Skip("the RT3 check takes seconds")
	}
	r := runRT3(t)
	g, tr := r.g, r.t

	t.Run("size", func(t *testing.T) {
		fi, err := os.Stat(r.page)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxRT3Page {
			t.Errorf("RT3's page is %d bytes, over %d", fi.Size(), maxRT3Page)
		}
		t.Logf("RT3's page: %d bytes, %d steps", fi.Size(), len(g.Dead.Steps))
	})

	t.Run("data", func(t *testing.T) {
		if g.Nodes != 4 || len(g.Dead.Steps) != len(tr.Steps) || g.Critical == nil || g.Critical.Step != tr.Critical.Step || g.Critical.LiveStep != tr.Critical.LiveStep {
			t.Fatalf("nodes %d, %d of %d steps, critical %+v vs %+v", g.Nodes, len(g.Dead.Steps), len(tr.Steps), g.Critical, tr.Critical)
		}
		// Every delivery comes from a step that sent its message, or
		// from Init.
		deliveries := 0
		for i, st := range g.Dead.Steps {
			if st.Kind != "deliver" {
				continue
			}
			deliveries++
			msg := strings.TrimPrefix(st.Text, "deliver ")
			var sent []string
			switch {
			case st.From == 0:
				sent = g.Dead.InitNet
			case st.From > 0 && st.From <= i:
				sent = g.Dead.Steps[st.From-1].Sent
			}
			found := false
			for _, m := range sent {
				found = found || m == msg
			}
			if !found {
				t.Fatalf("step %d (%s) delivers from step %d, which sent %v", i+1, st.Text, st.From, sent)
			}
		}
		if deliveries != 2012 { // RT3's dead path at seed 1
			t.Errorf("%d deliveries", deliveries)
		}
		// The changes rebuild the replay's node states at the critical
		// step, and that step changes what the text report says it does.
		sys := randtreeSystem(t)
		p, err := reports.Path(tr.Steps)
		if err != nil {
			t.Fatal(err)
		}
		crit := g.Critical.Step
		rep, err := livecheck.ReplayFrom(sys, livecheck.ConfigOf(tr), tr.Init, p[:crit], 0)
		if err != nil {
			t.Fatal(err)
		}
		nodes := append([]string(nil), g.Dead.Init...)
		for _, st := range g.Dead.Steps[:crit] {
			for _, c := range st.Changes {
				nodes[c.Node] = c.Line
			}
		}
		for i := range nodes {
			if want := sim.DumpNode(rep.Final, sim.NodeID(i)); nodes[i] != want {
				t.Errorf("node %d after step %d: rebuilt %q, replayed %q", i, crit, nodes[i], want)
			}
		}
		cs := g.Dead.Steps[crit-1].Changes
		if len(cs) != 1 || cs[0].Node != 2 || cs[0].Changes[0].String() != "joining -> joined" {
			t.Errorf("the critical step changes %+v", cs)
		}
		// The live path: its own trace's steps, sharing the dead path's
		// first LiveStep.
		lt, err := reports.ReadTraceFile(r.live)
		if err != nil {
			t.Fatal(err)
		}
		if g.Live == nil || len(g.Live.Steps) != len(lt.Steps) {
			t.Fatalf("live path %v, its trace has %d steps", g.Live, len(lt.Steps))
		}
		for i := range g.Critical.LiveStep {
			if g.Live.Steps[i].Text != g.Dead.Steps[i].Text {
				t.Fatalf("step %d: live %q, dead %q", i+1, g.Live.Steps[i].Text, g.Dead.Steps[i].Text)
			}
		}
		// The walk statistics: the dead test of the critical step saw no
		// recovery, a probe of the step before it did.
		var deadAt, liveAt bool
		for _, ts := range g.Walks.Tested {
			deadAt = deadAt || ts.DeadTest && ts.Step == crit && !ts.Live && ts.Walks > 0
			liveAt = liveAt || ts.Step == g.Critical.LiveStep && ts.Live
		}
		if g.Walks.Walks != 1 || g.Walks.Suspects != 1 || !deadAt || !liveAt {
			t.Errorf("walks %+v", g.Walks)
		}
	})

	t.Run("report-command", func(t *testing.T) {
		page := filepath.Join(t.TempDir(), "report.html")
		var out, errb bytes.Buffer
		if code := livecheck.Run([]string{"report", r.trace, "--html", page}, &out, &errb, systems.All()...); code != livecheck.ExitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		g2 := graphOfPage(t, page)
		a, _ := json.Marshal([]any{g.Dead, g.Live, g.Critical.Step, g.Critical.LiveStep, g.TailText})
		b, _ := json.Marshal([]any{g2.Dead, g2.Live, g2.Critical.Step, g2.Critical.LiveStep, g2.TailText})
		if !bytes.Equal(a, b) {
			t.Errorf("the trace's page draws other paths than the check's")
		}
		if g2.Critical.SlipStep == 0 || g2.Critical.SlipStep != g.Critical.SlipStep || g2.Critical.Slip != g.Critical.Slip {
			t.Errorf("the trace's page has the slip at step %d (%q), the check's at %d (%q)", g2.Critical.SlipStep, g2.Critical.Slip, g.Critical.SlipStep, g.Critical.Slip)
		}
		if g2.Walks == nil || g2.Walks.DeadTest == nil || *g2.Walks.DeadTest != *tr.DeadTest {
			t.Errorf("walks %+v, the trace's dead test %+v", g2.Walks, tr.DeadTest)
		}
	})

	t.Run("bad-input", func(t *testing.T) {
		dir := t.TempDir()
		corrupt := filepath.Join(dir, "corrupt.json")
		os.WriteFile(corrupt, []byte(`{"format": "livecheck-trace", "steps": [`), 0o644)
		file := filepath.Join(dir, "file")
		os.WriteFile(file, nil, 0o644)
		page := filepath.Join(dir, "p.html")
		for _, args := range [][]string{
			{"report", filepath.Join(dir, "missing.json"), "--html", page},
			{"report", corrupt, "--html", page},
			{"report", r.trace},
			{"report", r.trace, "--html", page, "--vs", filepath.Join(dir, "missing.json")},
			{"report", r.trace, "--html", filepath.Join(file, "p.html")}, // under a file: cannot be written
		} {
			var out, errb bytes.Buffer
			code := livecheck.Run(args, &out, &errb, systems.All()...)
			if code != livecheck.ExitUsage || strings.Count(errb.String(), "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
			}
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 2 {
			t.Errorf("%d files left in %s, want the 2 the test wrote", len(ents), dir)
		}
	})

	t.Run("browser", func(t *testing.T) { browserTest(t, r) })
}

func randtreeSystem(t *testing.T) *livecheck.System {
	for _, s := range systems.All() {
		if s.Name == "randtree" {
			return s
		}
	}
	t.Fatal("no randtree")
	return nil
}
