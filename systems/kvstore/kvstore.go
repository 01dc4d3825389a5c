// Package kvstore is a replicated key-value store, primary-backup with
// majority writes, checked for linearizability: what its clients see
// must be explainable by one copy of the store.
//
// Nodes 0, 1 and 2 are replicas; node 3 runs the client sessions (2 by
// default, --clients 1 to 3), so that one node's History records every
// operation in real-time order (see properties.History). A session runs
// one operation at a time: the driver hands it operations, which it
// queues and starts when the last one has returned, sending the request
// to every replica; the first response is the operation's. Session c's
// operations on key x are, in turn, put(x,c+1) and get(x), starting
// with get for odd sessions (--ops per session, 1 to 2).
//
//   - Writes: the primary gives a put a version, applies it, and sends
//     Store to both backups; once a majority of replicas (itself and a
//     backup) has it, the write is committed and acknowledged.
//   - Reads: the primary answers from what is committed, once a
//     majority confirms that it is still primary (a Confirm round, as
//     Raft's ReadIndex): a primary that was replaced cannot gather one.
//   - Failover: node 0 is the primary of epoch 1. Node 1 may suspect it
//     (its takeover timer, once), start epoch 2 and ask the others for
//     their votes; a replica that votes joins the epoch, sends its
//     store, and no longer serves epoch 1. With a majority, node 1 is
//     primary, with the newest version of each key from the majority:
//     every committed write is on a majority, so it has each.
//
// Replicas keep their epoch, store and versions on disk (durable), so a
// reset loses only rounds under way: their clients wait for ever, and
// the operations stay pending, which is always allowed.
//
// The property is properties.Linearizable over the spec of a map from
// keys to ints, partitioned by key. The injectable bugs, each a small
// slip that breaks it:
//
//   - read-backup: a backup answers reads from its own store, to spread
//     the load. A backup that has not yet received a committed write
//     returns the value before it, after the write was acknowledged.
//   - early-ack: the primary acknowledges a write when it has applied
//     it, before a backup has it. A read then returns the committed
//     value, older than the write the client was told is done.
//   - stale-lease: the primary answers reads at once while it holds a
//     lease (from its last confirmed round, or the start), and the lease
//     never lapses: a primary that has been replaced, and does not know
//     it, returns values older than writes the new primary committed.
//     A lease needs a clock bound that an asynchronous network does not
//     give; the correct version confirms every read.
package kvstore

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Replicas is the number of replicas; the clients' node is the next.
const Replicas = 3

// clientsNode is the node that runs the sessions.
const clientsNode = sim.NodeID(Replicas)

// Op is a client operation: a put of Val under Key, or a get of Key.
type Op struct {
	Put bool
	Key string
	Val int
}

func (o Op) String() string {
	if o.Put {
		return fmt.Sprintf("put(%s,%d)", o.Key, o.Val)
	}
	return fmt.Sprintf("get(%s)", o.Key)
}

// Spec is the sequential specification: one int per key, 0 at first; a
// get returns it, a put sets it and returns 0.
var Spec = properties.Spec[int, Op, int]{
	Name: "kv",
	Init: func() int { return 0 },
	Step: func(v int, op Op) []properties.Outcome[int, int] {
		if op.Put {
			return []properties.Outcome[int, int]{{Out: 0, Next: op.Val}}
		}
		return []properties.Outcome[int, int]{{Out: v, Next: v}}
	},
	Key: func(op Op) string { return op.Key },
}

// Invoke is the driver's call: session Client is to run Op.
type Invoke struct {
	Client int
	Op     Op
}

// Req asks the replicas to run a session's operation number Seq.
type Req struct {
	Client, Seq int
	Op          Op
}

// Resp answers Req: the value read (0 for a put).
type Resp struct {
	Client, Seq, Val int
}

// Store asks a backup to store a write of epoch Epoch.
type Store struct {
	Epoch int
	Key   string
	Item  Item
}

// StoreAck says a backup stored the write of version Ver.
type StoreAck struct{ Epoch, Ver int }

// Confirm asks a backup whether the sender is still its primary, for
// read ID.
type Confirm struct{ Epoch, ID int }

// Confirmed answers Confirm: yes.
type Confirmed struct{ Epoch, ID int }

// Elect asks for votes for the primary of Epoch.
type Elect struct{ Epoch int }

// Vote grants one, with the voter's store.
type Vote struct {
	Epoch int
	Data  map[string]Item
}

