package sim_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/livecheck/livecheck/sim"
)

// keeper keeps the slice of the message it gets and changes it: a
// handler that aliases a received message.
type keeper struct {
	Kept []int
}

type list struct{ V []int }

func (k *keeper) Init(sim.Context) {}
func (k *keeper) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	k.Kept = msg.(list).V
	k.Kept[0]++ // writes through to whatever Kept shares memory with
}
func (k *keeper) Timer(sim.Context, string)             {}
func (k *keeper) App(ctx sim.Context, call sim.AppCall) { ctx.Send(1, call.(list)) }
func (k *keeper) Error(sim.Context, sim.NodeID)         {}

func TestReceiveGetsACopy(t *testing.T) {
	// Node 1 keeps the message it gets and changes it. The message in
	// flight in the state before, which other paths deliver, must not
	// change.
	w, s := newWorld(t, sim.Spec{Nodes: 2, Calls: []sim.Call{{To: 0, Call: list{V: []int{7}}}},
		New: func(sim.NodeID) sim.Node { return &keeper{} }})
	s = apply(t, w, s, sim.Event{Kind: sim.App, Node: 0, Call: 0})
	before := s.Dump()
	deliver := sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: s.InFlight()[0].FP}
	s1 := apply(t, w, s, deliver)
	if after := s.Dump(); after != before {
		t.Fatalf("the handler changed the state before its step:\n%s\nbecame\n%s", before, after)
	}
	if got := s.InFlight()[0].Msg.(list).V[0]; got != 7 {
		t.Fatalf("the message in flight now holds %d, want 7", got)
	}
	if got := s1.Node(1).(*keeper).Kept[0]; got != 8 {
		t.Fatalf("node 1 kept %d, want 8", got)
	}
	// Delivered again from the same state: the same step, the same result.
	if s2 := apply(t, w, s, deliver); s2.Fingerprint() != s1.Fingerprint() {
		t.Fatalf("the same delivery from the same state gave another state")
	}
}

// fickle is a node whose App handler does something else each run, in one
// of several ways.
type fickle struct {
	N    int
	kind string `livecheck:"-"`
}

var fickleCalls atomic.Int64 // shared memory between runs

func (f *fickle) Init(sim.Context)                             {}
func (f *fickle) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (f *fickle) Timer(sim.Context, string)                    {}
func (f *fickle) Error(sim.Context, sim.NodeID)                {}
func (f *fickle) App(ctx sim.Context, call sim.AppCall) {
	n := fickleCalls.Add(1)
	switch f.kind {
	case "send":
		ctx.Send(1, note(strings.Repeat("x", int(n))))
	case "state":
		f.N = int(n)
	case "choose":
		ctx.Choose(int(n) + 1)
	case "panic":
		if n%2 == 1 {
			panic("every other run")
		}
	case "timer":
		if n%2 == 0 {
			ctx.SetTimer("t")
		}
	}
}

func TestRecheckNamesTheHandler(t *testing.T) {
	for _, tc := range []struct{ kind, what string }{
		{"send", "sent other messages when run again"},
		{"state", "left its node in another state when run again (N: 2 vs 3, first run vs second)"},
		{"choose", "made other choices when run again"},
		{"panic", "panicked when run again (every other run)"},
		{"timer", "left its node in another state when run again"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			fickleCalls.Store(1) // the first run sees 2, the second 3
			w, s := newWorld(t, sim.Spec{Nodes: 2, Calls: []sim.Call{{To: 1, Call: note("go")}},
				New: func(sim.NodeID) sim.Node { return &fickle{kind: tc.kind} }})
			w.Recheck = 1
			_, err := w.Apply(s, sim.Event{Kind: sim.App, Node: 1, Call: 0}, nil)
			var nd *sim.NondeterminismError
			if !errors.As(err, &nd) {
				t.Fatalf("Apply: %v, want a NondeterminismError", err)
			}
			if nd.Node != 1 || nd.Handler != "App" || nd.What != tc.what {
				t.Fatalf("node %d's %s %q, want node 1's App %q", nd.Node, nd.Handler, nd.What, tc.what)
			}
			want := "the handler is not deterministic (map iteration, time, rand, goroutines, shared memory?): node 1's App, on app \"go\" at 1, " + tc.what
			if err.Error() != want {
				t.Fatalf("error\n%s\nwant\n%s", err, want)
			}
		})
	}
}

