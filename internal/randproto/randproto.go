// Package randproto generates small random protocols, deterministic from a
// seed, for the randomized cross-check of livecheck's search modes against
// a plain breadth-first search (internal/oracle).
//
// A generated protocol is data (a [Program]) that one node type interprets,
// so a failing seed prints as readable code. Every state space is finite by
// construction: node variables are kept in [0, Mod), each node sends at
// most SendCap messages between resets (a Send past the cap does nothing),
// and timers are a fixed set of names (a symmetric program's relays are
// past the cap, but members relay only to non-members, and non-members
// only what members send them). The
// generator is tuned so that most spaces have hundreds to a few thousand
// states.
//
// [GenerateSymmetric] makes programs with a symmetry group for the
// cross-check of symmetry reduction: the members share one code, and
// nothing in the program tells them apart (see its doc). Generate's
// programs are what they were before that existed.
package randproto

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// MaxVars is the most variables a node has.
const MaxVars = 3

// A Program is a generated protocol.
type Program struct {
	Seed      uint64
	Nodes     int
	Vars      int // variables per node, V[0..Vars-1]
	Mod       int // every variable is kept in [0, Mod)
	Types     int // message types 0..Types-1
	Timers    int // timers t0..t{Timers-1}
	SendCap   int // sends per node between resets; more do nothing
	Transport sim.Transport
	Budget    sim.Budget
	Calls     []sim.Call // each Call.Call is an int argument

	// Handlers, per node: Init, Receive per message type, Timer per timer,
	// App (one for every call), Error (stream transport).
	Init    [][]Stmt
	Receive [][][]Stmt
	Timer   [][][]Stmt
	App     [][]Stmt
	Error   [][]Stmt

	Props []Prop

	// Members is the symmetry group of a program from GenerateSymmetric,
	// in increasing order; nil for Generate's programs. The members'
	// handlers are one code (the same slices in Init, Receive, ...), and
	// the program runs SymNodes that send SMsgs.
	Members []sim.NodeID

	// Observers are nodes that never send and that the properties alone
	// read (sim.Spec.Observers): set by WithObserver.
	Observers []sim.NodeID
}

// Op is what a statement does.
type Op uint8

const (
	Assign Op = iota // V[Var] = X
	Send             // send Msg{Type, X} to To (To < 0: the sender)
	SetTimer
	CancelTimer
	If    // if Cond { Then } else { Else }
	Panic // panic: a handler panic is a safety violation of every program
	// Only in symmetric programs:
	Record // Last = the sender, and the sender joins Seen (nothing without a sender)
	Forget // Last = none, Seen = {}
	Relay  // send {Type, the message's value, the sender} to node To, past the cap (Receive on streams: members', and others' for a member's message)
)

// Dest is where a Send in a symmetric program goes.
type Dest uint8

const (
	ToFixed   Dest = iota // node To, a non-member (To < 0: the sender); Generate's sends are all ToFixed
	ToSelf                // the node itself
	ToMembers             // every member of the group, the sender included
	ToCarried             // the node the message being handled carries
	ToLast                // the node's Last
)

// Carry is the node a symmetric program's message carries (SMsg.N).
type Carry uint8

const (
	CarryNone   Carry = iota // none (-1)
	CarrySelf                // the sending node
	CarrySender              // the sender of the message being handled, or none
	CarryLast                // the sending node's Last
)

// A Stmt is one statement of a handler.
type Stmt struct {
	Op    Op
	Var   int
	X     Expr
	To    int
	Type  int
	Timer int
	Cond  Cond
	Then  []Stmt
	Else  []Stmt
	Dest  Dest  // Send, symmetric programs
	Carry Carry // Send, symmetric programs
}

// ExprKind is the form of an expression.
type ExprKind uint8

const (
	Const   ExprKind = iota // C
	Var                     // V[Var]
	VarPlus                 // (V[Var] + C) mod Mod
	Val                     // the message's value (Receive) or the call's argument (App); 0 elsewhere
	Choose                  // ctx.Choose(2)
	SeenLen                 // the size of Seen, mod Mod (symmetric programs)
)

// An Expr is a value.
type Expr struct {
	Kind ExprKind
	Var  int
	C    int
}

// Rel compares two values.
type Rel uint8

const (
	Eq Rel = iota
	Ne
	Lt
)

var relNames = [...]string{"==", "!=", "<"}

// CondKind is the form of a condition.
type CondKind uint8

const (
	Compare      CondKind = iota // L Rel R
	SeenAtLeast                  // Seen has at least R.C members
	SeenSender                   // the sender is in Seen
	LastSender                   // Last is the sender (false without a sender)
	CarriedSelf                  // the message being handled carries this node
	SenderMember                 // the sender is a member of the group
)

// A Cond compares two expressions (never Choose), or, in a symmetric
// program, asks about node ids in a way that renaming members does not
// change (Kind).
type Cond struct {
	L    Expr
	Rel  Rel
	R    Expr
	Kind CondKind
}

// An Atom is "node Node's V[Var] Rel C"; in a symmetric program, with
// Members > 0, "at least Members members' V[Var] Rel C", and with Seen the
// size of Seen in place of V[Var].
type Atom struct {
	Node    int
	Var     int
	Rel     Rel
	C       int
	Members int
	Seen    bool
}

