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
	"github.com/livecheck/livecheck/systems"
)

// run runs the command in-process on the bundled systems, with no time
// budget for a check.
func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	if args[0] == "check" {
		args = append(args, "--time", "0")
	}
	code := livecheck.Run(args, &out, &errb, systems.All()...)
	return code, out.String(), errb.String()
}

// underFile is a path that cannot be written: its directory is a file.
func underFile(t *testing.T, name string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(file, name)
}

// oneWarning fails t unless stderr is one line that has all of want.
func oneWarning(t *testing.T, stderr string, want ...string) {
	t.Helper()
	ok := strings.Count(stderr, "\n") == 1 && strings.HasSuffix(stderr, "\n")
	for _, w := range want {
		ok = ok && strings.Contains(stderr, w)
	}
	if !ok {
		t.Errorf("stderr %q, want one line with %q", stderr, want)
	}
}

// A page that cannot be written leaves the verdict as it is, with the
// report printed and a warning that names the file: --html as --junit.
func TestUnwritableHTMLKeepsTheVerdict(t *testing.T) {
	page := underFile(t, "page.html")
	code, out, errs := runCmd("check", "lcr", "--nodes", "4", "--bug", "no-discard", "-q", "--out", t.TempDir(), "--html", page)
	if code != livecheck.ExitViolation || !strings.Contains(out, "\nsafety-violation of one-leader: ") {
		t.Fatalf("exit %d, want 1 and the report:\n%s%s", code, out, errs)
	}
	oneWarning(t, errs, "warning: --html "+page+": the page was not written: ")
}

// A merge whose traces or page cannot be written prints its report all
// the same, warns, and exits with the verdict's status.
func TestUnwritableMergeKeepsTheVerdict(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if code, _, errs := runCmd("check", "lcr", "--nodes", "4", "--bug", "no-discard", "-q", "--shard", fmt.Sprintf("%d/2", i), "--out", f); code == livecheck.ExitUsage {
			t.Fatalf("shard %d: %s", i, errs)
		}
		files = append(files, f)
	}
	out := underFile(t, "traces")
	code, stdout, errs := runCmd(append([]string{"merge", "--out", out}, files...)...)
	if code != livecheck.ExitViolation || !strings.Contains(stdout, "\nsafety-violation of one-leader: ") || strings.Contains(stdout, "trace: ") {
		t.Fatalf("merge --out %s: exit %d, want 1 and the report, with no trace:\n%s%s", out, code, stdout, errs)
	}
	oneWarning(t, errs, "warning: --out "+out+": the traces were not written, the report below has none: ")

	page := underFile(t, "page.html")
	code, stdout, errs = runCmd(append([]string{"merge", "--out", t.TempDir(), "--html", page}, files...)...)
	if code != livecheck.ExitViolation || !strings.Contains(stdout, "\nsafety-violation of one-leader: ") {
		t.Fatalf("merge --html %s: exit %d, want 1 and the report:\n%s%s", page, code, stdout, errs)
	}
	oneWarning(t, errs, "warning: --html "+page+": the page was not written: ")
}

// A dead trace and the nearest live path it names are written both or
// neither: where the dead one cannot be written (here a directory holds
// its name; a full disk does the same), no live one is left behind.
func TestTracePairBothOrNeither(t *testing.T) {
	args := []string{"check", "randtree", "--nodes", "4", "--bug", "RT3", "-q", "--json"}
	first := t.TempDir()
	code, out, errs := runCmd(append(args, "--out", first)...)
	var rep struct {
		Trace    string
		Critical struct {
			LiveTrace string `json:"live_trace"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != livecheck.ExitViolation || rep.Critical.LiveTrace == "" {
		t.Fatalf("exit %d, %v:\n%s%s", code, err, out, errs)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, filepath.Base(rep.Trace)), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCmd(append(args, "--out", dir)...)
	if code != livecheck.ExitViolation || !strings.Contains(out, `"result": "liveness-violation"`) {
		t.Fatalf("exit %d, want 1 and the report:\n%s%s", code, out, errs)
	}
	oneWarning(t, errs, "the trace could not be written, the report below has none")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !entries[0].IsDir() {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in --out: %q, want only the directory in the dead trace's way", names)
	}
}
