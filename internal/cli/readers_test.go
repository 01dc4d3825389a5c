package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// edit writes a copy of the JSON file src, with f applied to its object,
// as dir/name (numbers kept as written: a dead test's seed is a uint64).
func edit(t *testing.T, src, dir, name string, f func(m map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, data)
	f(m)
	return write(t, dir, name, encode(t, m))
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readers runs replay, report --html and debug (with quit on stdin) on
// a trace file.
func readers(t *testing.T, file string) map[string]run {
	html := filepath.Join(t.TempDir(), "page.html")
	return map[string]run{
		"replay": lc(t, "", "replay", file),
		"report": lc(t, "", "report", file, "--html", html),
		"debug":  lc(t, "quit\n", "debug", file),
	}
}

// refusedByAll says whether replay, report and debug all refuse file as
// a usage error, exit 2, with one line on stderr that says want, the
// same line for all three.
func refusedByAll(t *testing.T, file, want string) {
	t.Helper()
	why := ""
	for cmd, r := range readers(t, file) {
		line := strings.TrimPrefix(r.stderr, "livecheck "+cmd+": ")
		switch {
		case r.panicked != "":
			t.Errorf("%s panics: %s", cmd, r.panicked)
		case r.code != livecheck.ExitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, want):
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", cmd, r.code, r.stderr, want)
		case why == "":
			why = line
		case line != why:
			t.Errorf("%s says %q, another reader %q: one check, one line", cmd, line, why)
		}
	}
}

// Issue 25, item 3: what replay refuses, report --html and debug refuse,
// with the same line: a correct system's path, a path cut before the
// critical step or with no steps, an unknown result or property. None
// panics on a critical live step of -1 (report --html did: index out of
// range). Before, report and debug drew these traces, titled with the
// claim the file makes.
func TestReadersRefuseWhatReplayRefuses(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, livecheck.ExitViolation, "check", "randtree", "--bug", "RT3", "-q", "--out", dir, "--time", "0")
	dead := one(t, dir, "randtree-single-tree-*.json")
	for cmd, r := range readers(t, dead) {
		if want := map[string]int{"replay": 1}[cmd]; r.code != want || r.stderr != "" {
			t.Fatalf("%s of the trace as written: exit %d, want %d: %s%s", cmd, r.code, want, r.stderr, r.panicked)
		}
	}
	steps := func(m map[string]any) []any { return m["steps"].([]any) }
	for _, tc := range []struct {
		name string
		f    func(m map[string]any)
		want string
	}{
		{"the correct system", func(m map[string]any) { m["bugs"] = []any{} }, "replaying it gives a final state that recovers"},
		{"cut before the critical step", func(m map[string]any) { m["steps"] = steps(m)[:2] }, "replaying it gives a final state that recovers"},
		{"no steps", func(m map[string]any) { m["steps"] = []any{} }, "replaying it gives a final state that recovers"},
		{"an unknown result", func(m map[string]any) { m["result"] = "deadlock" }, `unknown result "deadlock"`},
		{"an unknown property", func(m map[string]any) { m["property"] = "no-cycles" }, `"no-cycles" is not a liveness property of this system`},
		{"a live step of -1", func(m map[string]any) { m["critical"].(map[string]any)["live_step"] = -1 }, "its critical live_step -1 is not a step before its critical step 3"},
		{"a critical step past the end", func(m map[string]any) { m["critical"].(map[string]any)["step"] = 4 }, "its critical step 4 is not a step of its path (1 to 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedByAll(t, edit(t, dead, dir, "variant.json", tc.f), tc.want)
		})
	}
}

// Issue 25, item 5: a step after a safety violation is refused, even one
// at a node that does not exist: replay stopped at the violation and
// never read it, and the trace "reproduced".
func TestNoStepAfterTheViolation(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, livecheck.ExitViolation, "check", "lcr", "--bug", "no-discard", "-q", "--out", dir, "--time", "0")
	trace := one(t, dir, "lcr-one-leader-*.json")
	junk := edit(t, trace, dir, "junk.json", func(m map[string]any) {
		m["steps"] = append(m["steps"].([]any), map[string]any{"kind": "timer", "node": 9, "timer": "nosuch"})
	})
	refusedByAll(t, junk, "the path goes on for 1 step after the safety-violation of one-leader at step 6: a trace ends at its violation")
}

