package sim

import (
	"fmt"
	"time"
)

// NodeID names a node: 0 to n-1 in a world of n nodes.
type NodeID int

// A Message is any value a node sends. Messages are compared by fingerprint,
// so two equal messages are the same message; they are copied when sent.
type Message any

// An AppCall is a value the driver hands to a node's App handler.
type AppCall any

// Node is the code of one node, written as a pure state machine. The value is
// the node's state: livecheck copies, hashes and dumps it (see [Copy],
// [Fingerprint], [Dump]), so it must hold everything the node remembers and
// nothing else (no goroutines, channels, clocks or real randomness).
//
// Handlers act only through the Context: they never block, sleep or do I/O.
//
// A reset loses the node's state, but for its durable fields: the fields of
// its struct (the node is a pointer to it) tagged `livecheck:"durable"`, and
// of structs it embeds by value, which stand for what it keeps on disk. The reset builds the
// node again with Spec.New, copies the durable fields into it, and runs
// Init. They are part of the state like any field: hashed, copied, dumped,
// and read by properties.
//
//	type acceptor struct {
//		sim.BaseNode
//		Promised int `livecheck:"durable"` // survives a reset
//		Votes    map[sim.NodeID]bool      // lost in a reset
//	}
type Node interface {
	// Init starts the node, and restarts it after a reset (with its
	// durable fields as they were).
	Init(ctx Context)
	// Receive handles a message from another node.
	Receive(ctx Context, from NodeID, msg Message)
	// Timer handles a timer set with Context.SetTimer.
	Timer(ctx Context, name string)
	// App handles a call made by the system's driver.
	App(ctx Context, call AppCall)
	// Error says the connection to peer broke (stream transport only).
	Error(ctx Context, peer NodeID)
}

// BaseNode is a Node whose handlers do nothing. Embed it in a node type
// and write only the handlers the protocol needs: the node's own methods
// take the place of BaseNode's. It holds no state, so it adds nothing to
// the node's fingerprint or dump.
//
//	type pinger struct {
//		sim.BaseNode
//		Pongs int
//	}
//
//	func (p *pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { p.Pongs++ }
type BaseNode struct{}

func (BaseNode) Init(Context)                     {}
func (BaseNode) Receive(Context, NodeID, Message) {}
func (BaseNode) Timer(Context, string)            {}
func (BaseNode) App(Context, AppCall)             {}
func (BaseNode) Error(Context, NodeID)            {}

var _ Node = BaseNode{}

// Context is what a handler can do. Nothing takes effect until the handler
// returns: the world then delivers the sends, sets the timers and so on.
type Context interface {
	// Self is the node's own id.
	Self() NodeID
	// Nodes is the number of nodes in the world.
	Nodes() int
	// Send queues msg for node to. In a layer of a stacked node (see
	// [Stack]) above the bottom one, it hands msg to the Down handler of
	// the layer below instead.
	Send(to NodeID, msg Message)
	// Deliver hands msg, as if from node from, to the Receive handler of
	// the layer above, in a layer of a stacked node (see [Stack]). Where
	// there is none (a node of one layer, the top layer) it panics.
	Deliver(from NodeID, msg Message)
	// SetTimer schedules the named timer to fire once, at any later step
	// (timers are not ordered by time: the check tries every point), unless
	// cancelled first. Once it has fired it is no longer set: a handler sets
	// it again to have it fire again. Setting a timer that is already set,
	// once or periodic, does nothing.
	SetTimer(name string)
	// SetPeriodic schedules the named timer to fire again and again: it
	// stays set when it fires, until cancelled or the node is reset. A
	// timer already set to fire once becomes periodic.
	SetPeriodic(name string)
	// CancelTimer unschedules the named timer, once or periodic.
	CancelTimer(name string)
	// Choose returns a value in [0, n): the search tries every value, a walk
	// draws one at random, and replay returns the recorded one. Every
	// handler may choose, a node's first Init included: a system whose
	// first Init calls choose has one initial state for each combination
	// of their values (see [World.Starts]), which the search explores all
	// of, and a trace records the ones its path starts from.
	Choose(n int) int
	// Logf records a line for reports. During a search it formats and
	// keeps nothing, but its arguments are still built: a call through
	// this interface puts them in a slice on the heap (on split Paxos
	// 2 x 4, a tenth of what the search allocated), so keep it off a
	// handler's hottest path or give it few arguments.
	Logf(format string, args ...any)
}

// A KindedMessage is a message type that carries several kinds of
// message, as a protocol's one envelope type does (raft's Message and its
// Type): coverage counts its deliveries per kind ("Msg.MsgApp"), not as
// one type.
type KindedMessage interface {
	MessageKind() string
}

// Transport is how messages travel.
type Transport uint8

const (
	// Datagram: any message in flight may be delivered next, with a drop
	// budget any may be lost, and with a duplication budget any may be
	// copied, so that it arrives twice.
	Datagram Transport = iota
	// Stream: each ordered pair of nodes has a connection that delivers in
	// order. A reset of either end or an injected socket error breaks it: its
	// queued messages are lost and both ends get Error.
	Stream
)

func (t Transport) String() string {
	if t == Stream {
		return "stream"
	}
	return "datagram"
}

// A Call is one application call the driver makes: Call is handed to node
// To's App handler. Calls to one node are made in the order listed; calls to
// different nodes interleave freely with every other event.
type Call struct {
	To   NodeID
	Call AppCall
}