// Item is a key's value and the version of the write that set it:
// epoch*1000 + the primary's count of writes, so that a later epoch's
// writes are newer.
type Item struct{ Val, Ver int }

// A round is a write or a read under way at the primary, waiting for a
// majority.
type round struct {
	Client, Seq int
	Key         string
	Ver         int         // a write's version; 0 for a read
	ID          int         // a read's id, for Confirm
	Acks        sim.NodeSet // replicas that have it, or confirmed
}

// Replica is one replica: the primary of its epoch, or a backup.
type Replica struct {
	sim.BaseNode
	Epoch     int             `livecheck:"durable"`
	Data      map[string]Item `livecheck:"durable"` // what it stored (the primary: applied)
	Committed map[string]Item `livecheck:"durable"` // the primary's: on a majority
	Writes    int             `livecheck:"durable"` // the primary's count of writes
	Active    bool            `livecheck:"durable"` // primary of Epoch, with its store merged
	Votes     sim.NodeSet     // node 1 electing itself
	Rounds    []round         // the primary's rounds under way
	Lease     bool            // stale-lease: reads are answered at once
	NextID    int             // the next read round's id

	bugs bugs `livecheck:"-"`
}

type bugs struct{ readBackup, earlyAck, staleLease bool }

// primaryOf is the primary of epoch e.
func primaryOf(e int) sim.NodeID { return sim.NodeID(e - 1) }

func (r *Replica) Init(ctx sim.Context) {
	if r.Epoch == 0 { // first start, not a restart
		r.Epoch = 1
		r.Data, r.Committed = map[string]Item{}, map[string]Item{}
		r.Active = ctx.Self() == primaryOf(1)
		r.Lease = r.Active && r.bugs.staleLease
	}
	if ctx.Self() == 1 && r.Epoch < 2 {
		ctx.SetTimer("takeover") // node 1 may suspect the primary
	}
}

func (r *Replica) Timer(ctx sim.Context, name string) {
	if name != "takeover" || r.Epoch >= 2 {
		return
	}
	r.Epoch, r.Active, r.Lease, r.Rounds = 2, false, false, nil
	r.Votes = sim.NodeSet(0).Add(ctx.Self())
	ctx.Logf("suspects the primary: starts epoch 2")
	r.others(ctx, Elect{Epoch: 2})
}

// others sends msg to the other replicas.
func (r *Replica) others(ctx sim.Context, msg sim.Message) {
	for i := range sim.NodeID(Replicas) {
		if i != ctx.Self() {
			ctx.Send(i, msg)
		}
	}
}

// primary says whether the replica serves clients as primary.
func (r *Replica) primary(ctx sim.Context) bool {
	return r.Active && primaryOf(r.Epoch) == ctx.Self()
}

func (r *Replica) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Req:
		r.request(ctx, m)
	case Store:
		if m.Epoch < r.Epoch {
			return
		}
		r.join(m.Epoch)
		if m.Item.Ver > r.Data[m.Key].Ver {
			r.Data = with(r.Data, m.Key, m.Item)
		}
		ctx.Send(from, StoreAck{Epoch: m.Epoch, Ver: m.Item.Ver})
	case StoreAck:
		r.ack(ctx, from, m.Epoch, func(rd *round) bool { return rd.Ver == m.Ver && rd.Ver != 0 })
	case Confirm:
		if m.Epoch == r.Epoch {
			ctx.Send(from, Confirmed(m))
		}
	case Confirmed:
		r.ack(ctx, from, m.Epoch, func(rd *round) bool { return rd.Ver == 0 && rd.ID == m.ID })
	case Elect:
		if m.Epoch <= r.Epoch {
			return
		}
		r.join(m.Epoch)
		ctx.Send(from, Vote{Epoch: m.Epoch, Data: r.Data})
	case Vote:
		if m.Epoch != r.Epoch || r.Active || r.Votes.Has(from) {
			return
		}
		r.Votes = r.Votes.Add(from)
		for k, it := range m.Data {
			if it.Ver > r.Data[k].Ver {
				r.Data = with(r.Data, k, it)
			}
		}
		if r.Votes.Len() > Replicas/2 {
			r.Active = true
			r.Committed = maps.Clone(r.Data)
			ctx.Logf("primary of epoch %d", r.Epoch)
		}
	}
}

