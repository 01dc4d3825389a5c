package check

import (
	"fmt"

	"github.com/livecheck/livecheck/protocol"
)

// A Comparison is the same check in global mode (the search alone, no
// walks) and in local mode.
type Comparison struct {
	Global, Local *Result
	// Agree says both found a safety violation, or neither did.
	Agree bool
	// TransitionsRatio and TimeRatio are global mode's transitions and
	// time over local mode's.
	TransitionsRatio, TimeRatio float64
}

// Compare runs a check in global mode without walks and in local mode,
// as `livecheck check --mode compare` does. opts.Mode and opts.NoWalks
// are ignored.
func Compare(sys *protocol.System, opts Options) (*Comparison, error) {
	var res [2]*Result
	for i, mode := range []string{"global", "local"} {
		o := opts
		o.Mode, o.NoWalks = mode, true
		r, err := Check(sys, o)
		if err != nil {
			return nil, fmt.Errorf("%s mode: %w", mode, err)
		}
		res[i] = r
	}
	g, l := res[0], res[1]
	return &Comparison{
		Global: g, Local: l,
		Agree:            (g.Verdict == SafetyViolation) == (l.Verdict == SafetyViolation),
		TransitionsRatio: float64(g.Stats.Transitions) / max(float64(l.Stats.Transitions), 1),
		TimeRatio:        g.Stats.Elapsed.Seconds() / max(l.Stats.Elapsed.Seconds(), 1e-9),
	}, nil
}
