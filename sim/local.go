package sim

import "fmt"

// A Local is one node's state as local model checking stores it, without
// the network: the node, its timers, and how many of the driver's calls to
// it were made. It is immutable once built.
type Local struct {
	Node     Node
	Timers   []string
	Periodic []string // the periodic ones among Timers
	Calls    int      // the node's first Calls driver calls have been made
	FP       uint64   // fingerprint of all of the above
}

// LocalOf returns node i's local state in the global state s.
func (w *World) LocalOf(s *State, i NodeID) *Local {
	calls := 0
	for c, call := range w.spec.Calls {
		if call.To == i && s.CallMade(c) {
			calls++
		}
	}
	return w.local(s, i, calls)
}

func (w *World) local(s *State, i NodeID, calls int) *Local {
	sl := &s.nodes[i]
	var periodic []string
	for _, t := range s.periodicOf(i) {
		periodic = append(periodic, t.name)
	}
	return &Local{Node: sl.node, Timers: sl.timers, Periodic: periodic, Calls: calls, FP: sl.fp ^ uint64(calls)*0x9e3779b97f4a7c15}
}

// LocalEvents appends the local events of node i in state l to buf: its
// timers, then its next driver call if any. Deliveries are not local: any
// message sent to the node may be delivered.
func (w *World) LocalEvents(i NodeID, l *Local, buf []Event) []Event {
	for _, t := range l.Timers {
		buf = append(buf, Event{Kind: Timer, Node: i, Timer: t})
	}
	n := 0
	for c, call := range w.spec.Calls {
		if call.To != i {
			continue
		}
		if n == l.Calls {
			buf = append(buf, Event{Kind: App, Node: i, Call: c})
			break
		}
		n++
	}
	return buf
}

// ApplyLocal applies ev to node i's local state l alone. For a delivery,
// msg is the message (with ev.Peer its sender and ev.Msg its
// fingerprint). What the step did, the messages it sent included, is in
// Last until the next call. Failures (resets, drops, socket errors) are
// not local events.
func (w *World) ApplyLocal(i NodeID, l *Local, ev Event, msg Message, tape []int) (*Local, error) {
	if ev.Node != i {
		return nil, fmt.Errorf("%w: %v is not an event of node %d", ErrNotEnabled, ev, i)
	}
	s := newState(w.spec.Nodes)
	s.nodes[i] = slot{node: l.Node, timers: l.Timers}
	for _, name := range l.Periodic {
		s.setPeriodic(i, name, true)
	}
	calls := l.Calls
	switch ev.Kind {
	case Deliver:
		s.net = []Envelope{{From: ev.Peer, To: i, Msg: msg, FP: ev.Msg}}
		s.netSum = netSumOf(s)
		if w.spec.Transport == Stream {
			a, b := min(i, ev.Peer), max(i, ev.Peer)
			s.conns = []conn{{a, b}}
		}
	case App:
		// Mark the node's first Calls calls made, so ev is its next one.
		n := 0
		for c, call := range w.spec.Calls {
			if call.To == i && n < calls {
				s.markCall(c)
				n++
			}
		}
		calls++
	case Timer:
	default:
		return nil, fmt.Errorf("%w: %v is not a local event", ErrNotEnabled, ev)
	}
	// Monitors read the global state, which a local step does not have
	// (the other nodes are nil): they are for liveness, which local
	// model checking does not check.
	w.localStep = true
	n, err := w.Apply(s, ev, tape)
	w.localStep = false
	if err != nil {
		return nil, err
	}
	// Sends to other nodes went into n.net; Last().Sent has them.
	return w.local(n, i, calls), nil
}
