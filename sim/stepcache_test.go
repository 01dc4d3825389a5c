package sim_test

import (
	"crypto/rand"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// adder adds what it is sent to N; "noop" leaves it as it is. Node 1
// sends node 0 one of each message at its start.
type adder struct {
	sim.BaseNode
	N int
}

type addMsg string

func (a *adder) Init(ctx sim.Context) {
	if ctx.Self() == 1 {
		for _, m := range []addMsg{"inc", "add10", "noop"} {
			ctx.Send(0, m)
		}
	}
}

func (a *adder) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(addMsg) {
	case "inc":
		a.N++
	case "add10":
		a.N += 10
	}
}

// deliverNamed applies the delivery to node 0 of the message named m.
func deliverNamed(t *testing.T, w *sim.World, s *sim.State, m string) *sim.State {
	t.Helper()
	for _, ev := range w.Enabled(s, nil) {
		if ev.Kind == sim.Deliver && strings.Contains(w.Describe(s, ev), m) {
			n, err := w.Apply(s, ev, nil)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no delivery of %s", m)
	return nil
}

// A step the cache answers does what the handler would, though the node
// state of the run it recorded went back to the spares since: a run that
// left its node as it was recorded the node of the state before, which
// its states may give back (Discard) and a later copy overwrite.
func TestStepCacheKeepsNoSharedNode(t *testing.T) {
	w, s0 := newWorld(t, sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &adder{} }})
	w.NoStepCache = true
	p := deliverNamed(t, w, s0, "inc") // node 0 at 1, a node state p made
	w.NoStepCache = false
	n := deliverNamed(t, w, p, "noop") // recorded: node 0 as it was, p's
	w.Discard(n)
	w.Discard(p)                    // p's node state goes back to the spares
	deliverNamed(t, w, s0, "add10") // copied into p's old node state: 10
	w.NoStepCache = true
	p2 := deliverNamed(t, w, s0, "inc") // node 0 at 1 again, a new node state
	w.NoStepCache = false
	got := deliverNamed(t, w, p2, "noop") // from the cache
	if a := got.Node(0).(*adder); a.N != 1 {
		t.Fatalf("node 0 after inc, noop: N = %d, want 1", a.N)
	}
	w.NoStepCache = true
	want := deliverNamed(t, w, p2, "noop")
	if got.Fingerprint() != want.Fingerprint() {
		t.Fatalf("the cached step's state has fingerprint %x, the run's %x", got.Fingerprint(), want.Fingerprint())
	}
}

// The cache answers a step met again with what its run did: the same
// successor, messages and choices, without running the handler.
func TestStepCacheAnswers(t *testing.T) {
	runs := 0
	w, s0 := newWorld(t, sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &counted{runs: &runs} }})
	a := deliverNamed(t, w, s0, "ping")
	sentA := len(w.Last().Sent)
	b := deliverNamed(t, w, s0, "ping")
	if runs != 1 {
		t.Fatalf("the handler ran %d times for the same step twice, want 1", runs)
	}
	if a.Fingerprint() != b.Fingerprint() || len(w.Last().Sent) != sentA || sentA != 1 {
		t.Fatalf("from the cache: fingerprint %x, %d sent; the run: %x, %d sent", b.Fingerprint(), len(w.Last().Sent), a.Fingerprint(), sentA)
	}
	w.NoStepCache = true
	c := deliverNamed(t, w, s0, "ping")
	if runs != 2 || c.Fingerprint() != a.Fingerprint() {
		t.Fatalf("without the cache: %d runs, fingerprint %x; want 2 and %x", runs, c.Fingerprint(), a.Fingerprint())
	}
}

// counted counts its Receive runs and answers a ping with a pong.
type counted struct {
	sim.BaseNode
	N    int
	runs *int `livecheck:"-"`
}

func (c *counted) Init(ctx sim.Context) {
	if ctx.Self() == 1 {
		ctx.Send(0, addMsg("ping"))
	}
}

func (c *counted) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	*c.runs++
	c.N++
	ctx.Send(from, addMsg("pong"))
}

