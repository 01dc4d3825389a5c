package traceview

import (
	"fmt"
	"sync"
	"time"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// Frames replays trace t of system sys and returns every state of its
// path for the stepper: the initial state, then the state after each
// step, with what the step did. A trace that replay refuses
// (check.ReplayTrace) is an error.
func Frames(sys *protocol.System, t *reports.Trace, timeout time.Duration) ([]Frame, error) {
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
	rep, err := check.ReplayTrace(sys, t, timeout, visit)
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
// of the live path to compare with (LivePath: liveFile, or else the
// nearest live path the trace names), where there is one. A trace that
// replay refuses is an error, as is a liveFile that cannot be used; a
// named live path that cannot be used leaves the stepper without one,
// saying why (NoLive).
func NewStepper(sys *protocol.System, file, liveFile string, timeout time.Duration) (*Stepper, error) {
	t, err := reports.ReadTraceFile(file)
	if err != nil {
		return nil, err
	}
	cfg := check.ConfigOf(t)
	d := &Stepper{Critical: t.Critical,
		Title: fmt.Sprintf("%s: %s; %s", file, reports.DescribeConfig(t.System, t.Nodes, t.Bugs, t.Params, protocol.Counts(cfg.Budget)), check.Recorded(t))}
	if d.Dead, err = Frames(sys, t, timeout); err != nil {
		return nil, check.TraceError(file, err)
	}
	lt, lf, note, err := LivePath(sys, file, t, liveFile, timeout)
	if err != nil {
		return nil, err
	}
	d.NoLive = note
	if lt == nil {
		return d, nil
	}
	if d.Live, err = Frames(sys, lt, timeout); err != nil {
		return nil, fmt.Errorf("the live path %w", check.TraceError(lf, err))
	}
	d.LiveFile = lf
	return d, nil
}
