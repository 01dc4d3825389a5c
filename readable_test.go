package livecheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/systems"
)

// Issue 13: the text report of a bundled liveness bug fits on one screen
// and names the critical step and event, what it changes (a field or a
// message), where the live path parts, and what the rest of the path
// does; the shortened dead path replays to the same violation. Each check
// costs seconds, so -short skips the randtree ones.
func TestReadableDeadPaths(t *testing.T) {
	for _, tc := range []struct {
		system string
		bugs   []string
		nodes  int
		params map[string]string
		slow   bool
	}{
		{"lcr", []string{"ignore-early"}, 0, nil, false},
		{"randtree", []string{"RT3"}, 4, nil, true},
		{"randtree", []string{"RT10"}, 0, map[string]string{"peers": "all"}, true},
		{"ring", []string{"partition-forget"}, 0, nil, true},
		{"ring", []string{"rejoin-self"}, 0, nil, true},
	} {
		t.Run(tc.system+"-"+strings.Join(tc.bugs, ","), func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("seconds a check")
			}
			var sys *livecheck.System
			for _, s := range systems.All() {
				if s.Name == tc.system {
					sys = s
				}
			}
			res, err := livecheck.Check(sys, livecheck.Options{Config: livecheck.Config{Nodes: tc.nodes, Bugs: tc.bugs, Params: tc.params}})
			if err != nil || res.Critical == nil {
				t.Fatalf("%v, critical %v", err, res)
			}
			cx := res.Critical
			rep := res.Report("T.json", "L.json")
			var b strings.Builder
			reports.WriteCheck(&b, rep, true)
			text := b.String()
			// 70 since issue 26 added the slip and the recovery odds; 71
			// since issue 40 added the line that says where the time went.
			if n := strings.Count(text, "\n"); n > 71 {
				t.Errorf("%d lines:\n%s", n, text)
			}
			wants := []string{
				fmt.Sprintf("critical transition (%s): step %s of %s\n    %s\n", reports.CaseWords(string(cx.Case)), reports.Thousands(cx.Step), reports.Thousands(len(res.Path)), cx.EventText),
				fmt.Sprintf(" * %2d. %s", cx.Step, cx.EventText),
				fmt.Sprintf("\nwhat step %d changes:\n", cx.Step),
				fmt.Sprintf("the nearest live path shares the first %s, then takes instead\n    %s\n", reports.Count(cx.LiveStep, "step"), cx.LiveEventText),
			}
			if len(res.Path) > cx.Step+3 {
				wants = append(wants, reports.Count(len(res.Path)-cx.Step-3, "further step")+", no live state: ")
			}
			for _, w := range wants {
				if !strings.Contains(text, w) {
					t.Errorf("no %q in\n%s", w, text)
				}
			}
			// What differs: a field of a node, or a message in flight.
			if len(rep.Critical.Changes) == 0 && rep.Critical.Network == nil {
				t.Errorf("the critical step changes nothing shown:\n%s", text)
			}
			if len(rep.Critical.LiveChanges) == 0 && rep.Critical.LiveNetwork == nil {
				t.Errorf("the dead and the live path do not differ:\n%s", text)
			}
			if sh := res.Shortened; sh != nil {
				rp, err := livecheck.ReplayFrom(sys, res.Config, res.Init, sh.Path, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := rp.TestEnd(cx.EndTest); err != nil || !rp.Reproduces(livecheck.LivenessViolation, res.Property) {
					t.Errorf("the shortened path of %d steps does not end dead: %v %+v", len(sh.Path), err, rp.End)
				}
				if !strings.Contains(text, fmt.Sprintf("\n%s of the %s before the critical step dropped, each gap marked: ", reports.Thousands(cx.Step-1-len(sh.Kept)), reports.Count(cx.Step-1, "step"))) {
					t.Errorf("the report does not say the path was shortened:\n%s", text)
				}
			}
		})
	}
}
