// Package transport is a reliable transport over datagrams, after the
// MaceMC paper's MaceTransport, as two layers of one node (sim.Stack): the
// transport, which talks to the network, and an application above it.
//
// The network loses datagrams (--drops) and reorders them at will, and
// nodes restart (--resets). Over it the transport gives the application
// reliable, in-order delivery without duplicates. A sender opens a
// connection to a peer with its first message: the message carries the
// SYN flag and sequence number 1, and every later one the next number. A
// message stays queued until acknowledged: the receiver acknowledges
// cumulatively (Ack{Next: n}: every message before n has arrived), and a
// retransmission timer, one per connection, sends the oldest one again
// until it is, never giving up. The receiver delivers a message up only
// if it is the next in order, and acknowledges duplicates again without
// delivering them. When every message of a connection is acknowledged,
// the sender closes it, and its next message opens a new one.
//
// A connection is named by an identifier that increases with each
// connection a node opens, kept across restarts (a durable field): a SYN
// with a larger identifier than the receiver's current connection is a
// new connection (the peer opened one, perhaps after a restart), and
// anything from a connection other than the current one is stale and
// ignored. The receiver keeps its place in each incoming connection with
// what the application received (durable fields too: what was delivered
// stays delivered), so its restart neither loses nor repeats a message.
// A sender's restart loses its queue and what its application had sent:
// messages sent before it are not owed to anyone.
//
// The application layer is the driver's: call k to node 0 sends message
// k to node 1 (or, with more nodes, to nodes 1 to N-1 in turn); the
// application records what it sent since it started and what it
// received. Properties:
//
//   - delivered-once-in-order (safety): each application receives the
//     messages of each peer in the order they were sent, none twice;
//   - all-delivered (liveness): every message a node's application sent
//     since it started is eventually received by its destination;
//   - delivered (reachability, the canary): some message is delivered.
//
// An internal assertion of the transport that fails is a panic in its
// handler, reported with its path as any handler panic is.
//
// Injectable bugs, each a slip the MaceMC authors report of MaceTransport:
//
//   - syn-dup: the receiver opens a new connection on a SYN whose
//     identifier is not smaller than the current one (>= where > belongs),
//     so a retransmitted first message is taken for a peer that
//     restarted: the connection's state is erased and the duplicate
//     delivered again (delivered-once-in-order).
//   - syn-order: the sender numbers its connections from a count kept in
//     memory only, so after a restart its new connection reuses an
//     identifier the receiver has seen. If the old connection's SYN
//     reaches the receiver before the new one's, the receiver takes the
//     new SYN for a retransmission of the old: it acknowledges the new
//     messages as duplicates and never delivers them, while the sender,
//     acknowledged, stops sending them (all-delivered; needs a reset).
//     The correct identifier, larger than any before, tells the new
//     connection from the old.
//   - stale-retransmit: closing a connection once everything is
//     acknowledged forgets to cancel its retransmission timer. When it
//     fires while a new connection to the same peer is open, the guard
//     (a connection exists) lets it through, and the transport's
//     assertion that a retransmission belongs to the current connection
//     fails (a handler panic).
package transport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Data carries one application message on connection Conn.
type Data struct {
	Conn int  // the connection's identifier
	Seq  int  // 1 for the connection's first message, then 2, 3, ...
	Syn  bool // the connection's first message (and its retransmissions)
	Msg  sim.Message
}

// Ack acknowledges every message of connection Conn before Next.
type Ack struct {
	Conn, Next int
}

// Out is a sender's connection to one peer.
type Out struct {
	Conn  int           // 0: none open
	Acked int           // messages 1 to Acked are acknowledged
	Queue []sim.Message // messages Acked+1, Acked+2, ... not yet acknowledged
}

// In is a receiver's connection from one peer.
type In struct {
	Conn int // 0: none yet
	Next int // the sequence number it delivers next
}

// Transport is the transport layer of a node.
type Transport struct {
	// Epoch is the identifier of the last connection the node opened:
	// the next one is larger, after a restart too.
	Epoch int `livecheck:"durable"`
	// Opened counts the connections opened since the node started
	// (syn-order's numbering; 0 in the correct version).
	Opened int
	Out    []Out // by peer
	In     []In  `livecheck:"durable"` // by peer: kept with what was delivered

	cfg *config `livecheck:"-"`
}

type config struct {
	nodes                           int
	messages                        int
	synDup, synOrder, staleRetransm bool
}

// Init sizes the tables: one connection each way per peer.
func (t *Transport) Init(ctx sim.Context) {
	if len(t.In) == 0 {
		t.In = make([]In, ctx.Nodes())
	}
	t.Out = make([]Out, ctx.Nodes())
}

// newConn returns the identifier of a new connection.
func (t *Transport) newConn() int {
	if t.cfg.synOrder {
		// The slip: a count in memory only, which a restart sets back.
		t.Opened++
		return t.Opened
	}
	t.Epoch++
	return t.Epoch
}

