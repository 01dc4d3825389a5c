package shard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/internal/randproto"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/shard"
	"github.com/livecheck/livecheck/systems"
)

// cli runs the livecheck command in-process on the bundled systems and
// returns its exit status, stdout and stderr.
func cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := livecheck.Run(args, &out, &errb, systems.All()...)
	return code, out.String(), errb.String()
}

// shards runs `check ARGS --shard i/n --out DIR/shard-i.json` for every
// i, with extra flags, and returns the files and the shards' exit status
// (the same for all).
func shards(t *testing.T, dir string, n int, args []string, extra ...string) []string {
	t.Helper()
	var files []string
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		a := append(append([]string{"check"}, args...), "--shard", fmt.Sprintf("%d/%d", i, n), "--out", f, "-q")
		code, _, stderr := cli(append(a, extra...)...)
		if code == livecheck.ExitUsage {
			t.Fatalf("shard %d/%d: exit 2: %s", i, n, stderr)
		}
		files = append(files, f)
	}
	return files
}

// checkJSON runs `check ARGS --json` and returns its exit status and report.
func checkJSON(t *testing.T, args ...string) (int, *reports.Check) {
	t.Helper()
	code, out, stderr := cli(append(append([]string{"check"}, args...), "--json", "-q", "--out", t.TempDir())...)
	var rep reports.Check
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check %v: exit %d, %v: %s", args, code, err, stderr)
	}
	return code, &rep
}

// mergeJSON runs `merge FILES --json` and returns its exit status, report
// and stderr.
func mergeJSON(t *testing.T, files ...string) (int, *reports.Check, string) {
	t.Helper()
	code, out, stderr := cli(append(append([]string{"merge"}, files...), "--json", "--out", t.TempDir())...)
	if code == livecheck.ExitUsage {
		return code, nil, stderr
	}
	var rep reports.Check
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("merge: exit %d, %v: %s", code, err, stderr)
	}
	return code, &rep, stderr
}

// A check split into 4 shards and merged gives the unsplit check's
// verdict, property and exit status; the distinct states the shards'
// fingerprints count are the unsplit check's (with the default
// reductions: sleep sets and, for paxos, symmetry), their sum at least
// that; the violation shown is one of the fewest steps the unsplit check
// found, and its trace replays to it. Paxos with quorum=1 is the issue's
// "done when": check paxos ... --shard i/4 four times, then merge.
func TestShardsMergeAsOneCheck(t *testing.T) {
	// A liveness violation: RandTree's RT3, or under -short LCR's
	// ignore-early, whose critical search is cheaper.
	live := []string{"randtree", "--nodes", "3", "--bug", "RT3"}
	if testing.Short() {
		live = []string{"lcr", "--nodes", "5", "--bug", "ignore-early"}
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"lcr correct", []string{"lcr", "--nodes", "5"}},
		{"paxos 1 proposer", []string{"paxos", "--nodes", "3"}},
		{"paxos quorum=1", []string{"paxos", "--bug", "quorum=1"}},
		{"liveness " + live[0], live},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, whole := checkJSON(t, tc.args...)
			files := shards(t, t.TempDir(), 4, tc.args, "--save-fingerprints")
			mcode, merged, stderr := mergeJSON(t, files...)
			if mcode != code || merged.Result != whole.Result || merged.Property != whole.Property {
				t.Fatalf("merged: exit %d, %s of %q; unsplit: exit %d, %s of %q (%s)", mcode, merged.Result, merged.Property, code, whole.Result, whole.Property, stderr)
			}
			m := merged.Merge
			if m == nil || m.Shards != 4 || len(m.PerShard) != 4 || !m.UnionExact {
				t.Fatalf("merge section %+v", m)
			}
			if m.StatesSum < m.StatesUnion || merged.Stats.States != m.StatesUnion {
				t.Fatalf("sum %d, union %d, report %d", m.StatesSum, m.StatesUnion, merged.Stats.States)
			}
			switch whole.Result {
			case "ok":
				if m.StatesUnion != whole.Stats.States || !merged.Complete || merged.Exhausted != whole.Exhausted {
					t.Fatalf("the shards' union holds %d states, the unsplit check %d; complete %v exhausted %v (unsplit %v)",
						m.StatesUnion, whole.Stats.States, merged.Complete, merged.Exhausted, whole.Exhausted)
				}
			case "safety-violation":
				if merged.PathLen != whole.PathLen {
					t.Fatalf("the merged violation has %d steps, the unsplit one %d", merged.PathLen, whole.PathLen)
				}
			}
			if whole.Result != "ok" {
				tr, err := reports.ReadTraceFile(merged.Trace)
				if err != nil {
					t.Fatal(err)
				}
				code, out, _ := cli("replay", merged.Trace)
				if code != livecheck.ExitViolation || tr.Property != whole.Property {
					t.Fatalf("the merged trace (%s) replays with exit %d:\n%s", tr.Property, code, out)
				}
			}
			t.Logf("%s: %d states unsplit; shards: %d in all, %d distinct; split at depth %d", whole.Result, whole.Stats.States, m.StatesSum, m.StatesUnion, m.SplitDepth)
		})
	}
}