// A Prop is a safety property: it is violated where every atom holds.
type Prop struct {
	Name  string
	Atoms []Atom
}

// Msg is every message of Generate's programs: its type and one value.
type Msg struct{ T, V int }

// SMsg is every message of a symmetric program: a Msg that carries a
// node too (-1: none), renamed with the nodes.
type SMsg struct {
	T, V int
	N    sim.NodeID
}

// Node is the interpreter of a Program, and its state.
type Node struct {
	V    [MaxVars]int
	Sent int
	// Up says the node has started once: it survives resets, so that
	// Choose in Init is made only after a reset and reads 0 in the first
	// (random programs keep one initial state, which the oracle, starting
	// from World.Initial, assumes).
	Up       bool     `livecheck:"durable"`
	starting bool     `livecheck:"-"` // in the first Init; false between handlers
	P        *Program `livecheck:"-"`
}

// SymNode is the interpreter of a symmetric program: a Node that also
// keeps node ids, of the types that symmetry reduction renames.
type SymNode struct {
	Node
	Last sim.NodeID  // the last sender recorded; -1: none
	Seen sim.NodeSet // the senders recorded
}

// pickBudget gives the program one failure, with a chance of 2 in n: a
// reset, or a lost datagram or socket error as the transport has them.
func (p *Program) pickBudget(r *rand.Rand, n int) {
	switch r.IntN(n) {
	case 0:
		p.Budget.Resets = 1
	case 1:
		if p.Transport == sim.Datagram {
			p.Budget.Drops = 1
		} else {
			p.Budget.Errors = 1
		}
	}
}

// GenerateFaults returns the program of seed (Generate's) with a budget
// of the failures added after the first ones instead of its own: on
// streams one partition; on datagrams, by the seed, one duplication, one
// partition, or both.
func GenerateFaults(seed uint64) *Program {
	p := Generate(seed)
	switch {
	case p.Transport == sim.Stream:
		p.Budget = sim.Budget{Partitions: 1}
	case seed%3 == 0:
		p.Budget = sim.Budget{Dups: 1}
	case seed%3 == 1:
		p.Budget = sim.Budget{Partitions: 1}
	default:
		p.Budget = sim.Budget{Dups: 1, Partitions: 1}
	}
	return p
}

// GenerateCrashes returns the program of seed (Generate's) with a budget
// of one crash instead of its own, and by the seed one reset or (on
// streams) socket error beside it, so that restarts, free socket errors
// and the failures that cost meet. (A drop beside it makes most spaces
// too large for the oracle.)
func GenerateCrashes(seed uint64) *Program {
	p := Generate(seed)
	p.Budget = sim.Budget{Crashes: 1}
	switch {
	case seed%4 == 1:
		p.Budget.Resets = 1
	case seed%4 == 2 && p.Transport == sim.Stream:
		p.Budget.Errors = 1
	}
	return p
}

// Generate returns the program of seed.
func Generate(seed uint64) *Program {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	g := &gen{r: r}
	p := &Program{
		Seed:    seed,
		Nodes:   2 + r.IntN(2),
		Vars:    1 + r.IntN(MaxVars),
		Mod:     2 + r.IntN(2),
		Types:   1 + r.IntN(3),
		Timers:  r.IntN(3),
		SendCap: 2 + r.IntN(3),
	}
	if p.Nodes == 3 && p.SendCap > 2 {
		p.SendCap = 2 // three nodes with three sends each give spaces too large to be quick
	}
	g.p = p
	if r.IntN(4) == 0 {
		p.Transport = sim.Stream
	}
	p.pickBudget(r, 8)
	for range r.IntN(3) {
		p.Calls = append(p.Calls, sim.Call{To: sim.NodeID(r.IntN(p.Nodes)), Call: r.IntN(p.Mod)})
	}
	for range p.Nodes {
		// Node 0 usually starts something; the others start with less.
		p.Init = append(p.Init, g.block(1+r.IntN(3), 0, handlerInit))
		var recv [][]Stmt
		for range p.Types {
			recv = append(recv, g.block(1+r.IntN(3), 0, handlerReceive))
		}
		p.Receive = append(p.Receive, recv)
		var timers [][]Stmt
		for range p.Timers {
			timers = append(timers, g.block(1+r.IntN(3), 0, handlerOther))
		}
		p.Timer = append(p.Timer, timers)
		p.App = append(p.App, g.block(1+r.IntN(2), 0, handlerApp))
		p.Error = append(p.Error, g.block(r.IntN(2), 0, handlerOther))
	}
	for i := range 2 + r.IntN(3) {
		pr := Prop{Name: fmt.Sprintf("p%d", i)}
		for range 1 + r.IntN(2) {
			a := Atom{Node: r.IntN(p.Nodes), Var: r.IntN(p.Vars), Rel: Eq, C: r.IntN(p.Mod)}
			if r.IntN(4) == 0 {
				a.Rel = Ne
			}
			pr.Atoms = append(pr.Atoms, a)
		}
		p.Props = append(p.Props, pr)
	}
	return p
}

