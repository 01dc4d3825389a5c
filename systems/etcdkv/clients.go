package etcdkv

import (
	"fmt"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/kvstore"
)

// Op is a client operation, kvstore's: a put of Val under Key, or a get
// of Key. The two stores serve the same clients.
type Op = kvstore.Op

// Spec is the sequential specification, kvstore's: one int per key, 0 at
// first; a get returns it, a put sets it and returns 0.
var Spec = kvstore.Spec

// Invoke is the driver's call: session Client is to run operation ID
// (1, 2, ...: its place in the workload), Op.
type Invoke struct {
	Client, ID int
	Op         Op
}

// Req asks a replica to run a session's operation number Seq.
type Req struct {
	Client, Seq, ID int
	Op              Op
}

func (r Req) String() string { return fmt.Sprintf("c%d:%v", r.Client, r.Op) }

// Resp answers Req: the value read (0 for a put).
type Resp struct {
	Client, Seq, Val int
}

// Session is one client session.
type Session struct {
	Seq     int      // operations started
	Waiting bool     // the last has not returned
	Queue   []Invoke // operations handed over, not started
}

// Clients is the node that runs the sessions and records their history.
type Clients struct {
	sim.BaseNode
	H        properties.History `livecheck:"durable"`
	Sessions []Session

	replicas int  `livecheck:"-"`
	off      bool `livecheck:"-"` // --history off: H records nothing
}

// App queues the driver's operation for its session.
func (c *Clients) App(ctx sim.Context, call sim.AppCall) {
	inv, ok := call.(Invoke)
	if !ok || inv.Client < 0 || inv.Client >= len(c.Sessions) {
		return
	}
	s := &c.Sessions[inv.Client]
	s.Queue = append(s.Queue, inv)
	c.next(ctx, inv.Client)
}

// next starts session i's next operation, if it is idle: sends it to
// replica i mod replicas.
func (c *Clients) next(ctx sim.Context, i int) {
	s := &c.Sessions[i]
	if s.Waiting || len(s.Queue) == 0 {
		return
	}
	inv := s.Queue[0]
	s.Queue = s.Queue[1:]
	s.Seq++
	s.Waiting = true
	if !c.off {
		c.H.Invoke(i, inv.Op)
	}
	ctx.Send(sim.NodeID(i%c.replicas), Req{Client: i, Seq: s.Seq, ID: inv.ID, Op: inv.Op})
}

// Receive records a replica's answer and starts the session's next
// operation.
func (c *Clients) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m, ok := msg.(Resp)
	if !ok || m.Client < 0 || m.Client >= len(c.Sessions) {
		return
	}
	s := &c.Sessions[m.Client]
	if !s.Waiting || s.Seq != m.Seq {
		return // a late answer, or a second one
	}
	s.Waiting = false
	if !c.off {
		c.H.Return(m.Client, m.Val)
	}
	c.next(ctx, m.Client)
}

// DumpState shows the sessions and the history.
func (c *Clients) DumpState() string {
	var b strings.Builder
	for i, s := range c.Sessions {
		fmt.Fprintf(&b, "s%d{seq:%d waiting:%v queue:%d} ", i, s.Seq, s.Waiting, len(s.Queue))
	}
	b.WriteString(c.H.String())
	return b.String()
}

// Workload returns the driver's calls and the operations by id less one:
// ops operations for each of clients sessions, round-robin, on keys keys
// (see the package doc).
func Workload(clients, ops, keys, replicas int) ([]sim.Call, []Op) {
	var calls []sim.Call
	var all []Op
	for k := range ops {
		for c := range clients {
			key := "x"
			if keys > 1 && c%2 == 1 {
				key = "y"
			}
			op := Op{Key: key}
			if (k+c)%2 == 0 {
				op = Op{Put: true, Key: key, Val: c + 1}
			}
			all = append(all, op)
			calls = append(calls, sim.Call{To: sim.NodeID(replicas), Call: Invoke{Client: c, ID: len(all), Op: op}})
		}
	}
	return calls, all
}
