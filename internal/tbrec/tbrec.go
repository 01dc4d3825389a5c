// Package tbrec has a testing.TB that records what is said to it, for
// tests of code that fails tests (livecheck.Test): its Fatalf records and
// returns instead of ending the test.
package tbrec

import (
	"fmt"
	"testing"
	"time"
)

// A Recorder is a testing.TB named Test that records Fatalf, Errorf,
// Logf and Skipf; everything else goes to the embedded TB.
type Recorder struct {
	testing.TB
	Test                      string
	Fatals, Errs, Logs, Skips []string
	// Until, when set, is the test's deadline (Deadline), as go test's
	// -timeout sets one; otherwise the embedded TB's, if it has one.
	Until time.Time
}

// Deadline is testing.T's: when the test binary will be stopped.
func (r *Recorder) Deadline() (time.Time, bool) {
	if !r.Until.IsZero() {
		return r.Until, true
	}
	if d, ok := r.TB.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

func (r *Recorder) Helper()      {}
func (r *Recorder) Name() string { return r.Test }
func (r *Recorder) Logf(format string, args ...any) {
	r.Logs = append(r.Logs, fmt.Sprintf(format, args...))
}
func (r *Recorder) Errorf(format string, args ...any) {
	r.Errs = append(r.Errs, fmt.Sprintf(format, args...))
}
func (r *Recorder) Fatalf(format string, args ...any) {
	r.Fatals = append(r.Fatals, fmt.Sprintf(format, args...))
}
func (r *Recorder) Skipf(format string, args ...any) {
	r.Skips = append(r.Skips, fmt.Sprintf(format, args...))
}
