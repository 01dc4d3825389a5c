package livecheck_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// comparable zeroes what differs between two runs of the same check: the
// times and where the traces were written.
func comparable(t *testing.T, c *reports.Check) string {
	t.Helper()
	c.Trace, c.Stats.ElapsedMS, c.TimeMS = "", 0, 0
	for i := range c.Phases {
		c.Phases[i].WallMS, c.Phases[i].CPUMS, c.Phases[i].Cores, c.Phases[i].SerialMS = 0, 0, 0, 0
	}
	if l := c.Liveness; l != nil {
		l.ElapsedMS, l.CriticalMS = 0, 0
	}
	if cx := c.Critical; cx != nil {
		cx.LiveTrace = ""
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lossyEcho is the echo system with a default budget of one drop, and
// double-pong needing 2 nodes and a reset.
func lossyEcho() *livecheck.System {
	sys := echoSystem(false)
	sys.DefaultBudget = sim.Budget{Drops: 1}
	sys.Bugs[0].Needs = livecheck.Needs{Nodes: 2, Budget: sim.Budget{Resets: 1}}
	return sys
}

// The library (Check) and the command (Run) give the same result for the
// same settings: the command's flags left out and the options' zero
// values are the same defaults, the system's DefaultBudget and the bugs'
// needs included; a failure flag given 0 is livecheck.None.
func TestRunMatchesCheck(t *testing.T) {
	none := livecheck.Config{Budget: sim.Budget{Drops: livecheck.None}}
	for _, tc := range []struct {
		name   string
		args   []string
		opts   livecheck.Options
		code   int
		result string
		steps  int
		sys    func() *livecheck.System // nil: echoSystem(false)
		budget sim.Budget               // the budget checked, as counts
		nodes  int
	}{
		{"ok", nil, livecheck.Options{}, livecheck.ExitOK, "ok", 0, nil, sim.Budget{}, 3},
		{"safety", []string{"--bug", "double-pong"}, livecheck.Options{Config: livecheck.Config{Bugs: []string{"double-pong"}}},
			livecheck.ExitViolation, "safety-violation", 5, nil, sim.Budget{}, 3},
		{"liveness", []string{"--drops", "1", "--walk-depth", "50", "--seed", "3"},
			livecheck.Options{Config: livecheck.Config{Budget: sim.Budget{Drops: 1}}, WalkDepth: 50, Seed: 3},
			livecheck.ExitViolation, "liveness-violation", 3, nil, sim.Budget{Drops: 1}, 3},
		{"max-states", []string{"--max-states", "3", "--escalations", "0"}, livecheck.Options{MaxStates: 3, Escalations: -1},
			livecheck.ExitOK, "ok", 0, nil, sim.Budget{}, 3},
		{"min-depth", []string{"--max-states", "3", "--min-depth", "2"}, livecheck.Options{MaxStates: 3, MinDepth: 2},
			livecheck.ExitInconclusive, "inconclusive", 0, nil, sim.Budget{}, 3},
		{"default budget", []string{"--walk-depth", "50"}, livecheck.Options{WalkDepth: 50},
			livecheck.ExitViolation, "liveness-violation", 3, lossyEcho, sim.Budget{Drops: 1}, 3},
		{"none of it", []string{"--drops", "0"}, livecheck.Options{Config: none},
			livecheck.ExitOK, "ok", 0, lossyEcho, sim.Budget{}, 3},
		{"bug needs", []string{"--bug", "double-pong"}, livecheck.Options{Config: livecheck.Config{Bugs: []string{"double-pong"}}},
			livecheck.ExitViolation, "liveness-violation", 2, lossyEcho, sim.Budget{Resets: 1, Drops: 1}, 2},
	} {
		if tc.sys == nil {
			tc.sys = func() *livecheck.System { return echoSystem(false) }
		}
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := append([]string{"check", "echo", "--json", "--time", "0", "--out", t.TempDir()}, tc.args...)
			code := livecheck.Run(args, &out, &errs, tc.sys())
			var cli reports.Check
			if err := json.Unmarshal(out.Bytes(), &cli); err != nil {
				t.Fatalf("exit %d, %v\n%s\nstderr: %s", code, err, out.String(), errs.String())
			}
			if code != tc.code || cli.Result != tc.result || cli.PathLen != tc.steps {
				t.Fatalf("exit %d, %s of %d steps; want exit %d, %s of %d steps\nstderr: %s", code, cli.Result, cli.PathLen, tc.code, tc.result, tc.steps, errs.String())
			}
			res, err := livecheck.Check(tc.sys(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if cli.Budget != tc.budget || cli.Nodes != tc.nodes {
				t.Errorf("checked %d nodes, budget %+v; want %d, %+v", cli.Nodes, cli.Budget, tc.nodes, tc.budget)
			}
			if got, want := comparable(t, res.Report("", "")), comparable(t, &cli); got != want {
				t.Errorf("Check:\n%s\nRun:\n%s", got, want)
			}
		})
	}
}

// A program's own systems get the subcommands; bad definitions are a
// usage error, not a panic.
func TestRunOwnSystems(t *testing.T) {
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"list"}, &out, &errs, echoSystem(false)); code != livecheck.ExitOK ||
		out.String() != "echo: one round of pings; bugs: double-pong; properties: pongs-bounded,all-answered\n"+
			"    pongs-bounded (safety: no more pongs than nodes pinged)\n    all-answered (liveness: node 0 heard every pong)\n" {
		t.Errorf("list: exit %d, %q", code, out.String())
	}
	out.Reset()
	code := livecheck.Run([]string{"list"}, &out, &errs, echoSystem(false), echoSystem(true))
	if want := "livecheck: two systems are named \"echo\"\n"; code != livecheck.ExitUsage || errs.String() != want {
		t.Errorf("two systems of one name: exit %d, stderr %q; want 2, %q", code, errs.String(), want)
	}
	errs.Reset()
	code = livecheck.Run([]string{"check", "lcr"}, &out, &errs, echoSystem(false))
	if want := "livecheck check: unknown system \"lcr\" (valid: echo)\n"; code != livecheck.ExitUsage || errs.String() != want {
		t.Errorf("another system: exit %d, stderr %q; want 2, %q", code, errs.String(), want)
	}
}