func TestRecheckSamples(t *testing.T) {
	// With Recheck 64 the first 256 steps are run twice, then one in 64:
	// count the handler's runs.
	fickleCalls.Store(0)
	w, s := newWorld(t, sim.Spec{Nodes: 2, Calls: []sim.Call{{To: 1}},
		New: func(sim.NodeID) sim.Node { return &fickle{kind: "none"} }})
	w.Recheck = 64
	w.NoStepCache = true
	for range 1000 {
		if _, err := w.Apply(s, sim.Event{Kind: sim.App, Node: 1, Call: 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// 1000 steps, 256 rechecked, then 320, 384, ..., 960: 11 more.
	if got := fickleCalls.Load(); got != 1000+256+11 {
		t.Fatalf("%d handler runs, want %d", got, 1000+256+11)
	}
	// With the step cache, the same step again is answered from the
	// cache, but for the second runs of the rechecks, which run the
	// handler: one run, then 256 + 11.
	fickleCalls.Store(0)
	w, s = newWorld(t, sim.Spec{Nodes: 2, Calls: []sim.Call{{To: 1}},
		New: func(sim.NodeID) sim.Node { return &fickle{kind: "none"} }})
	w.Recheck = 64
	for range 1000 {
		if _, err := w.Apply(s, sim.Event{Kind: sim.App, Node: 1, Call: 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := fickleCalls.Load(); got != 1+256+11 {
		t.Fatalf("with the step cache, %d handler runs, want %d", got, 1+256+11)
	}
}

// Two workers' guards never share a cache line: each is written twice a
// step, and on one line the two cores would take it from each other.
func TestGuardFillsItsLines(t *testing.T) {
	if n := unsafe.Sizeof(sim.Guard{}); n != 128 {
		t.Fatalf("a Guard is %d bytes, want 128 (two cache lines of its own)", n)
	}
}

func TestGuardHold(t *testing.T) {
	g := &sim.Guard{}
	entered, release := make(chan uint64), make(chan struct{})
	var written, read int // written by the world's goroutine, read under Hold
	w, s := newWorld(t, sim.Spec{Nodes: 1, Calls: []sim.Call{{To: 0}}, New: func(sim.NodeID) sim.Node {
		return &hookNode{onApp: func() {
			tok, _ := g.Stuck(0)
			entered <- tok
			<-release
		}}
	}})
	w.Guard = g
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		written = 1
		w.Apply(s, sim.Event{Kind: sim.App, Node: 0, Call: 0}, nil)
		written = 2 // after the handler: must not race with the read below
	}()
	tok := <-entered
	ran := g.Hold(tok, func() {
		close(release) // the handler may try to return now; it must wait
		read = written
	})
	wg.Wait()
	if !ran || read != 1 || written != 2 {
		t.Fatalf("Hold ran %v, read %d, written %d; want true, 1, 2", ran, read, written)
	}
	if g.Hold(tok, func() { t.Fatal("Hold ran f after the handler returned") }) {
		t.Fatal("Hold says f ran")
	}
}

// chooser calls onApp in App.
type chooser struct {
	onApp func(ctx sim.Context) `livecheck:"-"`
}

func (c *chooser) Init(sim.Context)                             {}
func (c *chooser) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (c *chooser) Timer(sim.Context, string)                    {}
func (c *chooser) App(ctx sim.Context, _ sim.AppCall)           { c.onApp(ctx) }
func (c *chooser) Error(sim.Context, sim.NodeID)                {}

// A handler that a watchdog holds may run on, but not choose: what
// Current reads of its choices is what it has chosen so far, however
// often it is read while the handler chooses.
func TestCurrentWhileTheHandlerChooses(t *testing.T) {
	g := &sim.Guard{}
	entered := make(chan uint64)
	w, s := newWorld(t, sim.Spec{Nodes: 1, Calls: []sim.Call{{To: 0}}, New: func(sim.NodeID) sim.Node {
		return &chooser{onApp: func(ctx sim.Context) {
			tok, _ := g.Stuck(0)
			entered <- tok
			for range 20000 {
				ctx.Choose(3)
			}
		}}
	}})
	w.Guard = g
	w.Chooser = func(int) int { return 2 }
	done := make(chan error)
	go func() {
		_, err := w.Apply(s, sim.Event{Kind: sim.App, Node: 0, Call: 0}, nil)
		done <- err
	}()
	tok := <-entered
	last := 0
	for {
		var choices []int
		if !g.Hold(tok, func() { _, choices, _ = w.Current() }) {
			break
		}
		if len(choices) < last || slices.ContainsFunc(choices, func(c int) bool { return c != 2 }) {
			t.Fatalf("read %d choices after %d, not all 2: %v", len(choices), last, choices[:min(len(choices), 10)])
		}
		last = len(choices)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
