package sim_test

import (
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// The echo protocol, twice: in one node (flatEcho), and as a numbering
// layer (relay) under an echoing layer (echoer). The two make the same
// messages and the same states, so what a step of one costs more than a
// step of the other is the cost of the layers.

type echoPing struct{ N int }

// relay numbers the messages it carries, as wire does, with no log lines.
type relay struct {
	Sent, Got int
	Last      sim.NodeID
}

func (r *relay) Init(sim.Context) { r.Last = -1 }
func (r *relay) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	r.Sent++
	ctx.Send(to, frame{N: r.Sent, Body: msg})
}
func (r *relay) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	r.Got++
	r.Last = from
	ctx.Deliver(from, msg.(frame).Body)
}
func (r *relay) Timer(sim.Context, string)     {}
func (r *relay) App(sim.Context, sim.AppCall)  {}
func (r *relay) Error(sim.Context, sim.NodeID) {}

// echoer sends a ping on a timer, and answers each ping with the next
// one, up to 3.
type echoer struct{ Echoed int }

func (e *echoer) Init(ctx sim.Context) { ctx.SetTimer("go") }
func (e *echoer) Timer(ctx sim.Context, _ string) {
	ctx.Send((ctx.Self()+1)%sim.NodeID(ctx.Nodes()), echoPing{0})
}
func (e *echoer) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if p := msg.(echoPing); p.N < 3 {
		e.Echoed++
		ctx.Send(from, echoPing{p.N + 1})
	}
}
func (e *echoer) App(sim.Context, sim.AppCall)  {}
func (e *echoer) Error(sim.Context, sim.NodeID) {}

// flatEcho is relay and echoer in one node.
type flatEcho struct {
	Sent, Got int
	Last      sim.NodeID
	Echoed    int
}

func (f *flatEcho) Init(ctx sim.Context) { f.Last = -1; ctx.SetTimer("go") }
func (f *flatEcho) send(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	f.Sent++
	ctx.Send(to, frame{N: f.Sent, Body: msg})
}
func (f *flatEcho) Timer(ctx sim.Context, _ string) {
	f.send(ctx, (ctx.Self()+1)%sim.NodeID(ctx.Nodes()), echoPing{0})
}
func (f *flatEcho) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	f.Got++
	f.Last = from
	if p := msg.(frame).Body.(echoPing); p.N < 3 {
		f.Echoed++
		f.send(ctx, from, echoPing{p.N + 1})
	}
}
func (f *flatEcho) App(sim.Context, sim.AppCall)  {}
func (f *flatEcho) Error(sim.Context, sim.NodeID) {}

func echoSpec(layered bool) sim.Spec {
	return sim.Spec{Nodes: 3, Transport: sim.Datagram, Budget: sim.Budget{Resets: 1}, New: func(sim.NodeID) sim.Node {
		if layered {
			return sim.Stack(sim.Layer{Name: "relay", Node: &relay{}}, sim.Layer{Name: "echo", Node: &echoer{}})
		}
		return &flatEcho{}
	}}
}

// echoStates returns the states of the echo world within depth steps.
func echoStates(tb testing.TB, w *sim.World, depth int) []*sim.State {
	s, err := w.Initial()
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[uint64]bool{s.Fingerprint(): true}
	level, all := []*sim.State{s}, []*sim.State{s}
	for range depth {
		var next []*sim.State
		for _, s := range level {
			for _, ev := range w.Enabled(s, nil) {
				n, err := w.Apply(s, ev, nil)
				if err != nil {
					tb.Fatal(err)
				}
				if !seen[n.Fingerprint()] {
					seen[n.Fingerprint()] = true
					next = append(next, n)
				}
			}
		}
		level, all = next, append(all, next...)
	}
	return all
}

// stepAll applies every enabled event of every state (resets only, or
// all but resets) and discards the successors, as the search does with
// the states it has seen: the hot path.
func stepAll(tb testing.TB, w *sim.World, states []*sim.State, evs []sim.Event, resets bool) ([]sim.Event, int) {
	steps := 0
	for _, s := range states {
		evs = w.Enabled(s, evs[:0])
		for _, ev := range evs {
			if (ev.Kind == sim.Reset) != resets {
				continue
			}
			n, err := w.Apply(s, ev, nil)
			if err != nil {
				tb.Fatal(err)
			}
			w.Discard(n)
			steps++
		}
	}
	return evs, steps
}

// The layered echo explores exactly the states of the echo in one node,
// and a step of it allocates no more, but for a reset, which allocates
// what New builds: the stack and each of its two layers, where one node
// is one object.
func TestStackCostsNoAllocations(t *testing.T) {
	var steps, resets [2]float64
	var counts [2]int
	perRun := 0 // steps a run, but resets
	for k, layered := range []bool{false, true} {
		w, err := sim.NewWorld(echoSpec(layered))
		if err != nil {
			t.Fatal(err)
		}
		// What a step costs when it runs: the step cache would answer
		// most of these steps.
		w.NoStepCache = true
		states := echoStates(t, w, 6)
		counts[k] = len(states)
		for _, r := range []bool{false, true} {
			evs, n := stepAll(t, w, states, nil, r) // warms the spares
			per := testing.AllocsPerRun(5, func() { evs, _ = stepAll(t, w, states, evs, r) }) / float64(n)
			if r {
				resets[k] = per
			} else {
				steps[k], perRun = per, n
			}
		}
	}
	if counts[0] != counts[1] {
		t.Errorf("%d states in one node, %d in layers: the two should be the same protocol", counts[0], counts[1])
	}
	// AllocsPerRun counts the process's allocations: one of the
	// runtime's own in a run moves a count by 1/n.
	if steps[1] > steps[0]+2/float64(perRun) {
		t.Errorf("a step allocates %.3f times in layers, %.3f in one node", steps[1], steps[0])
	}
	if resets[1] > resets[0]+2 {
		t.Errorf("a reset allocates %.3f times in layers, %.3f in one node: want at most 2 more", resets[1], resets[0])
	}
	t.Logf("%d states; allocations a step: %.3f in one node, %.3f in layers; a reset: %.3f and %.3f", counts[0], steps[0], steps[1], resets[0], resets[1])
}

func benchEcho(b *testing.B, layered bool) {
	w, err := sim.NewWorld(echoSpec(layered))
	if err != nil {
		b.Fatal(err)
	}
	states := echoStates(b, w, 6)
	evs, steps := stepAll(b, w, states, nil, false)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		evs, _ = stepAll(b, w, states, evs, false)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}

func BenchmarkEchoOneNode(b *testing.B) { benchEcho(b, false) }
func BenchmarkEchoLayered(b *testing.B) { benchEcho(b, true) }