// Worlds that share a step cache answer each other's steps: a run one
// world recorded is not run again by the other, which reaches the same
// state; a world that shares nothing runs it itself.
func TestSharedStepCache(t *testing.T) {
	runs := 0
	spec := sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &counted{runs: &runs} }}
	shared := sim.NewSharedStepCache()
	a, s0 := newWorld(t, spec)
	b, _ := newWorld(t, spec)
	a.SharedCache, b.SharedCache = shared, shared
	x := deliverNamed(t, a, s0, "ping")
	y := deliverNamed(t, b, s0, "ping")
	if runs != 1 || x.Fingerprint() != y.Fingerprint() || len(b.Last().Sent) != 1 {
		t.Fatalf("two worlds sharing a cache: %d runs, fingerprints %x and %x, %d sent; want 1 run, the same state, 1 sent", runs, x.Fingerprint(), y.Fingerprint(), len(b.Last().Sent))
	}
	c, _ := newWorld(t, spec)
	if z := deliverNamed(t, c, s0, "ping"); runs != 2 || z.Fingerprint() != x.Fingerprint() {
		t.Fatalf("a world of its own: %d runs, want 2, and the same state", runs)
	}
}

// The cache answers the steps of a stacked node too: a delivery met
// again is not run again through the layers, and gives the state the run
// gave. The node state it holds is shared, and a later step on it copies
// it (layers and all) before it runs: the states that hold it do not see
// the change.
func TestStepCacheAnswersStacks(t *testing.T) {
	runs := 0
	w, s0 := newWorld(t, sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node {
		return sim.Stack(sim.Layer{Name: "relay", Node: &relay{}}, sim.Layer{Name: "top", Node: &counted{runs: &runs}})
	}})
	a := deliverNamed(t, w, s0, "ping")
	sentA := len(w.Last().Sent)
	b := deliverNamed(t, w, s0, "ping")
	if runs != 1 {
		t.Fatalf("the top layer ran %d times for the same step twice, want 1", runs)
	}
	if a.Fingerprint() != b.Fingerprint() || len(w.Last().Sent) != sentA || sentA != 1 {
		t.Fatalf("from the cache: fingerprint %x, %d sent; the run: %x, %d sent", b.Fingerprint(), len(w.Last().Sent), a.Fingerprint(), sentA)
	}
	// Node 1 answers the pong with a pong, which node 0's layers take
	// from b's node state, held by the cache.
	c := deliverNamed(t, w, deliverNamed(t, w, b, "pong"), "pong")
	top := func(s *sim.State) *counted {
		n, _ := sim.LayerOf[*counted](s.Node(0))
		return n
	}
	if got := top(c).N; got != 2 {
		t.Fatalf("node 0's top layer after a ping and a pong: N = %d, want 2", got)
	}
	if top(a).N != 1 || top(b).N != 1 {
		t.Fatalf("a later step changed the cached node state: N = %d and %d, want 1", top(a).N, top(b).N)
	}
	w.NoStepCache = true
	d := deliverNamed(t, w, s0, "ping")
	if d.Fingerprint() != a.Fingerprint() {
		t.Fatalf("without the cache: fingerprint %x, want %x", d.Fingerprint(), a.Fingerprint())
	}
}

// broken counts its Error runs and, on each, opens the connection again
// with a hello; node 1 connects to node 0 at its start.
type broken struct {
	sim.BaseNode
	Errors int
	runs   *int `livecheck:"-"`
}

func (b *broken) Init(ctx sim.Context) {
	if ctx.Self() == 1 {
		ctx.Send(0, addMsg("noop"))
	}
}

func (b *broken) Error(ctx sim.Context, peer sim.NodeID) {
	*b.runs++
	b.Errors++
	ctx.Send(peer, addMsg("inc"))
}

// socketError returns the socket error enabled in s, of its one
// connection.
func socketError(t *testing.T, w *sim.World, s *sim.State) sim.Event {
	t.Helper()
	for _, e := range w.Enabled(s, nil) {
		if e.Kind == sim.SocketError {
			return e
		}
	}
	t.Fatalf("no socket error enabled in %v", w.Enabled(s, nil))
	return sim.Event{}
}