// WithObserver returns the program of seed (Generate's) made fit for
// observer postponement: its last node sends nothing (its Send statements
// are dropped), every property reads that node alone (each atom's node
// becomes it), datagrams carry the messages and nothing fails. It is
// declared the program's observer.
func WithObserver(seed uint64) *Program {
	p := Generate(seed)
	obs := p.Nodes - 1
	p.Transport, p.Budget = sim.Datagram, sim.Budget{}
	p.Observers = []sim.NodeID{sim.NodeID(obs)}
	var strip func([]Stmt) []Stmt
	strip = func(b []Stmt) []Stmt {
		var out []Stmt
		for _, st := range b {
			switch st.Op {
			case Send, Relay:
				continue
			case If:
				st.Then, st.Else = strip(st.Then), strip(st.Else)
			}
			out = append(out, st)
		}
		return out
	}
	p.Init[obs], p.App[obs], p.Error[obs] = strip(p.Init[obs]), strip(p.App[obs]), strip(p.Error[obs])
	for i := range p.Receive[obs] {
		p.Receive[obs][i] = strip(p.Receive[obs][i])
	}
	for i := range p.Timer[obs] {
		p.Timer[obs][i] = strip(p.Timer[obs][i])
	}
	for i := range p.Props {
		for j := range p.Props[i].Atoms {
			p.Props[i].Atoms[j].Node = obs
		}
	}
	return p
}

// GenerateSymmetric returns the symmetric program of seed: 2 or 3
// members that share one code, and 1 or 2 other nodes with their own.
// Nothing tells the members apart, so renaming them maps runs to runs:
// a Send goes to a non-member, to the node itself, to the sender, to
// every member, to the node a message carries or to Last, never to a
// member by its id; messages carry the sending node, the sender or Last;
// conditions ask whether the sender is in Seen, is Last or is a member,
// how many nodes Seen holds, or whether the message carries this node;
// driver calls go to non-members; and properties name non-members, or
// count members ("some member", "two members", "every member"). Its
// seeds are another sequence than Generate's.
func GenerateSymmetric(seed uint64) *Program {
	r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	stream := r.IntN(3) == 0
	// Four nodes only now and then (less often on streams), and with one
	// send each: spaces grow fast with nodes.
	k, others := 2, 1
	switch r.IntN(6) {
	case 0, 1:
		k = 3
	case 2:
		others = 2
	}
	if stream && k+others == 4 && r.IntN(2) == 0 {
		k, others = 2, 1
	}
	p := &Program{
		Seed:    seed,
		Nodes:   k + others,
		Vars:    1 + r.IntN(2),
		Mod:     2 + r.IntN(2),
		Types:   1 + r.IntN(2),
		Timers:  r.IntN(2),
		SendCap: 1 + r.IntN(2),
	}
	if stream {
		// Members' relays (below) send past the cap.
		p.Transport = sim.Stream
		p.SendCap = 1
	}
	if p.Nodes == 4 {
		p.SendCap = 1
	}
	// Members anywhere, not only at the end, so that groups with gaps
	// are renamed too.
	for _, id := range r.Perm(p.Nodes)[:k] {
		p.Members = append(p.Members, sim.NodeID(id))
	}
	slices.Sort(p.Members)
	var fixed []int // the non-members
	for id := range p.Nodes {
		if !p.member(id) {
			fixed = append(fixed, id)
		}
	}
	g := &gen{r: r, p: p, fixed: fixed}
	p.pickBudget(r, 6)
	for range r.IntN(3) {
		p.Calls = append(p.Calls, sim.Call{To: sim.NodeID(fixed[r.IntN(len(fixed))]), Call: r.IntN(p.Mod)})
	}
	p.Init = make([][]Stmt, p.Nodes)
	p.Receive = make([][][]Stmt, p.Nodes)
	p.Timer = make([][][]Stmt, p.Nodes)
	p.App = make([][]Stmt, p.Nodes)
	p.Error = make([][]Stmt, p.Nodes)
	// One code for the members (generated once, shared), then one for
	// each other node.
	codes := append([]int{int(p.Members[0])}, fixed...)
	for ci, id := range codes {
		g.members = ci == 0
		p.Init[id] = g.block(1+r.IntN(2), 0, handlerInit)
		// The others usually start by telling the members something, so
		// that members receive, record senders and differ.
		if ci > 0 && r.IntN(4) != 0 {
			s := Stmt{Op: Send, Dest: ToMembers, Type: r.IntN(p.Types), X: g.symExpr(handlerInit, false), Carry: Carry(r.IntN(2))}
			p.Init[id] = append([]Stmt{s}, p.Init[id]...)
		}
		// On streams, members often send to themselves at the start too:
		// with what the others send them, they then have messages from
		// two queues to receive in either order (and relay, below).
		if ci == 0 && stream && r.IntN(2) == 0 {
			s := Stmt{Op: Send, Dest: ToSelf, Type: r.IntN(p.Types), X: g.symExpr(handlerInit, false), Carry: CarrySelf}
			p.Init[id] = append([]Stmt{s}, p.Init[id]...)
		}
		for range p.Types {
			b := g.block(1+r.IntN(3), 0, handlerReceive)
			if r.IntN(3) != 0 {
				b = append([]Stmt{{Op: Record}}, b...)
			}
			// On streams, members often relay what they receive to a
			// non-member, which gets it in the order the member received
			// it: a handler that only relays leaves the member as it was,
			// so runs that receive in other orders differ only in the
			// order of a queue. Relays are past the cap, so that the
			// cap's sends are still made; there are no more of them than
			// messages to members, since non-members do not relay.
			if p.Transport == sim.Stream && ci == 0 {
				relay := Stmt{Op: Relay, To: fixed[r.IntN(len(fixed))], Type: r.IntN(p.Types)}
				switch r.IntN(3) {
				case 0:
					b = []Stmt{relay}
				case 1:
					b = append(b, relay)
				}
			}
			// Non-members pass on, past the cap too, what they receive
			// from members (the sender's id in it): a queue from them
			// names members in the order they heard from them. Only
			// members' messages, so that relays do not feed each other.
			if p.Transport == sim.Stream && ci > 0 && r.IntN(4) == 0 {
				relay := Stmt{Op: Relay, To: fixed[r.IntN(len(fixed))], Type: r.IntN(p.Types)}
				b = append(b, Stmt{Op: If, Cond: Cond{Kind: SenderMember}, Then: []Stmt{relay}})
			}
			p.Receive[id] = append(p.Receive[id], b)
		}
		for range p.Timers {
			p.Timer[id] = append(p.Timer[id], g.block(1+r.IntN(2), 0, handlerOther))
		}
		p.App[id] = g.block(1+r.IntN(2), 0, handlerApp)
		p.Error[id] = g.block(r.IntN(2), 0, handlerError)
	}
	for _, id := range p.Members[1:] {
		m := p.Members[0]
		p.Init[id], p.Receive[id], p.Timer[id], p.App[id], p.Error[id] = p.Init[m], p.Receive[m], p.Timer[m], p.App[m], p.Error[m]
	}
	for i := range 2 + r.IntN(3) {
		pr := Prop{Name: fmt.Sprintf("p%d", i)}
		for range 1 + r.IntN(2) {
			a := Atom{Var: r.IntN(p.Vars), Rel: Eq, C: r.IntN(p.Mod)}
			if r.IntN(2) == 0 {
				a.Node = fixed[r.IntN(len(fixed))]
			} else {
				a.Members = []int{1, 2, k}[r.IntN(3)]
			}
			if r.IntN(4) == 0 {
				a.Rel = Ne
			}
			if r.IntN(5) == 0 {
				a.Seen, a.C = true, 1+r.IntN(2)
			}
			pr.Atoms = append(pr.Atoms, a)
		}
		p.Props = append(p.Props, pr)
	}
	return p
}

