// Package onepaxos is 1Paxos, the Multi-Paxos with one active acceptor in
// which the local model checking paper found a bug (its section 5.6),
// built as two layers of one node (sim.Stack): PaxosUtility, the
// consensus service that names the leader and the acceptor, and 1Paxos
// above it. The utility is a short log of entries, each decided by its
// own instance of the bundled single-decree Paxos (package paxos, every
// node proposer, acceptor and learner, majority quorums) run inside the
// lower layer: the same code, not a copy.
//
// In 1Paxos one node, the global leader, proposes values, and one node,
// the active acceptor, accepts them; the last LeaderChange and the last
// AcceptorChange entries decided by the utility name the two. Every node
// caches them: a node starts with the leader and the acceptor the member
// list gives (its first and second members) and updates them when the
// utility decides a change. The leader consults its cache, not the
// utility, so an old leader that has not heard of a change keeps
// proposing to the acceptor it knows.
//
//   - The leader of epoch e sends Accept{e, v} to its acceptor. The
//     acceptor accepts unless it promised a higher epoch, and sends
//     Learn{e, v} to every node. With one acceptor, its acceptance is the
//     quorum: a node chooses the value of the first Learn it receives.
//   - A node told that the leader failed (the driver's Suspect call: its
//     fault detector fired) asks the utility to make it leader
//     (LeaderChange). When the utility decides the change, every node
//     updates its leader and acceptor; the new leader runs phase 1 with
//     the acceptor the decision names (Prepare{e}; the acceptor promises
//     and returns what it accepted), then proposes the accepted value if
//     there is one, its own otherwise.
//   - A node told that the acceptor failed (the driver's
//     SuspectAcceptor call) replaces it with the backup, the next member
//     after it that is not the leader, once it leads and has completed
//     phase 1 with it: it asks the utility for an AcceptorChange. When
//     the change is decided, the leader starts the
//     new epoch with phase 1 with the backup, and proposes again the
//     value it proposed through the old acceptor (or the backup's, if the
//     backup accepted one in a later epoch).
//
// # The utility
//
// The utility's log has Slots entries; entry k is decided by the Paxos
// instance of slot k, whose messages travel tagged with the slot (Slot).
// A node asks for a change in the first slot it has not seen decided, and
// the configuration is what the decided entries give, applied in slot
// order from the initial one: epoch 1 is the member list's, and the
// entry of slot k makes epoch k+2. A node learns a configuration once
// every slot before it is decided, and hands each new one up (Decided).
//
// # Safety of the acceptor change
//
// A value is chosen once an active acceptor accepts it. The leader asks
// to replace its acceptor only once phase 1 of its epoch has completed
// with it: then it knows every value the old acceptor could hold, since
// the old acceptor promised its epoch (and so accepts no lower one), its
// promise carried what it had accepted before, and in this epoch it can
// only accept what the leader proposed, which the leader's phase 1 took
// from that promise whenever it had one. No higher epoch reaches the old
// acceptor: the utility decides entries one slot after the other, so the
// next epoch is the replacement's, whose acceptor is the backup. The
// backup has accepted nothing in an epoch as high as the leader's
// (Accept goes only to the acceptor a configuration names), so its
// promise says nothing of use, and the leader must propose again the
// value it proposed in its earlier epoch: whatever may have been chosen
// through the old acceptor is that value, and it is the one the backup
// accepts. Until phase 1 has completed with the old acceptor the leader
// keeps it, suspected or not: what it accepted is unknown, and replacing
// it could lose a chosen value. A leader change after the replacement
// runs phase 1 with the backup, which holds the value.
//
// The model keeps what the bugs need and no more: three nodes or more
// (members 0 to N-1), datagrams, no failures (the utility is Paxos, whose
// acceptors need stable storage: resets are refused). One slot of the
// replicated log of 1Paxos (one index k: the bug is on a single index,
// and other indexes would only add copies of it). The utility holds two
// entries: the driver asks node 0, the initial leader, to propose 100,
// and node N-1 to suspect the leader, then, with the parameter
// acceptor-change on, the acceptor. So node N-1 asks for a LeaderChange
// in slot 0, and, once it leads and has completed phase 1, for an
// AcceptorChange in slot 1 (on three nodes the backup is node 0, the old
// leader): a suspicion that comes earlier waits until then. A node's own
// value is 100 plus its id, so the new leader proposes 102 on three nodes
// unless the acceptor has accepted 100.
//
// The acceptor change is off by default: with it the correct version's
// global check takes twice as long, and its local check, which ends
// proved without it, outgrows memory. Its bugs lie 25 steps deep or
// more, past the search's default depth of 16: the walks from the depth
// bound find them.
//
// The safety property agreement says no two nodes choose different
// values (with a per-node filter and a pairwise form for local model
// checking); the liveness property chosen says every node eventually
// chooses a value, which holds in every run of the correct version: each
// change is always decided (one proposer per slot, no failures), the
// leader's phase 1 and phase 2 with its acceptor always succeed (no other
// epoch is higher), and the acceptor tells every node. The canary
// leader-changed says some node learned the leader change, and, with the
// acceptor change on, acceptor-changed says the backup accepted a value.
//
// Injectable bugs:
//
//   - init-acceptor: the initialization takes the first member as the
//     acceptor where the second belongs, as the paper's
//     acceptor = *(members.begin()++) does: the post-increment returns
//     the iterator before it moves. Node 0 is then leader and, by its
//     own cache, acceptor; the utility's initial configuration, which
//     the new leader reads, stays right. Node 0 proposes 100 to itself,
//     accepts it and learns it from its own Learn, while node N-1, made
//     leader, has 102 accepted by node 1, the real acceptor, which never
//     heard of 100: two values chosen (agreement).
//   - forget-proposal (needs acceptor-change on): a leader starting a
//     new epoch forgets what it proposed before, as a new leader rightly
//     has nothing to remember, and relies on phase 1 to carry a possibly
//     chosen value forward. After an acceptor change phase 1 is with the
//     backup, which knows nothing: node N-1, having carried 100 (chosen
//     through node 1 in epoch 1) into epoch 2, proposes its own 102 in
//     epoch 3, which the backup accepts: two values chosen (agreement).
//   - replace-early (needs acceptor-change on): the leader replaces a
//     suspected acceptor as soon as it leads, without waiting for phase
//     1 with it, the condition forgotten. Node N-1, made leader before
//     it heard what node 1 accepted in epoch 1, runs phase 1 of epoch 3
//     with the empty backup and proposes its own 102, though 100 was
//     chosen through node 1 (agreement).
package onepaxos