// A step of two handlers, a socket error's, is answered from the cache
// too, each end's Error by its own entry: met again, it runs neither, and
// gives the state, the messages and the Error count the runs gave. Before,
// only steps of one handler were recorded, and every socket error ran
// both ends' Error each time.
func TestStepCacheAnswersSocketErrors(t *testing.T) {
	runs := 0
	spec := sim.Spec{Nodes: 2, Transport: sim.Stream, Budget: sim.Budget{Errors: 1},
		New: func(sim.NodeID) sim.Node { return &broken{runs: &runs} }}
	w, s0 := newWorld(t, spec)
	ev := socketError(t, w, s0)
	apply := func() (*sim.State, sim.StepInfo) {
		t.Helper()
		n, err := w.Apply(s0, ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		info := *w.Last()
		info.Sent = slices.Clone(info.Sent)
		return n, info
	}
	a, ia := apply()
	if runs != 2 || ia.Errors != 2 || len(ia.Sent) != 2 {
		t.Fatalf("the socket error ran %d handlers (%d counted), sent %d; want 2, 2, 2", runs, ia.Errors, len(ia.Sent))
	}
	b, ib := apply()
	if runs != 2 {
		t.Fatalf("met again, the socket error ran %d more handlers, want none", runs-2)
	}
	if b.Fingerprint() != a.Fingerprint() || ib.Errors != 2 || !slices.EqualFunc(ia.Sent, ib.Sent, func(x, y sim.Envelope) bool { return x.From == y.From && x.To == y.To && x.FP == y.FP }) {
		t.Fatalf("from the cache: %x, %d errors, sent %v; the runs: %x, %d, %v", b.Fingerprint(), ib.Errors, ib.Sent, a.Fingerprint(), ia.Errors, ia.Sent)
	}
	w.NoStepCache = true
	c, _ := apply()
	if runs != 4 || c.Fingerprint() != a.Fingerprint() {
		t.Fatalf("without the cache: %d runs, fingerprint %x; want 4 and %x", runs, c.Fingerprint(), a.Fingerprint())
	}
}

// erratic draws a number below 3 from crypto/rand on each Error, as a
// library draws a backoff, counting its runs.
type erratic struct {
	sim.BaseNode
	Drawn []int64
	runs  *int `livecheck:"-"`
}

func (e *erratic) Init(ctx sim.Context) {
	if ctx.Self() == 1 {
		ctx.Send(0, addMsg("noop"))
	}
}

func (e *erratic) Error(ctx sim.Context, peer sim.NodeID) {
	*e.runs++
	v, err := rand.Int(rand.Reader, big.NewInt(3))
	if err != nil {
		panic(err)
	}
	e.Drawn = append(e.Drawn, v.Int64())
}

// A run the cache answers carries its draw's cut to the handlers after
// it. On the tape [3], node 0's Error draws 3, which crypto/rand.Int
// rejects and draws again; on [5], Int masks 5 down to 1, a value tried
// already, which the world sees once the run has returned. Either way the
// draws after it in the step, node 1's included, have nothing more to
// try (bound one past their value). Answered from the cache, node 0's run
// must leave the step as cut as its run did, or node 1's draw would read
// as one of 256 values, and the search try them all.
func TestStepCacheCarriesDrawCuts(t *testing.T) {
	for _, c := range []struct {
		tape, bounds []int
	}{{[]int{3}, []int{4, 1, 1}}, {[]int{5}, []int{6, 1}}} {
		runs := 0
		spec := sim.Spec{Nodes: 2, Transport: sim.Stream, Budget: sim.Budget{Errors: 1},
			New: func(sim.NodeID) sim.Node { return &erratic{runs: &runs} }}
		w, s0 := newWorld(t, spec)
		ev := socketError(t, w, s0)
		apply := func() (*sim.State, sim.StepInfo) {
			t.Helper()
			n, err := w.Apply(s0, ev, c.tape)
			if err != nil {
				t.Fatal(err)
			}
			info := *w.Last()
			info.Choices, info.Bounds = slices.Clone(info.Choices), slices.Clone(info.Bounds)
			return n, info
		}
		w.NoStepCache = true
		want, wi := apply()
		if !slices.Equal(wi.Bounds, c.bounds) {
			t.Fatalf("tape %v: the runs' bounds are %v (choices %v), want %v", c.tape, wi.Bounds, wi.Choices, c.bounds)
		}
		w.NoStepCache = false
		apply()
		before := runs
		got, gi := apply()
		if runs != before+1 {
			t.Fatalf("tape %v: met again, the step ran %d handlers, want 1 (node 0's from the cache)", c.tape, runs-before)
		}
		if got.Fingerprint() != want.Fingerprint() || !slices.Equal(gi.Choices, wi.Choices) || !slices.Equal(gi.Bounds, wi.Bounds) {
			t.Fatalf("tape %v: from the cache: %x, choices %v, bounds %v; the runs: %x, %v, %v", c.tape, got.Fingerprint(), gi.Choices, gi.Bounds, want.Fingerprint(), wi.Choices, wi.Bounds)
		}
	}
}