// member says whether node id is in the program's symmetry group.
func (p *Program) member(id int) bool {
	_, ok := slices.BinarySearch(p.Members, sim.NodeID(id))
	return ok
}

type handlerKind uint8

const (
	handlerInit handlerKind = iota
	handlerReceive
	handlerApp
	handlerOther
	handlerError // symmetric programs only: Generate's Error handlers are handlerOther
)

type gen struct {
	r *rand.Rand
	p *Program
	// Symmetric programs: the non-members, and whether the code being
	// generated is the members'.
	fixed   []int
	members bool
}

func (g *gen) block(n, depth int, h handlerKind) []Stmt {
	var out []Stmt
	for range n {
		out = append(out, g.stmt(depth, h))
	}
	return out
}

func (g *gen) stmt(depth int, h handlerKind) Stmt {
	r, p := g.r, g.p
	if len(p.Members) > 0 {
		return g.symStmt(depth, h)
	}
	k := r.IntN(10)
	if depth >= 1 && k >= 8 {
		k = r.IntN(8)
	}
	// A rare panic, only under a condition and never in Init, so that a
	// few programs panic somewhere deep, as a handler bug would, while
	// most are checked for their properties.
	if depth >= 1 && h != handlerInit && r.IntN(25) == 0 {
		return Stmt{Op: Panic}
	}
	switch {
	case k < 3:
		return Stmt{Op: Assign, Var: r.IntN(p.Vars), X: g.expr(h, true)}
	case k < 6:
		to := r.IntN(p.Nodes)
		if h == handlerReceive && r.IntN(2) == 0 {
			to = -1
		}
		return Stmt{Op: Send, To: to, Type: r.IntN(p.Types), X: g.expr(h, false)}
	case k < 8:
		if p.Timers == 0 {
			return Stmt{Op: Assign, Var: r.IntN(p.Vars), X: g.expr(h, true)}
		}
		op := SetTimer
		if h != handlerInit && r.IntN(3) == 0 {
			op = CancelTimer
		}
		return Stmt{Op: op, Timer: r.IntN(p.Timers)}
	default:
		c := Cond{L: Expr{Kind: Var, Var: r.IntN(p.Vars)}, Rel: Rel(r.IntN(3)), R: Expr{Kind: Const, C: r.IntN(p.Mod)}}
		switch r.IntN(4) {
		case 0:
			if h == handlerReceive || h == handlerApp {
				c.R = Expr{Kind: Val}
			}
		case 1:
			c.R = Expr{Kind: Var, Var: r.IntN(p.Vars)}
		}
		s := Stmt{Op: If, Cond: c, Then: g.block(1+r.IntN(2), depth+1, h)}
		if r.IntN(2) == 0 {
			s.Else = g.block(1, depth+1, h)
		}
		return s
	}
}

