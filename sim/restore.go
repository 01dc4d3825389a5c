package sim

import (
	"fmt"
	"slices"
)

// Restoring a timer or a message is how a report asks "what if": would
// the state after a dead path's critical step still recover, had an
// earlier step not taken this timer or message away? The states these
// functions make need not be reachable: they are questions, never steps
// of a path, and nothing made from them is reported as a path.

// WithTimer returns a copy of s in which node i's timer name is set. It
// returns s itself when the timer is set already, and an error for a
// node down.
func (w *World) WithTimer(s *State, i NodeID, name string) (*State, error) {
	if i < 0 || int(i) >= len(s.nodes) {
		return nil, fmt.Errorf("node %d: nodes are 0 to %d", i, len(s.nodes)-1)
	}
	if name == "" {
		return nil, fmt.Errorf("a timer needs a name")
	}
	if s.Down(i) {
		// A node down has no timers until its restart: World.Enabled
		// lists none of its.
		return nil, fmt.Errorf("node %d is down: it has no timers", i)
	}
	ts := s.nodes[i].timers
	j, ok := slices.BinarySearch(ts, name)
	if ok {
		return s, nil
	}
	n := w.shell(s)
	n.nodes[i].timers = slices.Insert(slices.Clone(ts), j, name)
	return n, w.reseal(n, i)
}

// WithMessage returns a copy of s with e in flight again: a datagram
// among the others, on a stream at the head of its queue. A stream's
// connection must be open, and a partition in force must not lie between
// the two ends.
func (w *World) WithMessage(s *State, e Envelope) (*State, error) {
	if e.From < 0 || int(e.From) >= len(s.nodes) || e.To < 0 || int(e.To) >= len(s.nodes) {
		return nil, fmt.Errorf("message %d->%d: nodes are 0 to %d", e.From, e.To, len(s.nodes)-1)
	}
	if s.Cut(e.From, e.To) {
		return nil, fmt.Errorf("message %d->%d: a partition lies between them", e.From, e.To)
	}
	n := w.shell(s)
	net := make([]Envelope, 0, len(s.net)+1)
	var i int
	if w.spec.Transport == Stream {
		if !s.hasConn(e.From, e.To) {
			return nil, fmt.Errorf("message %d->%d: no connection is open between them", e.From, e.To)
		}
		// before the first message of the same queue, or where it would go
		for i < len(s.net) && (s.net[i].From < e.From || (s.net[i].From == e.From && s.net[i].To < e.To)) {
			i++
		}
	} else {
		i, _ = slices.BinarySearchFunc(s.net, &e, func(x Envelope, y *Envelope) int { return cmpDatagram(&x, y) })
	}
	net = append(append(append(net, s.net[:i]...), e), s.net[i:]...)
	n.net, n.netSum, n.ownsNet = net, s.netSum+netTerm(&e), false
	return n, w.reseal(n, -1)
}

// shell is a copy of s that shares its nodes, network and the rest.
func (w *World) shell(s *State) *State {
	n := newState(len(s.nodes))
	copy(n.nodes, s.nodes)
	n.net, n.netSum, n.conns, n.calls, n.ext, n.used, n.cut, n.pending = s.net, s.netSum, s.conns, s.calls, s.ext, s.used, s.cut, s.pending
	return n
}

// reseal works out the fingerprints of n, a state changed outside a
// step, at node i (none: -1) and as a whole.
func (w *World) reseal(n *State, i NodeID) error {
	w.begin(Event{}, nil)
	if i >= 0 {
		w.touched[i] = true
	}
	return w.finish(n)
}
