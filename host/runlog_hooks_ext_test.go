package host_test

import (
	"fmt"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
)

// The hooks of runlog_mirror_test.go: host's tests replay runs and build
// snapshots with runlog, as the command does.
func init() {
	host.ReadRunLogsHook = runlog.ReadDir
	host.MergeHook = func(logs []*host.RunLogFile) (*host.Merged, error) {
		m, err := runlog.Merge(logs)
		if m == nil {
			return nil, err
		}
		hm := &host.Merged{Config: m.Config, Path: m.Path, FP: m.FP, Stop: m.Stop, Run: m}
		for _, o := range m.Others {
			var fps []host.NodeFP
			for _, x := range o {
				fps = append(fps, host.NodeFP{Node: x.Node, FP: x.FP})
			}
			hm.Others = append(hm.Others, fps)
		}
		return hm, err
	}
	host.ReplayHook = func(m *host.Merged, sys *protocol.System) (*host.RunReplay, error) {
		rm := m.Run.(*runlog.Merged)
		// A test may have changed the mirror's path or config.
		rm.Config, rm.Path, rm.FP, rm.Stop = m.Config, m.Path, m.FP, m.Stop
		rr, err := runlog.Replay(rm, sys)
		return mirrorReplay(rr), err
	}
	host.BuildSnapshotHook = func(sys *protocol.System, logs []*host.RunLogFile, epoch uint64) (*host.Snapshot, error) {
		s, err := runlog.BuildSnapshot(sys, logs, epoch)
		return mirrorSnapshot(s), err
	}
	host.SnapshotHook = func(c *host.Cluster, timeout time.Duration) (*host.Snapshot, error) {
		s, err := runlog.SnapshotCluster(c, timeout)
		return mirrorSnapshot(s), err
	}
}

func mirrorReplay(rr *runlog.RunReplay) *host.RunReplay {
	if rr == nil {
		return nil
	}
	r := &host.RunReplay{Path: rr.Path, LeftOut: rr.LeftOut, LeftOutSteps: rr.LeftOutSteps, Violation: rr.Violation, ViolationStep: rr.ViolationStep,
		Message: rr.Message, Live: rr.Live, Trace: rr.Trace, Final: rr.Final}
	if d := rr.Divergence; d != nil {
		r.Divergence = &host.Divergence{Step: d.Step, Event: d.Event, Err: d}
	}
	for _, h := range rr.Histories {
		r.Histories = append(r.Histories, h)
	}
	return r
}

func mirrorSnapshot(s *runlog.Snapshot) *host.Snapshot {
	if s == nil {
		return nil
	}
	m := &host.Snapshot{Epoch: s.Epoch, Replay: mirrorReplay(s.Replay), Steps: s.Steps}
	for _, n := range s.Nodes {
		m.Nodes = append(m.Nodes, host.SnapNode{ID: n.ID, FP: n.FP})
	}
	for _, x := range s.InFlight {
		m.InFlight = append(m.InFlight, host.SnapMessage{From: x.From, To: x.To, Msg: x.Msg, Recorded: x.Recorded})
	}
	host.SetDown(m, s.Down())
	return m
}

var _ fmt.Stringer = runlog.RunHistory{}
