package sim

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Kind is the kind of an event. Every package that drives the world speaks
// only this alphabet.
type Kind uint8

const (
	Deliver     Kind = iota // a message in flight arrives at Node, from Peer
	Timer                   // timer Timer of Node fires
	App                     // the driver makes call Call to Node
	Drop                    // a datagram in flight from Peer to Node is lost
	SocketError             // the connection between Node and Peer breaks
	Reset                   // Node crashes and restarts: state (but durable fields), timers and connections lost
	Duplicate               // a datagram in flight from Peer to Node is copied: the copy may arrive as well
	Partition               // the links between the nodes of Msg's set (see Event) and the others go down
	Heal                    // the partition's links come back up
	// Crash stops Node's process: it runs no handler, its timers are
	// cleared, its state is kept as it stopped (its restart, a Reset,
	// keeps its durable fields from it), and it is down until that
	// Reset. See World.Enabled for what a down node allows.
	Crash
	numKinds
)

var kindNames = [numKinds]string{"deliver", "timer", "app", "drop", "socket-error", "reset", "duplicate", "partition", "heal", "crash"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Kinds lists every event kind, in the order Enabled lists them.
// Kinds added later are numbered after the first ones, so that the
// numbers (and the hashes of paths, which name trace files) stay as
// they were.
func Kinds() []Kind {
	return []Kind{Deliver, Timer, App, Drop, Duplicate, SocketError, Reset, Crash, Partition, Heal}
}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown event kind %q (valid: %s)", s, KindNames())
}

// KindNames lists the kinds' names, comma-separated, in the order Kinds
// gives them: for messages that say what is valid.
func KindNames() string {
	var b strings.Builder
	for i, k := range Kinds() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k.String())
	}
	return b.String()
}

// An Event is one atomic step of the world. Events name what they act on by
// content (nodes, timer name, message fingerprint), not by position, so a
// recorded event either applies to a state exactly or is rejected.
type Event struct {
	Kind  Kind
	Node  NodeID // the node that handles the event (socket error: the lower end; partition: the side's lowest; crash: the node that stops)
	Peer  NodeID // the sender (deliver, drop, duplicate) or the other end (socket error)
	Timer string // the timer's name (timer)
	Call  int    // index into the driver's calls (app)
	Msg   uint64 // fingerprint of the message (deliver, drop, duplicate); partition: the side's NodeSet
}

// PartitionEvent is the event that cuts the nodes of side off from the
// others. The side of a partition is the one without the highest node
// (see World.Enabled).
func PartitionEvent(side NodeSet) Event {
	return Event{Kind: Partition, Node: NodeID(bits.TrailingZeros64(uint64(side))), Msg: uint64(side)}
}

// Side is the side of a partition event: the nodes it cuts off.
func (e Event) Side() NodeSet { return NodeSet(e.Msg) }

func (e Event) String() string {
	switch e.Kind {
	case Deliver, Drop, Duplicate:
		return fmt.Sprintf("%s %d->%d #%016x", e.Kind, e.Peer, e.Node, e.Msg)
	case Timer:
		return fmt.Sprintf("timer %s at %d", e.Timer, e.Node)
	case App:
		return fmt.Sprintf("app call %d at %d", e.Call, e.Node)
	case SocketError:
		return fmt.Sprintf("socket-error %d<->%d", e.Node, e.Peer)
	case Reset:
		return fmt.Sprintf("reset %d", e.Node)
	case Crash:
		return fmt.Sprintf("crash %d", e.Node)
	case Partition:
		return fmt.Sprintf("partition %v", e.Side())
	}
	return e.Kind.String()
}

// A Step is an event with the values its handlers' Choose calls returned.
type Step struct {
	Event   Event
	Choices []int
}

// A Path is a sequence of steps from a start state. It replays exactly.
type Path []Step

// Clone returns a copy of p that shares nothing with it.
func (p Path) Clone() Path {
	q := make(Path, len(p))
	for i, s := range p {
		q[i] = Step{Event: s.Event, Choices: append([]int(nil), s.Choices...)}
	}
	return q
}

// NextTape returns the tape that explores the next combination of choices
// after a step that made choices (with their bounds), in odometer order:
// the last choice that can still grow grows by one and later ones are
// dropped (they default to 0). It returns false when every combination has
// been tried. buf is reused for the result.
func NextTape(choices, bounds []int, buf []int) ([]int, bool) {
	for j := len(choices) - 1; j >= 0; j-- {
		if choices[j]+1 < bounds[j] {
			buf = append(buf[:0], choices[:j]...)
			return append(buf, choices[j]+1), true
		}
	}
	return buf[:0], false
}

// Hash returns a fingerprint of the path: its events and choices. Equal
// paths hash equal in every run.
func (p Path) Hash() uint64 {
	var h Hasher
	for _, st := range p {
		e := st.Event
		h.Int(int(e.Kind))
		h.Int(int(e.Node))
		h.Int(int(e.Peer))
		h.String(e.Timer)
		h.Int(e.Call)
		h.Uint64(e.Msg)
		h.Int(len(st.Choices))
		for _, c := range st.Choices {
			h.Int(c)
		}
	}
	return h.Sum64()
}