// Budget bounds the failures in one run.
type Budget struct {
	Resets int `json:"resets"` // node resets (crash and restart)
	Drops  int `json:"drops"`  // lost datagrams (datagram transport)
	Errors int `json:"errors"` // injected socket errors (stream transport)
	// Dups counts duplicated datagrams (datagram transport): a message in
	// flight copied, so that it may arrive twice.
	Dups int `json:"dups,omitempty"`
	// Partitions counts network partitions (both transports): the links
	// between a set of nodes and the others go down, until they heal.
	// One is in force at a time.
	Partitions int `json:"partitions,omitempty"`
	// Crashes counts crashes (both transports): a node's process stops
	// and the node is down, its state kept as it stopped, until its
	// restart (a Reset of the down node, which costs no reset).
	Crashes int `json:"crashes,omitempty"`
}

// negative says whether any field of b is negative.
func (b Budget) negative() bool {
	return b.Resets < 0 || b.Drops < 0 || b.Errors < 0 || b.Dups < 0 || b.Partitions < 0 || b.Crashes < 0
}

// MaxPartitionNodes is the most nodes a world with partitions may have:
// a state without one has an event for each way to cut the nodes in
// two, 2^(n-1)-1 of them.
const MaxPartitionNodes = 12

// MaxCrashNodes is the most nodes a world with crashes may have: the
// nodes down are a NodeSet.
const MaxCrashNodes = 64

// Spec describes a world: its nodes, transport, driver and failure budget.
type Spec struct {
	Nodes     int
	New       func(id NodeID) Node // a node in its state before Init
	Transport Transport
	Calls     []Call
	Budget    Budget
	// Symmetry lists groups of interchangeable nodes, for symmetry
	// reduction: see the conditions in symmetry.go's doc (nodes named
	// only through NodeID and NodeSet, no driver call to a member,
	// properties and monitors that do not tell members apart). Nil: none.
	Symmetry [][]NodeID
	// HandlerTimeout is how long one handler may run before the world is
	// reported as diverged (default 2s).
	HandlerTimeout time.Duration
	// Monitors watch paths for "whenever P holds, Q holds then or
	// later" (properties.LeadsTo); at most MaxMonitors. Nil: none, and
	// states cost nothing more.
	Monitors []Monitor
	// Observers lists nodes that only observe: they never send a message
	// (a Send from one panics, a finding that names it), and the safety
	// and reachability properties read no other node's state, nor the
	// messages in flight or the timers. The search may then take the
	// other nodes' events first and an observer's only once nothing else
	// can happen or a cycle forces it (a persistent-set reduction: see
	// search/reduce.go), which keeps every violation the properties can
	// see. That the properties read only observers is the spec's promise:
	// nothing checks it. A learner that only counts votes and the
	// properties about what it learned are the model case. Nil: none.
	Observers []NodeID
}

// A Monitor is one bit of every state, [State.Pending], that remembers
// along the path whether a P-state still waits for a Q-state: in the
// initial state and after every step, pending = (pending || P) && !Q, on
// the new state. The bit is part of the state: hashed into its
// fingerprint and its Key, so that two states that differ only in it are
// two states. A liveness property that holds where the bit is clear
// then says "whenever P holds, Q holds then or later".
//
// With symmetry (Spec.Symmetry) P and Q must not tell the members of a
// group apart, as properties must not: renaming keeps the bit as it is.
//
// A monitor reads the global state between events, so events of two
// nodes no longer commute (one order may pass through a P-state, the
// other not): the search turns its sleep-set reduction off for a world
// with monitors.
type Monitor struct {
	Name string // for errors: the property it serves
	P, Q func(s *State) bool
}

// MaxMonitors is the most monitors a spec may have.
const MaxMonitors = 32

// Validate says what is wrong with the spec, if anything.
func (s *Spec) Validate() error {
	switch {
	case s.Nodes < 1:
		return fmt.Errorf("a world needs at least 1 node, not %d", s.Nodes)
	case s.New == nil:
		return fmt.Errorf("the spec has no New function to build a node")
	case s.Budget.negative():
		return fmt.Errorf("failure budgets cannot be negative")
	case s.Budget.Partitions > 0 && s.Nodes > MaxPartitionNodes:
		return fmt.Errorf("partitions need at most %d nodes, not %d: the ways to cut n nodes in two are 2^(n-1)-1", MaxPartitionNodes, s.Nodes)
	case s.Budget.Crashes > 0 && s.Nodes > MaxCrashNodes:
		return fmt.Errorf("crashes need at most %d nodes, not %d: the nodes down are a set of node ids", MaxCrashNodes, s.Nodes)
	case s.Budget.Partitions > 0 && s.Transport == Stream && len(s.Symmetry) > 0:
		// A cut tells a node of each of its connections across it, one
		// Error after another in the order of the peers' ids, which a
		// renaming does not keep: symmetry reduction would be unsound.
		return fmt.Errorf("partitions on streams and symmetry reduction do not go together: a node told of several broken connections is told in id order, which renaming does not keep (drop Symmetry)")
	}
	for i, c := range s.Calls {
		if c.To < 0 || int(c.To) >= s.Nodes {
			return fmt.Errorf("driver call %d goes to node %d, but nodes are 0 to %d", i, c.To, s.Nodes-1)
		}
	}
	if len(s.Monitors) > MaxMonitors {
		return fmt.Errorf("the spec has %d monitors (leads-to properties); at most %d are possible", len(s.Monitors), MaxMonitors)
	}
	seen := make(map[NodeID]bool, len(s.Observers))
	for _, id := range s.Observers {
		switch {
		case id < 0 || int(id) >= s.Nodes:
			return fmt.Errorf("observer node %d is not a node: nodes are 0 to %d", id, s.Nodes-1)
		case seen[id]:
			return fmt.Errorf("observer node %d is listed twice", id)
		}
		seen[id] = true
	}
	for i, m := range s.Monitors {
		if m.P == nil || m.Q == nil {
			return fmt.Errorf("monitor %d (%s) needs both P and Q", i, m.Name)
		}
	}
	return validateSymmetry(s)
}
