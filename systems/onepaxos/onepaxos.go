// Package onepaxos is 1Paxos, the Multi-Paxos with one active acceptor in
// which the local model checking paper found a bug (its section 5.6),
// built as two layers of one node (sim.Stack): PaxosUtility, the
// consensus service that names the leader and the acceptor, and 1Paxos
// above it. The utility is the bundled single-decree Paxos (package
// paxos, every node proposer, acceptor and learner, majority quorums)
// run as a lower layer: the same code, not a copy.
//
// In 1Paxos one node, the global leader, proposes values, and one node,
// the active acceptor, accepts them; the last LeaderChange and
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
//     updates its leader and acceptor; the new leader, of epoch 2, runs
//     phase 1 with the acceptor the decision names (Prepare{2}; the
//     acceptor promises and returns what it accepted), then proposes the
//     accepted value if there is one, its own otherwise.
//
// The model keeps what the bug needs and no more: three nodes or more
// (members 0 to N-1), datagrams, no failures (the utility is Paxos, whose
// acceptors need stable storage: resets are refused). One slot of the
// replicated log (one index k: the bug is on a single index, and other
// indexes would only add copies of it). One leader change, since the
// utility is single-decree Paxos: its one decision is the configuration
// of epoch 2, encoded as the value 1LA (leader L, acceptor A: 1021 is
// leader 2, acceptor 1); the initial configuration, epoch 1, is the
// member list's and needs no decision. The acceptor does not fail, so
// no AcceptorChange is ever proposed: the decided acceptor is the
// utility's current one. The driver asks node 0, the initial leader, to
// propose 100, and node N-1 to suspect the leader; a node's own value
// is 100 plus its id, so the new leader proposes 102 on three nodes
// unless the acceptor has accepted 100.
//
// The safety property agreement says no two nodes choose different
// values (with a per-node filter and a pairwise form for local model
// checking); the liveness property chosen says every node eventually
// chooses a value, which holds in every run of the correct version: the
// leader change is always decided (one proposer, no failures), the new
// leader's phase 1 and phase 2 with the acceptor always succeed (no
// other epoch is higher), and the acceptor tells every node. The
// canary leader-changed says some node learned the change.
//
// Injectable bug:
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
package onepaxos

import (
	"fmt"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/paxos"
)

// MaxNodes bounds the number of nodes: a configuration is encoded in a
// value with one decimal digit per node id.
const MaxNodes = 5

// Config is a configuration of 1Paxos: its epoch (1 the initial one, 2
// the one the utility decides), the global leader and the active
// acceptor.
type Config struct {
	Epoch            int
	Leader, Acceptor sim.NodeID
}

// initial is the configuration the member list gives (members 0 to N-1):
// the first member leads, the second accepts.
var initial = Config{Epoch: 1, Leader: 0, Acceptor: 1}

// encode returns the utility's value for a configuration of epoch 2: 1LA.
func encode(leader, acceptor sim.NodeID) int { return 1000 + 10*int(leader) + int(acceptor) }

func decode(v int) Config {
	return Config{Epoch: 2, Leader: sim.NodeID(v / 10 % 10), Acceptor: sim.NodeID(v % 10)}
}

// Messages between the layers of a node.

// LeaderChange asks the node's own utility (sent by 1Paxos to its own
// node) to decide that Leader leads, with the utility's acceptor.
type LeaderChange struct{ Leader sim.NodeID }

// Decided is the utility's decision, handed up to 1Paxos.
type Decided struct{ Config Config }

// Carry is a message of 1Paxos on the wire, carried by the utility.
type Carry struct{ Msg sim.Message }

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

// Utility is the PaxosUtility layer: the bundled Paxos node, which it
// hands Paxos's messages and a LeaderChange request as a proposal, and a
// carrier of 1Paxos's messages. When Paxos chooses, it hands the decided
// configuration up.
type Utility struct {
	Paxos paxos.Node
}

// NewUtility returns the utility layer of a node of a system of nodes
// nodes.
func NewUtility(nodes int) *Utility { return &Utility{Paxos: *paxos.NewNode(nodes)} }

// Current is the utility's configuration: the decided one, or before a
// decision the initial one.
func (u *Utility) Current() Config {
	if u.Paxos.Chosen == 0 {
		return initial
	}
	return decode(u.Paxos.Chosen)
}

func (u *Utility) Init(ctx sim.Context) { u.Paxos.Init(ctx) }

// Down takes a message of 1Paxos: a LeaderChange becomes the node's
// Paxos proposal, anything else goes on the wire.
func (u *Utility) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	if c, ok := msg.(LeaderChange); ok {
		v := encode(c.Leader, u.Current().Acceptor)
		ctx.Logf("propose leader %d with acceptor %d (value %d)", c.Leader, u.Current().Acceptor, v)
		u.Paxos.App(ctx, paxos.Propose{Value: v})
		return
	}
	ctx.Send(to, Carry{Msg: msg})
}

