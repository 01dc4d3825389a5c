package livecheck_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// checkEchoTrace runs `check echo ARGS` on 2 nodes, which must find a
// violation whose report has every line of want, and returns the trace it
// wrote for property and the trace's path.
func checkEchoTrace(t *testing.T, property string, want []string, args ...string) (*reports.Trace, sim.Path) {
	t.Helper()
	dir := t.TempDir()
	var out, errs bytes.Buffer
	code := livecheck.Run(append([]string{"check", "echo", "--nodes", "2", "--time", "0", "-q", "--out", dir}, args...), &out, &errs, echoSystem(false))
	if code != livecheck.ExitViolation {
		t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, livecheck.ExitViolation, out.String(), errs.String())
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "echo-"+property+"-*.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("trace files %v, %v", files, err)
	}
	tr, err := reports.ReadTraceFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := reports.Path(tr.Steps)
	if err != nil {
		t.Fatal(err)
	}
	return tr, p
}

// A duplicated datagram is a failure the echo protocol does not survive:
// node 0 counts pongs, and a copy of one is a pong too many. The check
// with --dups 1 finds it in the fewest steps (the ping, the pong, its
// copy, both delivered), writes a trace of version 3 that names the
// budget, and the trace replays to the same violation.
func TestDuplicateFoundAndReplayed(t *testing.T) {
	tr, p := checkEchoTrace(t, "pongs-bounded", []string{
		"echo, 2 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors, 1 duplicate;",
		"safety-violation of pongs-bounded: node 0 counted 2 pongs from 1 nodes",
		"duplicate echoPong{} 1->0",
	}, "--dups", "1")
	if tr.Version != 3 || tr.Budget.Dups != 1 || len(tr.Steps) != 4 {
		t.Fatalf("trace version %d, budget %+v, %d steps; want version 3, 1 dup, 4 steps", tr.Version, tr.Budget, len(tr.Steps))
	}
	dups := 0
	for _, st := range tr.Steps {
		if st.Kind == "duplicate" {
			dups++
		}
	}
	if dups != 1 {
		t.Errorf("%d duplicate steps in the trace, want 1", dups)
	}
	rep, err := livecheck.Replay(echoSystem(false), livecheck.ConfigOf(tr), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reproduces(livecheck.SafetyViolation, "pongs-bounded") {
		t.Errorf("the trace does not replay to the violation: %+v", rep)
	}
	// Without the duplication budget the same path is refused at its
	// duplicate step.
	cfg := livecheck.ConfigOf(tr)
	cfg.Budget.Dups = livecheck.None
	if _, err := livecheck.Replay(echoSystem(false), cfg, p, 0); err == nil {
		t.Errorf("a path with a duplication replayed without the budget for it")
	}
	// The correct protocol without the failure is silent.
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"check", "echo", "--nodes", "2", "--time", "0", "-q", "--out", t.TempDir()}, &out, &errs, echoSystem(false)); code != livecheck.ExitOK {
		t.Errorf("without --dups: exit %d:\n%s", code, out.String())
	}
}

// Bad failure counts are usage errors: one line naming the flag.
func TestBadFailureFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dups", "-1"}, "livecheck check: --dups cannot be negative\n"},
		{[]string{"--dups", "two"}, `livecheck check: invalid argument "two" for "--dups" flag: must be an integer (see 'livecheck check echo --help')` + "\n"},
	} {
		var out, errs bytes.Buffer
		code := livecheck.Run(append([]string{"check", "echo"}, tc.args...), &out, &errs, echoSystem(false))
		if code != livecheck.ExitUsage || errs.String() != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errs.String(), livecheck.ExitUsage, tc.want)
		}
	}
}

// A partition loses the pings in flight across it, and the heal does not
// bring them back: echo with --partitions 1 is a liveness violation whose
// critical step is the partition, and the trace (version 6: the cut's
// side in the step, the slip, none here, and the recovery odds) replays
// to it.
func TestPartitionFoundAndReplayed(t *testing.T) {
	tr, p := checkEchoTrace(t, "all-answered", []string{
		"echo, 2 nodes, no bugs, failures: 0 resets, 0 drops, 0 socket errors, 1 partition;",
		"liveness-violation of all-answered",
		"critical transition (case C1, the point of no return): step 1 of ",
		"    partition {0} | {1}\n",
	}, "--partitions", "1")
	if tr.Version != 6 || tr.Budget.Partitions != 1 || len(tr.Steps) == 0 || tr.Steps[0].Kind != "partition" || len(tr.Steps[0].Cut) != 1 || tr.Steps[0].Cut[0] != 0 {
		t.Fatalf("trace version %d, budget %+v, steps %+v; want version 6, 1 partition, first the cut {0}", tr.Version, tr.Budget, tr.Steps)
	}
	rep, err := livecheck.Replay(echoSystem(false), livecheck.ConfigOf(tr), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reproduces(livecheck.LivenessViolation, "all-answered") {
		t.Errorf("the trace does not replay to the violation: %+v", rep)
	}
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"check", "echo", "--partitions", "-2"}, &out, &errs, echoSystem(false)); code != livecheck.ExitUsage {
		t.Errorf("--partitions -2: exit %d, want %d", code, livecheck.ExitUsage)
	}
}
