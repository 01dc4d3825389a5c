package sim

import (
	"fmt"
	"slices"
	"strings"
)

// An Envelope is a message in flight.
type Envelope struct {
	From, To NodeID
	Msg      Message
	FP       uint64 // fingerprint of Msg
	bfp      uint64 // with symmetry: fingerprint of Msg with group members anonymous
}

type slot struct {
	node   Node
	timers []string // sorted; shared between states until a step changes it
	fp     uint64   // fingerprint of node and timers
	blind  uint64   // with symmetry: the same with group members anonymous
}

type conn struct{ a, b NodeID } // a <= b

// A State is a global state: every node's state and timers, the messages in
// flight, the open connections, the driver's progress and the failures used.
//
// States are immutable once built: a step copies only what it changes, so
// states share unchanged node states. Read node states through [State.Node]
// and never modify them.
type State struct {
	nodes []slot
	net   []Envelope // datagram: sorted by (To, From, FP); stream: by (From, To), each queue in order
	conns []conn     // stream: open connections, sorted
	calls uint64     // bit i set: driver call i was made
	used  Budget
	fp    uint64
	key   uint64 // fp, or with symmetry the fingerprint of a renaming
	// inline holds the node slots of small worlds, so that a step makes
	// one allocation for the state and its nodes, not two.
	inline [inlineNodes]slot
}

const inlineNodes = 8

// newState returns a state with room for n node slots.
func newState(n int) *State {
	s := &State{}
	if n <= inlineNodes {
		s.nodes = s.inline[:n:n]
	} else {
		s.nodes = make([]slot, n)
	}
	return s
}

// N is the number of nodes.
func (s *State) N() int { return len(s.nodes) }

// Node returns node i's state. It must be treated as read-only.
func (s *State) Node(i NodeID) Node { return s.nodes[i].node }

// Timers returns node i's scheduled timers, sorted. Read-only.
func (s *State) Timers(i NodeID) []string { return s.nodes[i].timers }

// HasTimer says whether node i has the named timer scheduled.
func (s *State) HasTimer(i NodeID, name string) bool {
	_, ok := slices.BinarySearch(s.nodes[i].timers, name)
	return ok
}

// InFlight returns the messages in flight. Read-only.
func (s *State) InFlight() []Envelope { return s.net }

// Used returns the failures spent so far on the path to this state.
func (s *State) Used() Budget { return s.used }

// CallMade says whether driver call i has been made.
func (s *State) CallMade(i int) bool { return s.calls&(1<<uint(i)) != 0 }

// Fingerprint is the canonical 64-bit fingerprint of the global state. It
// does not depend on map iteration order, nor on the order in which equal
// messages were sent.
func (s *State) Fingerprint() uint64 { return s.fp }

// Key identifies s up to the renaming of symmetric nodes (see
// [Spec.Symmetry]): states with the same key are renamings of each other.
// Without symmetry it is the fingerprint.
func (s *State) Key() uint64 { return s.key }

// NodeFingerprint is the fingerprint of node i's state and timers.
func (s *State) NodeFingerprint(i NodeID) uint64 { return s.nodes[i].fp }

// Dump returns a readable multi-line form of the state.
func (s *State) Dump() string {
	var b strings.Builder
	for i := range s.nodes {
		fmt.Fprintf(&b, "node %d: %s", i, DumpNode(s, NodeID(i)))
		b.WriteByte('\n')
	}
	if len(s.net) > 0 {
		b.WriteString("in flight:")
		for _, e := range s.net {
			fmt.Fprintf(&b, " %d->%d %s;", e.From, e.To, Dump(e.Msg))
		}
		b.WriteByte('\n')
	}
	if len(s.conns) > 0 {
		b.WriteString("connections:")
		for _, c := range s.conns {
			fmt.Fprintf(&b, " %d<->%d", c.a, c.b)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// DumpNode returns node i's state and its timers on one line.
func DumpNode(s *State, i NodeID) string {
	d := Dump(s.nodes[i].node)
	if t := s.nodes[i].timers; len(t) > 0 {
		d += " timers=" + strings.Join(t, ",")
	}
	return d
}

// NewState builds a system state from node states alone (no network, no
// timers). Local model checking uses it to evaluate properties on
// combinations of node states.
func NewState(nodes []Node) *State {
	s := newState(len(nodes))
	for i, n := range nodes {
		s.nodes[i].node = n
	}
	return s
}

func (s *State) hasConn(a, b NodeID) bool {
	if a > b {
		a, b = b, a
	}
	_, ok := slices.BinarySearchFunc(s.conns, conn{a, b}, cmpConn)
	return ok
}

func cmpConn(x, y conn) int {
	if x.a != y.a {
		return int(x.a - y.a)
	}
	return int(x.b - y.b)
}

func cmpDatagram(x, y *Envelope) int {
	switch {
	case x.To != y.To:
		return int(x.To - y.To)
	case x.From != y.From:
		return int(x.From - y.From)
	case x.FP < y.FP:
		return -1
	case x.FP > y.FP:
		return 1
	}
	return 0
}
