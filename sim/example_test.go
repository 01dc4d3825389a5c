package sim_test

import (
	"fmt"

	"github.com/livecheck/livecheck/sim"
)

// acceptor writes its promise to disk (a durable field) and forgets the
// rest in a crash; a periodic timer announces the promise.
type acceptor struct {
	sim.BaseNode     // handlers it does not write do nothing
	Promised     int `livecheck:"durable"`
	Heard        []sim.NodeID
}

func (a *acceptor) Init(ctx sim.Context) { ctx.SetPeriodic("announce") }

func (a *acceptor) App(ctx sim.Context, call sim.AppCall) { a.Promised = call.(int) }

func (a *acceptor) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	a.Heard = append(a.Heard, from)
}

func (a *acceptor) Timer(ctx sim.Context, name string) {
	ctx.Send(1-ctx.Self(), a.Promised)
}

// A node embeds BaseNode and writes only the handlers it needs; its
// durable fields survive a reset, and a periodic timer keeps firing.
func ExampleBaseNode() {
	w, err := sim.NewWorld(sim.Spec{
		Nodes:  2,
		New:    func(sim.NodeID) sim.Node { return &acceptor{} },
		Calls:  []sim.Call{{To: 0, Call: 7}},
		Budget: sim.Budget{Resets: 1},
	})
	if err != nil {
		panic(err)
	}
	s, _ := w.Initial()
	for _, ev := range []sim.Event{
		{Kind: sim.App, Node: 0, Call: 0},
		{Kind: sim.Timer, Node: 1, Timer: "announce"},
		{Kind: sim.Timer, Node: 1, Timer: "announce"},
		{Kind: sim.Deliver, Node: 0, Peer: 1, Msg: sim.Fingerprint(0)},
		{Kind: sim.Reset, Node: 0},
	} {
		what := w.Describe(s, ev)
		if s, err = w.Apply(s, ev, nil); err != nil {
			panic(err)
		}
		fmt.Printf("%-21s node 0: %s\n", what, sim.DumpNode(s, 0))
	}
	// Output:
	// app 7 at 0            node 0: acceptor{Promised:7 Heard:[]} timers=announce(periodic)
	// timer announce at 1   node 0: acceptor{Promised:7 Heard:[]} timers=announce(periodic)
	// timer announce at 1   node 0: acceptor{Promised:7 Heard:[]} timers=announce(periodic)
	// deliver 0 1->0        node 0: acceptor{Promised:7 Heard:[1]} timers=announce(periodic)
	// reset 0               node 0: acceptor{Promised:7 Heard:[]} timers=announce(periodic)
}

// counter is a bottom layer: it numbers what the layer above sends, and
// hands up what arrives.
type counter struct {
	sim.BaseNode
	Sent int
}

type numbered struct {
	N   int
	Msg sim.Message
}

func (c *counter) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	c.Sent++
	ctx.Send(to, numbered{c.Sent, msg})
}

func (c *counter) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	ctx.Logf("got number %d", msg.(numbered).N)
	ctx.Deliver(from, msg.(numbered).Msg)
}

// greeterApp is the layer above: it greets node 1 when the driver calls,
// and keeps what it hears.
type greeterApp struct {
	sim.BaseNode
	Heard []string
}

func (g *greeterApp) App(ctx sim.Context, call sim.AppCall) { ctx.Send(1, call) }

func (g *greeterApp) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	ctx.Logf("heard %v", msg)
	g.Heard = append(g.Heard, msg.(string))
}

// A node built from two layers: the application sends through the layer
// below, which puts its own message on the wire; on the other side the
// bottom layer hands the application's message up. Event texts and log
// lines name the layers.
func ExampleStack() {
	w, err := sim.NewWorld(sim.Spec{
		Nodes: 2,
		New: func(sim.NodeID) sim.Node {
			return sim.Stack(sim.Layer{Name: "count", Node: &counter{}}, sim.Layer{Name: "app", Node: &greeterApp{}})
		},
		Calls: []sim.Call{{To: 0, Call: "hello"}},
	})
	if err != nil {
		panic(err)
	}
	w.Record = true
	s, _ := w.Initial()
	ev := sim.Event{Kind: sim.App, Node: 0, Call: 0}
	fmt.Println(w.Describe(s, ev))
	s, _ = w.Apply(s, ev, nil)
	msg := s.InFlight()[0]
	ev = sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: msg.FP}
	fmt.Println(w.Describe(s, ev))
	s, _ = w.Apply(s, ev, nil)
	fmt.Println(w.Last().Logs)
	fmt.Println(sim.DumpNode(s, 1))
	// Output:
	// app "hello" at 0 [app]
	// deliver numbered{N:1 Msg:"hello"} 0->1 [count]
	// [1 count: got number 1 1 app: heard hello]
	// count:{Sent:0} app:{Heard:["hello"]}
}
