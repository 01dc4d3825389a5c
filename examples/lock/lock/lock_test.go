package lock_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/internal/tbrec"
	"github.com/livecheck/livecheck/reports"
)

// The lock service as written passes: every state within the depth bound
// has one holder at most, and walks from the bound all see every client
// served. A violation would fail this test, save its trace under
// testdata/livecheck and replay it first on every later run.
func TestLock(t *testing.T) {
	t.Parallel()
	livecheck.Test(t, &lock.System)
}

// checkBug runs livecheck.Test with bug on a recorder, as a test of
// name, and returns its one failure report and the trace it saved.
func checkBug(t *testing.T, name, bug string) (report string, trace *reports.Trace, file string) {
	t.Helper()
	dir := t.TempDir()
	r := &tbrec.Recorder{TB: t, Test: name}
	livecheck.Test(r, &lock.System, livecheck.WithTraceDir(dir),
		livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Bugs: []string{bug}}}))
	if len(r.Fatals) != 1 || len(r.Errs) != 0 {
		t.Fatalf("bug %s: fatals %q, errors %q; want one fatal", bug, r.Fatals, r.Errs)
	}
	matches, err := filepath.Glob(filepath.Join(dir, name+"-????????.json"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("bug %s: trace files %q (%v), want one %s-<hash>.json", bug, matches, err, name)
	}
	file = matches[0]
	if trace, err = reports.ReadTraceFile(file); err != nil {
		t.Fatalf("bug %s: the trace: %v", bug, err)
	}
	report = r.Fatals[0]
	for _, want := range []string{
		"\ntrace: " + file + "\n",
		"\nreplay it: go test -run '^" + name + "$' -livecheck.replay '" + file + "'",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("bug %s: the report lacks %q:\n%s", bug, want, report)
		}
	}
	return report, trace, file
}

// The server that takes a lease back on its own clock lets two clients
// hold the lock: the shortest path is 5 steps, the fourth the lease
// running out and the fifth the second grant.
func TestEarlyReleaseFails(t *testing.T) {
	t.Parallel()
	report, trace, _ := checkBug(t, "TestEarlyRelease", "early-release")
	for _, want := range []string{
		"lock, 3 nodes, bugs early-release, failures: 0 resets, 0 drops, 0 socket errors;",
		"\nsafety-violation of one-holder: nodes 1 and 2 at once\n",
		"\n    4. timer lease at 0  => sends grant{Lease:2} 0->2\n    5. deliver grant{Lease:2} 0->2\n         !! nodes 1 and 2 at once\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if trace.Result != "safety-violation" || trace.Property != "one-holder" || len(trace.Steps) != 5 ||
		trace.Steps[4].Text != "deliver grant{Lease:2} 0->2" || !slices.Equal(trace.Bugs, []string{"early-release"}) {
		t.Errorf("trace: %s of %s, %d steps", trace.Result, trace.Property, len(trace.Steps))
	}
}

// The client that gives back a lease it never had and does not ask again
// is a liveness violation, with a critical step: the revoke that overtakes
// the grant.
func TestNoRetryFails(t *testing.T) {
	t.Parallel()
	report, trace, file := checkBug(t, "TestNoRetry", "no-retry")
	for _, want := range []string{
		"\nliveness-violation of all-served: it never holds on this path of 9 steps, and can no longer.\n",
		"\ncritical transition (case C1, the point of no return): step 7 of 9\n    deliver revoke{Lease:2} 0->2\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if trace.Result != "liveness-violation" || trace.Property != "all-served" || trace.Critical == nil ||
		trace.Critical.Step != 7 || trace.Critical.Event != "deliver revoke{Lease:2} 0->2" {
		t.Errorf("trace: %s of %s, critical %+v", trace.Result, trace.Property, trace.Critical)
	}
	live, err := filepath.Glob(filepath.Join(filepath.Dir(file), "TestNoRetry-live-????????.json"))
	if err != nil || len(live) != 1 {
		t.Errorf("nearest live path files %q (%v), want one", live, err)
	} else if _, err := os.Stat(live[0]); err != nil || !strings.Contains(report, "\nnearest live path: "+live[0]+"\n") {
		t.Errorf("the report does not name the live path %s (%v):\n%s", live[0], err, report)
	}
}
