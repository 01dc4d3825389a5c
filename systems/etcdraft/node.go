package etcdraft

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.etcd.io/raft/v3"

	"github.com/livecheck/livecheck/sim"
)

// Propose is the driver's call: propose proposal ID (1, 2, ...).
type Propose struct{ ID int }

// tick is the one timer of a node: a tick of raft's logical clock.
const tick = "tick"

// Node is one raft node: etcd's RawNode over a MemoryStorage, with the
// application around it, as an application of go.etcd.io/raft writes it.
type Node struct {
	sim.BaseNode

	// Storage is the node's disk: the entries and the HardState it
	// persisted, and the membership it was bootstrapped with. A reset
	// keeps it and loses everything else.
	Storage *raft.MemoryStorage `livecheck:"durable"`
	// Raft is the raft state machine, built again from Storage at every
	// start.
	Raft *raft.RawNode

	// Applied is the application's state: the entries applied, in order.
	// It is not persisted: a restart rebuilds it from the committed
	// entries in Storage, which raft hands over again.
	Applied []Entry
	// Proposed are the proposals raft took from this node and that it
	// has not applied yet: each is acknowledged to its client once
	// applied here.
	Proposed []int
	// Refused are proposals raft dropped because no leader was known
	// (raft.ErrProposalDropped, documented): the client tries them again
	// at every tick until raft takes them. A proposal raft took and then
	// lost (forwarded to a leader that fell) is not retried: only an
	// acknowledged proposal is owed.
	Refused []int

	// Term, Lead and State are raft's soft and hard state after the last
	// handler, kept as plain values for the properties, which must not
	// call into raft (its storage counts its readers).
	Term  uint64
	Lead  uint64
	State raft.StateType

	// History the properties read, which no handler reads: it records what
	// clients and observers saw, so a reset does not erase it.
	//
	// Led are the terms in which this node became leader, in order.
	Led []uint64 `livecheck:"durable"`
	// Acked are the proposals acknowledged to their clients, in order.
	Acked []int `livecheck:"durable"`

	// Unsynced is, with bug send-before-persist, the Ready whose messages
	// left before its write: the write lands at the node's next event,
	// unless a reset comes first. Always nil otherwise.
	Unsynced *raft.Ready

	cfg *config `livecheck:"-"`
}

// config is one configuration's settings, shared by the nodes.
type config struct {
	Settings
	sendBeforePersist bool
	forgetHardState   bool
	applyUncommitted  bool
	ackBeforeApply    bool
}

// Init starts the node: on its first start it bootstraps the membership
// into its storage; on every start it builds raft from the storage.
func (n *Node) Init(ctx sim.Context) {
	if n.Storage == nil {
		n.Storage = Bootstrap(n.cfg.Nodes)
	}
	n.Raft = NewRawNode(ctx.Self(), n.Storage, n.cfg.Settings)
	ctx.SetTimer(tick)
	n.ready(ctx)
}

// Receive steps raft with a message from a peer.
func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	n.landWrite(ctx)
	m, ok := msg.(Msg)
	if !ok {
		panic(fmt.Sprintf("node %d got a %T, not a raft message", ctx.Self(), msg))
	}
	// An error is raft refusing a message it should not get (a local
	// type, a response from a stranger): nothing to do but drop it.
	_ = n.Raft.Step(m.Message())
	n.ready(ctx)
}

// Timer ticks raft's clock, and tries again the proposals raft refused.
func (n *Node) Timer(ctx sim.Context, name string) {
	n.landWrite(ctx)
	n.Raft.Tick()
	refused := n.Refused
	n.Refused = nil
	for _, id := range refused {
		n.propose(id)
	}
	n.ready(ctx)
	ctx.SetTimer(tick)
}

// App proposes the driver's proposal.
func (n *Node) App(ctx sim.Context, call sim.AppCall) {
	n.landWrite(ctx)
	p, ok := call.(Propose)
	if !ok {
		panic(fmt.Sprintf("node %d got a %T, not a Propose", ctx.Self(), call))
	}
	n.propose(p.ID)
	n.ready(ctx)
}

// Error tells raft that the connection to peer broke (transport
// stream): what it had in flight there is lost. A leader then probes
// the peer again rather than stream entries into the void, as etcd's
// transport reports a peer it cannot reach.
func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {
	n.landWrite(ctx)
	n.Raft.ReportUnreachable(RaftID(peer))
	n.ready(ctx)
}

