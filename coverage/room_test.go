package coverage

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// TestCountsOwnTheirLines: a counter's counts, written at every step by
// one worker, start with 128 bytes of room, so that two workers' counts
// share no cache line (see slot).
func TestCountsOwnTheirLines(t *testing.T) {
	var c Counter
	c.Event(&sim.Event{Kind: sim.Deliver}, struct{}{}, 0)
	c.Event(&sim.Event{Kind: sim.Timer, Timer: "retry"}, nil, 0)
	if cap(c.received) != countsRoom || cap(c.fired) != countsRoom || countsRoom*8 != 128 {
		t.Errorf("counts' room: received %d, fired %d, want %d (128 bytes)", cap(c.received), cap(c.fired), countsRoom)
	}
}