// Receive hands a carried message up and Paxos's own to Paxos, and the
// decision up once Paxos chooses.
func (u *Utility) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if c, ok := msg.(Carry); ok {
		ctx.Deliver(from, c.Msg)
		return
	}
	before := u.Paxos.Chosen
	u.Paxos.Receive(ctx, from, msg)
	if before == 0 && u.Paxos.Chosen != 0 {
		ctx.Deliver(ctx.Self(), Decided{Config: u.Current()})
	}
}

func (u *Utility) App(sim.Context, sim.AppCall)  {}
func (u *Utility) Timer(sim.Context, string)     {}
func (u *Utility) Error(sim.Context, sim.NodeID) {}

// DumpState is the Paxos node's dump.
func (u *Utility) DumpState() string { return u.Paxos.DumpState() }

// Replica is the 1Paxos layer of a node: its cached configuration, and
// its roles of leader, acceptor and learner for the one slot.
type Replica struct {
	// The configuration as this node knows it.
	Leader, Acceptor sim.NodeID

	// Leader.
	Epoch     int  // the epoch this node leads (0: it does not lead)
	Prepared  bool // the acceptor promised Epoch (the initial leader starts so)
	Proposed  int  // the value sent in Accept for Epoch (0: none yet)
	Suspected bool // asked the utility to make it leader

	// Acceptor.
	Promised           int // highest epoch promised
	AccEpoch, AccValue int // what it accepted (epoch 0: nothing)

	// Learner.
	Chosen int // 0: nothing yet

	initAcceptor bool `livecheck:"-"` // bug init-acceptor
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

// App takes the driver's calls: Propose at the leader, Suspect anywhere.
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
		if r.Leader == ctx.Self() || r.Suspected {
			return
		}
		r.Suspected = true
		ctx.Logf("leader %d suspected: ask the utility to make %d leader", r.Leader, ctx.Self())
		ctx.Send(ctx.Self(), LeaderChange{Leader: ctx.Self()})
	}
}

// propose sends Accept for v to the cached acceptor, whoever the
// utility now names.
func (r *Replica) propose(ctx sim.Context, v int) {
	r.Proposed = v
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
		v := 100 + int(ctx.Self())
		if m.AccEpoch != 0 {
			v = m.AccValue
			ctx.Logf("epoch %d carries forward %d accepted in epoch %d", r.Epoch, v, m.AccEpoch)
		}
		r.propose(ctx, v)
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

// decided takes the utility's decision: the new leader starts phase 1
// with the acceptor it names, and the old one stops leading.
func (r *Replica) decided(ctx sim.Context, c Config) {
	r.Leader, r.Acceptor = c.Leader, c.Acceptor
	if c.Leader != ctx.Self() {
		if r.Epoch != 0 {
			ctx.Logf("no longer the leader: %d leads epoch %d", c.Leader, c.Epoch)
		}
		r.Epoch, r.Prepared = 0, false
		return
	}
	r.Epoch, r.Prepared, r.Proposed = c.Epoch, false, 0
	ctx.Logf("leader of epoch %d with acceptor %d", c.Epoch, c.Acceptor)
	ctx.Send(c.Acceptor, Prepare{Epoch: c.Epoch})
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

// System is 1Paxos over PaxosUtility as livecheck checks it.
var System = livecheck.System{
	Name:         "onepaxos",
	Doc:          "1Paxos: Multi-Paxos with one active acceptor, leader and acceptor named by a PaxosUtility that is the bundled Paxos as a lower layer",
	DefaultNodes: 3,
	MinNodes:     3,
	MaxNodes:     MaxNodes,
	DefaultDepth: 16,
	Bugs: []livecheck.Bug{
		{Name: "init-acceptor", Doc: "the initial acceptor is the first member, the leader itself (the paper's members.begin()++): the old leader accepts its own value while the new leader has another chosen (agreement)",
			Needs: livecheck.Needs{Nodes: 3}},
	},
	Properties: livecheck.Docs(Agreement, Chosen, LeaderChanged),
	Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
		if cfg.Budget.Resets > 0 {
			return nil, fmt.Errorf("onepaxos cannot be checked with resets: its utility is Paxos, whose acceptors need stable storage, which simulated nodes lack; use --drops for failures")
		}
		bug := cfg.HasBug("init-acceptor")
		return &livecheck.Model{
			Spec: sim.Spec{
				New: func(sim.NodeID) sim.Node {
					return sim.Stack(
						sim.Layer{Name: "utility", Node: NewUtility(cfg.Nodes)},
						sim.Layer{Name: "onepaxos", Node: &Replica{initAcceptor: bug}})
				},
				Transport: sim.Datagram,
				Calls: []sim.Call{
					{To: 0, Call: Propose{Value: 100}},
					{To: sim.NodeID(cfg.Nodes - 1), Call: Suspect{}},
				},
			},
			Properties: []properties.Property{Agreement, Chosen, LeaderChanged},
		}, nil
	},
}
