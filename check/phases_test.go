package check_test

import (
	"slices"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/ring"
)

// A check's time is split among its phases, which add up to it: a
// liveness bug's check runs every phase but the local and the dead-region
// ones, a correct one the search and the walks.
func TestPhasesAddUp(t *testing.T) {
	for _, tc := range []struct {
		bugs []string
		want []string
	}{
		{nil, []string{"setup", "search", "walks"}},
		{[]string{"rejoin-self"}, []string{"setup", "search", "walks", "critical", "replay", "shorten", "slip"}},
	} {
		start := time.Now()
		res, err := check.Check(&ring.System, check.Options{Config: protocol.Config{Nodes: 3, Bugs: tc.bugs}, Time: check.NoTimeLimit})
		outer := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var sum time.Duration
		for _, ph := range res.Phases {
			names = append(names, ph.Name)
			sum += ph.Wall
			if ph.Wall < 0 || ph.CPU < 0 {
				t.Errorf("bugs %v: phase %s: wall %v, CPU %v", tc.bugs, ph.Name, ph.Wall, ph.CPU)
			}
			// Only the search has a part on fewer goroutines by design:
			// the merges of its levels, within its wall time.
			if serial := ph.Name == "search"; serial && (ph.Serial <= 0 || ph.Serial > ph.Wall) || !serial && ph.Serial != 0 {
				t.Errorf("bugs %v: phase %s: serial %v of wall %v", tc.bugs, ph.Name, ph.Serial, ph.Wall)
			}
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("bugs %v (%s): phases %v, want %v", tc.bugs, res.Verdict, names, tc.want)
		}
		if sum != res.Elapsed || res.Elapsed <= 0 || res.Elapsed > outer {
			t.Errorf("bugs %v: the phases add up to %v, the check's time is %v, Check took %v", tc.bugs, sum, res.Elapsed, outer)
		}
		rep := res.Report("", "")
		var ms float64
		for i, ph := range rep.Phases {
			if ph.Name != tc.want[i] {
				t.Errorf("bugs %v: the report's phase %d is %s, want %s", tc.bugs, i, ph.Name, tc.want[i])
			}
			ms += ph.WallMS
			if want := float64(res.Phases[i].Serial.Microseconds()) / 1000; ph.SerialMS != want {
				t.Errorf("bugs %v: the report's phase %s has serial_ms %v, want %v", tc.bugs, ph.Name, ph.SerialMS, want)
			}
		}
		// Each phase's milliseconds are rounded to the microsecond.
		if d := ms - rep.TimeMS; d > 0.001*float64(len(rep.Phases)) || d < -0.001*float64(len(rep.Phases)) {
			t.Errorf("bugs %v: the report's phases add up to %.3f ms, its time_ms is %.3f", tc.bugs, ms, rep.TimeMS)
		}
	}
}
