package search_test

import (
	"fmt"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// tally is a protocol for the trail's test: each of three nodes counts to
// 3 on a timer, from 0 or 1 (its first Init chooses), and sends each count
// to the next node, once or twice (it chooses); a node adds up what it
// gets. Its levels hold thousands of states, more than the search keeps:
// many are made again on a worker's chain, above states it kept.
type tally struct {
	N, Sum, Got int
	onStep      func(n *tally, self sim.NodeID) `livecheck:"-"`
}

type tallyCount struct{ N int }

func (n *tally) Init(ctx sim.Context) { n.N = ctx.Choose(2); ctx.SetTimer("tick") }

func (n *tally) Timer(ctx sim.Context, name string) {
	n.onStep(n, ctx.Self())
	n.N++
	if n.N < 3 {
		ctx.SetTimer("tick")
	}
	for range 1 + ctx.Choose(2) {
		ctx.Send((ctx.Self()+1)%3, tallyCount{n.N})
	}
}

func (n *tally) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	n.onStep(n, ctx.Self())
	n.Sum += msg.(tallyCount).N
	n.Got++
}

func (n *tally) App(sim.Context, sim.AppCall)  {}
func (n *tally) Error(sim.Context, sim.NodeID) {}

// The trail says where the search is, for a watchdog to run a stuck step
// again: at every step the search takes, and every step it takes again
// to make a state (periphery states included), the path PathTo gives
// leads to the state the step is applied to, and the trail's event is
// the step's.
func TestTrailIsWhereTheSearchIs(t *testing.T) {
	var trail *search.Trail
	checked := 0
	var check func(n *tally, self sim.NodeID)
	spec := sim.Spec{Nodes: 3, New: func(sim.NodeID) sim.Node { return &tally{onStep: func(n *tally, self sim.NodeID) { check(n, self) }} }}
	w, err := sim.NewWorld(spec) // the search's
	if err != nil {
		t.Fatal(err)
	}
	w2, err := sim.NewWorld(spec) // the check's
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	replaying := false // the check's own replay's handlers
	check = func(n *tally, self sim.NodeID) {
		if failed != nil || replaying {
			return
		}
		replaying = true
		defer func() { replaying = false }()
		checked++
		init, p, err := trail.PathTo(w2)
		if err != nil {
			failed = fmt.Errorf("PathTo: %v", err)
			return
		}
		s, err := w2.InitialFrom(init)
		if err == nil {
			s, err = w2.Run(s, p, nil)
		}
		ev, _, from := w.Current()
		switch {
		case err != nil:
			failed = fmt.Errorf("the trail's path (%d steps) does not replay: %v", len(p), err)
		case ev != trail.Event || ev.Node != self:
			failed = fmt.Errorf("the trail names %v, the world runs node %d's handler for %v", trail.Event, self, ev)
		case s.Fingerprint() != w.Fingerprint(from):
			failed = fmt.Errorf("the trail's path (%d steps) leads to another state than the one the search steps from", len(p))
		}
	}
	trail = &search.Trail{}
	done := properties.Eventually("done", "every node has counted to 3", func(s *sim.State) bool {
		return properties.Node[*tally](s, 0).N == 3 && properties.Node[*tally](s, 1).N == 3 && properties.Node[*tally](s, 2).N == 3
	})
	res, err := search.Global(w, search.Options{Depth: 6, Trail: trail, Reduce: true, Properties: []properties.Property{done}})
	if err != nil {
		t.Fatal(err)
	}
	if failed != nil {
		t.Fatalf("after %d steps checked: %v", checked, failed)
	}
	if res.Stats.States < 10000 {
		t.Fatalf("%d states: too few for the search to make states again", res.Stats.States)
	}
	trail = &search.Trail{}
	for i := range min(res.Periphery.Len(), 200) {
		if _, err := res.Periphery.At(w, i, trail); err != nil {
			t.Fatal(err)
		}
	}
	if failed != nil {
		t.Fatalf("making periphery states again, after %d steps checked: %v", checked, failed)
	}
	t.Logf("%d states, %d steps checked", res.Stats.States, checked)
}
