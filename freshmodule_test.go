package livecheck_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFreshModule does what a new user does: a protocol of their own in a
// module of their own that uses livecheck through a replace directive, as
// the README says. The lock example, with its early-release slip built
// in, fails `go test` with the report and a saved trace; with the slip
// fixed, `go test` replays the saved trace first, says it no longer
// fails, and passes.
//
// It needs no network: the module's requirements are livecheck's own,
// already in the module cache (GOPROXY=off makes any download an error).
// It builds two test binaries, 3 to 10 s on two busy cores: -short skips it.
func TestFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("it builds a module's tests twice: not under -short")
	}
	t.Parallel()
	goCmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := os.ReadFile(filepath.Join(root, "examples", "lock", "lock", "lock.go"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		goodLine = `early, noRetry := cfg.HasBug("early-release"), cfg.HasBug("no-retry")`
		badLine  = `early, noRetry := true, cfg.HasBug("no-retry")`
	)
	if n := bytes.Count(fixed, []byte(goodLine)); n != 1 {
		t.Fatalf("examples/lock/lock/lock.go has %q %d times, want once: the test's slip no longer applies", goodLine, n)
	}
	buggy := bytes.Replace(fixed, []byte(goodLine), []byte(badLine), 1)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}

	mod := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mod, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module example.com/lockdemo\n\ngo 1.26\n\n"+
		"require github.com/livecheck/livecheck v0.0.0\n\n"+
		"replace github.com/livecheck/livecheck => "+root+"\n"))
	write("go.sum", sum)
	write("lock.go", buggy)
	write("lock_test.go", []byte(`package lock

import (
	"testing"

	"github.com/livecheck/livecheck"
)

func TestLock(t *testing.T) {
	livecheck.Test(t, &System)
}
`))

	goTest := func() (string, error) {
		cmd := exec.Command(goCmd, "test", "-count=1", "-v", ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("go test in the module: %v", time.Since(start).Round(time.Millisecond))
		return string(out), err
	}

	// With the slip: the test fails with the report and saves the trace.
	out, err := goTest()
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("go test with the slip: %v, want a failing test:\n%s", err, out)
	}
	m := regexp.MustCompile(`\n\s*trace: (testdata/livecheck/TestLock-[0-9a-f]{8}\.json)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("go test with the slip names no trace file:\n%s", out)
	}
	trace := m[1]
	for _, want := range []string{
		"--- FAIL: TestLock ",
		"lock, 3 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors; depth 20, seed 1",
		"safety-violation of one-holder: nodes 1 and 2 at once",
		"4. timer lease at 0  => sends grant{Lease:2} 0->2",
		"replay it: go test -run '^TestLock$' -livecheck.replay '" + trace + "'",
		"\nFAIL\texample.com/lockdemo\t",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go test with the slip: the output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(mod, trace)); err != nil {
		t.Fatalf("the trace the report names: %v", err)
	}

	// The fix: the saved trace is replayed first and no longer fails, and
	// the check passes.
	write("lock.go", fixed)
	out, err = goTest()
	if err != nil {
		t.Fatalf("go test after the fix: %v:\n%s", err, out)
	}
	for _, want := range []string{
		"livecheck: saved trace " + trace + " passes now: it no longer replays: ",
		": step 5 (deliver 0->2 #",
		"livecheck: lock: ok: no violation in every state within 20 steps (11,749 states)",
		"--- PASS: TestLock ",
		"\nok  \texample.com/lockdemo\t",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go test after the fix: the output lacks %q:\n%s", want, out)
		}
	}
}