import (
	"fmt"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/paxos"
)

// MaxNodes bounds the number of nodes, as the bundled Paxos does.
const MaxNodes = 5

// Slots is the number of entries of the utility's log: a LeaderChange
// and an AcceptorChange.
const Slots = 2

// Config is a configuration of 1Paxos: its epoch (1 the initial one, k+2
// the one the utility's entry of slot k makes), the global leader and the
// active acceptor.
type Config struct {
	Epoch            int
	Leader, Acceptor sim.NodeID
}

// initial is the configuration the member list gives (members 0 to N-1):
// the first member leads, the second accepts.
var initial = Config{Epoch: 1, Leader: 0, Acceptor: 1}

// An entry of the utility's log is a Paxos value: 1000+L for a
// LeaderChange to L, 2000+A for an AcceptorChange to A.
const (
	leaderEntry   = 1000
	acceptorEntry = 2000
)

// apply returns the configuration that entry v, decided in slot k, makes
// of c.
func (c Config) apply(k, v int) Config {
	c.Epoch = k + 2
	switch v / 1000 * 1000 {
	case leaderEntry:
		c.Leader = sim.NodeID(v % 1000)
	case acceptorEntry:
		c.Acceptor = sim.NodeID(v % 1000)
	}
	return c
}

// Messages between the layers of a node.

// LeaderChange asks the node's own utility (sent by 1Paxos to its own
// node) to decide that Leader leads.
type LeaderChange struct{ Leader sim.NodeID }

// AcceptorChange asks the node's own utility to decide that Acceptor is
// the active acceptor.
type AcceptorChange struct{ Acceptor sim.NodeID }

// Decided is a configuration the utility decided, handed up to 1Paxos.
type Decided struct{ Config Config }

// Carry is a message of 1Paxos on the wire, carried by the utility.
type Carry struct{ Msg sim.Message }

// Slot is a message of the Paxos instance of the utility's slot Index.
type Slot struct {
	Index int
	Msg   sim.Message
}

// Messages of 1Paxos.

