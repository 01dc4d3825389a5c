package gotest

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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

// AllowInconclusive lets a check that could not decide (short of
// MinDepth when its time budget or MaxStates cut its search, stopped in
// a critical search or by its memory limit, or walks too short to tell)
// pass, with the reason logged. By default it fails the test: a check that did not
// finish has not shown the protocol correct.
func AllowInconclusive() Option { return func(s *testSettings) { s.inconclusiveOK = true } }

// AllowUnreached lets a check pass where a reachability property
// (properties.Sometimes) was never reached, with the fact logged. By
// default it fails the test: the check never got to the states the
// property asks for, so it may have shown nothing about them.
func AllowUnreached() Option { return func(s *testSettings) { s.unreachedOK = true } }

// Test is livecheck.Test; its doc says what it does.
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
			o.Depth = max(1, o.MinDepth, o.DefaultDepthFor(sys)/2) // never below the depth asked for
		}
		if o.WalkDepth <= 0 {
			o.WalkDepth = check.DefaultWalkDepth / 10
		}
	}
	o.Time = budget(t, o.Time, time.Now())
	var logMu sync.Mutex
	checking := true
	if o.Progress == nil {
		// What the command prints on stderr, in the test's log: shown
		// as it comes under -v, and with a failure. Never once Check has
		// returned: a goroutine a hang left behind may go on a little,
		// and the test may have ended.
		pl := &check.ProgressLine{Print: func(line string) {
			logMu.Lock()
			defer logMu.Unlock()
			if checking {
				t.Logf("%s", line)
			}
		}, Start: time.Now(), Budget: o.Time, Every: progressEvery}
		o.Progress = pl.Report
	}
	res, err := check.Check(sys, o)
	logMu.Lock()
	checking = false
	logMu.Unlock()
	if err != nil {
		t.Fatalf("livecheck: %s: %v", sys.Name, err)
		return
	}
	switch res.Verdict {
	case check.OK:
		if res.Cut != "" || res.Live.WalksCut {
			// The budget cut the search or the walks short: it passes
			// to the depth it completed, and the message says which,
			// and why.
			t.Logf("livecheck: %s: ok: %s\n%s", sys.Name, res.Message, coverageText(res))
			unreached(t, sys, res, st.unreachedOK)
			return
		}
		scope := reports.Scope(res.Depth, res.Exhausted, res.Stats.Postponed)
		t.Logf("livecheck: %s: ok: no violation in %s (%s); %s from the depth bound\n%s", sys.Name, scope, reports.Count(res.Stats.States, "state"), reports.Count(res.Live.Walks, "walk"), coverageText(res))
		unreached(t, sys, res, st.unreachedOK)
		return
	case check.Inconclusive:
		why := reports.Inconclusive(res.Report("", "")) // the command's words
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

// progressEvery is how often Test logs a long check's progress.
const progressEvery = 10 * time.Second

// budget is the time budget of a check in test t: the options' (given;
// the command's, check.DefaultTime, where they give none), but no later
// than go test's deadline (-timeout) less a margin in which Test confirms
// and reports what it found: a tenth of the time left, and at least
// reportMargin. A check with no budget (check.NoTimeLimit) gets all the
// time up to there: go test would kill it, with no report, at the
// deadline.
func budget(t testing.TB, given time.Duration, now time.Time) time.Duration {
	b := given
	if b == 0 {
		b = check.DefaultTime
	}
	dt, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return b
	}
	deadline, ok := dt.Deadline()
	if !ok {
		return b
	}
	left := deadline.Sub(now)
	room := max((left - max(left/10, reportMargin)).Truncate(time.Second), time.Second)
	if b < 0 || b > room {
		return room
	}
	return b
}

