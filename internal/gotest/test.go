package gotest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// DefaultTraceDir is where Test keeps its trace files, relative to the
// package directory, where go test runs.
const DefaultTraceDir = "testdata/livecheck"

// The test flags, as rapid's -rapid.*: registered only in test binaries,
// so that a program that imports livecheck keeps its flag set to itself.
// They are read, never written, by Test.
var (
	flagSeed   *int64
	flagReplay *string
)

func init() {
	if testing.Testing() {
		flagSeed = flag.Int64("livecheck.seed", 0, "the seed of every livecheck.Test (0: each test's own)")
		flagReplay = flag.String("livecheck.replay", "", "livecheck.Test replays this trace `file` instead of checking")
	}
}

// An Option configures [Test].
type Option func(*testSettings)

type testSettings struct {
	opts           check.Options
	dir            string
	inconclusiveOK bool
	unreachedOK    bool
}

// WithOptions gives the check's options, as for [Check]: Config (nodes,
// bugs, failure budget, params), Depth, Seed, WalkDepth, Workers and the
// rest. Zero values take the defaults, but see Test for -short.
func WithOptions(o check.Options) Option { return func(s *testSettings) { s.opts = o } }

// WithTraceDir sets the directory of the test's trace files (default
// DefaultTraceDir).
func WithTraceDir(dir string) Option { return func(s *testSettings) { s.dir = dir } }

// AllowInconclusive lets a check that could not decide (stopped by
// MaxStates or its memory limit, or walks too short to tell) pass, with
// the reason logged. By default it fails the test: a check that did not
// finish has not shown the protocol correct.
func AllowInconclusive() Option { return func(s *testSettings) { s.inconclusiveOK = true } }

// AllowUnreached lets a check pass where a reachability property
// (properties.Sometimes) was never reached, with the fact logged. By
// default it fails the test: the check never got to the states the
// property asks for, so it may have shown nothing about them.
func AllowUnreached() Option { return func(s *testSettings) { s.unreachedOK = true } }

// Test checks sys inside a Go test, as [Check] does, and fails t on a
// violation with a report: the property and what it said, for a liveness
// violation the critical step and the nearest live path, and the steps of
// the path (those around the critical step when it is long). It writes the
// trace to the trace directory as <TestName>-<hash>.json (with the nearest
// live path beside it as <TestName>-live-<hash>.json) and says the command
// that replays it.
//
// Before checking, Test replays the test's saved traces (the directory's
// <TestName>-<hash>.json files): one that still shows its violation fails
// the test with it, so a fixed bug stays fixed; one that no longer does is
// logged as passing now, and can be deleted.
//
// Under go test -short, a Depth and WalkDepth the options leave at zero
// are half the system's depth and a tenth of the default walk depth. The
// test flags -livecheck.seed N (the seed of every check) and
// -livecheck.replay FILE (replay FILE, print its steps and fail if it
// still shows its violation, instead of checking; a test of another
// system is skipped) work as rapid's.
//
// An inconclusive check fails the test, with the reason, unless the
// options include AllowInconclusive; so does a check that never reached
// one of the system's reachability properties (a vacuous check), unless
// they include AllowUnreached. Every report ends with the handlers the
// check ran, and how often.
//
// Test keeps no state between calls: tests that call it may run in
// parallel.
func Test(t testing.TB, sys *protocol.System, opts ...Option) {
	t.Helper()
	st := testSettings{dir: DefaultTraceDir}
	for _, o := range opts {
		o(&st)
	}
	// Replays get the check's long allowance, as its own replays do: a
	// busy machine must not make a saved trace fail.
	timeout := st.opts.ConfirmTimeout
	if timeout <= 0 {
		h := st.opts.HandlerTimeout
		if h <= 0 {
			h = 2 * time.Second
		}
		timeout = check.ConfirmAllowance(h)
	}
	if flagReplay != nil && *flagReplay != "" {
		replayFlag(t, sys, *flagReplay, timeout)
		return
	}
	stem := traceStem(t.Name())
	if replaySaved(t, sys, st.dir, stem, timeout) {
		return
	}
	o := st.opts
	if flagSeed != nil && *flagSeed != 0 {
		o.Seed = *flagSeed
	}
	if testing.Short() {
		if o.Depth <= 0 {
			o.Depth = max(1, o.DefaultDepthFor(sys)/2)
		}
		if o.WalkDepth <= 0 {
			o.WalkDepth = check.DefaultWalkDepth / 10
		}
	}
	res, err := check.Check(sys, o)
	if err != nil {
		t.Fatalf("livecheck: %s: %v", sys.Name, err)
		return
	}
	switch res.Verdict {
	case check.OK:
		scope := reports.Scope(res.Depth, res.Exhausted, res.Stats.Postponed)
		t.Logf("livecheck: %s: ok: no violation in %s (%s); %s from the depth bound\n%s", sys.Name, scope, reports.Count(res.Stats.States, "state"), reports.Count(res.Live.Walks, "walk"), coverageText(res))
		unreached(t, sys, res, st.unreachedOK)
		return
	case check.Inconclusive:
		why := fmt.Sprintf("%s; no violation among %s", res.Message, reports.Count(res.Stats.States, "state"))
		switch {
		case res.Cut != "":
			why = res.Message // it says what was covered
		case res.Interrupted:
			why = "the search was interrupted; no violation among " + reports.Count(res.Stats.States, "state")
		}
		if st.inconclusiveOK {
			t.Logf("livecheck: %s: inconclusive: %s\n%s", sys.Name, why, coverageText(res))
			unreached(t, sys, res, st.unreachedOK)
			return
		}
		t.Fatalf("livecheck: %s: inconclusive: %s (AllowInconclusive lets this pass)", sys.Name, why)
		return
	}
	dead, live, err := res.WriteTracesNamed(st.dir, func(property string, p sim.Path) string {
		if property == "live" {
			return stem + "-live-" + reports.PathHash(res.Init, p) + ".json"
		}
		return stem + "-" + reports.PathHash(res.Init, p) + ".json"
	})
	var b strings.Builder
	if err != nil {
		dead, live = "", ""
		fmt.Fprintf(&b, "livecheck: the trace could not be written, the report below has none: %v\n", err)
	}
	// The report is the CLI's, without its statistics: the same renderer.
	rep := res.Report(dead, live)
	rep.ReplayCommand, rep.LiveReplayCommand = replayCommand(t.Name(), dead), replayCommand(t.Name(), live)
	reports.WriteCheck(&b, rep, false)
	t.Fatalf("%s", strings.TrimSuffix(b.String(), "\n"))
}

