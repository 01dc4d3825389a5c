package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems"
)

var validSystems = strings.Join(systems.Names(), ", ")

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(unbudgeted(args), &o, &e)
	return code, o.String(), e.String()
}

// unbudgeted gives a check no time budget unless the test gives one: a
// test bounds the depth, never the clock, so that a busy machine cannot
// change its result.
func unbudgeted(args []string) []string {
	if len(args) == 0 || args[0] != "check" || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--time") }) {
		return args
	}
	return append(slices.Clip(args), "--time", "0")
}

func TestExitCodesAndJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := runCLI(t, "check", "lcr", "--nodes", "4", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("correct lcr: exit %d, want 0\n%s", code, out)
	}
	var ok map[string]any
	if err := json.Unmarshal([]byte(out), &ok); err != nil {
		t.Fatal(err)
	}
	stats := ok["stats"].(map[string]any)
	if ok["result"] != "ok" || ok["system"] != "lcr" || ok["nodes"] != 4.0 || stats["states"] != 324.0 ||
		stats["transitions"] != 555.0 || stats["slept"] != 300.0 || stats["max_depth"] != 15.0 || ok["trace"] != nil {
		t.Fatalf("unexpected JSON: %s", out)
	}
	if _, has := stats["elapsed_ms"]; !has {
		t.Fatalf("no elapsed_ms in %s", out)
	}

	code, out, _ = runCLI(t, "check", "lcr", "--nodes", "4", "--bug", "no-discard", "--json", "--out", dir)
	if code != 1 {
		t.Fatalf("buggy lcr: exit %d, want 1", code)
	}
	var bad struct {
		Result, Property, Trace string
		Bugs                    []string
	}
	if err := json.Unmarshal([]byte(out), &bad); err != nil {
		t.Fatal(err)
	}
	if bad.Result != "safety-violation" || bad.Property != "one-leader" || len(bad.Bugs) != 1 || bad.Bugs[0] != "no-discard" {
		t.Fatalf("unexpected JSON: %s", out)
	}
	if filepath.Dir(bad.Trace) != dir {
		t.Fatalf("trace %q not in --out %q", bad.Trace, dir)
	}

	// The trace replays to its violation: exit 1.
	code, out, errs := runCLI(t, "replay", bad.Trace)
	if code != 1 || !strings.Contains(out, "reproduced") || !strings.Contains(out, "safety-violation of one-leader") {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "deliver Elect{ID:4} 0->1  => sends Elect{ID:4} 1->2") {
		t.Fatalf("replay does not show the steps:\n%s", out)
	}

	// The same check twice gives the same trace file name and content.
	_, out2, _ := runCLI(t, "check", "lcr", "--nodes", "4", "--bug", "no-discard", "--json", "--out", dir)
	if !strings.Contains(out2, bad.Trace) {
		t.Fatalf("second run wrote another trace: %s", out2)
	}
}

