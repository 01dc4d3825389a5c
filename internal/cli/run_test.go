package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems"
)

// A run is one run of the command in-process: its exit status, what it
// printed, and the panic that escaped it, if any (with its stack).
type run struct {
	code           int
	stdout, stderr string
	panicked       string
}

// lc runs the command on the bundled systems with stdin as its
// standard input (debug's commands), recovering a panic: a reader must
// not panic on any input, and a test says so instead of dying of it.
func lc(t *testing.T, stdin string, args ...string) (r run) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(in, []byte(stdin), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	var out, errs bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			r = run{code: -1, stdout: out.String(), stderr: errs.String(), panicked: fmt.Sprintf("%v\n%s", p, debug.Stack())}
		}
	}()
	code := livecheck.Run(args, &out, &errs, systems.All()...)
	return run{code: code, stdout: out.String(), stderr: errs.String()}
}

// mustRun runs a command that makes the test's inputs, and fails the
// test unless it exits with code.
func mustRun(t *testing.T, code int, args ...string) run {
	t.Helper()
	r := lc(t, "", args...)
	if r.code != code {
		t.Fatalf("%v: exit %d, want %d\n%s%s%s", args, r.code, code, r.stdout, r.stderr, r.panicked)
	}
	return r
}

// one finds the one file matching pattern in dir.
func one(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s in %s: %v %v", pattern, dir, m, err)
	}
	return m[0]
}
