package check_test

import (
	"testing"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/search"
)

// The report carries the search's figures, a search run again for the
// cycle proviso among them.
func TestReportKeepsSearchFigures(t *testing.T) {
	r := &check.Result{Verdict: check.OK, Stats: search.Stats{States: 7, Transitions: 9, Slept: 2, Postponed: 3, ProvisoRerun: true}}
	s := r.Report("", "").Stats
	if s.States != 7 || s.Transitions != 9 || s.Slept != 2 || s.Postponed != 3 || !s.ProvisoRerun {
		t.Errorf("report's stats %+v, want 7 states, 9 transitions, 2 slept, 3 postponed, run again", s)
	}
}