// Prepare starts phase 1 of a new leader's epoch with the acceptor.
type Prepare struct{ Epoch int }

// Promise answers Prepare: the acceptor accepts no lower epoch. It
// carries what the acceptor accepted (epoch 0: nothing).
type Promise struct{ Epoch, AccEpoch, AccValue int }

// Accept asks the acceptor to accept Value in Epoch.
type Accept struct{ Epoch, Value int }

// Learn tells a node that the acceptor accepted Value in Epoch: with one
// acceptor, that Value is chosen.
type Learn struct{ Epoch, Value int }

// Driver calls.

// Propose asks the leader to propose Value.
type Propose struct{ Value int }

// Suspect tells a node that its fault detector suspects the leader.
type Suspect struct{}

// SuspectAcceptor tells a node that its fault detector suspects the
// active acceptor: the leader replaces it with the backup.
type SuspectAcceptor struct{}

// Utility is the PaxosUtility layer: one bundled Paxos node per slot of
// its log, which it hands their slot's messages and a change request as a
// proposal, and a carrier of 1Paxos's messages. When the decided entries
// make a new configuration, it hands it up.
type Utility struct {
	Paxos [Slots]paxos.Node

	// The context a slot's Paxos node handles an event with, kept here
	// so that wrapping the layer's context allocates nothing.
	ctx slotCtx `livecheck:"-"`
}

// A slotCtx tags what a slot's Paxos node sends with the slot, and its
// log lines.
type slotCtx struct {
	sim.Context
	index int
}

func (c *slotCtx) Send(to sim.NodeID, msg sim.Message) {
	c.Context.Send(to, Slot{Index: c.index, Msg: msg})
}

func (c *slotCtx) Logf(format string, args ...any) {
	c.Context.Logf("slot %d: %s", c.index, fmt.Sprintf(format, args...))
}

// NewUtility returns the utility layer of a node of a system of nodes
// nodes.
func NewUtility(nodes int) *Utility {
	u := &Utility{}
	for k := range u.Paxos {
		u.Paxos[k] = *paxos.NewNode(nodes)
	}
	return u
}

// decided is the number of slots decided from the first on, with no
// gap: the entries the configuration is made of.
func (u *Utility) decided() int {
	k := 0
	for k < Slots && u.Paxos[k].Chosen != 0 {
		k++
	}
	return k
}

// Current is the utility's configuration: the initial one with the
// decided entries applied in slot order.
func (u *Utility) Current() Config {
	c := initial
	for k := range u.decided() {
		c = c.apply(k, u.Paxos[k].Chosen)
	}
	return c
}

// run hands an event to slot k's Paxos node, with a context that tags
// what it sends.
func (u *Utility) run(ctx sim.Context, k int, f func(p *paxos.Node, ctx sim.Context)) {
	u.ctx = slotCtx{Context: ctx, index: k}
	f(&u.Paxos[k], &u.ctx)
	u.ctx = slotCtx{}
}

func (u *Utility) Init(ctx sim.Context) {
	for k := range u.Paxos {
		u.run(ctx, k, func(p *paxos.Node, ctx sim.Context) { p.Init(ctx) })
	}
}

// Down takes a message of 1Paxos: a change request becomes the node's
// Paxos proposal for the first slot it has not seen decided, anything
// else goes on the wire.
func (u *Utility) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	var v int
	switch c := msg.(type) {
	case LeaderChange:
		v = leaderEntry + int(c.Leader)
	case AcceptorChange:
		v = acceptorEntry + int(c.Acceptor)
	default:
		ctx.Send(to, Carry{Msg: msg})
		return
	}
	k := u.decided()
	if k == Slots {
		ctx.Logf("no slot left for %+v", msg)
		return
	}
	ctx.Logf("propose %+v in slot %d (value %d)", msg, k, v)
	u.run(ctx, k, func(p *paxos.Node, ctx sim.Context) { p.App(ctx, paxos.Propose{Value: v}) })
}

// Receive hands a carried message up and a slot's message to the slot's
// Paxos node, and a new configuration up once the decided entries make
// one.
func (u *Utility) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Carry:
		ctx.Deliver(from, m.Msg)
	case Slot:
		before := u.decided()
		u.run(ctx, m.Index, func(p *paxos.Node, ctx sim.Context) { p.Receive(ctx, from, m.Msg) })
		if u.decided() > before {
			ctx.Deliver(ctx.Self(), Decided{Config: u.Current()})
		}
	}
}

