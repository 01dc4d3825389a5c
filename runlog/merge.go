package runlog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A Merged run is the nodes' logs as one path of the simulator.
type Merged struct {
	System string
	Config protocol.Config // with the budget the path needs (its resets)
	Init   []int           // the choices of the first Init calls, node 0's first
	InitFP []string        // each node's fingerprint after its first Init ("" if it has no log)
	Path   sim.Path
	FP     []string // the fingerprint its node logged after each step
	// Others, by step, are the fingerprints the other nodes a step ran
	// a handler on logged (the other end of a break, the peers of a
	// restart on streams); nil for most.
	Others [][]NodeFP
	// Stop, by step, says why the step cannot be merged ("" for most):
	// a broken connection or a restart on streams that no nemesis made,
	// a call made from Go that is not a driver call.
	// Replay leaves such a step out, and with it the rest of its node's
	// log and whatever depended on it.
	Stop []string
}

// A NodeFP is a node's fingerprint after a step.
type NodeFP struct {
	Node int
	FP   string
}

// Merge merges the nodes' run logs (any order, one per node) into one
// path: entries in the order of their clocks (then of the nodes' ids),
// which puts every delivery after the handler that sent the message.
func Merge(logs []*host.RunLogFile) (*Merged, error) {
	if len(logs) == 0 {
		return nil, errors.New("no run logs to merge")
	}
	if err := verifyRun(logs); err != nil {
		return nil, err
	}
	h0 := logs[0].Header
	n := h0.Config.Nodes
	m := &Merged{System: h0.System, Config: h0.Config, InitFP: make([]string, n)}
	seen := map[int]bool{}
	var all []host.LogEntry
	for _, l := range logs {
		h := l.Header
		switch {
		case h.System != h0.System || h.Config.Nodes != n:
			return nil, fmt.Errorf("%s is a log of %s with %d nodes, %s one of %s with %d", l.Name, h.System, h.Config.Nodes, logs[0].Name, h0.System, n)
		case h.Node < 0 || h.Node >= n:
			return nil, fmt.Errorf("%s is the log of node %d, which is no node of %d", l.Name, h.Node, n)
		case seen[h.Node]:
			return nil, fmt.Errorf("two logs of node %d", h.Node)
		}
		seen[h.Node] = true
		for _, e := range l.Entries {
			if e.Node != h.Node {
				return nil, fmt.Errorf("%s, node %d's log, has an entry of node %d", l.Name, h.Node, e.Node)
			}
		}
		all = append(all, l.Entries...)
	}
	slices.SortStableFunc(all, func(a, b host.LogEntry) int {
		if a.Clock != b.Clock {
			if a.Clock < b.Clock {
				return -1
			}
			return 1
		}
		return a.Node - b.Node
	})
	inits := make([][]int, n)
	resets, drops, dups, errs := 0, 0, 0, 0
	// The nemesis's breaks: the two ends' socket-error entries, at one
	// clock, are the simulator's one SocketError step.
	type end struct {
		node, peer int
		clock      uint64
	}
	breaks := map[end]host.LogEntry{}
	// The nemesis's restarts on streams: the peers' reset-error entries
	// at the clock of the restarted node's Init, which the simulator's
	// Reset runs in one step with it, the peers' Error handlers first,
	// in the order of their ids (its connections' order).
	type reset struct {
		node  int
		clock uint64
	}
	resetErrs := map[reset][]host.LogEntry{}
	for _, e := range all {
		switch e.Kind {
		case "socket-error":
			breaks[end{e.Node, e.Peer, e.Clock}] = e
		case "reset-error":
			k := reset{e.Peer, e.Clock}
			resetErrs[k] = append(resetErrs[k], e)
		}
	}
	jm := collectJoint(all)
	partitions := 0
	restarted := map[reset]bool{}
	for _, e := range all {
		if e.Kind == "init" && e.Boot > 0 {
			restarted[reset{e.Node, e.Clock}] = true
		}
	}
	for _, e := range all {
		if e.Kind == "init" && e.Boot == 0 {
			inits[e.Node], m.InitFP[e.Node] = e.Choices, e.FP
			continue
		}
		ev := sim.Event{Node: sim.NodeID(e.Node)}
		stop := ""
		var others []NodeFP
		// level0 are the handlers of the step before those for sends
		// refused at a partition (partition.go), in the simulator's
		// order; joined, when it must be, with those for the refusals.
		level0, joined := []host.LogEntry{e}, false
		switch e.Kind {
		case "init":
			errs := resetErrs[reset{e.Node, e.Clock}]
			if e.Fresh {
				// Started afresh: without its durable fields, which the
				// simulator's reset keeps.
				stop = fmt.Sprintf("node %d's fresh start (clock %d), without the durable fields the simulator's reset keeps", e.Node, e.Clock)
				break
			}
			if h0.Stream && !e.Reset {
				// The simulator's reset breaks the node's connections
				// and tells its peers in the same step; a node started
				// again without holding its peers (back.go: it did not
				// know it was a restart) tells them nothing.
				stop = fmt.Sprintf("node %d's restart (clock %d) on streams, not by the nemesis", e.Node, e.Clock)
				break
			}
			ev.Kind = sim.Reset
			resets++
			level0 = append(slices.Clone(errs), e)
			var choices []int
			for _, pe := range errs { // in the order of the peers' ids
				choices = append(choices, pe.Choices...)
				others = append(others, NodeFP{pe.Node, pe.FP})
			}
			e.Choices = append(choices, e.Choices...)
		case "reset-error":
			if !restarted[reset{e.Peer, e.Clock}] {
				stop = fmt.Sprintf("node %d's Error for node %d's restart (clock %d), whose Init is not in its log", e.Node, e.Peer, e.Clock)
				break
			}
			continue // merged with the restarted node's Init
		case "deliver":
			fp, err := strconv.ParseUint(e.Msg, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("node %d, clock %d: message fingerprint %q", e.Node, e.Clock, e.Msg)
			}
			ev.Kind, ev.Peer, ev.Msg = sim.Deliver, sim.NodeID(e.Peer), fp
		case "timer":
			ev.Kind, ev.Timer = sim.Timer, e.Timer
		case "socket-error":
			other, ok := breaks[end{e.Peer, e.Node, e.Clock}]
			if !ok {
				stop = fmt.Sprintf("node %d's broken connection to node %d (clock %d), whose other end logged none", e.Node, e.Peer, e.Clock)
				break
			}
			if e.Node > e.Peer {
				continue // merged at the other end's entry
			}
			// The simulator runs Node's Error handler, then Peer's.
			ev.Kind, ev.Peer = sim.SocketError, sim.NodeID(e.Peer)
			level0 = []host.LogEntry{e, other}
			e.Choices = append(slices.Clone(e.Choices), other.Choices...)
			others = []NodeFP{{other.Node, other.FP}}
			errs++
		case "drop", "duplicate":
			// The sender logged it, after the step that sent the
			// datagram: in the simulator it happens to the message in
			// flight from it to its receiver.
			fp, err := strconv.ParseUint(e.Msg, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("node %d, clock %d: message fingerprint %q", e.Node, e.Clock, e.Msg)
			}
			ev = sim.Event{Kind: sim.Drop, Node: sim.NodeID(e.Peer), Peer: sim.NodeID(e.Node), Msg: fp}
			drops++
			if e.Kind == "duplicate" {
				ev.Kind = sim.Duplicate
				drops--
				dups++
			}
			m.Path = append(m.Path, sim.Step{Event: ev})
			m.FP = append(m.FP, "")
			m.Stop = append(m.Stop, "")
			m.Others = append(m.Others, nil)
			continue
		case "app":
			if e.Call < 0 {
				stop = fmt.Sprintf("node %d's call made from Go (clock %d), not its next driver call", e.Node, e.Clock)
				break
			}
			ev.Kind, ev.Call = sim.App, e.Call
		case "partition":
			ev, level0, stop = jm.partition(e)
			joined = stop == ""
			partitions++
		case "heal":
			ev = sim.Event{Kind: sim.Heal}
		case "partition-error", "refuse-error":
			if stop = jm.stray(e); stop == "" {
				continue // merged with its step
			}
		case "error":
			// Told after Options.SuspectFor: the peer did not come back
			// in time (or the connection broke while both ends lived
			// on). The simulator breaks a connection, or resets a node,
			// in one step that tells both ends; this told one end alone.
			stop = fmt.Sprintf("node %d's broken connection to node %d (clock %d)", e.Node, e.Peer, e.Clock)
		default:
			return nil, fmt.Errorf("node %d, clock %d: unknown kind %q", e.Node, e.Clock, e.Kind)
		}
		if stop == "" && (joined || jm.refusedIn(level0)) {
			e.Choices, e.FP, others, stop = jm.join(ev, level0)
		}
		m.Path = append(m.Path, sim.Step{Event: ev, Choices: e.Choices})
		m.FP = append(m.FP, e.FP)
		m.Stop = append(m.Stop, stop)
		m.Others = append(m.Others, others)
	}
	for _, c := range inits {
		m.Init = append(m.Init, c...)
	}
	b := protocol.Counts(m.Config.Budget)
	b.Resets = max(b.Resets, resets)
	b.Drops = max(b.Drops, drops)
	b.Dups = max(b.Dups, dups)
	b.Errors = max(b.Errors, errs)
	b.Partitions = max(b.Partitions, partitions)
	m.Config.Budget = protocol.Explicit(b)
	return m, nil
}