// The states of the shards' union are the unsplit search's without
// reduction too, and with sleep sets the shards store fewer states in
// all: a step a sleep set spares whose state another shard reaches is
// not taken twice.
func TestShardsUnionWithoutReduction(t *testing.T) {
	args := []string{"lcr", "--nodes", "5", "--reduce", "none"}
	_, whole := checkJSON(t, args...)
	_, merged, _ := mergeJSON(t, shards(t, t.TempDir(), 3, args, "--save-fingerprints")...)
	_, sleep, _ := mergeJSON(t, shards(t, t.TempDir(), 3, []string{"lcr", "--nodes", "5"}, "--save-fingerprints")...)
	if merged.Merge.StatesUnion != whole.Stats.States || sleep.Merge.StatesUnion != whole.Stats.States || sleep.Merge.StatesSum > merged.Merge.StatesSum {
		t.Fatalf("unsplit %d states; shards without reduction %d distinct of %d, with sleep sets %d of %d",
			whole.Stats.States, merged.Merge.StatesUnion, merged.Merge.StatesSum, sleep.Merge.StatesUnion, sleep.Merge.StatesSum)
	}
}

// timing matches a shard file's timing object, the one part that may
// differ between two runs.
var timing = regexp.MustCompile(`(?s)"timing": \{.*?\}`)