func (u *Utility) App(sim.Context, sim.AppCall)  {}
func (u *Utility) Timer(sim.Context, string)     {}
func (u *Utility) Error(sim.Context, sim.NodeID) {}

// DumpState is the Paxos nodes' dumps, by slot.
func (u *Utility) DumpState() string {
	s := ""
	for k := range u.Paxos {
		if k > 0 {
			s += " "
		}
		s += fmt.Sprintf("slot%d{%s}", k, u.Paxos[k].DumpState())
	}
	return s
}

// Replica is the 1Paxos layer of a node: its cached configuration, and
// its roles of leader, acceptor and learner for the one slot.
type Replica struct {
	// The configuration as this node knows it.
	Leader, Acceptor sim.NodeID

	// Leader.
	Epoch     int  // the epoch this node leads (0: it does not lead)
	Prepared  bool // the acceptor promised Epoch (the initial leader starts so)
	Proposed  int  // the value last sent in Accept, in this epoch or one it led before (0: none yet)
	PropEpoch int  // the epoch Proposed was sent in
	Suspected bool // asked the utility to make it leader
	AccFailed bool // its fault detector suspects the acceptor
	Replacing bool // asked the utility to replace the acceptor

	// Acceptor.
	Promised           int // highest epoch promised
	AccEpoch, AccValue int // what it accepted (epoch 0: nothing)

	// Learner.
	Chosen int // 0: nothing yet

	initAcceptor   bool `livecheck:"-"` // bug init-acceptor
	forgetProposal bool `livecheck:"-"` // bug forget-proposal
	replaceEarly   bool `livecheck:"-"` // bug replace-early
}

// Init caches the configuration the member list gives: the first member
// leads, the second accepts.
func (r *Replica) Init(ctx sim.Context) {
	members := make([]sim.NodeID, ctx.Nodes())
	for i := range members {
		members[i] = sim.NodeID(i)
	}
	r.Leader = members[0]
	r.Acceptor = members[1]
	if r.initAcceptor {
		r.Acceptor = members[0] // the slip: *(members.begin()++) is the first member
	}
	if r.Leader == ctx.Self() {
		r.Epoch, r.Prepared = initial.Epoch, true
	}
}

// App takes the driver's calls: Propose at the leader, Suspect and
// SuspectAcceptor anywhere.
func (r *Replica) App(ctx sim.Context, call sim.AppCall) {
	switch c := call.(type) {
	case Propose:
		if r.Epoch == 0 {
			ctx.Logf("not proposing %d: %d leads", c.Value, r.Leader)
			return
		}
		if !r.Prepared || r.Proposed != 0 {
			return // a new leader proposes after phase 1
		}
		r.propose(ctx, c.Value)
	case Suspect:
		if r.Leader == ctx.Self() || r.Acceptor == ctx.Self() || r.Suspected {
			return // the acceptor stays one: leader and acceptor must differ
		}
		r.Suspected = true
		ctx.Logf("leader %d suspected: ask the utility to make %d leader", r.Leader, ctx.Self())
		ctx.Send(ctx.Self(), LeaderChange{Leader: ctx.Self()})
	case SuspectAcceptor:
		r.AccFailed = true
		r.replaceAcceptor(ctx)
	}
}

// replaceAcceptor asks the utility to replace a suspected acceptor with
// the backup, once: at the leader, and only once phase 1 of its epoch has
// completed with the acceptor (before, what it accepted is unknown, and
// replacing it could lose a chosen value). Until then the suspicion
// waits, as a fault detector goes on suspecting.
func (r *Replica) replaceAcceptor(ctx sim.Context) {
	if !r.AccFailed || r.Replacing || r.Epoch == 0 || !r.Prepared && !r.replaceEarly {
		return
	}
	r.Replacing = true
	b := r.backup(ctx)
	ctx.Logf("acceptor %d suspected: ask the utility to make %d acceptor", r.Acceptor, b)
	ctx.Send(ctx.Self(), AcceptorChange{Acceptor: b})
}

// backup is the node that replaces the acceptor: the next member after
// it that is not the leader.
func (r *Replica) backup(ctx sim.Context) sim.NodeID {
	b := r.Acceptor
	for {
		b = (b + 1) % sim.NodeID(ctx.Nodes())
		if b != r.Leader {
			return b
		}
	}
}

