package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/ring"
)

// A prefix whose last step crashes a node (what a snapshot of a cluster
// with a node stopped gives) round-trips as a version 5 trace, replays,
// and 'check --from' starts with the node down: the crash budget, left
// out, covers it; given smaller, the check says so. The correct ring is
// live again after the node's restart (exit 0), and rejoin-self, which
// a reset breaks, is still found from there (not under -short).
func TestRingFromPrefixNodeDown(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "P")
	code, out, errs := runCLI(t, "prefix", "ring", "--nodes", "4", "-n", "1", "--out", p, "--json")
	if code != 0 {
		t.Fatalf("prefix: exit %d %s", code, errs)
	}
	var files []struct{ File string }
	json.Unmarshal([]byte(out), &files)
	if len(files) != 1 {
		t.Fatalf("prefix wrote %v", files)
	}
	tr, err := reports.ReadTraceFile(files[0].File)
	if err != nil {
		t.Fatal(err)
	}
	tr.Steps = append(tr.Steps, reports.TraceStep{Kind: "crash", Node: 2})
	tr.Budget.Crashes = 1
	down := filepath.Join(dir, "down.json")
	if err := reports.WriteFileAtomic(down, tr.Write); err != nil {
		t.Fatal(err)
	}
	back, err := reports.ReadTraceFile(down)
	if err != nil || back.Version != 5 || back.Steps[len(back.Steps)-1].Kind != "crash" {
		t.Fatalf("the prefix with a crash read back: %v, %+v", err, back)
	}
	if code, out, errs := runCLI(t, "replay", down); code != 0 {
		t.Fatalf("replay of the prefix with a node down: exit %d\n%s%s", code, out, errs)
	}
	// The check starts from a state with node 2 down.
	cfg, init, path, err := check.PrefixStart(&ring.System, down, protocol.Config{}, time.Minute)
	if err != nil || cfg.Budget.Crashes != 1 {
		t.Fatalf("PrefixStart: %v, budget %+v", err, cfg.Budget)
	}
	rep, err := check.ReplayFrom(&ring.System, cfg, init, path, time.Minute)
	if err != nil || !rep.Final.Down(2) || rep.Final.DownNodes() != sim.NodeSet(0).Add(2) || !rep.Live {
		t.Fatalf("the prefix's end: %v, down %v, live %v", err, rep.Final.DownNodes(), rep.Live)
	}
	// The prefix's crash is spent before the check: --crashes 0 adds
	// none, --crashes 2 two more.
	for _, tc := range []struct{ flag, want int }{{protocol.None, 1}, {2, 3}} {
		cfg, _, _, err := check.PrefixStart(&ring.System, down, protocol.Config{Budget: sim.Budget{Crashes: tc.flag}}, time.Minute)
		if err != nil || cfg.Budget.Crashes != tc.want {
			t.Errorf("crash budget %d from a prefix with a crash: %v, budget %+v; want %d crashes", tc.flag, err, cfg.Budget, tc.want)
		}
	}
	// The correct ring comes back.
	r, _ := checkCLI(t, 0, "check", "ring", "--nodes", "4", "--from", down, "--resets", "1", "--walk-depth", "1000", "--out", dir)
	if r.Result != "ok" {
		t.Fatalf("the correct ring from a prefix with a node down: %+v", r)
	}
	// The file's bugs are the check's: another --bug is refused.
	if code, _, errs := runCLI(t, "check", "ring", "--bug", "rejoin-self", "--from", down); code != 2 ||
		!strings.Contains(errs, "was made for another configuration: bugs none, not [rejoin-self]") || strings.Count(errs, "\n") != 1 {
		t.Errorf("--bug rejoin-self from a prefix of the correct ring: exit %d %q", code, errs)
	}
	if testing.Short() {
		t.Skip("the critical search of rejoin-self takes seconds: run without -short")
	}
	// rejoin-self is still found, from the same path made with the bug.
	tr.Bugs = []string{"rejoin-self"}
	downBug := filepath.Join(dir, "down-bug.json")
	if err := reports.WriteFileAtomic(downBug, tr.Write); err != nil {
		t.Fatal(err)
	}
	r, _ = checkCLI(t, 1, "check", "ring", "--nodes", "4", "--from", downBug, "--resets", "1", "--out", dir)
	if r.Result != "liveness-violation" {
		t.Fatalf("rejoin-self from a prefix with a node down: %+v", r)
	}
	if code, out, errs := runCLI(t, "replay", r.Trace); code != 1 || !strings.Contains(out, "reproduced") {
		t.Fatalf("the dead trace: exit %d %s %s", code, out, errs)
	}
}