// Down sends a message of the application: on the open connection to
// peer to, or on a new one whose first message it is.
func (t *Transport) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	o := &t.Out[to]
	if o.Conn == 0 {
		*o = Out{Conn: t.newConn()}
		ctx.Logf("open connection %d to %d", o.Conn, to)
	}
	o.Queue = append(o.Queue, msg)
	seq := o.Acked + len(o.Queue)
	ctx.Send(to, Data{Conn: o.Conn, Seq: seq, Syn: seq == 1, Msg: msg})
	ctx.SetTimer(retransmitTimer(to, o.Conn))
}

// Receive takes a packet from the network.
func (t *Transport) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Data:
		t.data(ctx, from, m)
	case Ack:
		t.ack(ctx, from, m)
	}
}

func (t *Transport) data(ctx sim.Context, from sim.NodeID, m Data) {
	in := &t.In[from]
	newer := m.Conn > in.Conn
	if t.cfg.synDup {
		newer = m.Conn >= in.Conn // the slip: a retransmitted SYN opens the connection again
	}
	switch {
	case m.Syn && newer:
		ctx.Logf("new connection %d from %d", m.Conn, from)
		*in = In{Conn: m.Conn, Next: 1}
	case m.Conn != in.Conn:
		ctx.Logf("ignore message %d of connection %d: the connection from %d is %d", m.Seq, m.Conn, from, in.Conn)
		return
	}
	if m.Seq != in.Next {
		ctx.Logf("message %d of connection %d is not the next (%d): acknowledge without delivering", m.Seq, m.Conn, in.Next)
	} else {
		in.Next++
		ctx.Deliver(from, m.Msg)
	}
	ctx.Send(from, Ack{Conn: in.Conn, Next: in.Next})
}

func (t *Transport) ack(ctx sim.Context, from sim.NodeID, m Ack) {
	o := &t.Out[from]
	if m.Conn != o.Conn || m.Next-1 <= o.Acked {
		return // another connection's, or nothing new
	}
	n := min(m.Next-1-o.Acked, len(o.Queue))
	o.Acked += n
	o.Queue = o.Queue[n:]
	if len(o.Queue) > 0 {
		return
	}
	// Everything is acknowledged: close the connection.
	ctx.Logf("close connection %d to %d", o.Conn, from)
	if !t.cfg.staleRetransm { // the slip forgets this
		ctx.CancelTimer(retransmitTimer(from, o.Conn))
	}
	*o = Out{}
}

// Timer retransmits the oldest unacknowledged message of a connection.
func (t *Transport) Timer(ctx sim.Context, name string) {
	peer, conn, ok := parseRetransmitTimer(name, len(t.Out))
	if !ok {
		panic(fmt.Sprintf("unknown timer %q", name))
	}
	o := &t.Out[peer]
	if o.Conn == 0 {
		return // no connection to the peer: nothing to send
	}
	if o.Conn != conn || len(o.Queue) == 0 {
		panic(fmt.Sprintf("assertion failed: retransmission timer of connection %d to %d fired, but the connection to %d is %d with %d messages unacknowledged",
			conn, peer, peer, o.Conn, len(o.Queue)))
	}
	seq := o.Acked + 1
	ctx.Logf("retransmit message %d of connection %d to %d", seq, conn, peer)
	ctx.Send(peer, Data{Conn: conn, Seq: seq, Syn: seq == 1, Msg: o.Queue[0]})
	ctx.SetTimer(name)
}

func (t *Transport) App(sim.Context, sim.AppCall)  {}
func (t *Transport) Error(sim.Context, sim.NodeID) {}

// retransmitTimers holds the names of the first timers, so that setting
// one makes no string.
var retransmitTimers [4][16]string

func init() {
	for p := range retransmitTimers {
		for c := range retransmitTimers[p] {
			retransmitTimers[p][c] = "retransmit-" + strconv.Itoa(p) + "-" + strconv.Itoa(c)
		}
	}
}

// retransmitTimer names the retransmission timer of connection conn to
// peer: "retransmit-1-2".
func retransmitTimer(peer sim.NodeID, conn int) string {
	if int(peer) < len(retransmitTimers) && conn < len(retransmitTimers[0]) {
		return retransmitTimers[peer][conn]
	}
	return "retransmit-" + strconv.Itoa(int(peer)) + "-" + strconv.Itoa(conn)
}

func parseRetransmitTimer(name string, nodes int) (sim.NodeID, int, bool) {
	rest, ok := strings.CutPrefix(name, "retransmit-")
	p, c, ok2 := strings.Cut(rest, "-")
	peer, err1 := strconv.Atoi(p)
	conn, err2 := strconv.Atoi(c)
	if !ok || !ok2 || err1 != nil || err2 != nil || peer < 0 || peer >= nodes {
		return 0, 0, false
	}
	return sim.NodeID(peer), conn, true
}

