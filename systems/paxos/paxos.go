// Package paxos is single-decree Paxos in which every node is proposer,
// acceptor and learner, the setting of the local model checking paper; or,
// with the parameter roles=split, with separate roles, the setting of the
// usual Promela models of Paxos (see "Separate roles" below).
//
// The driver asks nodes 0 to P-1 (the parameter proposers, default 1) to
// propose once each; node i proposes value 100+i. A proposer makes one
// attempt with ballot i+1, which no other node uses, and never retries: no
// timers, so the state space is finite and the search can exhaust it.
//
//   - Phase 1: the proposer sends Prepare{Ballot} to every node, itself
//     included. An acceptor that has promised no ballot as high promises this
//     one and replies with a Promise carrying the proposal it last accepted,
//     if any; otherwise it stays silent.
//   - Phase 2: once a quorum (a majority) has promised, the proposer sends
//     Accept{Ballot, Value} to every node, once. The value is the one
//     accepted under the highest ballot among the promises, or the
//     proposer's own if no promise carries one: a value that may already be
//     chosen is carried forward. An acceptor that has not promised a higher
//     ballot accepts, and tells every node with Accepted{Ballot, Value}.
//   - Learning: a node chooses a value once a quorum of acceptors sent
//     Accepted for the same ballot, and never changes its choice.
//
// Sets of acceptors are bit sets, so a duplicate never counts twice and a
// node state stays a flat struct that is cheap to copy and hash.
//
// The safety property agreement says no two nodes choose different values;
// it has a per-node filter and a pairwise form for local model checking. The
// liveness property chosen says every node eventually chooses a value. With
// one attempt per proposer and several proposers, a higher ballot can leave
// a lower one short of a quorum for good, but without failures the highest
// ballot always wins: every acceptor promises it, since none sees a higher
// one, then accepts it, and every learner hears all of them. So chosen holds
// in every run without failures, whatever the number of proposers. With
// message loss (--drops) it may not: nothing is retried, so once more
// messages are lost than the quorums can spare (on three nodes, two Accepted
// on their way to one node) the protocol stalls for ever, and the checker
// rightly reports it. Resets are refused: acceptors keep their promises on
// stable storage, which the simulated nodes do not have, so a restart would
// forget them and break agreement for a reason outside the protocol.
//
// # Separate roles
//
// With roles=split each node has one role: nodes 0 to P-1 are proposers
// only, the last node is the one learner, and the nodes between are the
// acceptors, so --nodes is P + K + 1 for K acceptors (2 proposers and 3
// acceptors: --nodes 6; at most 5 acceptors with 2 proposers). Quorums are
// majorities of the K acceptors. Messages go only where a role needs them:
// Prepare and Accept to the acceptors, Promise back to its proposer,
// Accepted to the learner. The learner does not stop at its first choice:
// it goes on counting, and once another ballot reaches a quorum with a
// different value it records that value as a conflict, which breaks
// agreement (a single learner cannot disagree with another one). Votes for
// a ballot that has its quorum already change nothing. This is the
// configuration that bench/spin checks with Spin, so that both tools check
// the same protocol; its space is far smaller than that of every role on
// every node, where every message goes to every node.
//
// Injectable bugs (both also with separate roles, on acceptors):
//
//   - last-promise: the proposer keeps the accepted proposal of the last
//     promise it received instead of the one with the highest ballot (a
//     comparison left out), so a promise that carries nothing, arriving
//     last, makes it propose its own value even though another promise in
//     its quorum reported a value that may be chosen already. This is the
//     bug the LMC paper found in a Paxos implementation; with two proposers
//     it breaks agreement.
//   - quorum=K: phase 1 and learning count quorums of K acceptors instead of
//     a majority (a misconfigured quorum size). Two quorums then need not
//     intersect when K is at most half the nodes, so with two proposers two
//     values can be chosen: agreement breaks. K from 1 to the number of
//     nodes; a majority or more is safe.
package paxos

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// MaxNodes bounds the number of nodes: acceptor sets are 8-bit sets and the
// learner keeps one such set per ballot (at most one ballot per node) in a
// 64-bit word.
const MaxNodes = 8

// Propose is the driver's call: propose Value.
type Propose struct{ Value int }

// Prepare starts phase 1 of ballot Ballot.
type Prepare struct{ Ballot int }

// Promise answers Prepare: the acceptor will accept no lower ballot. It
// carries the proposal the acceptor last accepted (ballot 0: none).
type Promise struct {
	Ballot                        int
	AcceptedBallot, AcceptedValue int
}

