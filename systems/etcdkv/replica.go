package etcdkv

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.etcd.io/raft/v3"

	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// tick is a replica's one timer: a tick of raft's logical clock.
const tick = "tick"

// Replica is one replica: etcd's RawNode over a MemoryStorage, with the
// store around it.
type Replica struct {
	sim.BaseNode

	// Storage is the replica's disk, kept across a reset.
	Storage *raft.MemoryStorage `livecheck:"durable"`
	// Raft is the raft state machine, built again from Storage at every
	// start.
	Raft *raft.RawNode

	// Applied is the store: the entries applied, in log order. A
	// restart rebuilds it from the committed entries on the disk.
	Applied []etcdraft.Entry
	// Puts are the puts raft took from this replica, answered once
	// applied here.
	Puts []Req
	// Reads are the gets raft took from this replica: Index is their
	// read index once raft gave it (0 until then), and the get is
	// answered once the store has applied up to it.
	Reads []Read
	// Refused are requests raft dropped because no leader was known:
	// tried again at every tick.
	Refused []Req

	// Term, Lead and State are raft's after the last handler, for the
	// properties, which must not call into raft.
	Term  uint64
	Lead  uint64
	State raft.StateType

	// Acked are the ids of the puts acknowledged to their clients: what
	// acked-applied reads, kept across resets, as a client remembers.
	Acked []int `livecheck:"durable"`

	cfg *config `livecheck:"-"`
}

// Read is a get under way at a replica.
type Read struct {
	Req
	Index uint64
}

// config is one configuration's settings, shared by the nodes.
type config struct {
	etcdraft.Settings
	ops       []Op // by id less one: the driver's operations
	leaseRead bool
}

// Init starts the replica: it bootstraps its disk on its first start,
// and builds raft from it on every start.
func (n *Replica) Init(ctx sim.Context) {
	if n.Storage == nil {
		n.Storage = etcdraft.Bootstrap(n.cfg.Nodes)
	}
	n.Raft = etcdraft.NewRawNode(ctx.Self(), n.Storage, n.cfg.Settings)
	ctx.SetTimer(tick)
	n.ready(ctx)
}

// Receive steps raft with a peer's message, or runs a client's request.
func (n *Replica) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case etcdraft.Msg:
		// An error is raft refusing a message it should not get:
		// nothing to do but drop it.
		_ = n.Raft.Step(m.Message())
	case Req:
		n.request(ctx, m)
	default:
		panic(fmt.Sprintf("replica %d got a %T", ctx.Self(), msg))
	}
	n.ready(ctx)
}

// Timer ticks raft's clock, and tries again the requests raft dropped.
func (n *Replica) Timer(ctx sim.Context, name string) {
	n.Raft.Tick()
	refused := n.Refused
	n.Refused = nil
	for _, r := range refused {
		n.request(ctx, r)
	}
	n.ready(ctx)
	ctx.SetTimer(tick)
}

// Error tells raft that the connection to a peer broke (transport
// stream), as etcdraft does; one to the client node needs nothing.
func (n *Replica) Error(ctx sim.Context, peer sim.NodeID) {
	if int(peer) < n.cfg.Nodes {
		n.Raft.ReportUnreachable(etcdraft.RaftID(peer))
	}
	n.ready(ctx)
}

// request hands a client's operation to raft: a put as a proposal, a get
// as a read index request. Raft drops either while no leader is known:
// the replica tries it again at its next tick.
func (n *Replica) request(ctx sim.Context, r Req) {
	if r.Op.Put {
		err := n.Raft.Propose(etcdraft.ProposalData(r.ID))
		switch {
		case err == nil:
			n.Puts = append(n.Puts, r)
		case errors.Is(err, raft.ErrProposalDropped):
			n.Refused = append(n.Refused, r)
		default:
			panic(fmt.Sprintf("propose %d: %v", r.ID, err))
		}
		return
	}
	if n.cfg.leaseRead && n.State == raft.StateLeader { // the bug: a leader trusts it still is
		n.answer(ctx, r, n.value(r.Op.Key))
		return
	}
	// ReadIndex says nothing when it drops the request: a follower
	// with no leader ignores it, and so does a candidate.
	if n.Raft.BasicStatus().Lead == raft.None {
		n.Refused = append(n.Refused, r)
		return
	}
	n.Reads = append(n.Reads, Read{Req: r})
	n.Raft.ReadIndex(etcdraft.ProposalData(r.ID))
}