// propose hands proposal id to raft, which appends it (leader), forwards
// it (follower) or drops it (no leader known: the client tries again).
func (n *Node) propose(id int) {
	err := n.Raft.Propose(ProposalData(id))
	switch {
	case err == nil:
		n.Proposed = append(n.Proposed, id)
	case errors.Is(err, raft.ErrProposalDropped):
		n.Refused = append(n.Refused, id)
	default:
		panic(fmt.Sprintf("propose %d: %v", id, err))
	}
}

// ready is the Ready loop that raft's doc.go prescribes, run at the end of
// every handler until raft has nothing more to hand over: persist the
// entries and the HardState, then send the messages, then apply the
// committed entries, then Advance.
func (n *Node) ready(ctx sim.Context) {
	for n.Raft.HasReady() {
		rd := n.Raft.Ready()
		if n.cfg.sendBeforePersist {
			Send(ctx, rd)
			n.Unsynced = &rd // the bug: the write lands later, after the messages left
			break
		}
		n.persist(rd)
		Send(ctx, rd)
		n.apply(ctx, rd)
		n.Raft.Advance(rd)
	}
	n.observe()
}

// landWrite completes, with bug send-before-persist, the write of the
// Ready whose messages already left: at the node's next event, before it
// handles it. What raft has ready after it goes out with the event's own,
// in the Ready loop at the handler's end.
func (n *Node) landWrite(ctx sim.Context) {
	if n.Unsynced == nil {
		return
	}
	rd := *n.Unsynced
	n.Unsynced = nil
	n.persist(rd)
	n.apply(ctx, rd)
	n.Raft.Advance(rd)
}

// persist writes a Ready's snapshot, HardState and entries to the disk;
// with bug forget-hardstate, all but the HardState.
func (n *Node) persist(rd raft.Ready) {
	if n.cfg.forgetHardState {
		rd.HardState = nil // the bug: the HardState is never written
	}
	Persist(n.Storage, rd)
}

// apply applies a Ready's committed entries to the application and
// acknowledges this node's proposals among them to their clients.
func (n *Node) apply(ctx sim.Context, rd raft.Ready) {
	ents := rd.CommittedEntries
	if n.cfg.applyUncommitted {
		ents = rd.Entries
	}
	for _, e := range ents {
		n.Applied = append(n.Applied, EntryOf(e))
	}
	acks := ents
	if n.cfg.ackBeforeApply {
		acks = rd.Entries
	}
	for _, e := range acks {
		n.ack(ctx, EntryOf(e).ID)
	}
}

// ack acknowledges proposal id to its client if this node proposed it.
func (n *Node) ack(ctx sim.Context, id int) {
	i := slices.Index(n.Proposed, id)
	if id == 0 || i < 0 {
		return
	}
	n.Proposed = slices.Delete(n.Proposed, i, i+1)
	if !slices.Contains(n.Acked, id) {
		n.Acked = append(n.Acked, id)
		ctx.Logf("acknowledged proposal %d", id)
	}
}

// observe copies raft's state for the properties, and records a term in
// which the node became leader.
func (n *Node) observe() {
	st := n.Raft.BasicStatus()
	term := st.GetTerm()
	if st.RaftState == raft.StateLeader && (n.State != raft.StateLeader || n.Term != term) {
		n.Led = append(n.Led, term)
	}
	n.Term, n.Lead, n.State = term, st.Lead, st.RaftState
}

// DumpState shows what the properties read: raft's role and term, what
// the application applied and acknowledged, and the terms led.
func (n *Node) DumpState() string {
	// The leader as livecheck's node id, as every report names nodes.
	lead := "none"
	if n.Lead != raft.None {
		lead = strconv.Itoa(int(NodeID(n.Lead)))
	}
	s := fmt.Sprintf("%s t%d lead=%s applied=%v", n.State, n.Term, lead, n.Applied)
	if len(n.Proposed) > 0 {
		s += fmt.Sprintf(" proposed=%v", n.Proposed)
	}
	if len(n.Refused) > 0 {
		s += fmt.Sprintf(" refused=%v", n.Refused)
	}
	if len(n.Acked) > 0 {
		s += fmt.Sprintf(" acked=%v", n.Acked)
	}
	if len(n.Led) > 0 {
		s += fmt.Sprintf(" led=%v", n.Led)
	}
	if n.Unsynced != nil {
		s += " unsynced"
	}
	return s
}