// The merge of a partition's entries (Merge): a partition entry and the
// partition-error entries at its clock are one Partition step, and a
// node's refuse-error entries at a clock are part of the step it ran a
// handler in at that clock.

type nodeClock struct {
	node  int
	clock uint64
}

// jointLog is what Merge needs to know of the run's joint steps before
// it meets them.
type jointLog struct {
	parts    map[uint64]bool               // clocks with a partition entry
	partErrs map[uint64][]host.LogEntry    // partition-error entries, by clock
	refusals map[nodeClock][]host.LogEntry // refuse-error entries, in each node's order
	mains    map[nodeClock]bool            // a handler other than a refusal's
}

// collectJoint reads the entries of all, in the merged order.
func collectJoint(all []host.LogEntry) *jointLog {
	j := &jointLog{parts: map[uint64]bool{}, partErrs: map[uint64][]host.LogEntry{},
		refusals: map[nodeClock][]host.LogEntry{}, mains: map[nodeClock]bool{}}
	for _, e := range all {
		k := nodeClock{e.Node, e.Clock}
		switch e.Kind {
		case "partition":
			j.parts[e.Clock] = true
		case "refuse-error":
			j.refusals[k] = append(j.refusals[k], e)
		case "partition-error":
			j.partErrs[e.Clock] = append(j.partErrs[e.Clock], e)
			j.mains[k] = true
		case "drop", "duplicate", "heal":
		default:
			j.mains[k] = true
		}
	}
	return j
}