func TestTamperedTraces(t *testing.T) {
	dir := t.TempDir()
	_, out, _ := runCLI(t, "check", "lcr", "--nodes", "3", "--bug", "no-discard", "--json", "--out", dir)
	var r struct{ Trace string }
	json.Unmarshal([]byte(out), &r)
	orig, err := os.ReadFile(r.Trace)
	if err != nil {
		t.Fatal(err)
	}
	var firstMsg string
	for _, l := range strings.Split(string(orig), "\n") {
		if strings.Contains(l, `"msg"`) {
			firstMsg = l
			break
		}
	}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"truncated", string(orig[:len(orig)/2]), "malformed or truncated JSON"},
		{"empty", "", "malformed or truncated JSON"},
		{"not json", "hello", "malformed or truncated JSON"},
		{"other format", strings.Replace(string(orig), `"livecheck-trace"`, `"other"`, 1), "not a livecheck trace file"},
		{"future version", strings.Replace(string(orig), `"version": 1`, `"version": 9`, 1), "version 9 is not supported"},
		{"unknown system", strings.Replace(string(orig), `"system": "lcr"`, `"system": "zab"`, 1), `unknown system "zab" (valid: ` + validSystems + ")"},
		{"unknown bug", strings.Replace(string(orig), `"no-discard"`, `"nope"`, 1), `lcr has no bug "nope" (valid: no-discard, ignore-early)`},
		{"unknown kind", strings.Replace(string(orig), `"kind": "deliver"`, `"kind": "teleport"`, 1), `unknown event kind "teleport"`},
		{"bad fingerprint", strings.Replace(string(orig), firstMsg, `      "msg": "zz",`, 1), "not a 16-digit hex fingerprint"},
		{"other message", strings.Replace(string(orig), firstMsg, `      "msg": "0000000000000001",`, 1), "does not replay"},
		{"bug removed", strings.Replace(string(orig), `"no-discard"`, ``, 1), "the trace does not replay: step 6"},
		{"other property", strings.Replace(string(orig), `"property": "one-leader"`, `"property": "elected"`, 1),
			`"elected" is not a safety property of this system (valid: deterministic, no-panic, one-leader)`},
		{"other result", strings.Replace(strings.Replace(string(orig), `"property": "one-leader"`, `"property": "elected"`, 1), `"safety-violation"`, `"liveness-violation"`, 1),
			"does not replay: it records liveness-violation of elected, but replaying it gives safety-violation of one-leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, "t.json")
			os.WriteFile(f, []byte(tc.content), 0o644)
			code, _, errs := runCLI(t, "replay", f)
			if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, errs, tc.want)
			}
		})
	}
	code, _, errs := runCLI(t, "replay", filepath.Join(dir, "missing.json"))
	if code != 2 || !strings.Contains(errs, "no such file") {
		t.Fatalf("missing file: exit %d %q", code, errs)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (valid: list, check, merge, prefix, replay, report, debug, run, cluster, trace, call, snapshot)`},
		{[]string{"check"}, "name the system to check (valid: " + validSystems + ")"},
		{[]string{"check", "paxosx"}, `unknown system "paxosx" (valid: ` + validSystems + ")"},
		{[]string{"check", "lcr", "--bug", "nope"}, `lcr has no bug "nope" (valid: no-discard, ignore-early)`},
		{[]string{"check", "lcr", "--nodes", "1"}, "lcr needs 2 to 12 nodes, not 1"},
		{[]string{"check", "lcr", "--nodes", "x"}, `invalid argument "x" for "--nodes"`},
		{[]string{"check", "lcr", "--depth", "0"}, "--depth must be at least 1"},
		{[]string{"check", "lcr", "--frob"}, "unknown flag --frob: did you mean --from?"},
		{[]string{"check", "lcr", "--ids", "1,2"}, "--ids lists 2 ids for 3 nodes"},
		{[]string{"check", "lcr", "--resets", "-1"}, "--resets cannot be negative"},
		{[]string{"check", "lcr", "--reduce", "por"}, `--reduce: unknown reduction "por" (valid: a comma-separated list of sleep, symmetry and observers, or none)`},
		{[]string{"check", "lcr", "extra"}, `unexpected argument "extra"`},
		{[]string{"replay"}, "give exactly one trace file"},
		{[]string{"list", "x"}, `takes no arguments`},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestHelpAndList(t *testing.T) {
	code, out, _ := runCLI(t, "check", "lcr", "--help")
	if code != 0 || !strings.Contains(out, "--ids") || !strings.Contains(out, "--depth") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "list")
	// A line a system, then one a property, indented.
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "    ") {
			lines = append(lines, l)
		}
	}
	if code != 0 || len(lines) != len(systems.All()) || lines[0] != "lcr: LeLann-Chang-Roberts leader election on a unidirectional ring; bugs: no-discard (--nodes 2), ignore-early (--nodes 2); properties: one-leader,elected" ||
		!strings.Contains(out, "\n    elected (liveness: one node is leader and every node knows its id)\n") {
		t.Fatalf("list: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, "list", "--json")
	var entries []struct {
		Name       string
		Bugs       []string
		Properties []string
	}
	if err := json.Unmarshal([]byte(out), &entries); err != nil || code != 0 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if len(entries) != len(systems.All()) || entries[0].Name != "lcr" || entries[0].Bugs[0] != "no-discard" || entries[0].Properties[1] != "elected" {
		t.Fatalf("list --json: %s", out)
	}
}

// Issue 10, item 15: the settings a bug needs fill in what the user left
// unset and the report names them; a setting given that cannot show the
// bug is warned about on stderr, and in the JSON.
func TestBugSettings(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "check", "lcr", "--bug", "no-discard", "--out", dir)
	if code != 1 || !strings.Contains(out, "lcr, 2 nodes, bugs no-discard") || !strings.Contains(out, "\nsettings from bug no-discard: --nodes 2\n") || strings.Contains(errs, "warning") {
		t.Fatalf("exit %d\n%s\nstderr: %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "check", "paxos", "--bug", "last-promise", "--proposers", "1", "--json", "--out", dir)
	var r struct {
		Result      string
		FromBugs    []livecheck.Setting `json:"from_bugs"`
		BugWarnings []string            `json:"bug_warnings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "last-promise needs at least 2 proposers; you gave 1"
	if code != 0 || r.Result != "ok" || !slices.Equal(r.BugWarnings, []string{want}) ||
		!slices.Equal(r.FromBugs, []livecheck.Setting{{Bug: "last-promise", Name: "nodes", Value: "3"}}) ||
		errs != "livecheck: warning: "+want+": the check may miss it\n" {
		t.Fatalf("exit %d %+v\nstderr: %q", code, r, errs)
	}
}

func TestCheckText(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := runCLI(t, "check", "lcr", "--nodes", "3", "--bug", "no-discard", "--out", dir)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"lcr, 3 nodes, bugs no-discard",
		"safety-violation of one-leader:",
		"path of 8 steps:",
		"STATES",
		"replay it: livecheck replay " + dir,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestLivenessViolationJSONAndTraces(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "check", "lcr", "--nodes", "4", "--bug", "ignore-early", "--json", "--out", dir)
	if code != 1 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	first := out
	var r struct {
		Result, Property, Trace string
		Critical                struct {
			Case, Event, Kind string
			LiveTrace         string `json:"live_trace"`
			StepN             int    `json:"step"`
			NodeN             int    `json:"node"`
			LiveStepN         int    `json:"live_step"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	c := r.Critical
	if r.Result != "liveness-violation" || r.Property != "elected" || c.Case != "C1" || c.StepN != 2 || c.NodeN != 1 ||
		c.Kind != "deliver" || c.Event != "deliver Elect{ID:4} 0->1" || c.LiveStepN != 1 {
		t.Fatalf("unexpected JSON: %s", out)
	}
	code, out, errs = runCLI(t, "replay", r.Trace)
	if code != 1 || !strings.Contains(out, "reproduced") {
		t.Fatalf("dead trace replay: exit %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "replay", c.LiveTrace)
	if code != 0 || !strings.Contains(out, "reproduced: the trace reaches a live state") {
		t.Fatalf("live trace replay: exit %d %s %s", code, out, errs)
	}
	// Determinism: the same seed gives the same JSON apart from timings.
	_, again, _ := runCLI(t, "check", "lcr", "--nodes", "4", "--bug", "ignore-early", "--json", "--out", dir)
	if stripTimes(again) != stripTimes(first) {
		t.Fatalf("two runs differ:\n%s\n%s", first, again)
	}
}

// stripTimes drops the lines that hold timings.
func stripTimes(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, "_ms\"") && !strings.Contains(l, "\"cores\"") && !strings.HasPrefix(l, "time: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestPrefixFiles(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "prefix", "lcr", "--nodes", "4", "-n", "3", "--out", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var files []struct {
		File      string
		Length    int
		FirstLive int `json:"first_live"`
	}
	if err := json.Unmarshal([]byte(out), &files); err != nil || len(files) != 3 {
		t.Fatalf("%v: %s", err, out)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.File] || f.FirstLive != 14 || f.Length != 14 {
			t.Fatalf("prefixes %+v", files)
		}
		seen[f.File] = true
		// A prefix replays to a live state: exit 0.
		if code, out, _ := runCLI(t, "replay", f.File); code != 0 || !strings.Contains(out, "reaches a live state") {
			t.Fatalf("replay %s: exit %d %s", f.File, code, out)
		}
	}
	p := files[0].File
	// From the prefix with no failures: the correct LCR is live and ends
	// where nothing can happen, which is no violation (it was reported as
	// a quiescent one, then refused as an internal error).
	if code, out, errs := runCLI(t, "check", "lcr", "--from", p, "--json", "--out", dir); code != 0 || !strings.Contains(out, `"result": "ok"`) {
		t.Fatalf("correct lcr from a prefix: exit %d %s %s", code, out, errs)
	}
	// From the prefix, with one reset: LCR does not survive a crash (a
	// reset node is never started again), found after the prefix.
	code, out, _ = runCLI(t, "check", "lcr", "--from", p, "--resets", "1", "--json", "--out", dir)
	var r struct {
		Result string
		Nodes  int
		Prefix struct {
			File   string
			Length int
		}
		Trace    string
		Critical struct {
			Step      int
			TraceStep int `json:"trace_step"`
			Kind      string
		}
	}
	json.Unmarshal([]byte(out), &r)
	if code != 1 || r.Result != "liveness-violation" || r.Nodes != 4 || r.Prefix.Length != 14 || r.Critical.Kind != "reset" ||
		r.Critical.TraceStep != r.Critical.Step+14 {
		t.Fatalf("check --from: exit %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "replay", r.Trace); code != 1 {
		t.Fatalf("the trace from a prefix does not replay on its own: %s", errs)
	}

	orig, _ := os.ReadFile(p)
	for _, tc := range []struct {
		name, content string
		args          []string
		want          string
	}{
		{"other nodes", string(orig), []string{"--nodes", "5"}, "was made for another configuration: 4 nodes, not 5"},
		{"other ids", string(orig), []string{"--ids", "1,2,3,4"}, "ids=(default), not 1,2,3,4"},
		{"other bug", string(orig), []string{"--bug", "no-discard"}, "was made for another configuration: bugs none, not [no-discard] (leave --bug out: the file's are taken)"},
		{"not a prefix", strings.Replace(string(orig), `"result": "prefix"`, `"result": "safety-violation"`, 1), nil, "is not a prefix file"},
		{"edited path", strings.Replace(string(orig), `"node": 1`, `"node": 2`, 1), nil, "the trace does not replay: step 1"},
		{"truncated", string(orig[:len(orig)/3]), nil, "malformed or truncated JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, "p.json")
			os.WriteFile(f, []byte(tc.content), 0o644)
			args := append([]string{"check", "lcr", "--from", f}, tc.args...)
			code, _, errs := runCLI(t, args...)
			if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
	// A prefix of another system.
	other := strings.Replace(string(orig), `"system": "lcr"`, `"system": "paxos"`, 1)
	f := filepath.Join(dir, "other.json")
	os.WriteFile(f, []byte(other), 0o644)
	if code, _, errs := runCLI(t, "check", "lcr", "--from", f); code != 2 || !strings.Contains(errs, "system paxos, not lcr") {
		t.Fatalf("another system's prefix: exit %d %q", code, errs)
	}
}

// Local mode's ok says what it covered: every node state reachable
// without failures, and the candidates no real run reaches.
func TestCheckTextLocal(t *testing.T) {
	code, out, _ := runCLI(t, "check", "lcr", "--nodes", "3", "--mode", "local", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	want := regexp.MustCompile(`ok: no violation; local mode explored every node state reachable without failures \(\d+ node states, \d+ messages; nothing held back in round \d+\) and no real run reaches a combination of them that violates a safety property \(\d+ candidates, none reached\)`)
	if !want.MatchString(out) {
		t.Fatalf("text report lacks %s:\n%s", want, out)
	}
}

// TestCheckTextCollisionChance: the text and JSON reports give TLC's
// estimate of a fingerprint collision, distinct × (generated − distinct)
// / 2^64, generated counting the start state; LCR with 4 nodes has 324
// states and, with sleep sets, 555 transitions.
func TestCheckTextCollisionChance(t *testing.T) {
	code, out, _ := runCLI(t, "check", "lcr", "--nodes", "4", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if want := "fingerprint collision chance: 4.1e-15\n"; !strings.Contains(out, want) {
		t.Errorf("text report lacks %q:\n%s", want, out)
	}
	code, out, _ = runCLI(t, "check", "lcr", "--nodes", "4", "--json", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var r struct {
		Stats struct {
			States          int64   `json:"states"`
			Transitions     int64   `json:"transitions"`
			CollisionChance float64 `json:"collision_chance"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	if want := math.Ldexp(324*(555+1-324), -64); s.States != 324 || s.Transitions != 555 || s.CollisionChance != want {
		t.Errorf("stats %+v, want 324 states, 555 transitions (sleep sets), collision_chance %g", s, want)
	}
}

// Under symmetry reduction the counts are of classes of states, and the
// report says so; --reduce sleep counts every state.
func TestSymmetryCountsSaySo(t *testing.T) {
	for _, c := range []struct{ reduce, want string }{
		{"sleep,symmetry", "ok: no violation in every reachable state (65 classes of states, up to renaming nodes 1, 2 and 3)\n"},
		{"sleep", "ok: no violation in every reachable state (282 states)\n"},
	} {
		code, out, errOut := runCLI(t, "check", "paxos", "--roles", "split", "--proposers", "1", "--nodes", "5", "--depth", "100", "--no-walks", "--reduce", c.reduce, "--out", t.TempDir())
		if code != exitOK || !strings.Contains(out, c.want) {
			t.Fatalf("--reduce %s: exit %d, want %d and the line %q in\n%s%s", c.reduce, code, exitOK, c.want, out, errOut)
		}
	}
}
