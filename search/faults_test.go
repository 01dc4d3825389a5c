package search_test

import (
	"testing"

	"github.com/livecheck/livecheck/internal/oracle"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// pinger is a tiny datagram protocol for the failure counts: the driver
// has node 0 send a ping to node 1, which counts it and answers with a
// pong, which node 0 counts.
type pinger struct{ Got, Pongs int }

type ping struct{}
type pong struct{}

func (n *pinger) Init(sim.Context) {}
func (n *pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(type) {
	case ping:
		n.Got++
		ctx.Send(from, pong{})
	case pong:
		n.Pongs++
	}
}
func (n *pinger) Timer(sim.Context, string)          {}
func (n *pinger) App(ctx sim.Context, _ sim.AppCall) { ctx.Send(1, ping{}) }
func (n *pinger) Error(sim.Context, sim.NodeID)      {}

func pingSpec(tr sim.Transport, b sim.Budget) sim.Spec {
	return sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &pinger{} }, Transport: tr,
		Calls: []sim.Call{{To: 0, Call: "go"}}, Budget: b}
}

var always = []properties.Property{properties.Always("ok", "nothing is wrong", func(*sim.State) error { return nil })}

// The exact counts of the ping protocol with each failure budget, by hand
// (see each case), and the same from the plain breadth-first oracle, with
// and without sleep sets.
func TestFailureCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tr     sim.Transport
		budget sim.Budget
		states int64
	}{
		// start, ping sent, ping delivered (pong in flight), pong
		// delivered.
		{"none", sim.Datagram, sim.Budget{}, 4},
		// Those 4, and with the one duplication: ping copied (then the
		// first delivered, then the second or the pong, then the rest),
		// or pong copied (then one, then the other delivered): 9 more,
		// since two pings then one pong, or one ping, one pong, one ping,
		// end alike.
		{"dups 1", sim.Datagram, sim.Budget{Dups: 1}, 13},
		// The 4, each also with the cut {0} | {1} in force and after it
		// healed (8 more), and two states where the ping or the pong was
		// lost at the cut (or sent into it), cut and healed: 14 in all.
		{"partitions 1", sim.Datagram, sim.Budget{Partitions: 1}, 14},
		// On a stream the same, but that the end, cut and healed, has
		// no connection, while the end reached after the heal has one:
		// 15.
		{"partitions 1, stream", sim.Stream, sim.Budget{Partitions: 1}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := sim.NewWorld(pingSpec(tc.tr, tc.budget))
			if err != nil {
				t.Fatal(err)
			}
			orc, err := oracle.Explore(w, always, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if orc.States != int(tc.states) {
				t.Errorf("oracle: %d states, want %d", orc.States, tc.states)
			}
			for _, reduce := range []bool{false, true} {
				res, err := search.Global(w, search.Options{Depth: 30, Properties: always, Reduce: reduce})
				if err != nil {
					t.Fatal(err)
				}
				if res.Stats.States != tc.states || !res.Exhausted || res.Violation != nil {
					t.Errorf("reduce %v: %d states (exhausted %v, violation %v), want %d", reduce, res.Stats.States, res.Exhausted, res.Violation, tc.states)
				}
			}
		})
	}
}