// Send is the driver's call: send message N to node To.
type Send struct {
	To sim.NodeID
	N  int
}

// Msg is an application message.
type Msg struct{ N int }

// Received is a message the application received.
type Received struct {
	From sim.NodeID
	N    int
}

// App is the application layer of a node.
type App struct {
	Sent []Send     // sent since the node started
	Got  []Received `livecheck:"durable"` // received, in order
}

func (a *App) Init(sim.Context) {}

// App sends the driver's message through the transport.
func (a *App) App(ctx sim.Context, call sim.AppCall) {
	c := call.(Send)
	a.Sent = append(a.Sent, c)
	ctx.Logf("send message %d to %d", c.N, c.To)
	ctx.Send(c.To, Msg{N: c.N})
}

// Receive records a message the transport delivered.
func (a *App) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m := msg.(Msg)
	ctx.Logf("received message %d from %d", m.N, from)
	a.Got = append(a.Got, Received{From: from, N: m.N})
}

func (a *App) Timer(sim.Context, string)     {}
func (a *App) Error(sim.Context, sim.NodeID) {}

// InOrder is the safety property: each application receives each peer's
// messages in the order they were sent (message numbers increase with
// it), none twice.
var InOrder = properties.AlwaysEach("delivered-once-in-order",
	"each application receives the messages of each peer in the order sent, none twice",
	func(a *App) error {
		for i, r := range a.Got {
			for _, e := range a.Got[:i] {
				switch {
				case e.From != r.From:
				case e.N == r.N:
					return fmt.Errorf("message %d from node %d was received twice", r.N, r.From)
				case e.N > r.N:
					return fmt.Errorf("message %d from node %d was received after message %d", r.N, r.From, e.N)
				}
			}
		}
		return nil
	})

// AllDelivered is the liveness property: every message a node's
// application sent since it started has been received by its
// destination.
var AllDelivered = properties.Eventually("all-delivered",
	"every message an application sent since its node started has been received",
	func(s *sim.State) bool {
		for i, a := range properties.All[*App](s) {
			for _, c := range a.Sent {
				got := properties.Node[*App](s, c.To).Got
				if !slices.Contains(got, Received{From: i, N: c.N}) {
					return false
				}
			}
		}
		return true
	})

// Delivered is the canary: some message reaches an application.
var Delivered = properties.SometimesNode("delivered", "some application received a message",
	func(a *App) bool { return len(a.Got) > 0 })

// System is the reliable transport as livecheck checks it.
var System = protocol.System{
	Name:         "transport",
	Doc:          "a reliable transport over datagrams (MaceTransport): SYN, sequence numbers, acks, retransmission, under an application layer",
	DefaultNodes: 2,
	MinNodes:     2,
	MaxNodes:     4,
	DefaultDepth: 14,
	Bugs: []protocol.Bug{
		{Name: "syn-dup", Doc: "a retransmitted SYN is taken for a restarted peer: the connection starts again and the message is delivered twice (delivered-once-in-order)",
			Needs: protocol.Needs{Nodes: 2}},
		{Name: "syn-order", Doc: "connection ids restart with the node, so an old SYN arriving first makes the receiver ack the new messages as duplicates (all-delivered; needs a reset)",
			Needs: protocol.Needs{Nodes: 2, Params: map[string]string{"messages": "2"}, Budget: sim.Budget{Resets: 1}}},
		{Name: "stale-retransmit", Doc: "closing a connection leaves its retransmission timer set, which fires on the next connection: an assertion fails (no-panic)",
			Needs: protocol.Needs{Nodes: 2, Params: map[string]string{"messages": "2"}}},
	},
	Params: []protocol.Param{
		{Name: "messages", Doc: "how many messages node 0's application sends, 1 to 6", Default: "2", Int: true, Min: 1, Max: 6},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		k := cfg.IntParam("messages")
		c := &config{nodes: cfg.Nodes, messages: k,
			synDup: cfg.HasBug("syn-dup"), synOrder: cfg.HasBug("syn-order"), staleRetransm: cfg.HasBug("stale-retransmit")}
		calls := make([]sim.Call, k)
		for i := range calls {
			calls[i] = sim.Call{To: 0, Call: Send{To: sim.NodeID(1 + i%(cfg.Nodes-1)), N: i + 1}}
		}
		return &protocol.Model{
			Spec: sim.Spec{
				New: func(sim.NodeID) sim.Node {
					return sim.Stack(sim.Layer{Name: "transport", Node: &Transport{cfg: c}}, sim.Layer{Name: "app", Node: &App{}})
				},
				Transport: sim.Datagram,
				Calls:     calls,
			},
			Properties: []properties.Property{InOrder, AllDelivered, Delivered},
		}, nil
	},
}