// Accept asks acceptors to accept Value under Ballot (phase 2).
type Accept struct{ Ballot, Value int }

// Accepted tells learners an acceptor accepted Value under Ballot.
type Accepted struct{ Ballot, Value int }

// A Tally is a learner's Accepted senders per ballot: the set of ballot b
// is element b-1. Sets of nodes are sim.NodeSets, which symmetry
// reduction renames with the nodes.
type Tally [MaxNodes]sim.NodeSet

func (t *Tally) of(ballot int) sim.NodeSet { return t[ballot-1] }

func (t *Tally) add(ballot int, id sim.NodeID) { t[ballot-1] = t[ballot-1].Add(id) }

// Node is one Paxos node in its three roles.
type Node struct {
	// Acceptor.
	Promised  int // highest ballot promised (0: none)
	AccBallot int // ballot of the last proposal accepted (0: none)
	AccValue  int // its value

	// Proposer.
	Ballot      int         // own ballot once proposing (0: not proposing)
	Value       int         // own value
	Promises    sim.NodeSet // acceptors that promised Ballot
	AdoptBallot int         // highest accepted ballot among the promises (0: none)
	AdoptValue  int         // its value, proposed in phase 2 instead of Value
	Phase2      bool        // Accept sent

	// Learner.
	Votes  Tally // acceptors that sent Accepted, per ballot
	Chosen int   // the value chosen (0: none yet)
	// Conflict is a value that a quorum of another ballot accepted after
	// Chosen, and differs from it (0: none). Only a split-roles learner,
	// which goes on counting after its choice, can record one.
	Conflict int

	// Configuration, not state.
	quorum      int           `livecheck:"-"` // quorum size
	lastPromise bool          `livecheck:"-"` // bug last-promise
	role        role          `livecheck:"-"`
	acceptors   [2]sim.NodeID `livecheck:"-"` // the acceptors: ids from [0] up to [1], excluded
}

// NewNode returns a Paxos node in all three roles for a system of nodes
// nodes, with majority quorums: the node every node of the bundled system
// is, for a system that builds another protocol on Paxos (as a layer of
// a sim.Stack). It proposes at most once, with ballot Self()+1, when its
// App is called with Propose, and sends every message to every node.
func NewNode(nodes int) *Node {
	return &Node{quorum: nodes/2 + 1, acceptors: [2]sim.NodeID{0, sim.NodeID(nodes)}}
}

// A role is what a node does: everything, or one part with split roles.
type role uint8

const (
	allRoles role = iota
	proposer
	acceptor
	learner
)

// learns says whether the node is a learner.
func (n *Node) learns() bool { return n.role == allRoles || n.role == learner }

func (n *Node) Init(ctx sim.Context) {}

func (n *Node) App(ctx sim.Context, call sim.AppCall) {
	p, ok := call.(Propose)
	if !ok || n.Ballot != 0 {
		return
	}
	n.Ballot = int(ctx.Self()) + 1
	n.Value = p.Value
	n.toAcceptors(ctx, Prepare{Ballot: n.Ballot})
}

// toAcceptors sends msg to every acceptor: every node, with all roles.
func (n *Node) toAcceptors(ctx sim.Context, msg sim.Message) {
	for i := n.acceptors[0]; i < n.acceptors[1]; i++ {
		ctx.Send(i, msg)
	}
}

// toLearners sends msg to every learner: the last node with split roles.
func (n *Node) toLearners(ctx sim.Context, msg sim.Message) {
	if n.role != allRoles {
		ctx.Send(sim.NodeID(ctx.Nodes()-1), msg)
		return
	}
	for i := range ctx.Nodes() {
		ctx.Send(sim.NodeID(i), msg)
	}
}