// symStmt is stmt for symmetric programs: nothing in it names a member.
func (g *gen) symStmt(depth int, h handlerKind) Stmt {
	r, p := g.r, g.p
	sender := h == handlerReceive || h == handlerError
	k := r.IntN(11)
	if depth >= 1 && k >= 9 {
		k = r.IntN(9)
	}
	if depth >= 1 && h != handlerInit && r.IntN(25) == 0 {
		return Stmt{Op: Panic}
	}
	switch {
	case k < 2:
		return Stmt{Op: Assign, Var: r.IntN(p.Vars), X: g.symExpr(h, true)}
	case k < 5:
		s := Stmt{Op: Send, Type: r.IntN(p.Types), X: g.symExpr(h, false)}
		d := r.IntN(6)
		if h == handlerInit {
			d = r.IntN(4) // Init has no sender, no message and no Last
		}
		switch d {
		case 0, 1:
			s.To = g.fixed[r.IntN(len(g.fixed))]
			if sender && r.IntN(2) == 0 {
				s.To = -1
			}
		case 2:
			s.Dest = ToSelf
		case 3:
			s.Dest = ToMembers
			// Members that all tell all the others make spaces too
			// large to be quick: rarely, and not at the start.
			if g.members && (h == handlerInit || r.IntN(3) != 0) {
				s.Dest = ToSelf
			}
		case 4:
			s.Dest = ToLast
			if h == handlerReceive {
				s.Dest = ToCarried
			}
		default:
			s.Dest = ToLast
		}
		s.Carry = Carry(r.IntN(4))
		if s.Carry == CarrySender && !sender {
			s.Carry = CarrySelf
		}
		return s
	case k < 7 && p.Timers > 0:
		op := SetTimer
		if h != handlerInit && r.IntN(3) == 0 {
			op = CancelTimer
		}
		return Stmt{Op: op, Timer: r.IntN(p.Timers)}
	case k < 8:
		if sender && r.IntN(4) != 0 {
			return Stmt{Op: Record}
		}
		if h != handlerInit && r.IntN(2) == 0 {
			return Stmt{Op: Forget}
		}
		return Stmt{Op: Assign, Var: r.IntN(p.Vars), X: g.symExpr(h, true)}
	case k < 9:
		return Stmt{Op: Assign, Var: r.IntN(p.Vars), X: g.symExpr(h, true)}
	}
	c := Cond{L: Expr{Kind: Var, Var: r.IntN(p.Vars)}, Rel: Rel(r.IntN(3)), R: Expr{Kind: Const, C: r.IntN(p.Mod)}}
	switch r.IntN(8) {
	case 0:
		if h == handlerReceive || h == handlerApp {
			c.R = Expr{Kind: Val}
		}
	case 1:
		c.R = Expr{Kind: Var, Var: r.IntN(p.Vars)}
	case 2:
		c = Cond{Kind: SeenAtLeast, R: Expr{Kind: Const, C: 1 + r.IntN(2)}}
	case 3, 4:
		if sender {
			c = Cond{Kind: []CondKind{SeenSender, LastSender, SenderMember}[r.IntN(3)]}
		}
	case 5:
		if h == handlerReceive {
			c = Cond{Kind: CarriedSelf}
		}
	}
	s := Stmt{Op: If, Cond: c, Then: g.block(1+r.IntN(2), depth+1, h)}
	if r.IntN(2) == 0 {
		s.Else = g.block(1, depth+1, h)
	}
	return s
}

// symExpr is expr for symmetric programs, which also read the size of
// Seen.
func (g *gen) symExpr(h handlerKind, choose bool) Expr {
	if g.r.IntN(8) == 0 {
		return Expr{Kind: SeenLen}
	}
	return g.expr(h, choose)
}

func (g *gen) expr(h handlerKind, choose bool) Expr {
	r, p := g.r, g.p
	switch k := r.IntN(10); {
	case k < 3:
		return Expr{Kind: Const, C: r.IntN(p.Mod)}
	case k < 5:
		return Expr{Kind: Var, Var: r.IntN(p.Vars)}
	case k < 7:
		return Expr{Kind: VarPlus, Var: r.IntN(p.Vars), C: 1 + r.IntN(p.Mod-1)}
	case k < 9 && (h == handlerReceive || h == handlerApp):
		return Expr{Kind: Val}
	case k == 9 && choose:
		return Expr{Kind: Choose}
	}
	return Expr{Kind: Const, C: r.IntN(p.Mod)}
}

// Spec returns the world the program runs in; a symmetric program's
// declares its members a symmetry group.
func (p *Program) Spec() sim.Spec {
	spec := sim.Spec{
		Nodes:     p.Nodes,
		New:       func(sim.NodeID) sim.Node { return &Node{P: p} },
		Transport: p.Transport,
		Calls:     p.Calls,
		Budget:    p.Budget,
		Observers: p.Observers,
	}
	if len(p.Members) > 0 {
		spec.New = func(sim.NodeID) sim.Node { return &SymNode{Node: Node{P: p}, Last: -1} }
		spec.Symmetry = [][]sim.NodeID{slices.Clone(p.Members)}
	}
	return spec
}