// propose sends Accept for v to the cached acceptor, whoever the
// utility now names.
func (r *Replica) propose(ctx sim.Context, v int) {
	r.Proposed, r.PropEpoch = v, r.Epoch
	ctx.Send(r.Acceptor, Accept{Epoch: r.Epoch, Value: v})
}

func (r *Replica) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Decided:
		r.decided(ctx, m.Config)
	case Prepare:
		if m.Epoch <= r.Promised {
			return
		}
		r.Promised = m.Epoch
		ctx.Send(from, Promise{Epoch: m.Epoch, AccEpoch: r.AccEpoch, AccValue: r.AccValue})
	case Promise:
		if m.Epoch != r.Epoch || r.Prepared {
			return
		}
		r.Prepared = true
		// The value of the highest epoch known may be chosen already:
		// what the acceptor accepted, or what this node proposed as
		// leader of an earlier epoch, through another acceptor.
		v := 100 + int(ctx.Self())
		switch {
		case m.AccEpoch != 0 && m.AccEpoch >= r.PropEpoch:
			v = m.AccValue
			ctx.Logf("epoch %d carries forward %d accepted in epoch %d", r.Epoch, v, m.AccEpoch)
		case r.Proposed != 0:
			v = r.Proposed
			ctx.Logf("epoch %d proposes again %d proposed in epoch %d", r.Epoch, v, r.PropEpoch)
		}
		r.propose(ctx, v)
		r.replaceAcceptor(ctx)
	case Accept:
		if m.Epoch < r.Promised {
			ctx.Logf("reject %d of epoch %d: promised %d", m.Value, m.Epoch, r.Promised)
			return
		}
		r.Promised = m.Epoch
		r.AccEpoch, r.AccValue = m.Epoch, m.Value
		for i := range ctx.Nodes() {
			ctx.Send(sim.NodeID(i), Learn{Epoch: m.Epoch, Value: m.Value})
		}
	case Learn:
		if r.Chosen == 0 {
			r.Chosen = m.Value
			ctx.Logf("chose %d (epoch %d, accepted by %d)", m.Value, m.Epoch, from)
		}
	}
}

// decided takes a configuration the utility decided: its leader starts
// the new epoch with phase 1 with the acceptor it names, and an old
// leader stops leading.
func (r *Replica) decided(ctx sim.Context, c Config) {
	r.Leader, r.Acceptor = c.Leader, c.Acceptor
	if c.Leader != ctx.Self() {
		if r.Epoch != 0 {
			ctx.Logf("no longer the leader: %d leads epoch %d", c.Leader, c.Epoch)
		}
		r.Epoch, r.Prepared = 0, false
		return
	}
	r.Epoch, r.Prepared = c.Epoch, false
	if r.forgetProposal {
		r.Proposed, r.PropEpoch = 0, 0 // the slip: a new epoch is not a new leader
	}
	ctx.Logf("leader of epoch %d with acceptor %d", c.Epoch, c.Acceptor)
	ctx.Send(c.Acceptor, Prepare{Epoch: c.Epoch})
	r.replaceAcceptor(ctx) // waits for phase 1, unless replace-early
}

func (r *Replica) Timer(sim.Context, string)     {}
func (r *Replica) Error(sim.Context, sim.NodeID) {}

// Agreement is the safety property: no two nodes choose different values.
var Agreement = func() properties.Property {
	p := properties.AlwaysPairs("agreement", "no two nodes choose different values",
		func(a, b *Replica) error {
			if a.Chosen != 0 && b.Chosen != 0 && a.Chosen != b.Chosen {
				return fmt.Errorf("one chose %d, the other %d", a.Chosen, b.Chosen)
			}
			return nil
		})
	p.Filter = func(_ sim.NodeID, n sim.Node) bool {
		r, ok := sim.LayerOf[*Replica](n)
		return ok && r.Chosen != 0
	}
	return p
}()

// Chosen is the liveness property: every node has chosen a value.
var Chosen = properties.EventuallyEach("chosen", "every node has chosen a value",
	func(r *Replica) bool { return r.Chosen != 0 })

// LeaderChanged is the canary: some node learned the utility's decision.
var LeaderChanged = properties.SometimesNode("leader-changed", "some node learned the leader change the utility decided",
	func(r *Replica) bool { return r.Leader != initial.Leader })