func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Prepare:
		if m.Ballot <= n.Promised {
			return
		}
		n.Promised = m.Ballot
		ctx.Send(from, Promise{Ballot: m.Ballot, AcceptedBallot: n.AccBallot, AcceptedValue: n.AccValue})
	case Promise:
		if m.Ballot != n.Ballot || n.Phase2 {
			return // not for this ballot, or late: Accept is sent once
		}
		n.Promises = n.Promises.Add(from)
		// The proposal accepted under the highest ballot may be chosen
		// already: phase 2 must carry its value forward.
		if m.AcceptedBallot > n.AdoptBallot || n.lastPromise {
			n.AdoptBallot, n.AdoptValue = m.AcceptedBallot, m.AcceptedValue
		}
		if n.Promises.Len() < n.quorum {
			return
		}
		n.Phase2 = true
		v := n.Value
		if n.AdoptBallot != 0 {
			v = n.AdoptValue
			ctx.Logf("ballot %d carries forward value %d accepted under ballot %d", n.Ballot, v, n.AdoptBallot)
		}
		n.toAcceptors(ctx, Accept{Ballot: n.Ballot, Value: v})
	case Accept:
		if m.Ballot < n.Promised {
			return
		}
		n.Promised = m.Ballot
		n.AccBallot, n.AccValue = m.Ballot, m.Value
		n.toLearners(ctx, Accepted{Ballot: m.Ballot, Value: m.Value})
	case Accepted:
		if n.role == learner {
			n.learn(ctx, from, m)
			return
		}
		if n.Chosen != 0 {
			return
		}
		n.Votes.add(m.Ballot, from)
		if n.Votes.of(m.Ballot).Len() >= n.quorum {
			n.Chosen = m.Value
			ctx.Logf("chose %d (ballot %d accepted by %v)", m.Value, m.Ballot, n.Votes.of(m.Ballot))
		}
	}
}

// learn counts a vote of a split-roles learner, which goes on past its
// choice so that a second value chosen shows.
func (n *Node) learn(ctx sim.Context, from sim.NodeID, m Accepted) {
	votes := n.Votes.of(m.Ballot).Len()
	if votes >= n.quorum {
		return // this ballot's value is learned already
	}
	n.Votes.add(m.Ballot, from)
	if votes+1 < n.quorum {
		return
	}
	switch {
	case n.Chosen == 0:
		n.Chosen = m.Value
		ctx.Logf("chose %d (ballot %d accepted by %v)", m.Value, m.Ballot, n.Votes.of(m.Ballot))
	case m.Value != n.Chosen && n.Conflict == 0:
		n.Conflict = m.Value
		ctx.Logf("learned %d (ballot %d accepted by %v) after choosing %d", m.Value, m.Ballot, n.Votes.of(m.Ballot), n.Chosen)
	}
}

func (n *Node) Timer(ctx sim.Context, name string)     {}
func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {}

// DumpState shows the node by role, with acceptor sets as ids.
func (n *Node) DumpState() string {
	var b strings.Builder
	switch n.role {
	case proposer:
		fmt.Fprintf(&b, "proposer{ballot:%d value:%d promises:%v adopt:%s phase2:%v}",
			n.Ballot, n.Value, n.Promises, proposal(n.AdoptBallot, n.AdoptValue), n.Phase2)
		return b.String()
	case acceptor:
		fmt.Fprintf(&b, "acceptor{promised:%d accepted:%s}", n.Promised, proposal(n.AccBallot, n.AccValue))
		return b.String()
	case learner:
		n.dumpLearner(&b)
		return b.String()
	}
	fmt.Fprintf(&b, "acceptor{promised:%d accepted:%s}", n.Promised, proposal(n.AccBallot, n.AccValue))
	if n.Ballot != 0 {
		fmt.Fprintf(&b, " proposer{ballot:%d value:%d promises:%v adopt:%s phase2:%v}",
			n.Ballot, n.Value, n.Promises, proposal(n.AdoptBallot, n.AdoptValue), n.Phase2)
	}
	b.WriteString(" ")
	n.dumpLearner(&b)
	return b.String()
}

func (n *Node) dumpLearner(b *strings.Builder) {
	b.WriteString("learner{votes:")
	sep := ""
	for ballot := 1; ballot <= MaxNodes; ballot++ {
		if s := n.Votes.of(ballot); s != 0 {
			fmt.Fprintf(b, "%sb%d=%v", sep, ballot, s)
			sep = ","
		}
	}
	if sep == "" {
		b.WriteString("-")
	}
	if n.Chosen != 0 {
		fmt.Fprintf(b, " chosen:%d", n.Chosen)
	}
	if n.Conflict != 0 {
		fmt.Fprintf(b, " conflict:%d", n.Conflict)
	}
	b.WriteString("}")
}

func proposal(ballot, value int) string {
	if ballot == 0 {
		return "-"
	}
	return fmt.Sprintf("%d@b%d", value, ballot)
}