// Issue 25, item 5: a file with more data after its JSON object is
// refused by every reader of trace, prefix and shard files: a stray }
// or ] got through.
func TestTrailingDataRefused(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, livecheck.ExitViolation, "check", "lcr", "--bug", "no-discard", "-q", "--out", dir, "--time", "0")
	trace := one(t, dir, "lcr-one-leader-*.json")
	orig, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for i, more := range []string{"}", "]", "}\n", "{}", "x", "null", string(orig)} {
		f := write(t, dir, "more.json", append(append([]byte{}, orig...), more...))
		refusedByAll(t, f, "not a valid trace file: ")
		if t.Failed() {
			t.Fatalf("case %d: %q after the object", i, more)
		}
	}
	// White space after it is no data.
	f := write(t, dir, "spaces.json", append(append([]byte{}, orig...), " \n\t\r\n"...))
	if r := lc(t, "", "replay", f); r.code != livecheck.ExitViolation {
		t.Errorf("white space after the object: exit %d %s", r.code, r.stderr)
	}

	// The other files: a prefix, a shard.
	pdir := t.TempDir()
	mustRun(t, livecheck.ExitOK, "prefix", "randtree", "--out", pdir)
	prefix := one(t, pdir, "randtree-prefix-*.json")
	data, _ := os.ReadFile(prefix)
	os.WriteFile(prefix, append(data, "}"...), 0o644)
	if r := lc(t, "", "check", "randtree", "--from", prefix, "--depth", "2", "--time", "0", "-q"); r.code != livecheck.ExitUsage || !strings.Contains(r.stderr, "not a valid trace file: 1 byte of data after the JSON object") {
		t.Errorf("check --from a prefix with } after it: exit %d %q", r.code, r.stderr)
	}
	sdir := t.TempDir()
	var files []string
	for _, i := range []string{"0", "1"} {
		f := filepath.Join(sdir, "shard-"+i+".json")
		mustRun(t, livecheck.ExitOK, "check", "randtree", "--nodes", "3", "--depth", "4", "--shard", i+"/2", "--out", f, "-q")
		files = append(files, f)
	}
	data, _ = os.ReadFile(files[1])
	os.WriteFile(files[1], append(data, "]"...), 0o644)
	if r := lc(t, "", append([]string{"merge", "--out", t.TempDir()}, files...)...); r.code != livecheck.ExitUsage || !strings.Contains(r.stderr, "not a valid shard file: 1 byte of data after the JSON object") {
		t.Errorf("merge of a shard with ] after it: exit %d %q", r.code, r.stderr)
	}
}

// stuck is a system whose initial state is not live and where nothing
// can happen: its liveness trace has no steps.
func stuck() *livecheck.System {
	type idle struct{ sim.BaseNode }
	return &livecheck.System{
		Name: "stuck", Doc: "nothing ever happens", DefaultNodes: 1, MinNodes: 1, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &idle{} }},
				Properties: []properties.Property{
					properties.Eventually("done", "never", func(*sim.State) bool { return false }),
				},
			}, nil
		},
	}
}

// Issue 25, item 5: a liveness trace with no steps replays, and the
// readers show it: none fails on a step it does not have.
func TestEmptyPathLivenessTrace(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"check", "stuck", "--out", dir, "-q", "--time", "0"}, &out, &errs, stuck()); code != livecheck.ExitViolation {
		t.Fatalf("check: exit %d\n%s%s", code, out.String(), errs.String())
	}
	trace := one(t, dir, "stuck-*.json")
	data, _ := os.ReadFile(trace)
	if m := decode(t, data); len(m["steps"].([]any)) != 0 {
		t.Fatalf("the trace has steps: %s", data)
	}
	html := filepath.Join(dir, "page.html")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay", trace}, livecheck.ExitViolation, "reproduced"},
		{[]string{"report", trace, "--html", html}, livecheck.ExitOK, "wrote " + html},
		{[]string{"debug", trace}, livecheck.ExitOK, "0 steps of the path"},
	} {
		out.Reset()
		errs.Reset()
		if code := livecheck.Run(tc.args, &out, &errs, stuck()); code != tc.code || !strings.Contains(out.String(), tc.want) || errs.Len() > 0 {
			t.Errorf("%s: exit %d, want %d and %q:\n%s%s", tc.args[0], code, tc.code, tc.want, out.String(), errs.String())
		}
	}
}

// Issue 25, item 6: check --from takes a prefix only as replay would:
// one that replays to a live state, with the file's bugs, parameters
// and property, and live under the check's configuration too. Before,
// a prefix halved or emptied, or with a bug, a parameter or a property
// replay refuses, "started after a live prefix".
func TestFromNeedsALivePrefix(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, livecheck.ExitOK, "prefix", "randtree", "--out", dir)
	prefix := one(t, dir, "randtree-prefix-*.json")
	check := func(file string, more ...string) run {
		return lc(t, "", append([]string{"check", "randtree", "--from", file, "--depth", "2", "--time", "0", "-q", "--out", t.TempDir()}, more...)...)
	}
	if r := check(prefix); r.code == livecheck.ExitUsage || !strings.Contains(r.stdout, "started after a live prefix of") {
		t.Fatalf("the prefix as written: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	steps := func(m map[string]any) []any { return m["steps"].([]any) }
	for _, tc := range []struct {
		name string
		f    func(m map[string]any)
		want string
	}{
		{"halved", func(m map[string]any) { m["steps"] = steps(m)[:len(steps(m))/2] }, "replaying it gives a final state that is not live"},
		{"emptied", func(m map[string]any) { m["steps"] = []any{} }, "replaying it gives a final state that is not live"},
		{"an unknown bug", func(m map[string]any) { m["bugs"] = []any{"RT99"} }, `randtree has no bug "RT99"`},
		{"a bad parameter", func(m map[string]any) { m["params"].(map[string]any)["degree"] = "0" }, "--degree must be a whole number of at least 1"},
		{"an unknown property", func(m map[string]any) { m["property"] = "no-loops" }, `a prefix trace records no property or "single-tree", not "no-loops"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := edit(t, prefix, t.TempDir(), "p.json", tc.f)
			r := check(f)
			if r.code != livecheck.ExitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || r.panicked != "" {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q%s", r.code, r.stderr, tc.want, r.panicked)
			}
		})
	}
}