// join moves the replica to epoch e: it is no longer primary of an
// earlier one.
func (r *Replica) join(e int) {
	if e > r.Epoch {
		r.Epoch, r.Active, r.Lease, r.Rounds, r.Votes = e, false, false, nil, 0
	}
}

// request runs a client's operation.
func (r *Replica) request(ctx sim.Context, m Req) {
	if !r.primary(ctx) {
		if r.bugs.readBackup && !m.Op.Put {
			ctx.Send(clientsNode, Resp{Client: m.Client, Seq: m.Seq, Val: r.Data[m.Op.Key].Val})
		}
		return
	}
	if !m.Op.Put {
		if r.Lease {
			ctx.Send(clientsNode, Resp{Client: m.Client, Seq: m.Seq, Val: r.Committed[m.Op.Key].Val})
			return
		}
		r.NextID++
		r.Rounds = append(r.Rounds, round{Client: m.Client, Seq: m.Seq, Key: m.Op.Key, ID: r.NextID, Acks: sim.NodeSet(0).Add(ctx.Self())})
		r.others(ctx, Confirm{Epoch: r.Epoch, ID: r.NextID})
		return
	}
	r.Writes++
	it := Item{Val: m.Op.Val, Ver: r.Epoch*1000 + r.Writes}
	r.Data = with(r.Data, m.Op.Key, it)
	r.Rounds = append(r.Rounds, round{Client: m.Client, Seq: m.Seq, Key: m.Op.Key, Ver: it.Ver, Acks: sim.NodeSet(0).Add(ctx.Self())})
	r.others(ctx, Store{Epoch: r.Epoch, Key: m.Op.Key, Item: it})
	if r.bugs.earlyAck {
		ctx.Send(clientsNode, Resp{Client: m.Client, Seq: m.Seq})
	}
}

// ack counts a backup's answer for the round that match picks; a
// majority completes it.
func (r *Replica) ack(ctx sim.Context, from sim.NodeID, epoch int, match func(*round) bool) {
	if epoch != r.Epoch || !r.primary(ctx) {
		return
	}
	i := slices.IndexFunc(r.Rounds, func(rd round) bool { return match(&rd) })
	if i < 0 {
		return
	}
	r.Rounds = slices.Clone(r.Rounds)
	rd := &r.Rounds[i]
	rd.Acks = rd.Acks.Add(from)
	if rd.Acks.Len() <= Replicas/2 {
		return
	}
	done := *rd
	r.Rounds = slices.Delete(r.Rounds, i, i+1)
	if done.Ver != 0 {
		if done.Ver > r.Committed[done.Key].Ver {
			r.Committed = with(r.Committed, done.Key, r.Data[done.Key])
		}
		if !r.bugs.earlyAck {
			ctx.Send(clientsNode, Resp{Client: done.Client, Seq: done.Seq})
		}
		return
	}
	r.Lease = r.bugs.staleLease
	ctx.Send(clientsNode, Resp{Client: done.Client, Seq: done.Seq, Val: r.Committed[done.Key].Val})
}

// with returns m with k set to it: a new map, as states share theirs.
func with(m map[string]Item, k string, it Item) map[string]Item {
	c := maps.Clone(m)
	if c == nil {
		c = map[string]Item{}
	}
	c[k] = it
	return c
}

// Session is one client session.
type Session struct {
	Seq     int  // operations started
	Waiting bool // the last has not returned
	Queue   []Op // operations handed over, not started
}

// Clients is the node that runs the sessions and records their history.
type Clients struct {
	sim.BaseNode
	H        properties.History `livecheck:"durable"`
	Sessions []Session

	off bool `livecheck:"-"` // --history off: H records nothing
}

func (c *Clients) App(ctx sim.Context, call sim.AppCall) {
	inv, ok := call.(Invoke)
	if !ok || inv.Client < 0 || inv.Client >= len(c.Sessions) {
		return
	}
	c.Sessions = slices.Clone(c.Sessions)
	s := &c.Sessions[inv.Client]
	s.Queue = append(slices.Clone(s.Queue), inv.Op)
	c.next(ctx, inv.Client)
}

// next starts session i's next operation, if it is idle.
func (c *Clients) next(ctx sim.Context, i int) {
	s := &c.Sessions[i]
	if s.Waiting || len(s.Queue) == 0 {
		return
	}
	op := s.Queue[0]
	s.Queue = s.Queue[1:]
	s.Seq++
	s.Waiting = true
	if !c.off {
		c.H.Invoke(i, op)
	}
	for r := range sim.NodeID(Replicas) {
		ctx.Send(r, Req{Client: i, Seq: s.Seq, Op: op})
	}
}