// Agreement is the safety property: no two nodes choose different values,
// and no learner learns a second value.
var Agreement = func() properties.Property {
	p := properties.Always("agreement", "no two nodes choose different values, and no learner learns two", agreement)
	p.Filter = func(id sim.NodeID, n sim.Node) bool {
		x, ok := n.(*Node)
		return ok && x.Chosen != 0
	}
	p.Pair = func(a, b sim.Node) error {
		x, y := a.(*Node), b.(*Node)
		if x.Chosen != 0 && y.Chosen != 0 && x.Chosen != y.Chosen {
			return fmt.Errorf("one node chose %d and another chose %d", x.Chosen, y.Chosen)
		}
		return nil
	}
	return p
}()

// agreement is Agreement's predicate. It is a function of its own, not a
// literal inside the one that builds Agreement: Go inlines that one into
// the package's init and compiles a copy of a literal inside it, in which
// the loops over properties.All allocate (their bodies move to the heap),
// about half the objects a Paxos search allocated.
//
// One pass over the nodes (it runs on every state the search finds): a
// conflict, the first, is reported before a disagreement, the first with
// the first node that chose.
func agreement(s *sim.State) error {
	first, firstChose := sim.NodeID(-1), 0
	other, otherChose := sim.NodeID(-1), 0
	for i, n := range properties.All[*Node](s) {
		if n.Conflict != 0 {
			return fmt.Errorf("node %d chose %d, then a quorum of another ballot accepted %d", i, n.Chosen, n.Conflict)
		}
		switch {
		case n.Chosen == 0 || other >= 0:
		case first < 0:
			first, firstChose = i, n.Chosen
		case n.Chosen != firstChose:
			other, otherChose = i, n.Chosen
		}
	}
	if other >= 0 {
		return fmt.Errorf("node %d chose %d but node %d chose %d", first, firstChose, other, otherChose)
	}
	return nil
}

// splitAgreement is Agreement for split roles. Its one learner cannot
// disagree with another node, only with itself, so the pairwise form,
// which local model checking would check alone, would miss every
// violation: it has none, and its filter keeps only a learner with a
// conflict.
var splitAgreement = func() properties.Property {
	p := Agreement
	p.Check = learnerAgreement
	p.Pair = nil
	p.Filter = func(id sim.NodeID, n sim.Node) bool {
		x, ok := n.(*Node)
		return ok && x.Conflict != 0
	}
	return p
}()

// learnerAgreement is agreement with split roles, where only the
// learner, the last node, chooses: it reads that node alone, the same
// answer as reading every node, on every state the search finds.
func learnerAgreement(s *sim.State) error {
	i := sim.NodeID(s.N() - 1)
	if n := properties.Node[*Node](s, i); n.Conflict != 0 {
		return fmt.Errorf("node %d chose %d, then a quorum of another ballot accepted %d", i, n.Chosen, n.Conflict)
	}
	return nil
}

// splitChosen is Chosen with split roles: the learner, the last node,
// has chosen.
var splitChosen = func() properties.Property {
	p := Chosen
	p.Live = func(s *sim.State) bool { return properties.Node[*Node](s, sim.NodeID(s.N()-1)).Chosen != 0 }
	return p
}()

// Chosen is the liveness property: every learner (every node, unless roles
// are split) has chosen a value. Without failures it always comes to hold
// (see the package comment).
var Chosen = properties.Eventually("chosen", "every learner has chosen a value (with all roles: every node)",
	func(s *sim.State) bool {
		for _, n := range properties.All[*Node](s) {
			if n.learns() && n.Chosen == 0 {
				return false
			}
		}
		return true
	})

// symmetry is the interchangeable nodes: the acceptors that do not
// propose (with all roles, the nodes from the last proposer on), which run
// the same code with the same settings and are named only as NodeIDs and
// NodeSets.
func symmetry(acceptors [2]sim.NodeID, proposers int) [][]sim.NodeID {
	var g []sim.NodeID
	for id := max(acceptors[0], sim.NodeID(proposers)); id < acceptors[1]; id++ {
		g = append(g, id)
	}
	if len(g) < 2 {
		return nil
	}
	return [][]sim.NodeID{g}
}

// quorumNeeds is what bug quorum=K needs: two quorums of K that need not
// intersect, so 2K nodes, and two proposers. A K too large for that is
// left to the check's own error.
func quorumNeeds(k string) protocol.Needs {
	n := protocol.Needs{Params: map[string]string{"proposers": "2"}}
	if v, err := strconv.Atoi(k); err == nil && v >= 1 && 2*v <= MaxNodes {
		n.Nodes = 2 * v
	}
	return n
}

