package traceview

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// Frames replays trace t of system sys and returns every state of its
// path for the stepper: the initial state, then the state after each
// step, with what the step did. A trace that does not replay is an error.
func Frames(sys *protocol.System, t *reports.Trace, timeout time.Duration) ([]Frame, error) {
	if sys.Name != t.System {
		return nil, fmt.Errorf("the trace is of system %s, not %s", t.System, sys.Name)
	}
	p, err := reports.Path(t.Steps)
	if err != nil {
		return nil, err
	}
	// A handler that never returns leaves the replay's goroutine behind,
	// still able to call visit: what it adds after the replay returned
	// is not looked at.
	var mu sync.Mutex
	var frames []Frame
	done := false
	visit := func(step int, s *sim.State, _ *sim.StepInfo) {
		mu.Lock()
		defer mu.Unlock()
		if !done && step == len(frames) {
			frames = append(frames, Frame{Step: reports.Step{Step: step}, Nodes: check.DumpNodes(s), Net: check.DumpNet(s)})
		}
	}
	rep, err := check.ReplayEach(sys, check.ConfigOf(t), t.Init, p, timeout, visit)
	mu.Lock()
	defer mu.Unlock()
	done = true
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("the initial state could not be built: %s", rep.Message)
	}
	for i, st := range check.StepsReport(rep.Steps) {
		if i+1 == len(frames) {
			// The step did not finish (its handler panicked or hung):
			// the state stays the one before it.
			f := frames[i]
			f.Step = st
			frames = append(frames, f)
			continue
		}
		if i+1 < len(frames) {
			frames[i+1].Step = st
		}
	}
	return frames[:len(rep.Steps)+1], nil
}

// NewStepper loads trace file for `livecheck debug`: its frames, and those
// of the live path to compare with, from liveFile or else from the live
// trace the dead one names (beside it), where there is one.
func NewStepper(sys *protocol.System, file, liveFile string, timeout time.Duration) (*Stepper, error) {
	t, err := reports.ReadTraceFile(file)
	if err != nil {
		return nil, err
	}
	cfg := check.ConfigOf(t)
	d := &Stepper{Critical: t.Critical,
		Title: fmt.Sprintf("%s: %s; %s", file, reports.DescribeConfig(t.System, t.Nodes, t.Bugs, t.Params, protocol.Counts(cfg.Budget)), check.Recorded(t))}
	if d.Dead, err = Frames(sys, t, timeout); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	named := liveFile == "" && t.Critical != nil && t.Critical.LiveTrace != ""
	if named {
		liveFile = filepath.Join(filepath.Dir(file), filepath.Base(t.Critical.LiveTrace))
	}
	if liveFile == "" {
		return d, nil
	}
	lt, err := reports.ReadTraceFile(liveFile)
	if err != nil && named {
		// The session is still worth having without it.
		d.NoLive = fmt.Sprintf("the live path the trace names could not be read: %v", err)
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the live path: %w", err)
	}
	if d.Live, err = Frames(sys, lt, timeout); err != nil {
		return nil, fmt.Errorf("the live path %s: %w", liveFile, err)
	}
	d.LiveFile = liveFile
	return d, nil
}