// stray says why a partition-error or refuse-error entry has no step to
// be part of; "" when it has one.
func (j *jointLog) stray(e host.LogEntry) string {
	switch {
	case e.Kind == "partition-error" && !j.parts[e.Clock]:
		return fmt.Sprintf("node %d's Error for node %d at a partition (clock %d), which no entry records", e.Node, e.Peer, e.Clock)
	case e.Kind == "refuse-error" && !j.mains[nodeClock{e.Node, e.Clock}]:
		return fmt.Sprintf("node %d's Error for a send to node %d across a partition (clock %d), after no handler of its", e.Node, e.Peer, e.Clock)
	}
	return ""
}

// partition returns the Partition step of partition entry e and its
// Error handlers in the simulator's order: for each connection broken,
// a<b in order, a's, then b's.
func (j *jointLog) partition(e host.LogEntry) (sim.Event, []host.LogEntry, string) {
	var side sim.NodeSet
	for _, id := range e.Side {
		if id >= 0 && id < 64 {
			side |= 1 << uint(id)
		}
	}
	ev := sim.PartitionEvent(side)
	if side == 0 {
		return ev, nil, fmt.Sprintf("node %d's partition (clock %d) with no side", e.Node, e.Clock)
	}
	errs := slices.Clone(j.partErrs[e.Clock])
	key := func(x host.LogEntry) [3]int {
		a, b := min(x.Node, x.Peer), max(x.Node, x.Peer)
		first := 1
		if x.Node == a {
			first = 0
		}
		return [3]int{a, b, first}
	}
	slices.SortStableFunc(errs, func(x, y host.LogEntry) int {
		kx, ky := key(x), key(y)
		return slices.Compare(kx[:], ky[:])
	})
	in := func(id int) bool { return id >= 0 && id < 64 && side&(1<<uint(id)) != 0 }
	for i, x := range errs {
		// In pairs: a's Error for b, then b's for a, a<b across.
		y := x
		if i%2 == 0 && i+1 < len(errs) {
			y = errs[i+1]
		} else if i%2 == 1 {
			y = errs[i-1]
		}
		if in(x.Node) == in(x.Peer) || y.Node != x.Peer || y.Peer != x.Node {
			return ev, nil, fmt.Sprintf("node %d's Error for node %d at the partition of clock %d: not a connection across, or one end's Error missing", x.Node, x.Peer, e.Clock)
		}
	}
	return ev, errs, ""
}