// The same shard of the same check gives the same file, but for its
// timing, on 1 worker and on 2.
func TestShardFileSameInputsSameFile(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i, w := range []string{"1", "2"} {
		f := filepath.Join(dir, "s"+w+".json")
		code, _, stderr := cli("check", "paxos", "--bug", "quorum=1", "--shard", "1/4", "--out", f, "-q", "--workers", w, "--save-fingerprints")
		if code != livecheck.ExitViolation {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !timing.Match(data) {
			t.Fatalf("no timing in %s", data)
		}
		files[i] = timing.ReplaceAll(data, nil)
		files[i] = bytes.ReplaceAll(files[i], []byte("s"+w+".fingerprints"), nil)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatalf("the shard files differ beyond their timing:\n%s\n---\n%s", files[0], files[1])
	}
	a, _ := os.ReadFile(filepath.Join(dir, "s1.fingerprints"))
	b, _ := os.ReadFile(filepath.Join(dir, "s2.fingerprints"))
	if len(a) < 16 || !bytes.Equal(a, b) {
		t.Fatalf("the fingerprint files differ (%d and %d bytes)", len(a), len(b))
	}
}

// Shards that do not make one check merge to inconclusive (exit 3) with
// a message that says why; a damaged file is an input error (exit 2).
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	args := []string{"lcr", "--nodes", "4"}
	files := shards(t, dir, 3, args, "--save-fingerprints")
	other := shards(t, t.TempDir(), 3, append(args, "--depth", "7"))
	four := shards(t, t.TempDir(), 4, args)
	// Another build: the same file with another VCS revision.
	data, err := os.ReadFile(files[2])
	if err != nil {
		t.Fatal(err)
	}
	var sf map[string]any
	json.Unmarshal(data, &sf)
	sf["identity"].(map[string]any)["revision"] = "0123456789abcdef"
	rebuilt := filepath.Join(dir, "rebuilt.json")
	b, _ := json.Marshal(sf)
	os.WriteFile(rebuilt, b, 0o644)
	truncated := filepath.Join(dir, "truncated.json")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	badFP := filepath.Join(dir, "shard-0.fingerprints")

	for _, tc := range []struct {
		name  string
		files []string
		code  int
		want  string
	}{
		{"all", files, livecheck.ExitOK, ""},
		{"missing", files[:2], livecheck.ExitInconclusive, "shard 2 of 3 is missing (given: 0 and 1)"},
		{"duplicate", []string{files[0], files[1], files[1], files[2]}, livecheck.ExitInconclusive, "shard 1/3 is given twice"},
		{"other n", []string{files[0], files[1], four[2]}, livecheck.ExitInconclusive, "the shards split different checks"},
		{"other config", []string{files[0], files[1], other[2]}, livecheck.ExitInconclusive, "different configurations: " + files[0] + " and " + other[2] + " differ in depth (20 against 7)"},
		{"other build", []string{files[0], files[1], rebuilt}, livecheck.ExitInconclusive, "the shards come from different builds"},
		{"truncated", []string{files[0], files[1], truncated}, livecheck.ExitUsage, "not a valid shard file (malformed or truncated JSON"},
		{"not a shard file", []string{files[0], files[1], badFP}, livecheck.ExitUsage, "not a valid shard file"},
		{"none", nil, livecheck.ExitUsage, "give the shard files to merge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, rep, stderr := mergeJSON(t, tc.files...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d; stderr %q, want it to say %q", code, tc.code, stderr, tc.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("more than one line on stderr: %q", stderr)
			}
			if code == livecheck.ExitInconclusive && (rep.Result != "inconclusive" || rep.Merge.Problem == "" || !strings.Contains(stderr, rep.Merge.Problem)) {
				t.Fatalf("report %s, problem %q", rep.Result, rep.Merge.Problem)
			}
		})
	}
	// A fingerprint file changed after its shard file was written.
	fp, _ := os.ReadFile(badFP)
	fp[len(fp)-1] ^= 1
	os.WriteFile(badFP, fp, 0o644)
	if code, _, stderr := mergeJSON(t, files...); code != livecheck.ExitUsage || !strings.Contains(stderr, "shard-0.fingerprints: ") {
		t.Fatalf("a damaged fingerprint file: exit %d, %s", code, stderr)
	}
}

// --shard takes I/N with 0 <= I < N, with --out; bad values are one line
// on stderr, exit 2.
func TestShardFlagErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "4/4", "--out", out}, "--shard: takes I/N, the slice I of N in decimal digits with 0 <= I < N (e.g. 2/4), not \"4/4\""},
		{[]string{"--shard", "-1/4", "--out", out}, "not \"-1/4\""},
		{[]string{"--shard", "0/0", "--out", out}, "not \"0/0\""},
		{[]string{"--shard", "x", "--out", out}, "not \"x\""},
		{[]string{"--shard", "0/2"}, "--shard needs --out FILE"},
		{[]string{"--shard", "0/2", "--out", out, "--time", "10s"}, "--shard runs without a time budget"},
		{[]string{"--shard", "0/2", "--out", out, "--mode", "local"}, "--mode local does not split"},
		{[]string{"--shard", "0/2", "--out", out, "--split-depth", "0"}, "--split-depth must be at least 1"},
		{[]string{"--split-depth", "3"}, "go with --shard I/N"},
	} {
		code, _, stderr := cli(append([]string{"check", "lcr"}, tc.args...)...)
		if code != livecheck.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused check wrote %s", out)
	}
}