// Properties returns the program's safety properties.
func (p *Program) Properties() []properties.Property {
	var out []properties.Property
	for _, pr := range p.Props {
		pr := pr
		out = append(out, properties.Always(pr.Name, pr.String(), func(s *sim.State) error {
			if pr.holds(p, s) {
				return fmt.Errorf("%s holds", pr)
			}
			return nil
		}))
	}
	return out
}

// Liveness returns one liveness property per safety property, named
// "eventually-" and its name: live where every atom holds, the states the
// safety property forbids. Random protocols often end or loop where they
// do not hold, which gives the liveness phase dead states to find.
func (p *Program) Liveness() []properties.Property {
	var out []properties.Property
	for _, pr := range p.Props {
		pr := pr
		out = append(out, properties.Eventually("eventually-"+pr.Name, pr.String(), func(s *sim.State) bool { return pr.holds(p, s) }))
	}
	return out
}

func (pr *Prop) holds(p *Program, s *sim.State) bool {
	for _, a := range pr.Atoms {
		if !a.holdsIn(p, s) {
			return false
		}
	}
	return true
}

func (a Atom) holdsIn(p *Program, s *sim.State) bool {
	if a.Members == 0 {
		return a.holds(s.Node(sim.NodeID(a.Node)))
	}
	n := 0
	for _, id := range p.Members {
		if a.holds(s.Node(id)) {
			n++
		}
	}
	return n >= a.Members
}

func (a Atom) holds(sn sim.Node) bool {
	switch n := sn.(type) {
	case *Node:
		return rel(n.V[a.Var], a.Rel, a.C)
	case *SymNode:
		if a.Seen {
			return rel(n.Seen.Len(), a.Rel, a.C)
		}
		return rel(n.V[a.Var], a.Rel, a.C)
	}
	return false
}

func rel(a int, r Rel, b int) bool {
	switch r {
	case Eq:
		return a == b
	case Ne:
		return a != b
	}
	return a < b
}

// A frame is what a handler runs with: the sender (-1 outside Receive
// and Error), the message's value or the call's argument, the node the
// message carries (-1: none), and the node's ids when it is a SymNode.
type frame struct {
	ctx     sim.Context
	from    sim.NodeID
	val     int
	carried sim.NodeID
	sym     *SymNode
}

func (n *Node) Init(ctx sim.Context) {
	n.starting = !n.Up
	n.run(&frame{ctx: ctx, from: -1, carried: -1}, n.P.Init[ctx.Self()])
	n.starting, n.Up = false, true
}

func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m := msg.(Msg)
	n.run(&frame{ctx: ctx, from: from, val: m.V, carried: -1}, n.P.Receive[ctx.Self()][m.T])
}

func (n *Node) Timer(ctx sim.Context, name string) {
	n.run(&frame{ctx: ctx, from: -1, carried: -1}, n.P.Timer[ctx.Self()][name[1]-'0'])
}

func (n *Node) App(ctx sim.Context, call sim.AppCall) {
	n.run(&frame{ctx: ctx, from: -1, val: call.(int), carried: -1}, n.P.App[ctx.Self()])
}

func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {
	n.run(&frame{ctx: ctx, from: peer, carried: -1}, n.P.Error[ctx.Self()])
}

func (n *SymNode) Init(ctx sim.Context) {
	n.starting = !n.Up
	n.run(&frame{ctx: ctx, from: -1, carried: -1, sym: n}, n.P.Init[ctx.Self()])
	n.starting, n.Up = false, true
}

func (n *SymNode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m := msg.(SMsg)
	n.run(&frame{ctx: ctx, from: from, val: m.V, carried: m.N, sym: n}, n.P.Receive[ctx.Self()][m.T])
}

func (n *SymNode) Timer(ctx sim.Context, name string) {
	n.run(&frame{ctx: ctx, from: -1, carried: -1, sym: n}, n.P.Timer[ctx.Self()][name[1]-'0'])
}

func (n *SymNode) App(ctx sim.Context, call sim.AppCall) {
	n.run(&frame{ctx: ctx, from: -1, val: call.(int), carried: -1, sym: n}, n.P.App[ctx.Self()])
}

func (n *SymNode) Error(ctx sim.Context, peer sim.NodeID) {
	n.run(&frame{ctx: ctx, from: peer, carried: -1, sym: n}, n.P.Error[ctx.Self()])
}

