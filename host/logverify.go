package host

import (
	"fmt"
)

// VerifyRun checks that run logs, each read whole (its chain checked by
// ReadRunLogFile), are of one run, before Merge merges them: one system,
// configuration (nodes, bugs, parameters) and executable, and no log cut
// short: a log that ends before the entry of a handler whose message a
// peer delivered (the frame carried the entry's index: chain.go) lost
// its tail.
func VerifyRun(logs []*RunLogFile) error {
	h0 := logs[0].Header
	byNode := map[int]*RunLogFile{}
	for _, l := range logs {
		h := l.Header
		other := *h
		other.Node = h0.Node
		if why := headerDiffers(&other, h0); why != "" {
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