// System is Paxos as livecheck checks it.
var System = protocol.System{
	Name:         "paxos",
	Doc:          "single-decree Paxos: every node proposer, acceptor and learner, or separate roles (--roles split)",
	DefaultNodes: 3,
	MinNodes:     2,
	MaxNodes:     MaxNodes,
	DefaultDepth: 20,
	Bugs: []protocol.Bug{
		// Both need a second proposer: with one, a single value is ever
		// proposed. last-promise needs a quorum that can hold a promise
		// with a value and one without: 3 nodes.
		{Name: "last-promise", Doc: "phase 2 proposes the value of the last promise received, not of the highest accepted ballot: two values chosen",
			Needs: protocol.Needs{Nodes: 3, Params: map[string]string{"proposers": "2"}}},
		{Name: "quorum", Arg: "K", Doc: "quorums of K acceptors instead of a majority: with K at most half the nodes, two values chosen",
			Needs: protocol.Needs{Nodes: 2, Params: map[string]string{"proposers": "2"}}, NeedsArg: quorumNeeds, NeedsDoc: "--nodes 2K --proposers 2", Example: "1"},
	},
	Params: []protocol.Param{
		{Name: "proposers", Doc: "how many nodes propose (nodes 0 to P-1, node i proposing 100+i), from 1 to the number of nodes", Default: "1", Int: true, Min: 1, MaxNodes: true},
		{Name: "roles", Doc: "all: every node is proposer, acceptor and learner; split: nodes 0 to P-1 propose only, the last node is the one learner, the others are acceptors (--nodes is P + acceptors + 1: --proposers 2 --nodes 6 is 2 proposers and 3 acceptors), as Promela models of Paxos have it", Default: "all"},
	},
	Build: func(cfg protocol.Config) (*protocol.Model, error) {
		if cfg.Budget.Resets > 0 {
			return nil, fmt.Errorf("paxos cannot be checked with resets: its acceptors need stable storage, which simulated nodes lack, so a restart would forget promises; use --drops for failures")
		}
		split := false
		switch r := cfg.Param("roles"); r {
		case "", "all":
		case "split":
			split = true
		default:
			return nil, fmt.Errorf("--roles must be all or split, not %q", r)
		}
		proposers := cfg.IntParam("proposers")
		// With all roles every node is an acceptor; split, the ones
		// between the proposers and the learner.
		acceptors := [2]sim.NodeID{0, sim.NodeID(cfg.Nodes)}
		agreement, chosen, of := Agreement, Chosen, "nodes"
		if split {
			if cfg.Nodes < proposers+2 {
				return nil, fmt.Errorf("--roles split with %d proposers needs at least %d nodes (the proposers, one acceptor or more, the learner), not %d; --nodes %d gives 3 acceptors",
					proposers, proposers+2, cfg.Nodes, proposers+4)
			}
			acceptors = [2]sim.NodeID{sim.NodeID(proposers), sim.NodeID(cfg.Nodes - 1)}
			agreement, chosen, of = splitAgreement, splitChosen, "acceptors"
		}
		k := int(acceptors[1] - acceptors[0])
		quorum := k/2 + 1
		if q, ok := cfg.BugArg("quorum"); ok {
			var err error
			if quorum, err = protocol.WholeNumber(q, "the quorum size K in --bug quorum=K", 1, k, of); err != nil {
				return nil, err
			}
		}
		lastPromise := cfg.HasBug("last-promise")
		calls := make([]sim.Call, proposers)
		for i := range calls {
			calls[i] = sim.Call{To: sim.NodeID(i), Call: Propose{Value: 100 + i}}
		}
		// With split roles the learner only counts votes, and what the
		// properties read (Chosen, Conflict) only a learner sets: it is
		// an observer, whose deliveries the search may postpone.
		var observers []sim.NodeID
		if split {
			observers = []sim.NodeID{sim.NodeID(cfg.Nodes - 1)}
		}
		return &protocol.Model{
			Spec: sim.Spec{
				New: func(id sim.NodeID) sim.Node {
					n := &Node{quorum: quorum, lastPromise: lastPromise, acceptors: acceptors}
					switch {
					case !split:
					case int(id) < proposers:
						n.role = proposer
					case int(id) == cfg.Nodes-1:
						n.role = learner
					default:
						n.role = acceptor
					}
					return n
				},
				Transport: sim.Datagram,
				Calls:     calls,
				Symmetry:  symmetry(acceptors, proposers),
				Observers: observers,
			},
			Properties: []properties.Property{agreement, chosen},
		}, nil
	},
}