// ready is the Ready loop of raft's doc.go, as etcdraft's: persist, send,
// apply the committed entries (answering this replica's puts among
// them), then the read states (answering the gets whose read index is
// applied), then Advance.
func (n *Replica) ready(ctx sim.Context) {
	for n.Raft.HasReady() {
		rd := n.Raft.Ready()
		etcdraft.Persist(n.Storage, rd)
		etcdraft.Send(ctx, rd)
		for _, e := range rd.CommittedEntries {
			ent := etcdraft.EntryOf(e)
			n.Applied = append(n.Applied, ent)
			if i := slices.IndexFunc(n.Puts, func(r Req) bool { return r.ID == ent.ID }); ent.ID != 0 && i >= 0 {
				r := n.Puts[i]
				n.Puts = slices.Delete(n.Puts, i, i+1)
				n.Acked = append(n.Acked, r.ID)
				n.answer(ctx, r, 0)
			}
		}
		for _, rs := range rd.ReadStates {
			id := readID(rs.RequestCtx)
			if i := slices.IndexFunc(n.Reads, func(r Read) bool { return r.ID == id && r.Index == 0 }); i >= 0 {
				n.Reads[i].Index = rs.Index
			}
		}
		n.serveReads(ctx)
		n.Raft.Advance(rd)
	}
	st := n.Raft.BasicStatus()
	n.Term, n.Lead, n.State = st.GetTerm(), st.Lead, st.RaftState
}

// serveReads answers the gets whose read index the store has applied.
func (n *Replica) serveReads(ctx sim.Context) {
	applied := uint64(len(n.Applied))
	var left []Read
	for _, r := range n.Reads {
		if r.Index == 0 || r.Index > applied {
			left = append(left, r)
			continue
		}
		n.answer(ctx, r.Req, n.value(r.Op.Key))
	}
	if len(left) != len(n.Reads) {
		n.Reads = left
	}
}

// readID is the id of the get whose request context is ctx.
func readID(ctx []byte) int {
	if len(ctx) < 2 || ctx[0] != 'p' {
		panic(fmt.Sprintf("a read state with context %q, which no get of this system has", ctx))
	}
	id, err := strconv.Atoi(string(ctx[1:]))
	if err != nil {
		panic(fmt.Sprintf("a read state with context %q, which no get of this system has", ctx))
	}
	return id
}

// value is key's value in the store: the last put of it applied.
func (n *Replica) value(key string) int {
	for _, e := range slices.Backward(n.Applied) {
		if e.ID == 0 {
			continue
		}
		if op := n.cfg.ops[e.ID-1]; op.Put && op.Key == key {
			return op.Val
		}
	}
	return 0
}

// answer sends request r's answer to the client node.
func (n *Replica) answer(ctx sim.Context, r Req, val int) {
	ctx.Send(sim.NodeID(n.cfg.Nodes), Resp{Client: r.Client, Seq: r.Seq, Val: val})
}

// DumpState shows raft's role and term, the store and what is under way.
func (n *Replica) DumpState() string {
	lead := "none"
	if n.Lead != raft.None {
		lead = strconv.Itoa(int(etcdraft.NodeID(n.Lead)))
	}
	s := fmt.Sprintf("%s t%d lead=%s applied=%v", n.State, n.Term, lead, n.Applied)
	if len(n.Puts) > 0 {
		s += fmt.Sprintf(" puts=%v", n.Puts)
	}
	if len(n.Reads) > 0 {
		s += fmt.Sprintf(" reads=%v", n.Reads)
	}
	if len(n.Refused) > 0 {
		s += fmt.Sprintf(" refused=%v", n.Refused)
	}
	if len(n.Acked) > 0 {
		s += fmt.Sprintf(" acked=%v", n.Acked)
	}
	return s
}
