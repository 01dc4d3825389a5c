package livecheck_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// ticker becomes live only after 15,000 ticks of its timer: a walk
// shorter than that cannot tell it from a dead system.
type ticker struct{ N int }

func (t *ticker) Init(ctx sim.Context) { ctx.SetTimer("tick") }
func (t *ticker) Timer(ctx sim.Context, name string) {
	t.N++
	ctx.SetTimer("tick")
}
func (t *ticker) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {}
func (t *ticker) App(ctx sim.Context, call sim.AppCall)                     {}
func (t *ticker) Error(ctx sim.Context, peer sim.NodeID)                    {}

var tickerSystem = &livecheck.System{
	Name: "ticker", Doc: "slow to become live", DefaultNodes: 1, MinNodes: 1, MaxNodes: 1,
	Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
		return &livecheck.Model{
			Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &ticker{} }},
			Properties: []properties.Property{
				properties.Eventually("ticked", "15,000 ticks", func(s *sim.State) bool {
					return properties.Node[*ticker](s, 0).N >= 15000
				}),
			},
		}, nil
	},
}

func TestWalkTooShortEscalates(t *testing.T) {
	// Depth 2, walks of 5,000 steps (the floor of the dead test's: a
	// shorter walk is walked on to it before it is a suspect): the
	// periphery state (2 ticks) needs 14,998 more. The dead test of the
	// path's end walks 5,000 more, short of it (C2); the escalation
	// doubles the walk and continues it: the path has 10,002 ticks, and
	// the dead test of its end walks 10,000 more, which reach a live
	// state: one escalation clears the suspect.
	res, err := livecheck.Check(tickerSystem, livecheck.Options{Depth: 2, WalkDepth: 5000, Escalations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.OK || res.Live.Suspects != 1 || res.Live.Cleared != 1 {
		t.Fatalf("%s (%s): suspects %d cleared %d; want ok after clearing the one suspect", res.Verdict, res.Message, res.Live.Suspects, res.Live.Cleared)
	}
	if testing.Short() {
		return // each dead test that fails walks 1,500,000 steps
	}
	// Without the escalation: inconclusive, saying what was tried.
	res, err = livecheck.Check(tickerSystem, livecheck.Options{Depth: 2, WalkDepth: 5000, Escalations: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.Inconclusive || res.Live.Suspects != 1 || res.Live.Cleared != 0 {
		t.Fatalf("%s: suspects %d cleared %d; want inconclusive", res.Verdict, res.Live.Suspects, res.Live.Cleared)
	}
	for _, want := range []string{"walk depth 5000:", "even the start of the path does not recover"} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("message %q lacks %q", res.Message, want)
		}
	}
}