// reportMargin is the least time Test keeps before go test's deadline to
// confirm and report what its check found.
const reportMargin = 10 * time.Second

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
		r := replayFile(sys, file, timeout, false)
		o, msg := r.outcome()
		switch o {
		case unreadable:
			msg += " (fix or delete the file)"
		case stillFails:
			msg += "replay it: " + replayCommand(t.Name(), file)
		}
		// A trace that cannot be read is an error of the test; one that
		// still fails ends it.
		[...]func(string, ...any){unreadable: t.Errorf, skipped: t.Logf, stillFails: t.Fatalf, passes: t.Logf}[o]("livecheck: saved trace %s%s", file, msg)
		if o == stillFails {
			return true
		}
	}
	return false
}

// replayFlag replays the file -livecheck.replay names, with its steps: a
// violation's trace fails the test while it still shows its violation; a
// live path's (the nearest live path a report names, or a prefix) passes
// while it still reaches its live state, and fails once it does not.
// What a passing replay did is said even without -v (on standard output,
// which go test shows when run in the package's directory, as the
// command a failing test prints is), since the user asked for it.
func replayFlag(t testing.TB, sys *protocol.System, file string, timeout time.Duration) {
	t.Helper()
	r := replayFile(sys, file, timeout, true)
	o, msg := r.outcome()
	if o == passes {
		var b strings.Builder
		writeStepWindow(&b, r.rep.Steps, 0, len(r.rep.Steps))
		msg += "\n" + b.String()
		if !testing.Verbose() {
			fmt.Fprintf(replayOut, "--- %s: livecheck: %s%s", t.Name(), file, msg)
		}
	}
	// A file for another of the tests -run selected is skipped.
	[...]func(string, ...any){unreadable: t.Fatalf, skipped: t.Skipf, stillFails: t.Fatalf, passes: t.Logf}[o]("livecheck: %s%s", file, msg)
}

// replayOut is where replayFlag says what a passing replay did without
// -v.
var replayOut io.Writer = os.Stdout

// SetReplayOut sends what replayFlag says without -v to w for the rest of
// t (for livecheck's own tests).
func SetReplayOut(t testing.TB, w io.Writer) {
	old := replayOut
	replayOut = w
	t.Cleanup(func() { replayOut = old })
}

// The four outcomes of replaying a trace file.
const (
	unreadable = iota // the file cannot be read
	skipped           // not a trace this test replays
	stillFails        // it reproduces its violation
	passes            // it no longer does
)

// outcome says which of the four outcomes r is, and how, as the rest
// of a line that begins with the file's name.
func (r *replayedFile) outcome() (int, string) {
	switch {
	case r.bad != nil:
		return unreadable, ": " + r.bad.Error()
	case r.skip != "":
		return skipped, ": " + r.skip
	case r.live && r.reproduced:
		return passes, fmt.Sprintf(" replays: its path of %s reaches a live state, as it records", reports.Count(len(r.rep.Steps), "step"))
	case r.live:
		return stillFails, " no longer replays to a live state: " + r.got
	case r.reproduced:
		return stillFails, " still fails:\n" + r.report()
	}
	return passes, " passes now: " + r.got
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
	live       bool // a live path's trace, replayed (reproduced: it still reaches a live state)
}

// replayFile replays a trace file; a live path's trace is skipped unless
// live says to replay it too.
func replayFile(sys *protocol.System, file string, timeout time.Duration, live bool) replayedFile {
	tr, err := reports.ReadTraceFile(file)
	if err != nil {
		return replayedFile{bad: err}
	}
	r := replayedFile{trace: tr}
	switch {
	case tr.System != sys.Name:
		r.skip = fmt.Sprintf("it is a trace of system %q, not %q", tr.System, sys.Name)
		return r
	case !live && (check.Verdict(tr.Result) == check.Live || check.Verdict(tr.Result) == check.PrefixResult):
		r.skip = "it records a live path, not a violation"
		return r
	}
	r.live = check.Verdict(tr.Result) == check.Live || check.Verdict(tr.Result) == check.PrefixResult
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
		if sl := cx.Slip; sl != nil {
			fmt.Fprintf(&b, "%s\n", sl.Reason)
		}
		if cx.SlipUnfinished != "" {
			fmt.Fprintf(&b, "slip: not known: its search did not finish: %s\n", cx.SlipUnfinished)
		}
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
