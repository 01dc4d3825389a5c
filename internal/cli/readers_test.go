package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
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
