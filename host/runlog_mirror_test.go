package host

import (
	"fmt"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// What happens to a run afterwards (merged logs replayed, snapshots
// built) is package runlog's, which imports host: host's own tests reach
// it through these hooks, which runlog_hooks_ext_test.go (package
// host_test, which may import runlog) sets. The types mirror runlog's,
// with what the tests read of them.

// A Merged mirrors runlog.Merged; Run is runlog's own, for Replay.
type Merged struct {
	Config protocol.Config
	Path   sim.Path
	FP     []string
	Others [][]NodeFP
	Stop   []string
	Run    any
}

// A NodeFP mirrors runlog.NodeFP.
type NodeFP struct {
	Node int
	FP   string
}

// A RunReplay mirrors runlog.RunReplay.
type RunReplay struct {
	Path          sim.Path
	Divergence    *Divergence
	LeftOut       []string
	LeftOutSteps  int
	Violation     string
	ViolationStep int
	Message       string
	Live          bool
	Trace         *reports.Trace
	Final         *sim.State
	Histories     []fmt.Stringer
}

// A Divergence mirrors runlog.Divergence.
type Divergence struct {
	Step  int
	Event string
	Err   error
}

func (d *Divergence) Error() string { return d.Err.Error() }

// A Snapshot mirrors runlog.Snapshot.
type Snapshot struct {
	Epoch    uint64
	Nodes    []SnapNode
	InFlight []SnapMessage
	Replay   *RunReplay
	Steps    int
	down     []sim.NodeID
}

// SnapNode and SnapMessage mirror runlog's.
type (
	SnapNode struct {
		ID sim.NodeID
		FP string
	}
	SnapMessage struct {
		From, To sim.NodeID
		Msg      string
		Recorded bool
	}
)

func (s *Snapshot) Down() []sim.NodeID { return s.down }

// The hooks: runlog.Merge, runlog.Replay, runlog.BuildSnapshot, runlog.SnapshotCluster.
var (
	MergeHook         func(logs []*RunLogFile) (*Merged, error)
	ReplayHook        func(m *Merged, sys *protocol.System) (*RunReplay, error)
	BuildSnapshotHook func(sys *protocol.System, logs []*RunLogFile, epoch uint64) (*Snapshot, error)
	SnapshotHook      func(c *Cluster, timeout time.Duration) (*Snapshot, error)
)

// Merge merges the nodes' run logs (runlog.Merge).
func Merge(logs []*RunLogFile) (*Merged, error) { return MergeHook(logs) }

// Replay replays m in sys (runlog.Replay).
func (m *Merged) Replay(sys *protocol.System) (*RunReplay, error) { return ReplayHook(m, sys) }

// Snapshot takes a snapshot of c (runlog.SnapshotCluster).
func (c *Cluster) Snapshot(timeout time.Duration) (*Snapshot, error) { return SnapshotHook(c, timeout) }

// BuildSnapshot builds snapshot epoch from logs (runlog.BuildSnapshot).
func BuildSnapshot(sys *protocol.System, logs []*RunLogFile, epoch uint64) (*Snapshot, error) {
	return BuildSnapshotHook(sys, logs, epoch)
}

// ReadRunLogsHook is runlog.ReadDir.
var ReadRunLogsHook func(dir string) ([]*RunLogFile, error)

// ReadRunLogs reads the run logs in dir (runlog.ReadDir).
func ReadRunLogs(dir string) ([]*RunLogFile, error) { return ReadRunLogsHook(dir) }
