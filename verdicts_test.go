package livecheck_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/internal/tbrec"
	"github.com/livecheck/livecheck/reports"
)

// A saved trace of a property that panicked replays to the same error,
// and livecheck.Test, run again, fails with it: "still fails". (It could
// not be replayed, `unknown result "property-error"`, and Test logged it
// as "passes now" while the property still panicked.)
func TestLivecheckTestPropertyErrorStillFails(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "traces")
	sys := panicky("safety")
	opt := []livecheck.TestOption{livecheck.WithTraceDir(dir), livecheck.WithOptions(livecheck.Options{Depth: 6})}
	r := &tbrec.Recorder{TB: t, Test: "TestPanicky"}
	livecheck.Test(r, sys, opt...)
	files := traceFiles(t, dir)
	if len(r.Fatals) != 1 || len(files) != 1 || !strings.Contains(r.Fatals[0], "property-error of no-b-after-a") {
		t.Fatalf("first run: fatals %q, files %q", r.Fatals, files)
	}
	file := filepath.Join(dir, files[0])

	// The library's replay reproduces it.
	tr, err := reports.ReadTraceFile(file)
	if err != nil {
		t.Fatal(err)
	}
	path, err := reports.Path(tr.Steps)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.ReplayFrom(sys, check.ConfigOf(tr), tr.Init, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := rep.Confirm(tr); !ok || err != nil || rep.Verdict != check.PropertyError || rep.Property != "no-b-after-a" {
		t.Fatalf("replay: reproduced %v, %v: %s of %s", ok, err, rep.Verdict, rep.Property)
	}

	r = &tbrec.Recorder{TB: t, Test: "TestPanicky"}
	livecheck.Test(r, sys, opt...)
	want := "livecheck: saved trace " + file + " still fails:\nproperty-error of no-b-after-a: property no-b-after-a panicked: assignment to entry in nil map\n"
	if len(r.Fatals) != 1 || !strings.HasPrefix(r.Fatals[0], want) || len(r.Logs) != 0 {
		t.Fatalf("second run: fatals %q, logs %q; want a fatal that begins %q", r.Fatals, r.Logs, want)
	}
}
