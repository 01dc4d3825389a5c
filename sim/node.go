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
type Node interface {
	// Init starts the node, and restarts it after a reset.
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
	// Send queues msg for node to.
	Send(to NodeID, msg Message)
	// SetTimer schedules the named timer: it may fire at any later step until
	// cancelled. Setting a timer that is already set does nothing.
	SetTimer(name string)
	// CancelTimer unschedules the named timer.
	CancelTimer(name string)
	// Choose returns a value in [0, n): the search tries every value, a walk
	// draws one at random, and replay returns the recorded one.
	Choose(n int) int
	// Logf records a line for reports; it costs nothing during a search.
	Logf(format string, args ...any)
}

// Transport is how messages travel.
type Transport uint8

const (
	// Datagram: any message in flight may be delivered next, and with a drop
	// budget any may be lost.
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
}

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
	// properties that do not tell members apart). Nil: none.
	Symmetry [][]NodeID
	// HandlerTimeout is how long one handler may run before the world is
	// reported as diverged (default 2s).
	HandlerTimeout time.Duration
}

// MaxCalls is the most application calls a driver may list.
const MaxCalls = 64

// Validate says what is wrong with the spec, if anything.
func (s *Spec) Validate() error {
	switch {
	case s.Nodes < 1:
		return fmt.Errorf("a world needs at least 1 node, not %d", s.Nodes)
	case s.New == nil:
		return fmt.Errorf("the spec has no New function to build a node")
	case len(s.Calls) > MaxCalls:
		return fmt.Errorf("the driver lists %d application calls; at most %d are supported", len(s.Calls), MaxCalls)
	case s.Budget.Resets < 0 || s.Budget.Drops < 0 || s.Budget.Errors < 0:
		return fmt.Errorf("failure budgets cannot be negative")
	}
	for i, c := range s.Calls {
		if c.To < 0 || int(c.To) >= s.Nodes {
			return fmt.Errorf("driver call %d goes to node %d, but nodes are 0 to %d", i, c.To, s.Nodes-1)
		}
	}
	return validateSymmetry(s)
}
