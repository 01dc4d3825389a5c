package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/livecheck/livecheck/reports"
)

type checkJSON struct {
	Result, Property, Trace string
	Critical                struct {
		Case, Event, Kind, Timer string
		Step                     int
		Node                     int
		LiveStep                 int    `json:"live_step"`
		LiveTrace                string `json:"live_trace"`
		Diff                     []struct {
			Node       int
			Dead, Live string
		}
	}
	Stats struct{ States int }
}

func checkCLI(t *testing.T, want int, args ...string) (checkJSON, string) {
	t.Helper()
	code, out, errs := runCLI(t, append(args, "--json")...)
	if code != want {
		t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errs)
	}
	var r checkJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return r, out
}

// Both traces of a liveness violation replay: the dead one to a state
// that is not live, the nearest live one to a live state.
func replayBoth(t *testing.T, r checkJSON) {
	t.Helper()
	if code, out, errs := runCLI(t, "replay", r.Trace); code != 1 || !strings.Contains(out, "reproduced") {
		t.Fatalf("dead trace: exit %d %s %s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "replay", r.Critical.LiveTrace); code != 0 || !strings.Contains(out, "reaches a live state") {
		t.Fatalf("live trace: exit %d %s %s", code, out, errs)
	}
}

func TestRandTreeRT3(t *testing.T) {
	dir := t.TempDir()
	r, first := checkCLI(t, 1, "check", "randtree", "--nodes", "4", "--bug", "RT3", "--out", dir)
	c := r.Critical
	// Node 2 lost its recovery timer while joining (RT3's slip); the
	// critical step is its join timer, which makes it found a tree of its
	// own that, with no recovery timer, is never merged. (Before, the
	// founder could still take a late acceptance, and the critical step
	// was the recovery timer firing on node 1 at step 4.)
	if r.Result != "liveness-violation" || r.Property != "single-tree" || c.Case != "C1" || c.Kind != "timer" ||
		c.Timer != "join" || c.Node != 2 || c.Step != 23 || c.LiveStep != 22 {
		t.Fatalf("RT3: %+v", r)
	}
	if len(c.Diff) == 0 || c.Diff[0].Node != 2 || !strings.HasPrefix(c.Diff[0].Dead, "joined root=2 parent=2 ") {
		t.Fatalf("RT3: node 2 did not found its own tree: %+v", c.Diff)
	}
	replayBoth(t, r)
	// Determinism: the same seed gives the same JSON, timings aside.
	_, again := checkCLI(t, 1, "check", "randtree", "--nodes", "4", "--bug", "RT3", "--out", dir)
	if stripTimes(first) != stripTimes(again) {
		t.Fatalf("two runs differ:\n%s\n%s", first, again)
	}
}

func TestRandTreeRT10(t *testing.T) {
	// RT10 needs a parent that joins elsewhere while it has children; with
	// the default peer sets (each node knows only the bootstrap node) no
	// parent ever does so without a failure, so the check widens the peer
	// sets.
	dir := t.TempDir()
	r, _ := checkCLI(t, 1, "check", "randtree", "--nodes", "4", "--bug", "RT10", "--peers", "all", "--out", dir)
	c := r.Critical
	if r.Result != "liveness-violation" || c.Case != "C1" || c.Kind != "deliver" || !strings.HasPrefix(c.Event, "deliver Remove{}") {
		t.Fatalf("RT10: %+v", r)
	}
	replayBoth(t, r)
}

// The correct RandTree, seeds 1 to 20 (1 to 4 under -short). Walks of
// 1000 steps (not 5000) keep the 20 checks quick; shorter walks make a
// false alarm more likely, not less.
func TestRandTreeCorrectSeeds(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	errs := make([]string, seeds+1)
	for seed := 1; seed <= seeds; seed++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, stderr := runCLIq("check", "randtree", "--nodes", "4", "--seed", fmt.Sprint(seed), "--walk-depth", "1000", "--json", "--out", dir)
			if code != 0 || !strings.Contains(out, `"result": "ok"`) {
				errs[seed] = fmt.Sprintf("seed %d: exit %d %s %s", seed, code, out, stderr)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

func TestRingPartitionForget(t *testing.T) {
	dir := t.TempDir()
	r, _ := checkCLI(t, 1, "check", "ring", "--nodes", "4", "--bug", "partition-forget", "--out", dir)
	c := r.Critical
	if r.Result != "liveness-violation" || r.Property != "ring-formed" || c.Case != "C1" || c.Kind != "socket-error" {
		t.Fatalf("partition-forget: %+v", r)
	}
	replayBoth(t, r)
}

func TestRingFromPrefixes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "P")
	code, out, errs := runCLI(t, "prefix", "ring", "--nodes", "4", "-n", "5", "--out", p, "--json")
	if code != 0 {
		t.Fatalf("prefix: exit %d %s", code, errs)
	}
	var files []struct{ File string }
	json.Unmarshal([]byte(out), &files)
	entries, _ := os.ReadDir(p)
	if len(files) != 5 || len(entries) != 5 {
		t.Fatalf("%d prefixes listed, %d files written", len(files), len(entries))
	}
	// rejoin-self from the fourth prefix (the correct ring is silent
	// there, below). Which step the search names depends on the path the
	// walks took; the evidence that it is critical (the state before it
	// recovers, the one after it does not) is what replayBoth checks.
	// A prefix file's bugs are the check's: the same path, recorded
	// with the bug (prefixes take no failures, so the bug changes none
	// of its steps).
	tr, err := reports.ReadTraceFile(files[3].File)
	if err != nil {
		t.Fatal(err)
	}
	tr.Bugs = []string{"rejoin-self"}
	withBug := filepath.Join(dir, "prefix-rejoin-self.json")
	if err := reports.WriteFileAtomic(withBug, tr.Write); err != nil {
		t.Fatal(err)
	}
	r, _ := checkCLI(t, 1, "check", "ring", "--nodes", "4", "--from", withBug, "--resets", "1", "--out", dir)
	c := r.Critical
	if r.Result != "liveness-violation" || c.Case != "C1" {
		t.Fatalf("rejoin-self from a prefix: %+v", r)
	}
	replayBoth(t, r)
	// The correct ring from every prefix, seeds 1 to 10 (under -short one
	// seed a prefix, the i-th prefix from seed i). Walks of 1000 steps
	// (not 5000) keep the 50 checks quick; shorter walks make a false
	// alarm more likely, not less.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i, f := range files {
		for seed := 1; seed <= 10; seed++ {
			if testing.Short() && seed != i+1 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, out, stderr := runCLIq("check", "ring", "--nodes", "4", "--from", f.File, "--resets", "1", "--seed", fmt.Sprint(seed), "--walk-depth", "1000", "--json", "--out", dir)
				if code != 0 {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s seed %d: exit %d %s %s", f.File, seed, code, out, stderr))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for _, b := range bad {
		t.Error(b)
	}
}

// runCLIq is runCLI for goroutines: it reports nothing itself. Dozens of
// checks side by side on two cores can hold a handler's goroutine off
// the processor for seconds, which the default --handler-timeout (2 s,
// wall time) would take for a hang: checks run this way get a minute.
func runCLIq(args ...string) (int, string, string) {
	var o, e strings.Builder
	if len(args) > 0 && args[0] == "check" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--handler-timeout") }) {
		args = append(slices.Clip(args), "--handler-timeout", "1m")
	}
	code := run(unbudgeted(args), &o, &e)
	return code, o.String(), e.String()
}

// The number of walk workers changes nothing in what a check reports.
func TestWorkersDoNotChangeTheResult(t *testing.T) {
	dir := t.TempDir()
	// Under -short: 1 and 3 workers, and the ring of 4 nodes.
	workers, ring := []string{"1", "2", "3"}, "5"
	if testing.Short() {
		workers, ring = []string{"1", "3"}, "4"
	}
	for _, args := range [][]string{
		// Walks of 1000 steps keep the six checks quick; the workers
		// share them out the same way at any depth.
		{"check", "ring", "--nodes", ring, "--walk-depth", "1000"},
		{"check", "randtree", "--nodes", "4", "--bug", "RT10", "--peers", "all", "--walk-depth", "1000"},
	} {
		var outs []string
		for _, w := range workers {
			_, out := checkCLI(t, map[bool]int{true: 0, false: 1}[args[1] == "ring"], append(args, "--workers", w, "--out", dir)...)
			outs = append(outs, stripTimes(out))
		}
		for i := 1; i < len(outs); i++ {
			if outs[i] != outs[0] {
				t.Fatalf("%v: results differ with the number of workers (%s and %s):\n%s\n%s", args, workers[0], workers[i], outs[0], outs[i])
			}
		}
	}
}

// Replay of a liveness trace proves its claim: the file's property, bugs
// and configuration are the system's, and the final state is dead by the
// check's own test. LCR's ignore-early is cheap to check: node 1 drops
// the Elect that arrives before it starts (step 2), after which the
// search sees every reachable state.
func TestReplayLivenessTrace(t *testing.T) {
	dir := t.TempDir()
	r, out := checkCLI(t, 1, "check", "lcr", "--nodes", "3", "--bug", "ignore-early", "--out", dir)
	if r.Result != "liveness-violation" || r.Property != "elected" || r.Critical.Step != 2 || r.Critical.LiveStep != 1 {
		t.Fatalf("ignore-early: %+v", r)
	}
	// The report's evidence: after step 2 the search sees all 9 states
	// reachable, none live; after step 1 it finds elected 9 steps away.
	type evidence struct {
		Step         int
		Live         bool
		By           string
		StepsToLive  int  `json:"steps_to_live"`
		SearchStates int  `json:"search_states"`
		SearchAll    bool `json:"search_all"`
	}
	var ev struct {
		Critical struct{ Dead, Alive, End evidence }
	}
	json.Unmarshal([]byte(out), &ev)
	if d, a, e := ev.Critical.Dead, ev.Critical.Alive, ev.Critical.End; d != (evidence{Step: 2, SearchStates: 9, SearchAll: true}) ||
		a != (evidence{Step: 1, Live: true, By: "search", StepsToLive: 9, SearchStates: a.SearchStates}) || e.Step != 6 || e.Live || !e.SearchAll {
		t.Fatalf("evidence: dead %+v alive %+v end %+v", d, a, e)
	}
	_, text, _ := runCLI(t, "check", "lcr", "--nodes", "3", "--bug", "ignore-early", "--out", dir)
	if want := "after step 2: elected holds in none of the 9 states reachable from it (all searched);\nafter step 1: elected holds 9 steps from it"; !strings.Contains(text, want) {
		t.Fatalf("text lacks %q:\n%s", want, text)
	}
	orig, err := os.ReadFile(r.Trace)
	if err != nil {
		t.Fatal(err)
	}
	// variant writes the trace with f applied to its JSON object.
	variant := func(name string, f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(orig, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cut := func(n int) func(m map[string]any) {
		return func(m map[string]any) { m["steps"] = m["steps"].([]any)[:n] }
	}
	for _, tc := range []struct {
		name string
		f    func(m map[string]any)
		code int
		want string // in stdout for exit 1, in stderr for exit 2
	}{
		{"as written", func(map[string]any) {}, 1, "reproduced"},
		// Cut after the critical step: still dead, by the test's full
		// search (the dead test is the trace's, run from the new end).
		{"cut after the critical step", cut(2), 1, "the check's dead test from the final state: elected holds in none of the 9 states reachable from it (all searched)"},
		// Cut before it: the end recovers.
		{"cut before the critical step", cut(1), 2, "replaying it gives a final state that recovers: elected holds 9 steps from it"},
		{"no steps", cut(0), 2, "replaying it gives a final state that recovers"},
		{"the correct system", func(m map[string]any) { m["bugs"] = []any{} }, 2, "does not replay"},
		{"the correct system, cut after the critical step", func(m map[string]any) { m["bugs"] = []any{}; cut(2)(m) }, 2,
			"replaying it gives a final state that recovers"},
		{"no such property", func(m map[string]any) { m["property"] = "nosuch" }, 2, `"nosuch" is not a liveness property of this system (valid: elected, handlers-return, quiescent)`},
		{"a safety property", func(m map[string]any) { m["property"] = "one-leader" }, 2, `"one-leader" is not a liveness property`},
		{"another node count", func(m map[string]any) { m["nodes"] = 4 }, 2, "does not replay"},
		{"a bad dead test", func(m map[string]any) { m["dead_test"].(map[string]any)["walks"] = 0 }, 2, "dead_test: walks and walk_depth must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "replay", variant(strings.ReplaceAll(tc.name, " ", "-"), tc.f))
			got := out
			if tc.code == 2 {
				got = errs
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, out, errs)
			}
		})
	}
	// The JSON report carries the evidence.
	code, out, _ := runCLI(t, "replay", "--json", variant("cut2", cut(2)))
	var jr struct {
		Reproduced bool
		End        struct {
			Step         int
			Live         bool
			SearchStates int  `json:"search_states"`
			SearchAll    bool `json:"search_all"`
		}
	}
	if err := json.Unmarshal([]byte(out), &jr); err != nil || code != 1 || !jr.Reproduced ||
		jr.End.Step != 2 || jr.End.Live || jr.End.SearchStates != 9 || !jr.End.SearchAll {
		t.Fatalf("--json: exit %d %+v %v\n%s", code, jr, err, out)
	}
}

// A closed dead region found without walks is reported as the liveness
// violation it is, backed by a search from its end, and its trace
// replays (it used to fail as a trace that does not replay, since the
// replay looked for the dead test's evidence that only walks gave).
func TestNoWalksDeadRegion(t *testing.T) {
	code, out, errOut := runCLIq("check", "randtree", "--nodes", "2", "--bug", "RT3", "--no-walks", "--json", "--out", t.TempDir())
	if code != exitViolation {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitViolation, errOut)
	}
	var r struct {
		Result, Property, Trace string
		PathLength              int `json:"path_length"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Result != "liveness-violation" || r.Property != "single-tree" || r.PathLength != 3 {
		t.Fatalf("%s of %s with a path of %d steps, want liveness-violation of single-tree in 3", r.Result, r.Property, r.PathLength)
	}
	// Its trace replays: it records the dead test replay runs, whose
	// search sees the whole dead region again (it recorded a test of no
	// walks of no steps, which replay refused as a bad file).
	if code, out, errs := runCLIq("replay", r.Trace); code != exitViolation || !strings.Contains(out, "holds in none of the") {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errs)
	}
}

// Walks go on after they recover, checking safety, for --after-live
// times the steps they took to recover (at least 32), and the report says
// how many steps that was, in how many walks; --after-live -1 walks on to
// --walk-depth, 0 is --stop-at-live.
func TestSafetyAfterRecovery(t *testing.T) {
	type liveness struct {
		WalkDepth      int   `json:"walk_depth"`
		UntilLive      bool  `json:"safety_until_live"`
		AfterLive      int   `json:"after_live"`
		AfterLiveMin   int   `json:"after_live_min"`
		AfterLiveSteps int64 `json:"after_live_steps"`
		AfterLiveWalks int   `json:"after_live_walks"`
		Walks          int
		WalkSteps      int64 `json:"walk_steps"`
	}
	dir := t.TempDir()
	get := func(args ...string) (liveness, string) {
		t.Helper()
		args = append([]string{"check", "ring", "--nodes", "3", "--out", dir}, args...)
		_, out := checkCLI(t, 0, args...)
		var r struct{ Liveness liveness }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		_, text, _ := runCLI(t, args...)
		return r.Liveness, text
	}
	stop, _ := get("--walk-depth", "1000", "--stop-at-live")
	if !stop.UntilLive || stop.AfterLiveSteps != 0 || stop.AfterLive != 0 || stop.Walks == 0 {
		t.Fatalf("--stop-at-live: %+v", stop)
	}
	if zero, _ := get("--walk-depth", "1000", "--after-live", "0"); zero != stop {
		t.Fatalf("--after-live 0: %+v; want --stop-at-live's %+v", zero, stop)
	}
	recovery := stop.WalkSteps // every walk recovers
	def, text := get("--walk-depth", "1000")
	if def.UntilLive || def.AfterLive != 2 || def.AfterLiveMin != 32 || def.AfterLiveWalks != def.Walks || def.Walks != stop.Walks ||
		def.WalkSteps != recovery+def.AfterLiveSteps || def.AfterLiveSteps < 2*recovery || def.AfterLiveSteps > 2*recovery+32*int64(def.Walks) {
		t.Fatalf("default: %+v; want twice the %d steps to recover, at least 32 a walk, after recovery", def, recovery)
	}
	want := fmt.Sprintf("safety checked on every step, %s in all, %s after recovery in %s walks (each for twice the steps it took to recover, at least 32)",
		thousands(def.WalkSteps), thousands(def.AfterLiveSteps), thousands(int64(def.Walks)))
	if !strings.Contains(text, want) {
		t.Fatalf("the report does not say %q:\n%s", want, text)
	}
	full, text := get("--walk-depth", "300", "--after-live", "-1")
	if full.AfterLive != -1 || full.Walks != stop.Walks || full.WalkSteps != int64(full.Walks*full.WalkDepth) || full.AfterLiveSteps != full.WalkSteps-recovery {
		t.Fatalf("--after-live -1: %+v; want every walk on to %d steps", full, full.WalkDepth)
	}
	if !strings.Contains(text, "in all, "+thousands(full.AfterLiveSteps)+" after recovery in "+thousands(int64(full.Walks))+" walks (each on to 300 steps)") {
		t.Fatalf("--after-live -1: the report does not say how far:\n%s", text)
	}
	for _, args := range [][]string{{"--after-live", "-2"}, {"--after-live", "3", "--stop-at-live"}} {
		if code, _, errs := runCLI(t, append([]string{"check", "ring", "--nodes", "3"}, args...)...); code != 2 || !strings.Contains(errs, "--after-live") {
			t.Errorf("%v: exit %d, %s; want a usage error naming --after-live", args, code, errs)
		}
	}
}

// thousands writes n with commas, as the reports do.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