// AcceptorChanged is the canary of the acceptor change: the backup
// accepted a value in the epoch the change makes, the last slot's (the
// driver asks for the leader change first).
var AcceptorChanged = properties.SometimesNode("acceptor-changed", "the backup acceptor accepted a value after the acceptor change",
	func(r *Replica) bool { return r.AccEpoch == initial.Epoch+Slots })

// checked are the properties a check has: acceptor-changed only with
// --acceptor-change on, since without it no acceptor changes. `livecheck
// list` names them all.
func checked(acceptorChange bool) []properties.Property {
	props := []properties.Property{Agreement, Chosen, LeaderChanged}
	if acceptorChange {
		props = append(props, AcceptorChanged)
	}
	return props
}

// System is 1Paxos over PaxosUtility as livecheck checks it.
var System = protocol.System{
	Name:         "onepaxos",
	Doc:          "1Paxos: Multi-Paxos with one active acceptor, leader and acceptor named by a PaxosUtility that is the bundled Paxos as a lower layer",
	DefaultNodes: 3,
	MinNodes:     3,
	MaxNodes:     MaxNodes,
	DefaultDepth: 16,
	Bugs: []protocol.Bug{
		{Name: "init-acceptor", Doc: "the initial acceptor is the first member, the leader itself (the paper's members.begin()++): the old leader accepts its own value while the new leader has another chosen (agreement)",
			Needs: protocol.Needs{Nodes: 3}},
		{Name: "forget-proposal", Doc: "a leader starting a new epoch forgets the value it proposed in the one before, as if it were a new leader: after an acceptor change the backup, which knows nothing, accepts the leader's own value though another was chosen through the old acceptor (agreement)",
			Needs: protocol.Needs{Nodes: 3, Params: map[string]string{"acceptor-change": "on"}}},
		{Name: "replace-early", Doc: "the new leader replaces a suspected acceptor before phase 1 with it has completed, not knowing what it accepted: the backup accepts the leader's own value though another was chosen through the old acceptor (agreement)",
			Needs: protocol.Needs{Nodes: 3, Params: map[string]string{"acceptor-change": "on"}}},
	},
	Params: []protocol.Param{
		{Name: "acceptor-change", Doc: "on: node N-1 is also told the acceptor failed, and once it leads and has completed phase 1 replaces it with the backup through the utility (a second entry); off: no acceptor change", Default: "off"},
	},
	Properties: protocol.Docs(checked(true)...),
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		if cfg.Budget.Resets > 0 {
			return nil, fmt.Errorf("onepaxos cannot be checked with resets: its utility is Paxos, whose acceptors need stable storage, which simulated nodes lack; use --drops for failures")
		}
		calls := []sim.Call{
			{To: 0, Call: Propose{Value: 100}},
			{To: sim.NodeID(cfg.Nodes - 1), Call: Suspect{}},
		}
		acceptorChange := false
		switch a := cfg.Param("acceptor-change"); a {
		case "", "off":
			for _, bug := range []string{"forget-proposal", "replace-early"} {
				if cfg.HasBug(bug) {
					return nil, fmt.Errorf("bug %s needs --acceptor-change on: without it no acceptor is replaced", bug)
				}
			}
		case "on":
			// Calls to one node come in order: the acceptor is suspected
			// after the leader.
			calls = append(calls, sim.Call{To: sim.NodeID(cfg.Nodes - 1), Call: SuspectAcceptor{}})
			acceptorChange = true
		default:
			return nil, fmt.Errorf("--acceptor-change must be on or off, not %q", a)
		}
		initAcceptor, forgetProposal, replaceEarly := cfg.HasBug("init-acceptor"), cfg.HasBug("forget-proposal"), cfg.HasBug("replace-early")
		return &protocol.Model{
			Spec: sim.Spec{
				New: func(sim.NodeID) sim.Node {
					return sim.Stack(
						sim.Layer{Name: "utility", Node: NewUtility(cfg.Nodes)},
						sim.Layer{Name: "onepaxos", Node: &Replica{initAcceptor: initAcceptor, forgetProposal: forgetProposal, replaceEarly: replaceEarly}})
				},
				Transport: sim.Datagram,
				Calls:     calls,
			},
			Properties: checked(acceptorChange),
		}, nil
	},
}