func (c *Clients) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m, ok := msg.(Resp)
	if !ok || m.Client < 0 || m.Client >= len(c.Sessions) {
		return
	}
	s := c.Sessions[m.Client]
	if !s.Waiting || s.Seq != m.Seq {
		return // a late answer, or a second one
	}
	c.Sessions = slices.Clone(c.Sessions)
	c.Sessions[m.Client].Waiting = false
	if !c.off {
		c.H.Return(m.Client, m.Val)
	}
	c.next(ctx, m.Client)
}

// DumpState shows the sessions and the history.
func (c *Clients) DumpState() string {
	var b strings.Builder
	for i, s := range c.Sessions {
		fmt.Fprintf(&b, "s%d{seq:%d waiting:%v queue:%v} ", i, s.Seq, s.Waiting, s.Queue)
	}
	b.WriteString(c.H.String())
	return b.String()
}

// Workload returns the driver's calls: ops operations for each of
// clients sessions, round-robin (see the package doc).
func Workload(clients, ops int) []sim.Call {
	var calls []sim.Call
	for k := range ops {
		for c := range clients {
			op := Op{Key: "x"}
			if (k+c)%2 == 0 {
				op = Op{Put: true, Key: "x", Val: c + 1}
			}
			calls = append(calls, sim.Call{To: clientsNode, Call: Invoke{Client: c, Op: op}})
		}
	}
	return calls
}

// System is the key-value store as livecheck checks it.
var System = protocol.System{
	Name:         "kvstore",
	Doc:          "a primary-backup key-value store with majority writes and confirmed reads, checked for linearizability",
	DefaultNodes: Replicas + 1,
	MinNodes:     Replicas + 1,
	MaxNodes:     Replicas + 1,
	DefaultDepth: 12,
	Bugs: []protocol.Bug{
		{Name: "read-backup", Doc: "a backup answers reads from its own store: a read misses a write that was acknowledged"},
		{Name: "early-ack", Doc: "the primary acknowledges a write before a backup has it: a read misses a write that was acknowledged"},
		{Name: "stale-lease", Doc: "the primary answers reads from a lease that never lapses: once replaced, it misses the new primary's writes"},
	},
	Params: []protocol.Param{
		{Name: "clients", Doc: "client sessions, each running its operations one at a time", Default: "2", Int: true, Min: 1, Max: 3},
		{Name: "ops", Doc: "operations per session (put then get, or get then put)", Default: "2", Int: true, Min: 1, Max: 2},
		{Name: "history", Doc: "on: the client node records the history and the check has the property linearizable; off: neither, to measure what the check costs", Default: "on"},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		b := bugs{readBackup: cfg.HasBug("read-backup"), earlyAck: cfg.HasBug("early-ack"), staleLease: cfg.HasBug("stale-lease")}
		clients := cfg.IntParam("clients")
		record := true
		switch h := cfg.Param("history"); h {
		case "", "on":
		case "off":
			record = false
		default:
			return nil, fmt.Errorf("--history must be on or off, not %q", h)
		}
		props := []properties.Property{properties.Linearizable(Spec)}
		if !record {
			// A canary keeps the check honest that it ran the clients.
			props = []properties.Property{properties.SometimesNode("served", "some operation returned",
				func(c *Clients) bool {
					return slices.ContainsFunc(c.Sessions, func(s Session) bool { return s.Seq > 0 && !s.Waiting })
				})}
		}
		return &protocol.Model{
			Spec: sim.Spec{
				New: func(id sim.NodeID) sim.Node {
					if id == clientsNode {
						c := &Clients{Sessions: make([]Session, clients), off: !record}
						if record {
							c.H = properties.NewHistory(Spec)
						}
						return c
					}
					return &Replica{bugs: b}
				},
				Transport: sim.Datagram,
				Calls:     Workload(clients, cfg.IntParam("ops")),
			},
			Properties: props,
			// Run for real, node 1 suspects the primary after 2.5 s: a
			// nemesis has the time to cut the primary off before
			// (cluster --nemesis partition:0,...).
			Timers: map[string]protocol.Timing{"takeover": {After: 2500 * time.Millisecond, Jitter: 100 * time.Millisecond}},
		}, nil
	},
}
