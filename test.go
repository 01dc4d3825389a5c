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

// Test checks sys inside a Go test: it replays the traces saved under
// testdata/livecheck first, then runs the check, and fails t with the
// report (and a saved trace) if it finds a violation. See
// [gotest.Test] for the details.
func Test(t testing.TB, sys *System, opts ...TestOption) { gotest.Test(t, sys, opts...) }

// WithOptions sets the check's options (default: Options{}).
func WithOptions(o Options) TestOption { return gotest.WithOptions(o) }

// WithTraceDir sets where traces are saved and replayed from.
func WithTraceDir(dir string) TestOption { return gotest.WithTraceDir(dir) }

// AllowInconclusive lets a check that was cut short pass.
func AllowInconclusive() TestOption { return gotest.AllowInconclusive() }

// AllowUnreached lets a reachability property never reached pass.
func AllowUnreached() TestOption { return gotest.AllowUnreached() }