// coverageText is the reachability properties and the handlers the check
// ran, as the reports write them.
func coverageText(res *check.Result) string {
	var b strings.Builder
	reports.WriteCoverage(&b, res.Report("", ""))
	return strings.TrimSuffix(b.String(), "\n")
}

// unreached fails t if the check passed without reaching a reachability
// property, unless ok.
func unreached(t testing.TB, sys *protocol.System, res *check.Result, ok bool) {
	t.Helper()
	names := res.Unreached()
	if len(names) == 0 {
		return
	}
	what := fmt.Sprintf("reachability property %s was", names[0])
	if len(names) > 1 {
		what = fmt.Sprintf("reachability properties %s were", strings.Join(names, ", "))
	}
	msg := fmt.Sprintf("livecheck: %s: %s never reached in %s and %d walks: the check may be vacuous, its other properties held only on states that never get there (a deeper search, more failures, or a fixed predicate may reach it)",
		sys.Name, what, reports.StatesWords(res.Stats.States, res.Symmetry), res.Live.Walks)
	if ok {
		t.Logf("%s; AllowUnreached lets this pass", msg)
		return
	}
	t.Fatalf("%s (AllowUnreached lets this pass)", msg)
}

// stepsBefore and stepsAfter bound the steps a report shows around the
// critical step, or at the end of a long path: the trace has all of them.
const (
	stepsBefore = 12
	stepsAfter  = 3
)

func writeStepWindow(w *strings.Builder, steps []check.ReplayStep, from, to int) {
	fmt.Fprintf(w, "path of %s:\n", reports.Count(len(steps), "step"))
	if from > 0 {
		fmt.Fprintf(w, "  ... %s\n", reports.Count(from, "earlier step"))
	}
	reports.WriteSteps(w, check.StepsReport(steps[from:to]))
	if to < len(steps) {
		fmt.Fprintf(w, "  ... %s\n", reports.Count(len(steps)-to, "later step"))
	}
}

