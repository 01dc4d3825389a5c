package cli

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// trace's summary counts every kind of failure in the run, not resets
// alone.
func TestFailureCounts(t *testing.T) {
	ev := func(k sim.Kind) sim.Step { return sim.Step{Event: sim.Event{Kind: k}} }
	for _, tc := range []struct {
		path sim.Path
		want string
	}{
		{nil, "0 resets"},
		{sim.Path{ev(sim.Deliver), ev(sim.Timer)}, "0 resets"},
		{sim.Path{ev(sim.Reset), ev(sim.Deliver), ev(sim.Drop), ev(sim.Drop)}, "1 reset, 2 drops"},
		{sim.Path{ev(sim.Duplicate), ev(sim.Partition), ev(sim.Heal), ev(sim.SocketError), ev(sim.Crash)},
			"0 resets, 1 crash, 1 duplicate, 1 partition, 1 heal, 1 socket error"},
	} {
		if got := failureCounts(tc.path); got != tc.want {
			t.Errorf("failureCounts = %q, want %q", got, tc.want)
		}
	}
}
