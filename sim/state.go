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

// stateExt holds the parts of a state that few systems use: driver calls
// past the 64th, periodic timers and nodes down. A state with neither has none (nil),
// so that they cost a State one word, and a step nothing. It is shared
// between states: a step that changes it makes a new one.
type stateExt struct {
	more     []uint64 // calls from 64 on, 64 a word
	periodic []ptimer // sorted by node, then name; each is among its node's timers
	// down is the nodes whose process has crashed (Crash) and not yet
	// restarted (Reset). A node's bit is hashed with its slot
	// (hashSlot), so that it is in the fingerprint, the key and the
	// renamings. Here, not in State, so that states of worlds without
	// crashes are no larger.
	down NodeSet
}

type ptimer struct {
	node NodeID
	name string
}

func cmpPTimer(a, b ptimer) int {
	if a.node != b.node {
		return int(a.node - b.node)
	}
	return strings.Compare(a.name, b.name)
}

// editExt gives s an extension of its own to change.
func (s *State) editExt() *stateExt {
	e := &stateExt{}
	if s.ext != nil {
		e.more = slices.Clone(s.ext.more)
		e.periodic = slices.Clone(s.ext.periodic)
		e.down = s.ext.down
	}
	s.ext = e
	return e
}

// tidyExt drops an extension that holds nothing.
func (s *State) tidyExt() {
	if s.ext != nil && len(s.ext.more) == 0 && len(s.ext.periodic) == 0 && s.ext.down == 0 {
		s.ext = nil
	}
}

// downs is the set of the nodes down.
func (s *State) downs() NodeSet {
	if s.ext == nil {
		return 0
	}
	return s.ext.down
}

// setDown marks node i down (on) or up.
func (s *State) setDown(i NodeID, on bool) {
	if s.downs().Has(i) == on {
		return
	}
	e := s.editExt()
	if on {
		e.down = e.down.Add(i)
	} else {
		e.down = e.down.Remove(i)
	}
	s.tidyExt()
}

// periodicOf returns node i's periodic timers, sorted by name. Read-only.
func (s *State) periodicOf(i NodeID) []ptimer {
	if s.ext == nil {
		return nil
	}
	p := s.ext.periodic
	lo, _ := slices.BinarySearchFunc(p, ptimer{node: i}, cmpPTimer)
	hi := lo
	for hi < len(p) && p[hi].node == i {
		hi++
	}
	return p[lo:hi]
}

// setPeriodic marks node i's timer name periodic (on) or not.
func (s *State) setPeriodic(i NodeID, name string, on bool) {
	if s.Periodic(i, name) == on {
		return
	}
	e := s.editExt()
	t := ptimer{i, name}
	j, _ := slices.BinarySearchFunc(e.periodic, t, cmpPTimer)
	if on {
		e.periodic = slices.Insert(e.periodic, j, t)
	} else {
		e.periodic = slices.Delete(e.periodic, j, j+1)
	}
	s.tidyExt()
}

