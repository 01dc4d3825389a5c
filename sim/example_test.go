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