// A trace file without a version field (before it was written) replays; a
// newer version is refused with one line that names it, exit 2.
func TestReplayTraceVersions(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"check", "echo", "--bug", "double-pong", "--time", "0", "-q", "--out", dir}, &out, &errs, echoSystem(false)); code != livecheck.ExitViolation {
		t.Fatalf("check: exit %d\n%s", code, errs.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		code    int
		stderr  string
	}{
		{"", livecheck.ExitViolation, ""},
		{`"version": 1,`, livecheck.ExitViolation, ""},
		{`"version": 7,`, livecheck.ExitUsage, "livecheck replay: %s: trace format version 7 is not supported (this livecheck reads versions up to 6; replay it with a newer one)\n"},
	} {
		file := filepath.Join(dir, "v.json")
		edited := strings.Replace(string(data), `"version": 1,`, tc.version, 1)
		if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		errs.Reset()
		code := livecheck.Run([]string{"replay", file}, &out, &errs, echoSystem(false))
		want := tc.stderr
		if want != "" {
			want = fmt.Sprintf(want, file)
		}
		if code != tc.code || errs.String() != want {
			t.Errorf("version %q: exit %d, stderr %q; want %d, %q", tc.version, code, errs.String(), tc.code, want)
		}
		if tc.code == livecheck.ExitViolation && !strings.HasSuffix(out.String(), "reproduced: the trace replays to the violation it records\n") {
			t.Errorf("version %q: %s", tc.version, out.String())
		}
	}
}
