package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/examples/lock/lock"
)

// run is the command main runs, with args, writing its traces under a
// temporary directory.
func run(t *testing.T, args ...string) (code int, stdout, stderr, out string) {
	t.Helper()
	out = t.TempDir()
	var o, e bytes.Buffer
	code = livecheck.Run(append(args, "--quiet", "--out", out), &o, &e, &lock.System)
	return code, o.String(), e.String(), out
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	code, stdout, stderr, out := run(t, "check", "lock")
	if code != livecheck.ExitOK || !strings.Contains(stdout, "\nok: no violation in every state within 20 steps (11,749 states)\n") {
		t.Errorf("check lock: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if files, _ := os.ReadDir(out); len(files) != 0 {
		t.Errorf("check lock wrote %d files, want none", len(files))
	}

	code, stdout, stderr, out = run(t, "check", "lock", "--bug", "early-release")
	if code != livecheck.ExitViolation || !strings.Contains(stdout, "\nsafety-violation of one-holder: nodes 1 and 2 at once\n") {
		t.Errorf("check lock --bug early-release: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	traces, _ := filepath.Glob(filepath.Join(out, "lock-one-holder-????????.json"))
	if len(traces) != 1 || !strings.Contains(stdout, "\ntrace: "+traces[0]+"\n") {
		t.Fatalf("traces %q; stdout:\n%s", traces, stdout)
	}

	// The trace replays to the same violation: exit 1.
	var o, e bytes.Buffer
	if code := livecheck.Run([]string{"replay", traces[0]}, &o, &e, &lock.System); code != livecheck.ExitViolation {
		t.Errorf("replay: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
}

func TestBadBug(t *testing.T) {
	t.Parallel()
	code, _, stderr, _ := run(t, "check", "lock", "--bug", "nope")
	if want := "lock has no bug \"nope\" (valid: early-release, no-retry)"; code != livecheck.ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}
