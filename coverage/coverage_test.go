package coverage_test

import (
	"reflect"
	"sync"
	"testing"

	"github.com/livecheck/livecheck/coverage"
	"github.com/livecheck/livecheck/internal/lines"
	"github.com/livecheck/livecheck/sim"
)

type ping struct{}
type pong struct{ N int }

// Counts go by handler: Receive by the message's type, Timer by name; a
// socket error runs Error at both ends, a reset Init; Add merges counters
// that met types and names in different orders.
func TestCounter(t *testing.T) {
	var a, b coverage.Counter
	a.Start(3)
	a.Event(&sim.Event{Kind: sim.Deliver}, ping{}, 0)
	a.Event(&sim.Event{Kind: sim.Deliver}, &pong{}, 0)
	a.Event(&sim.Event{Kind: sim.Deliver}, ping{}, 0)
	a.Event(&sim.Event{Kind: sim.Timer, Timer: "retry"}, nil, 0)
	a.Event(&sim.Event{Kind: sim.SocketError, Node: 0, Peer: 1}, nil, 2)
	b.Event(&sim.Event{Kind: sim.Timer, Timer: "lease"}, nil, 0)
	b.Event(&sim.Event{Kind: sim.Timer, Timer: "retry"}, nil, 0)
	b.Event(&sim.Event{Kind: sim.Deliver}, &pong{N: 2}, 0)
	b.Event(&sim.Event{Kind: sim.Drop}, ping{}, 0)
	b.Event(&sim.Event{Kind: sim.Reset}, nil, 0)
	b.Event(&sim.Event{Kind: sim.App}, nil, 0)
	a.Add(&b)
	want := coverage.Summary{Transitions: 11, Init: 4, Resets: 1, App: 1, Error: 2, Drops: 1,
		Receive: []coverage.Count{{"*pong", 2}, {"ping", 2}},
		Timer:   []coverage.Count{{"lease", 1}, {"retry", 2}}}
	if got := a.Summary(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Summary = %+v\nwant %+v", got, want)
	}
	b.Reset()
	if got := b.Summary(); !reflect.DeepEqual(got, coverage.Summary{Receive: []coverage.Count{}, Timer: []coverage.Count{}}) {
		t.Fatalf("after Reset: %+v", got)
	}
	if got := b.Summary(); !reflect.DeepEqual(got.Never(), []string{"Receive", "Timer", "App", "Error"}) {
		t.Fatalf("Never = %v", got.Never())
	}
}

// Counting a step allocates nothing once the type and name are met.
func TestCounterAllocs(t *testing.T) {
	var c coverage.Counter
	ev, tm := sim.Event{Kind: sim.Deliver}, sim.Event{Kind: sim.Timer, Timer: "retry"}
	var msg sim.Message = pong{N: 1}
	c.Event(&ev, msg, 0)
	c.Event(&tm, nil, 0)
	if n := testing.AllocsPerRun(100, func() { c.Event(&ev, msg, 0); c.Event(&tm, nil, 0) }); n != 0 {
		t.Fatalf("%v allocations per step", n)
	}
}

// kinded is one envelope type for several kinds of message, as raft's
// Message is.
type kinded struct{ Kind string }

func (k kinded) MessageKind() string { return k.Kind }

// A type that names its kinds is counted per kind, each named after the
// type; Add keeps the kinds apart.
func TestCounterKinds(t *testing.T) {
	var a, b coverage.Counter
	a.Event(&sim.Event{Kind: sim.Deliver}, kinded{"vote"}, 0)
	a.Event(&sim.Event{Kind: sim.Deliver}, kinded{"append"}, 0)
	b.Event(&sim.Event{Kind: sim.Deliver}, kinded{"vote"}, 0)
	b.Event(&sim.Event{Kind: sim.Deliver}, ping{}, 0)
	a.Add(&b)
	want := []coverage.Count{{"kinded.append", 1}, {"kinded.vote", 2}, {"ping", 1}}
	if got := a.Summary().Receive; !reflect.DeepEqual(got, want) {
		t.Fatalf("Receive = %+v, want %+v", got, want)
	}
}

// BenchmarkTwoCounters counts steps on two goroutines at once, each on a
// counter of its own, the two made one after the other as a check makes
// its walkers' (each on lines of its own, as a walker's tally is): ns/op
// is one step of each. Counts that shared a cache line made it three
// times as long as counts on lines of their own (room_test.go).
func BenchmarkTwoCounters(b *testing.B) {
	cs := []*coverage.Counter{lines.New[coverage.Counter](), lines.New[coverage.Counter]()}
	ev := sim.Event{Kind: sim.Timer, Timer: "retry"}
	for _, c := range cs {
		c.Event(&ev, nil, 0)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range b.N {
				c.Event(&ev, nil, 0)
			}
		}()
	}
	wg.Wait()
}
