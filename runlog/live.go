package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
)

// Live checks: a snapshot of a running cluster, then a bounded check
// from it (`livecheck cluster --check-every D`), which reports a
// violation the real cluster can reach from where it is now. The safety
// properties are checked on the snapshot itself, and on every state of
// the path that reaches it, as BuildSnapshot replays it.

// LiveCheckOptions say how to check from a snapshot.
type LiveCheckOptions struct {
	// Config is the cluster's: its nodes, bugs and parameters. Its
	// failure budget (zero: the bugs' needs, then the system's) is what
	// the check may add to the cluster's state.
	Config protocol.Config
	// Time boxes the check (0: 10 s): a check cut short is
	// inconclusive unless it found a violation.
	Time time.Duration
	// Depth bounds its exhaustive search (0: the system's).
	Depth int
	// Out is the directory of the snapshot files and traces written
	// (required).
	Out string
	// Wait is how long the nodes have to record the snapshot (0: 5 s).
	Wait time.Duration
}

// A LiveCheck is what a live check found.
type LiveCheck struct {
	Snapshot *Snapshot
	File     string // the snapshot's file: a prefix when it is live
	// Violation is a safety property violated on the way to the
	// snapshot or in it (then no check runs), with its message.
	Violation, Message string
	// Result is the check's, nil when none ran (a violation in the
	// snapshot, or a snapshot that is not live, which check --from
	// does not take).
	Result *check.Result
	// Trace is the file of the violation the check found, and LiveTrace
	// that of its nearest live path (a liveness violation).
	Trace, LiveTrace string
}

// CheckLive takes a snapshot of the running cluster whose run logs are
// in dir (TakeSnapshot) and checks from it.
func CheckLive(sys *protocol.System, dir string, key []byte, o LiveCheckOptions) (*LiveCheck, error) {
	if o.Out == "" {
		return nil, fmt.Errorf("a live check needs a directory for its files")
	}
	if o.Time <= 0 {
		o.Time = 10 * time.Second
	}
	if o.Wait <= 0 {
		o.Wait = 5 * time.Second
	}
	snap, err := TakeSnapshot(sys, dir, key, o.Wait)
	if err != nil {
		return nil, err
	}
	rr := snap.Replay
	lc := &LiveCheck{Snapshot: snap, Violation: rr.Violation, Message: rr.Message}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	lc.File = filepath.Join(o.Out, reports.TraceName(sys.Name, fmt.Sprintf("snapshot-%d", snap.Epoch), rr.Trace.Init, rr.Path))
	if err := reports.WriteFileAtomic(lc.File, rr.Trace.Write); err != nil {
		return nil, err
	}
	if rr.Violation != "" || !rr.Live {
		return lc, nil
	}
	cfg := protocol.Config{Nodes: o.Config.Nodes, Bugs: o.Config.Bugs, Params: o.Config.Params, Budget: o.Config.Budget}
	cfg, init, path, err := check.PrefixStart(sys, lc.File, cfg, 0)
	if err != nil {
		return nil, fmt.Errorf("the snapshot is no prefix to check from: %v", err)
	}
	res, err := check.Check(sys, check.Options{Config: cfg, Prefix: path, PrefixInit: init, Time: o.Time, Depth: o.Depth})
	if err != nil {
		return nil, err
	}
	lc.Result = res
	switch res.Verdict {
	case check.SafetyViolation, check.LivenessViolation, check.PropertyError:
		if lc.Trace, lc.LiveTrace, err = res.WriteTraces(o.Out); err != nil {
			return lc, err
		}
	}
	return lc, nil
}
