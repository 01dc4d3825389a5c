package sim_test

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// quietNode sends each other node a message at Init and then only counts:
// its timer's steps leave the network as it was (shared with the state
// before), its deliveries take a message out (a copy of the network).
type quietNode struct{ Ticks, Got int }

type greeting struct{ N int }

func (k *quietNode) Init(ctx sim.Context) {
	for to := range ctx.Nodes() {
		if sim.NodeID(to) != ctx.Self() {
			ctx.Send(sim.NodeID(to), greeting{int(ctx.Self())})
		}
	}
	ctx.SetTimer("t")
}
func (k *quietNode) Timer(ctx sim.Context, _ string) {
	if k.Ticks++; k.Ticks < 3 {
		ctx.SetTimer("t")
	}
}
func (k *quietNode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { k.Got++ }
func (k *quietNode) App(sim.Context, sim.AppCall)                              {}
func (k *quietNode) Error(sim.Context, sim.NodeID)                             {}

// The search applies every event of a state, then judges the batch and
// discards what it saw before: the networks of a batch's discarded
// states serve the next batch's steps, as they serve a step's successor
// when each is discarded at once (stepAll), though the states a batch
// gives back that shared their network have none to give. (With one
// spare network, a step of these batches allocated 0.54 times, against
// 0.31 one by one.)
func TestBatchedStepsReuseNetworks(t *testing.T) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 4, Transport: sim.Datagram, New: func(sim.NodeID) sim.Node { return &quietNode{} }})
	if err != nil {
		t.Fatal(err)
	}
	w.NoStepCache = true
	states := echoStates(t, w, 5)
	var evs []sim.Event
	var batch []*sim.State
	batched := func() int {
		steps := 0
		for _, s := range states {
			evs = w.Enabled(s, evs[:0])
			batch = batch[:0]
			for _, ev := range evs {
				if ev.Kind == sim.Reset {
					continue
				}
				n, err := w.Apply(s, ev, nil)
				if err != nil {
					t.Fatal(err)
				}
				batch = append(batch, n)
				steps++
			}
			for _, n := range batch {
				w.Discard(n)
			}
		}
		return steps
	}
	n := batched() // warms the spares
	inBatches := testing.AllocsPerRun(5, func() { batched() }) / float64(n)
	evs, _ = stepAll(t, w, states, evs, false)
	oneByOne := testing.AllocsPerRun(5, func() { evs, _ = stepAll(t, w, states, evs, false) }) / float64(n)
	// AllocsPerRun counts the process's allocations: a few of the
	// runtime's own may fall in one run and not the other.
	if inBatches > oneByOne+4/float64(n) {
		t.Errorf("a step allocates %.3f times in batches, %.3f one by one", inBatches, oneByOne)
	}
	t.Logf("%d steps; allocations a step: %.3f in batches, %.3f one by one", n, inBatches, oneByOne)
}
