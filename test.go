package livecheck

import (
	"testing"

	"github.com/livecheck/livecheck/internal/gotest"
)

// DefaultTraceDir is where Test saves the traces of what it finds, under
// the test's package directory.
const DefaultTraceDir = gotest.DefaultTraceDir

// A TestOption configures [Test].
type TestOption = gotest.Option

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
// still shows its violation, instead of checking; the nearest live
// path's trace passes while it still reaches a live state, and says so
// even without -v; a test of another system is skipped) work as rapid's.
//
// The check has the command's time budget (DefaultTime, 60 s) unless the
// options give another (NoTimeLimit for none), and ends in any case
// before go test's deadline (-timeout, t.Deadline), keeping a tenth of the
// time left, and at least 10 s, to confirm and report what it found. Its
// progress goes to the test's log every 10 s of a long check (shown as it
// comes under go test -v).
//
// A check whose space does not fit its budget passes to the deepest
// level its search completed, and logs "no violation to depth k,
// complete to depth k" with what it covered (walks the budget stopped
// included); a test that needs a depth asks for it with Options.MinDepth.
// An inconclusive check (one that completed less than MinDepth, or was
// stopped in a critical search) fails the test, with the reason, the
// command's words for it (what was covered), unless the options include
// AllowInconclusive; so does a check that never reached
// one of the system's reachability properties (a vacuous check), unless
// they include AllowUnreached. Every report ends with the handlers the
// check ran, and how often.
//
// Test keeps no state between calls: tests that call it may run in
// parallel.
func Test(t testing.TB, sys *System, opts ...TestOption) { gotest.Test(t, sys, opts...) }

// WithOptions gives the check's options, as for [Check]: Config (nodes,
// bugs, failure budget, params), Depth, Seed, WalkDepth, Workers and the
// rest. Zero values take the defaults, but see Test for -short.
func WithOptions(o Options) TestOption { return gotest.WithOptions(o) }

// WithTraceDir sets the directory of the test's trace files (default
// DefaultTraceDir).
func WithTraceDir(dir string) TestOption { return gotest.WithTraceDir(dir) }

// AllowInconclusive lets a check that could not decide (short of
// MinDepth when its time budget or MaxStates cut its search, stopped in
// a critical search or by its memory limit, or walks too short to tell)
// pass, with the reason logged. By default it fails the test: a check that did not
// finish has not shown the protocol correct.
func AllowInconclusive() TestOption { return gotest.AllowInconclusive() }

// AllowUnreached lets a check pass where a reachability property
// (properties.Sometimes) was never reached, with the fact logged. By
// default it fails the test: the check never got to the states the
// property asks for, so it may have shown nothing about them.
func AllowUnreached() TestOption { return gotest.AllowUnreached() }