// clearPeriodic forgets node i's periodic timers (a reset).
func (s *State) clearPeriodic(i NodeID) {
	if len(s.periodicOf(i)) == 0 {
		return
	}
	e := s.editExt()
	e.periodic = slices.DeleteFunc(e.periodic, func(t ptimer) bool { return t.node == i })
	s.tidyExt()
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
	// netSum is the sum of netTerm over net, kept up to date by every
	// change to the network, so that the fingerprint of a state costs
	// nothing per datagram in flight. Streams, whose queues have an
	// order, hash theirs whole (World.netHash).
	netSum uint64
	conns  []conn    // stream: open connections, sorted
	calls  uint64    // bit i set: driver call i was made (calls 0 to 63)
	ext    *stateExt // nil unless calls past 64 were made or timers are periodic
	used   Budget
	// cut is the side of the partition in force (the nodes cut off from
	// the others, never the highest node); 0: none.
	cut NodeSet
	fp  uint64
	key uint64 // fp, or with symmetry the fingerprint of a renaming
	// keyless says key is not worked out yet (World.NoKeys), fpless
	// that fp is not either (World.NoFingerprints).
	keyless, fpless bool
	// ownsNet says net was made for this state by a step (not shared
	// with the state it was made from), so that a discarded state's
	// network can be reused.
	ownsNet bool
	// pending holds the monitors' bits (Spec.Monitors), bit i monitor
	// i's. It sits in the padding after the two bools, so that it costs
	// a State no bytes.
	pending uint32
	// fresh has bit i set when node i's object was made for this state
	// by Apply (copied or built by a reset) and is shared with no other
	// state, so that Discard can give it to a later copy.
	fresh uint64
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

// Periodic says whether node i has the named timer set periodic: it stays
// set when it fires.
func (s *State) Periodic(i NodeID, name string) bool {
	if s.ext == nil {
		return false
	}
	_, ok := slices.BinarySearchFunc(s.ext.periodic, ptimer{i, name}, cmpPTimer)
	return ok
}

// InFlight returns the messages in flight. Read-only.
func (s *State) InFlight() []Envelope { return s.net }

// Used returns the failures spent so far on the path to this state.
func (s *State) Used() Budget { return s.used }

// Partition returns the side of the partition in force: the nodes cut
// off from the others (never the highest node, so that each way to cut
// the nodes in two has one side). It is empty when there is none.
func (s *State) Partition() NodeSet { return s.cut }

// Down says whether node i is down: its process crashed (a Crash
// event) and has not restarted (a Reset) since. A down node runs no
// handler; its state is the one it stopped in.
func (s *State) Down(i NodeID) bool { return s.downs().Has(i) }

// DownNodes is the set of the nodes down.
func (s *State) DownNodes() NodeSet { return s.downs() }

// Cut says whether the partition in force separates nodes a and b.
func (s *State) Cut(a, b NodeID) bool { return s.cut != 0 && s.cut.Has(a) != s.cut.Has(b) }

// Pending says whether monitor i (see [Spec.Monitors]) is waiting: its P
// held in this state or an earlier one of the path, and its Q has not
// held since. False for a monitor the spec does not have.
func (s *State) Pending(i int) bool {
	return i >= 0 && i < MaxMonitors && s.pending&(1<<uint(i)) != 0
}

// CallMade says whether driver call i has been made.
func (s *State) CallMade(i int) bool {
	if i < 64 {
		return s.calls&(1<<uint(i)) != 0
	}
	if s.ext == nil {
		return false
	}
	j := i/64 - 1
	return j < len(s.ext.more) && s.ext.more[j]&(1<<uint(i%64)) != 0
}

// markCall records that driver call i was made. The words past the first
// are copied, as other states may share them; drivers with more than 64
// calls are rare enough that a copy per call costs nothing that matters.
func (s *State) markCall(i int) {
	if i < 64 {
		s.calls |= 1 << uint(i)
		return
	}
	e := s.editExt()
	j := i/64 - 1
	if j >= len(e.more) {
		e.more = append(e.more, make([]uint64, j+1-len(e.more))...)
	}
	e.more[j] |= 1 << uint(i%64)
}

// Fingerprint is the canonical 64-bit fingerprint of the global state. It
// does not depend on map iteration order, nor on the order in which equal
// messages were sent.
func (s *State) Fingerprint() uint64 {
	if s.fpless {
		panic("sim: Fingerprint of a state made with World.NoFingerprints: use World.Fingerprint")
	}
	return s.fp
}

// Key identifies s up to the renaming of symmetric nodes (see
// [Spec.Symmetry]): states with the same key are renamings of each other.
// Without symmetry it is the fingerprint. A state made while
// World.NoKeys was set has its key from World.Key only.
func (s *State) Key() uint64 {
	if s.keyless {
		panic("sim: Key of a state made with World.NoKeys or NoFingerprints: use World.Key")
	}
	return s.key
}

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
	if s.cut != 0 {
		fmt.Fprintf(&b, "partition: %v | %v\n", s.cut, NodeSet(1<<uint(len(s.nodes))-1)&^s.cut)
	}
	return b.String()
}

// DumpNode returns node i's state and its timers on one line; a periodic
// timer is marked "(periodic)", and a node down ends in "down=true".
func DumpNode(s *State, i NodeID) string {
	d := Dump(s.nodes[i].node)
	if s.downs().Has(i) {
		// A down node has no timers (a crash clears them).
		return d + " down=true"
	}
	sl := &s.nodes[i]
	if len(sl.timers) == 0 {
		return d
	}
	var b strings.Builder
	b.WriteString(d)
	b.WriteString(" timers=")
	for k, t := range sl.timers {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t)
		if s.Periodic(i, t) {
			b.WriteString("(periodic)")
		}
	}
	return b.String()
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

// netTerm is a message in flight's part of netSum.
func netTerm(e *Envelope) uint64 {
	return mix(uint64(e.From)<<32|uint64(uint32(e.To)), e.FP)
}

// netSumOf is what s.netSum must be.
func netSumOf(s *State) uint64 {
	var sum uint64
	for i := range s.net {
		sum += netTerm(&s.net[i])
	}
	return sum
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
