package gotest

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
)

// deadlined is a testing.TB with go test's deadline, or none.
type deadlined struct {
	testing.TB
	at time.Time
}

func (d deadlined) Deadline() (time.Time, bool) { return d.at, !d.at.IsZero() }

// A check in a test has the command's budget, or the one its options
// give, and ends before go test's deadline with room to report.
func TestBudget(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		given time.Duration
		left  time.Duration // to the deadline; 0: none
		want  time.Duration
	}{
		{0, 0, check.DefaultTime},
		{5 * time.Second, 0, 5 * time.Second},
		{check.NoTimeLimit, 0, check.NoTimeLimit},
		{0, 10 * time.Minute, check.DefaultTime},
		{0, 50 * time.Second, 40 * time.Second},                 // a margin of 10 s
		{0, 30 * time.Minute, check.DefaultTime},                // the default, not the deadline
		{check.NoTimeLimit, 30 * time.Minute, 27 * time.Minute}, // a tenth of the time left
		{2 * time.Hour, 30 * time.Minute, 27 * time.Minute},
		{0, 5 * time.Second, time.Second}, // too late: a second, for a report
		{0, -time.Minute, time.Second},
	} {
		tb := deadlined{TB: t}
		if tc.left != 0 {
			tb.at = now.Add(tc.left)
		}
		if got := budget(tb, tc.given, now); got != tc.want {
			t.Errorf("budget %v, deadline in %v: %v, want %v", tc.given, tc.left, got, tc.want)
		}
	}
}