// run interprets a block.
func (n *Node) run(f *frame, b []Stmt) {
	for i := range b {
		s := &b[i]
		switch s.Op {
		case Assign:
			n.V[s.Var] = n.eval(f, s.X)
		case Send:
			if n.Sent >= n.P.SendCap {
				continue
			}
			n.send(f, s)
		case SetTimer:
			f.ctx.SetTimer(timerName(s.Timer))
		case CancelTimer:
			f.ctx.CancelTimer(timerName(s.Timer))
		case If:
			if n.cond(f, &s.Cond) {
				n.run(f, s.Then)
			} else {
				n.run(f, s.Else)
			}
		case Panic:
			panic("a generated panic")
		case Record:
			if f.from >= 0 {
				f.sym.Last, f.sym.Seen = f.from, f.sym.Seen.Add(f.from)
			}
		case Forget:
			f.sym.Last, f.sym.Seen = -1, 0
		case Relay:
			f.ctx.Send(sim.NodeID(s.To), SMsg{T: s.Type, V: f.val % n.P.Mod, N: f.from})
		}
	}
}

// send runs a Send under the cap. A send with nowhere to go (no sender,
// no node carried or recorded) does nothing and counts for nothing.
func (n *Node) send(f *frame, s *Stmt) {
	to := sim.NodeID(s.To)
	switch s.Dest {
	case ToFixed:
		if s.To < 0 {
			to = f.from
		}
	case ToSelf:
		to = f.ctx.Self()
	case ToCarried:
		to = f.carried
	case ToLast:
		to = f.sym.Last
	}
	if s.Dest != ToMembers && to < 0 {
		return
	}
	n.Sent++
	v := n.eval(f, s.X)
	if f.sym == nil {
		f.ctx.Send(to, Msg{T: s.Type, V: v})
		return
	}
	m := SMsg{T: s.Type, V: v, N: -1}
	switch s.Carry {
	case CarrySelf:
		m.N = f.ctx.Self()
	case CarrySender:
		m.N = f.from
	case CarryLast:
		m.N = f.sym.Last
	}
	if s.Dest == ToMembers {
		for _, id := range n.P.Members {
			f.ctx.Send(id, m)
		}
		return
	}
	f.ctx.Send(to, m)
}

func (n *Node) cond(f *frame, c *Cond) bool {
	switch c.Kind {
	case SeenAtLeast:
		return f.sym.Seen.Len() >= c.R.C
	case SeenSender:
		return f.sym.Seen.Has(f.from)
	case LastSender:
		return f.from >= 0 && f.sym.Last == f.from
	case CarriedSelf:
		return f.carried == f.ctx.Self()
	case SenderMember:
		_, ok := slices.BinarySearch(n.P.Members, f.from)
		return ok
	}
	return rel(n.eval(f, c.L), c.Rel, n.eval(f, c.R))
}

func (n *Node) eval(f *frame, e Expr) int {
	switch e.Kind {
	case Const:
		return e.C
	case Var:
		return n.V[e.Var]
	case VarPlus:
		return (n.V[e.Var] + e.C) % n.P.Mod
	case Val:
		return f.val % n.P.Mod
	case Choose:
		if n.starting {
			return 0
		}
		return f.ctx.Choose(2) % n.P.Mod
	case SeenLen:
		return f.sym.Seen.Len() % n.P.Mod
	}
	return 0
}

// Timers are named t0, t1, t2: the digit after the t is the index.
var timerNames = [...]string{"t0", "t1", "t2"}

func timerName(t int) string { return timerNames[t] }

// String prints the program as readable code.
func (p *Program) String() string {
	var b strings.Builder
	sym := len(p.Members) > 0
	fmt.Fprintf(&b, "seed %d: %d nodes, vars V[0..%d] mod %d, %d message types, %d timers, %d sends per node, %s",
		p.Seed, p.Nodes, p.Vars-1, p.Mod, p.Types, p.Timers, p.SendCap, p.Transport)
	if p.Budget != (sim.Budget{}) {
		fmt.Fprintf(&b, ", budget %+v", p.Budget)
	}
	b.WriteByte('\n')
	for i, c := range p.Calls {
		fmt.Fprintf(&b, "call %d: App(%v) at node %d\n", i, c.Call, c.To)
	}
	for _, pr := range p.Props {
		fmt.Fprintf(&b, "property %s: never %s\n", pr.Name, pr)
	}
	if len(p.Members) > 0 {
		fmt.Fprintf(&b, "symmetry group %v: one code for all of them\n", p.Members)
	}
	for id := range p.Nodes {
		switch {
		case p.member(id) && id != int(p.Members[0]):
			continue // printed once, as the first member's
		case p.member(id):
			fmt.Fprintf(&b, "members %v:\n", p.Members)
		default:
			fmt.Fprintf(&b, "node %d:\n", id)
		}
		writeBlock(&b, "Init", p.Init[id], sym)
		for t, blk := range p.Receive[id] {
			writeBlock(&b, fmt.Sprintf("Receive type %d", t), blk, sym)
		}
		for t, blk := range p.Timer[id] {
			writeBlock(&b, "Timer "+timerName(t), blk, sym)
		}
		if len(p.Calls) > 0 {
			writeBlock(&b, "App", p.App[id], sym)
		}
		if p.Transport == sim.Stream {
			writeBlock(&b, "Error", p.Error[id], sym)
		}
	}
	return b.String()
}

func writeBlock(b *strings.Builder, name string, blk []Stmt, sym bool) {
	if len(blk) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s:\n", name)
	writeStmts(b, blk, "    ", sym)
}