// refusedIn says whether a node of the step's handlers told a refusal
// at the step's clock.
func (j *jointLog) refusedIn(level0 []host.LogEntry) bool {
	for _, e := range level0 {
		if len(j.refusals[nodeClock{e.Node, e.Clock}]) > 0 {
			return true
		}
	}
	return false
}

// join returns a step's choices, in the order the simulator makes them,
// the fingerprint its node logged last in it, and the other nodes':
// first the handlers level0, then the Error for each send refused at
// the partition, in the order of the sends (the simulator's refuse: a
// queue that each handler adds its refusals to as it runs). A node's
// refusal names the handler of its part of the step that sent (Parent):
// its handlers in level0 first, then its refusals, counted in order.
func (j *jointLog) join(ev sim.Event, level0 []host.LogEntry) (choices []int, fp string, others []NodeFP, stop string) {
	type handler struct {
		e   host.LogEntry
		idx int
	}
	var queue []handler
	next := map[int]int{}
	for _, e := range level0 {
		queue = append(queue, handler{e, next[e.Node]})
		next[e.Node]++
	}
	total := len(queue)
	base := map[int]int{}
	var rs = map[int][]host.LogEntry{}
	for _, e := range level0 {
		if _, ok := rs[e.Node]; !ok {
			rs[e.Node] = j.refusals[nodeClock{e.Node, e.Clock}]
			base[e.Node] = next[e.Node]
			total += len(rs[e.Node])
		}
	}
	for i := 0; i < len(queue); i++ {
		h := queue[i]
		for k, r := range rs[h.e.Node] {
			if r.Parent == h.idx {
				queue = append(queue, handler{r, base[h.e.Node] + k})
			}
		}
	}
	if len(queue) != total {
		return nil, "", nil, fmt.Sprintf("node %d's Errors for sends across a partition (clock %d) name handlers its step does not have", ev.Node, level0[0].Clock)
	}
	last := map[int]string{}
	var order []int
	for _, h := range queue {
		choices = append(choices, h.e.Choices...)
		if _, ok := last[h.e.Node]; !ok {
			order = append(order, h.e.Node)
		}
		last[h.e.Node] = h.e.FP
	}
	for _, id := range order {
		if id == int(ev.Node) {
			fp = last[id]
		} else {
			others = append(others, NodeFP{id, last[id]})
		}
	}
	return choices, fp, others, ""
}