// The randomized cross-check of split checks: each safety property of a
// random protocol checked alone, unsplit and in 3 shards merged. The
// verdict is the same; a violation's fewest steps are the same (the
// shards together reach every state at its least depth); every
// property the shards report is violated (the unsplit check reports the
// first it meets, a shard the first it meets in its slice, so the
// shards may report more: the handler panic as well as the property),
// and the unsplit check's property is among them, unless a shard met
// another at as few steps first.
func TestShardsCrossCheck(t *testing.T) {
	seeds := uint64(60)
	if testing.Short() {
		seeds = 15
	}
	var violated, checked int
	for seed := uint64(1); seed <= seeds; seed++ {
		p := randproto.Generate(seed)
		sys := p.System()
		for _, pr := range p.Props {
			cfg := livecheck.Config{Nodes: p.Nodes, Budget: p.Budget, Params: map[string]string{"property": pr.Name}}
			opts := livecheck.Options{Config: cfg, Depth: 12, HandlerTimeout: time.Minute, NoWalks: true}
			whole, err := livecheck.Check(sys, opts)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, pr.Name, err)
			}
			var files []string
			var sfs []*shard.File
			for i := range 3 {
				o := opts
				o.Shard = search.Shard{Index: i, Count: 3}
				r, err := livecheck.Check(sys, o)
				if err != nil {
					t.Fatalf("seed %d, %s, shard %d: %v", seed, pr.Name, i, err)
				}
				files = append(files, fmt.Sprint(i))
				sfs = append(sfs, shard.FileOf(r, sys, o, nil, 0))
			}
			m, err := shard.Merge(files, sfs)
			if err != nil || m.Problem != "" {
				t.Fatalf("seed %d, %s: merge: %v %s", seed, pr.Name, err, m.Problem)
			}
			checked++
			rep := m.Report
			if rep.Result != string(whole.Verdict) {
				t.Fatalf("seed %d, %s: merged %s (%s), unsplit %s (%s)", seed, pr.Name, rep.Result, rep.Message, whole.Verdict, whole.Message)
			}
			if whole.Verdict != livecheck.SafetyViolation {
				continue
			}
			violated++
			if rep.PathLen != len(whole.Path) {
				t.Fatalf("seed %d, %s: the shards' shortest violation has %d steps, the unsplit one %d", seed, pr.Name, rep.PathLen, len(whole.Path))
			}
			found, tie := false, false
			for _, v := range m.Violations {
				if v.Property != pr.Name && v.Property != "no-panic" {
					t.Fatalf("seed %d: checking %s alone, a shard reports %s", seed, pr.Name, v.Property)
				}
				path, err := reports.Path(v.Trace.Steps)
				if err != nil {
					t.Fatal(err)
				}
				rp, err := livecheck.ReplayFrom(sys, livecheck.ConfigOf(v.Trace), v.Trace.Init, path, time.Minute)
				if err != nil || !rp.Reproduces(livecheck.Verdict(v.Result), v.Property) {
					t.Fatalf("seed %d, %s: shard trace of %s does not replay (%v)", seed, pr.Name, v.Property, err)
				}
				found = found || v.Property == whole.Property
				tie = tie || v.PathLen == len(whole.Path)
			}
			if !found && !tie {
				t.Fatalf("seed %d, %s: the shards report %v, not the unsplit check's %s", seed, pr.Name, m.Report.Merge.Violations, whole.Property)
			}
		}
	}
	t.Logf("%d properties checked, %d violated", checked, violated)
	if violated < checked/5 {
		t.Errorf("only %d of %d properties violated: the cross-check checks little", violated, checked)
	}
}

// The text of a merge says what its state count is: the shards' sum,
// which counts a state two shards reach twice, unless they saved their
// fingerprints and the count is the exact union (the unsplit check's).
func TestMergeTextSaysSumOrUnion(t *testing.T) {
	args := []string{"lcr", "--nodes", "5"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		// The sum depends on which shard each state of the split level
		// falls to, that is on the fingerprints' values (2,214 before the
		// fingerprint became a sum of its parts' mixes, 2,312 before the
		// rest's words were mixed one by one); the union does not.
		{nil, "ok: no violation in every reachable state (summed over 4 shards: 2,053 states)"},
		{[]string{"--save-fingerprints"}, "ok: no violation in every reachable state (1,188 states)"},
	} {
		files := shards(t, t.TempDir(), 4, args, tc.extra...)
		code, out, stderr := cli(append(append([]string{"merge"}, files...), "--out", t.TempDir())...)
		if code != livecheck.ExitOK || !strings.Contains(out, tc.want+"\n") {
			t.Errorf("merge %v: exit %d, want 0 and the line %q:\n%s%s", tc.extra, code, tc.want, out, stderr)
		}
	}
}
