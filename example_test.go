package livecheck_test

import (
	"fmt"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// A ping node: node 0 pings every other node once, each answers with a
// pong, and node 0 counts the pongs.
type pinger struct {
	sim.BaseNode // App and Error do nothing
	Pongs        int
	Sent         bool
}

type ping struct{}
type pong struct{}

func (p *pinger) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.SetTimer("start")
	}
}

func (p *pinger) Timer(ctx sim.Context, name string) {
	for i := 1; i < ctx.Nodes(); i++ {
		ctx.Send(sim.NodeID(i), ping{})
	}
	p.Sent = true
}

func (p *pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(type) {
	case ping:
		ctx.Send(from, pong{})
	case pong:
		p.Pongs++
	}
}

// Write each node as a state machine, describe the system with its
// properties, and check it.
func Example() {
	sys := &livecheck.System{
		Name: "ping", Doc: "one round of pings", DefaultNodes: 3, MinNodes: 2, MaxNodes: 8,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &pinger{} }},
				Properties: []properties.Property{
					properties.Always("pongs-bounded", "no more pongs than nodes pinged", func(s *sim.State) error {
						if n := properties.Node[*pinger](s, 0).Pongs; n > s.N()-1 {
							return fmt.Errorf("node 0 counted %d pongs from %d nodes", n, s.N()-1)
						}
						return nil
					}),
					properties.Eventually("all-answered", "node 0 heard every pong", func(s *sim.State) bool {
						return properties.Node[*pinger](s, 0).Pongs == s.N()-1
					}),
				},
			}, nil
		},
	}
	res, err := livecheck.Check(sys, livecheck.Options{Depth: 10})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict, res.Stats.States, "states, exhausted:", res.Exhausted)

	// With one datagram lost, the last pong may never come.
	res, _ = livecheck.Check(sys, livecheck.Options{Depth: 10, Config: livecheck.Config{Budget: sim.Budget{Drops: 1}}})
	fmt.Println(res.Verdict, res.Property, "critical step:", res.Critical.EventText)
	// Output:
	// ok 10 states, exhausted: true
	// liveness-violation all-answered critical step: drop ping{} 0->2
}