// replaySaved replays the test's saved traces, in name order, and fails
// t with the first that still shows its violation.
func replaySaved(t testing.TB, sys *protocol.System, dir, stem string, timeout time.Duration) (failed bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("livecheck: the saved traces: %v", err)
		}
		return false
	}
	mine := regexp.MustCompile(`^` + regexp.QuoteMeta(stem) + `-[0-9a-f]{8}\.json$`)
	for _, e := range entries {
		if e.IsDir() || !mine.MatchString(e.Name()) {
			continue
		}
		file := filepath.Join(dir, e.Name())
		r := replayFile(sys, file, timeout)
		switch {
		case r.bad != nil:
			t.Errorf("livecheck: saved trace %s: %v (fix or delete the file)", file, r.bad)
		case r.skip != "":
			t.Logf("livecheck: saved trace %s: %s", file, r.skip)
		case r.reproduced:
			t.Fatalf("livecheck: saved trace %s still fails:\n%sreplay it: %s", file, r.report(), replayCommand(t.Name(), file))
			return true
		default:
			t.Logf("livecheck: saved trace %s passes now: %s", file, r.got)
		}
	}
	return false
}

// replayFlag replays the file -livecheck.replay names, with its steps.
func replayFlag(t testing.TB, sys *protocol.System, file string, timeout time.Duration) {
	t.Helper()
	r := replayFile(sys, file, timeout)
	switch {
	case r.bad != nil:
		t.Fatalf("livecheck: %s: %v", file, r.bad)
	case r.skip != "":
		// The file is for another of the tests -run selected.
		t.Skipf("livecheck: %s: %s", file, r.skip)
	case r.reproduced:
		t.Fatalf("livecheck: %s still fails:\n%s", file, r.report())
	default:
		var b strings.Builder
		writeStepWindow(&b, r.rep.Steps, 0, len(r.rep.Steps))
		t.Logf("livecheck: %s passes now: %s\n%s", file, r.got, b.String())
	}
}

// A replayedFile is a trace file replayed: bad says the file cannot be
// read, skip why it was not replayed, got what the replay reached when it
// does not reproduce the trace.
type replayedFile struct {
	trace      *reports.Trace
	rep        *check.Replayed
	reproduced bool
	bad        error
	skip       string
	got        string
}

func replayFile(sys *protocol.System, file string, timeout time.Duration) replayedFile {
	tr, err := reports.ReadTraceFile(file)
	if err != nil {
		return replayedFile{bad: err}
	}
	r := replayedFile{trace: tr}
	switch {
	case tr.System != sys.Name:
		r.skip = fmt.Sprintf("it is a trace of system %q, not %q", tr.System, sys.Name)
		return r
	case check.Verdict(tr.Result) == check.Live || check.Verdict(tr.Result) == check.PrefixResult:
		r.skip = "it records a live path, not a violation"
		return r
	}
	path, err := reports.Path(tr.Steps)
	if err != nil {
		return replayedFile{bad: err}
	}
	// A trace that no longer replays, or names a property the system has
	// no more, shows nothing: the protocol changed under it.
	if r.rep, err = check.ReplayFrom(sys, check.ConfigOf(tr), tr.Init, path, timeout); err != nil {
		r.got = fmt.Sprintf("it no longer replays: %v", err)
		return r
	}
	if r.reproduced, err = r.rep.Confirm(tr); err != nil {
		r.got = err.Error()
		return r
	}
	switch {
	case r.reproduced:
	case r.rep.Verdict != check.OK:
		r.got = fmt.Sprintf("it reaches %s of %s instead", r.rep.Verdict, r.rep.Property)
	case r.rep.Live:
		r.got = "it reaches a live state"
	default:
		r.got = fmt.Sprintf("it no longer shows %s of %s", tr.Result, tr.Property)
	}
	return r
}

// report says what a reproduced trace shows.
func (r *replayedFile) report() string {
	var b strings.Builder
	tr, steps := r.trace, r.rep.Steps
	fmt.Fprintf(&b, "%s of %s: %s\n", tr.Result, tr.Property, tr.Message)
	from, to := 0, len(steps)
	if cx := tr.Critical; cx != nil {
		fmt.Fprintf(&b, "critical step %d of %d: %s\n", cx.Step, len(steps), cx.Event)
		from, to = max(0, cx.Step-stepsBefore), min(len(steps), cx.Step+stepsAfter)
	} else if to > stepsBefore+stepsAfter {
		from = to - stepsBefore
	}
	writeStepWindow(&b, steps, from, to)
	return b.String()
}

// traceStem is a test's name as a file name: letters, digits, '_' and
// '.'; anything else, '/' of a subtest and '-' included, becomes '_', so
// that "<stem>-" begins only this test's files.
func traceStem(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// replayCommand is the go test command that replays file in test name.
func replayCommand(name, file string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	return fmt.Sprintf("go test -run %s -livecheck.replay %s", quote(strings.Join(parts, "/")), quote(file))
}