// writeStmts prints blk; sym says the program is symmetric, so its
// messages carry a node.
func writeStmts(b *strings.Builder, blk []Stmt, indent string, sym bool) {
	for _, s := range blk {
		b.WriteString(indent)
		switch s.Op {
		case Assign:
			fmt.Fprintf(b, "V%d = %s\n", s.Var, s.X)
		case Send:
			to := fmt.Sprint(s.To)
			if s.To < 0 {
				to = "sender"
			}
			switch s.Dest {
			case ToSelf:
				to = "self"
			case ToMembers:
				to = "every member"
			case ToCarried:
				to = "msg.N"
			case ToLast:
				to = "Last"
			}
			carry := ""
			if sym {
				carry = " N:" + [...]string{"none", "self", "sender", "Last"}[s.Carry]
			}
			fmt.Fprintf(b, "send {T:%d V:%s%s} to %s\n", s.Type, s.X, carry, to)
		case Record:
			b.WriteString("Last = sender; Seen += sender\n")
		case Forget:
			b.WriteString("Last = none; Seen = {}\n")
		case Relay:
			fmt.Fprintf(b, "relay {T:%d V:val N:sender} to %d (past the cap)\n", s.Type, s.To)
		case SetTimer:
			fmt.Fprintf(b, "set %s\n", timerName(s.Timer))
		case CancelTimer:
			fmt.Fprintf(b, "cancel %s\n", timerName(s.Timer))
		case If:
			fmt.Fprintf(b, "if %s:\n", s.Cond)
			writeStmts(b, s.Then, indent+"  ", sym)
			if len(s.Else) > 0 {
				b.WriteString(indent + "else:\n")
				writeStmts(b, s.Else, indent+"  ", sym)
			}
		case Panic:
			b.WriteString("panic\n")
		}
	}
}

func (e Expr) String() string {
	switch e.Kind {
	case Const:
		return fmt.Sprint(e.C)
	case Var:
		return fmt.Sprintf("V%d", e.Var)
	case VarPlus:
		return fmt.Sprintf("V%d+%d", e.Var, e.C)
	case Val:
		return "val"
	case Choose:
		return "choose(2)"
	case SeenLen:
		return "|Seen|"
	}
	return "?"
}

func (c Cond) String() string {
	switch c.Kind {
	case SeenAtLeast:
		return fmt.Sprintf("|Seen| >= %d", c.R.C)
	case SeenSender:
		return "sender in Seen"
	case LastSender:
		return "Last == sender"
	case CarriedSelf:
		return "msg.N == self"
	case SenderMember:
		return "sender is a member"
	}
	return fmt.Sprintf("%s %s %s", c.L, relNames[c.Rel], c.R)
}

func (pr Prop) String() string {
	var parts []string
	for _, a := range pr.Atoms {
		who, what := fmt.Sprintf("n%d", a.Node), fmt.Sprintf("V%d", a.Var)
		switch {
		case a.Members == 1:
			who = "some member's"
		case a.Members > 1:
			who = fmt.Sprintf("%d members'", a.Members)
		}
		if a.Seen {
			what = "|Seen|"
		}
		sep := "."
		if a.Members > 0 {
			sep = " "
		}
		parts = append(parts, fmt.Sprintf("%s%s%s %s %d", who, sep, what, relNames[a.Rel], a.C))
	}
	return strings.Join(parts, " and ")
}

// NetEmpty is the liveness property the global search is also run with:
// live where no message is in flight. A state where nothing can happen
// has no message in flight, so it is never a quiescent violation, while
// paths go through non-live and live states alike.
var NetEmpty = properties.Eventually("net-empty", "no message in flight", func(s *sim.State) bool {
	return len(s.InFlight()) == 0
})

// EvenInFlight flips at every send and delivery, so paths dip and recover
// all the time: a search that stops a path at a recovery (item 3) misses
// much. A state where nothing can happen has nothing in flight, so it is
// never a quiescent violation either.
var EvenInFlight = properties.Eventually("even-in-flight", "an even number of messages in flight", func(s *sim.State) bool {
	return len(s.InFlight())%2 == 0
})

// Nothing is a safety property that always holds: a check of it alone
// searches every reachable state (a check needs a property).
var Nothing = properties.Always("nothing", "nothing is wrong", func(*sim.State) error { return nil })

// System wraps the program as a System whose parameters pick one
// safety property to check ("property") and one liveness property
// ("live": net-empty or one of the program's), so that Replay builds the
// same model as the check.
func (p *Program) System() *protocol.System {
	return &protocol.System{
		Name: "rand", Doc: "a random protocol", DefaultNodes: p.Nodes, MinNodes: p.Nodes, MaxNodes: p.Nodes,
		Params: []protocol.Param{{Name: "property"}, {Name: "live"}},
		Build: func(cfg protocol.Config) (*protocol.Model, error) {
			var props []properties.Property
			for _, pr := range append(append(p.Properties(), p.Liveness()...), NetEmpty, EvenInFlight, Nothing) {
				if pr.Name == cfg.Param("property") || pr.Name == cfg.Param("live") {
					props = append(props, pr)
				}
			}
			return &protocol.Model{Spec: p.Spec(), Properties: props}, nil
		},
	}
}
