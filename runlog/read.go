package runlog

import (
	"fmt"
	"path/filepath"

	"github.com/livecheck/livecheck/host"
)

// Reading a run's logs, after the run: the node-side reader of one log
// (its chain checked) is host's, ReadRunLogFile, which a node started
// again reads its own log with too.

// ReadDir reads the run logs node-*.log in dir, each whole, its chain
// checked (host.ReadRunLogFile).
func ReadDir(dir string) ([]*host.RunLogFile, error) {
	names, _ := filepath.Glob(filepath.Join(dir, "node-*.log"))
	if len(names) == 0 {
		return nil, fmt.Errorf("no run logs (node-*.log) in %s", dir)
	}
	var out []*host.RunLogFile
	for _, name := range names {
		l, err := host.ReadRunLogFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// lastEpoch is the last snapshot any of the logs recorded (0: none).
func lastEpoch(logs []*host.RunLogFile) uint64 {
	var e uint64
	for _, l := range logs {
		for _, m := range l.Snaps {
			e = max(e, m.Epoch)
		}
	}
	return e
}

// verifyRun checks that run logs, each read whole (its chain checked by
// host.ReadRunLogFile), are of one run, before Merge merges them: one system,
// configuration (nodes, bugs, parameters) and executable, and no log cut
// short: a log that ends before the entry of a handler whose message a
// peer delivered (the frame carried the entry's index: host's chain.go) lost
// its tail.
func verifyRun(logs []*host.RunLogFile) error {
	h0 := logs[0].Header
	byNode := map[int]*host.RunLogFile{}
	for _, l := range logs {
		h := l.Header
		other := *h
		other.Node = h0.Node
		if why := other.Differs(h0); why != "" {
			return fmt.Errorf("%s and %s are not logs of one run: %s %s; trace merges the logs of one run, written by one executable", logs[0].Name, l.Name, l.Name, why)
		}
		byNode[h.Node] = l
	}
	for _, l := range logs {
		for _, e := range l.Entries {
			if e.Kind != "deliver" || e.Sent <= 0 {
				continue
			}
			p, ok := byNode[e.Peer]
			if !ok || e.Sent <= p.Last {
				continue
			}
			return fmt.Errorf("node %d's run log %s is cut short: it ends at entry %d, but node %d's run log %s delivers, in its entry %d, a message node %d sent in its entry %d",
				e.Peer, p.Name, p.Last, e.Node, l.Name, e.Line, e.Peer, e.Sent)
		}
	}
	return nil
}
