// Package randproto generates small random protocols, deterministic from a
// seed, for the randomized cross-check of livecheck's search modes against
// a plain breadth-first search (internal/oracle).
//
// A generated protocol is data (a [Program]) that one node type interprets,
// so a failing seed prints as readable code. Every state space is finite by
// construction: node variables are kept in [0, Mod), each node sends at
// most SendCap messages between resets (a Send past the cap does nothing),
// and timers are a fixed set of names. The generator is tuned so that most
// spaces have hundreds to a few thousand states.
package randproto

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/livecheck/livecheck/properties"
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
}

// ExprKind is the form of an expression.
type ExprKind uint8

const (
	Const   ExprKind = iota // C
	Var                     // V[Var]
	VarPlus                 // (V[Var] + C) mod Mod
	Val                     // the message's value (Receive) or the call's argument (App); 0 elsewhere
	Choose                  // ctx.Choose(2)
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

// A Cond compares two expressions (never Choose).
type Cond struct {
	L   Expr
	Rel Rel
	R   Expr
}

// An Atom is "node Node's V[Var] Rel C".
type Atom struct {
	Node int
	Var  int
	Rel  Rel
	C    int
}

// A Prop is a safety property: it is violated where every atom holds.
type Prop struct {
	Name  string
	Atoms []Atom
}

// Msg is every message: its type and one value.
type Msg struct{ T, V int }

// Node is the interpreter of a Program, and its state.
type Node struct {
	V    [MaxVars]int
	Sent int
	// Up says the node has started once: it survives resets, so that
	// Choose in Init is made only after a reset (the first Init may not
	// choose) and reads 0 in the first.
	Up       bool     `livecheck:"durable"`
	starting bool     `livecheck:"-"` // in the first Init; false between handlers
	P        *Program `livecheck:"-"`
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
	switch r.IntN(8) {
	case 0:
		p.Budget.Resets = 1
	case 1:
		if p.Transport == sim.Datagram {
			p.Budget.Drops = 1
		} else {
			p.Budget.Errors = 1
		}
	}
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

type handlerKind uint8

const (
	handlerInit handlerKind = iota
	handlerReceive
	handlerApp
	handlerOther
)

type gen struct {
	r *rand.Rand
	p *Program
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

// Spec returns the world the program runs in.
func (p *Program) Spec() sim.Spec {
	return sim.Spec{
		Nodes:     p.Nodes,
		New:       func(sim.NodeID) sim.Node { return &Node{P: p} },
		Transport: p.Transport,
		Calls:     p.Calls,
		Budget:    p.Budget,
	}
}

// Properties returns the program's safety properties.
func (p *Program) Properties() []properties.Property {
	var out []properties.Property
	for _, pr := range p.Props {
		pr := pr
		out = append(out, properties.Always(pr.Name, pr.String(), func(s *sim.State) error {
			if pr.holds(s) {
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
		out = append(out, properties.Eventually("eventually-"+pr.Name, pr.String(), pr.holds))
	}
	return out
}

func (pr *Prop) holds(s *sim.State) bool {
	for _, a := range pr.Atoms {
		if !a.holds(s.Node(sim.NodeID(a.Node)).(*Node)) {
			return false
		}
	}
	return true
}

func (a Atom) holds(n *Node) bool { return rel(n.V[a.Var], a.Rel, a.C) }

func rel(a int, r Rel, b int) bool {
	switch r {
	case Eq:
		return a == b
	case Ne:
		return a != b
	}
	return a < b
}

func (n *Node) Init(ctx sim.Context) {
	n.starting = !n.Up
	n.run(ctx, n.P.Init[ctx.Self()], -1, 0)
	n.starting, n.Up = false, true
}

func (n *Node) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m := msg.(Msg)
	n.run(ctx, n.P.Receive[ctx.Self()][m.T], from, m.V)
}

func (n *Node) Timer(ctx sim.Context, name string) {
	n.run(ctx, n.P.Timer[ctx.Self()][name[1]-'0'], -1, 0)
}

func (n *Node) App(ctx sim.Context, call sim.AppCall) {
	n.run(ctx, n.P.App[ctx.Self()], -1, call.(int))
}

func (n *Node) Error(ctx sim.Context, peer sim.NodeID) {
	n.run(ctx, n.P.Error[ctx.Self()], peer, 0)
}

// run interprets a block; from is the sender (-1 outside Receive and
// Error) and val the message's value or the call's argument.
func (n *Node) run(ctx sim.Context, b []Stmt, from sim.NodeID, val int) {
	for i := range b {
		s := &b[i]
		switch s.Op {
		case Assign:
			n.V[s.Var] = n.eval(ctx, s.X, val)
		case Send:
			if n.Sent >= n.P.SendCap {
				continue
			}
			to := sim.NodeID(s.To)
			if s.To < 0 {
				if from < 0 {
					continue
				}
				to = from
			}
			n.Sent++
			ctx.Send(to, Msg{T: s.Type, V: n.eval(ctx, s.X, val)})
		case SetTimer:
			ctx.SetTimer(timerName(s.Timer))
		case CancelTimer:
			ctx.CancelTimer(timerName(s.Timer))
		case If:
			if rel(n.eval(ctx, s.Cond.L, val), s.Cond.Rel, n.eval(ctx, s.Cond.R, val)) {
				n.run(ctx, s.Then, from, val)
			} else {
				n.run(ctx, s.Else, from, val)
			}
		case Panic:
			panic("a generated panic")
		}
	}
}

func (n *Node) eval(ctx sim.Context, e Expr, val int) int {
	switch e.Kind {
	case Const:
		return e.C
	case Var:
		return n.V[e.Var]
	case VarPlus:
		return (n.V[e.Var] + e.C) % n.P.Mod
	case Val:
		return val % n.P.Mod
	case Choose:
		if n.starting {
			return 0
		}
		return ctx.Choose(2) % n.P.Mod
	}
	return 0
}

// Timers are named t0, t1, t2: the digit after the t is the index.
var timerNames = [...]string{"t0", "t1", "t2"}

func timerName(t int) string { return timerNames[t] }

// String prints the program as readable code.
func (p *Program) String() string {
	var b strings.Builder
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
	for id := range p.Nodes {
		fmt.Fprintf(&b, "node %d:\n", id)
		writeBlock(&b, "Init", p.Init[id])
		for t, blk := range p.Receive[id] {
			writeBlock(&b, fmt.Sprintf("Receive type %d", t), blk)
		}
		for t, blk := range p.Timer[id] {
			writeBlock(&b, "Timer "+timerName(t), blk)
		}
		if len(p.Calls) > 0 {
			writeBlock(&b, "App", p.App[id])
		}
		if p.Transport == sim.Stream {
			writeBlock(&b, "Error", p.Error[id])
		}
	}
	return b.String()
}

func writeBlock(b *strings.Builder, name string, blk []Stmt) {
	if len(blk) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s:\n", name)
	writeStmts(b, blk, "    ")
}

func writeStmts(b *strings.Builder, blk []Stmt, indent string) {
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
			fmt.Fprintf(b, "send {T:%d V:%s} to %s\n", s.Type, s.X, to)
		case SetTimer:
			fmt.Fprintf(b, "set %s\n", timerName(s.Timer))
		case CancelTimer:
			fmt.Fprintf(b, "cancel %s\n", timerName(s.Timer))
		case If:
			fmt.Fprintf(b, "if %s %s %s:\n", s.Cond.L, relNames[s.Cond.Rel], s.Cond.R)
			writeStmts(b, s.Then, indent+"  ")
			if len(s.Else) > 0 {
				b.WriteString(indent + "else:\n")
				writeStmts(b, s.Else, indent+"  ")
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
	}
	return "?"
}

func (pr Prop) String() string {
	var parts []string
	for _, a := range pr.Atoms {
		parts = append(parts, fmt.Sprintf("n%d.V%d %s %d", a.Node, a.Var, relNames[a.Rel], a.C))
	}
	return strings.Join(parts, " and ")
}
