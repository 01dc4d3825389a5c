package protocol

import (
	"strings"
	"time"
)

// Timing is how long a timer waits when the nodes run for real: After,
// give or take up to Jitter, drawn each time the timer is set, so that
// nodes started together do not fire in step. The checker ignores it:
// there a set timer may fire at any later step.
type Timing struct {
	After  time.Duration
	Jitter time.Duration
}

// DefaultTiming is the timing of a timer a model does not name.
var DefaultTiming = Timing{After: 200 * time.Millisecond, Jitter: 50 * time.Millisecond}

// TimingOf returns the timing of the named timer: Timers[name], else for
// a layer's timer ("transport/retransmit") the timing of its own name
// ("retransmit"), else Timers["*"], else DefaultTiming. A timing of 0
// fires at once.
func (m *Model) TimingOf(name string) Timing {
	if t, ok := m.Timers[name]; ok {
		return t
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if t, ok := m.Timers[name[i+1:]]; ok {
			return t
		}
	}
	if t, ok := m.Timers["*"]; ok {
		return t
	}
	return DefaultTiming
}
