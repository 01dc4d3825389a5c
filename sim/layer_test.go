package sim_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// frame is what the wire layer puts on the network around the message of
// the layer above.
type frame struct {
	N    int
	Body sim.Message
}

// wire is a bottom layer that numbers what it carries.
type wire struct {
	Sent, Got int
	Last      sim.NodeID // the last node it heard from: renamed with the node
	Boots     int        `livecheck:"durable"`
	Ticks     int
}

func (w *wire) Init(ctx sim.Context) {
	w.Boots++
	w.Last = -1
	ctx.SetTimer("tick")
}

func (w *wire) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) {
	w.Sent++
	ctx.Logf("frame %d to %d", w.Sent, to)
	ctx.Send(to, frame{N: w.Sent, Body: msg})
}

func (w *wire) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	f := msg.(frame)
	w.Got++
	w.Last = from
	ctx.Deliver(from, f.Body)
}

func (w *wire) Timer(ctx sim.Context, name string) {
	if name != "tick" {
		panic("wire timer " + name)
	}
	w.Ticks++
}

func (w *wire) App(ctx sim.Context, call sim.AppCall) {
	if call == "panic" {
		panic("wire app")
	}
	w.Ticks += 100
}

func (w *wire) Error(ctx sim.Context, peer sim.NodeID) {}

// greeter is a top layer: a driver call sends a greeting to the next node,
// which answers once.
type greeter struct {
	Heard []string
	Epoch int `livecheck:"durable"`
	Ticks int
}

type hello struct{ Text string }

func (g *greeter) Init(ctx sim.Context) {
	g.Epoch++
	ctx.SetTimer("tick")
}

func (g *greeter) App(ctx sim.Context, call sim.AppCall) {
	next := (ctx.Self() + 1) % sim.NodeID(ctx.Nodes())
	ctx.Logf("greet %d", next)
	ctx.Send(next, hello{fmt.Sprint(call)})
}

func (g *greeter) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	h := msg.(hello)
	if h.Text == "boom" {
		panic("greeter cannot take a boom")
	}
	g.Heard = append(g.Heard, fmt.Sprintf("%s from %d", h.Text, from))
	if h.Text != "back" {
		ctx.Send(from, hello{"back"})
	}
}

func (g *greeter) Timer(ctx sim.Context, name string) {
	g.Ticks++
	if ctx.Choose(2) == 1 {
		ctx.CancelTimer("tick")
	} else {
		ctx.SetTimer("again")
	}
}

func (g *greeter) Error(ctx sim.Context, peer sim.NodeID) {}

func stackSpec(n int, calls []sim.Call, b sim.Budget) sim.Spec {
	return sim.Spec{Nodes: n, Transport: sim.Datagram, Calls: calls, Budget: b, New: func(sim.NodeID) sim.Node {
		return sim.Stack(sim.Layer{Name: "wire", Node: &wire{}}, sim.Layer{Name: "app", Node: &greeter{}})
	}}
}

func layers(t *testing.T, s *sim.State, i sim.NodeID) (*wire, *greeter) {
	t.Helper()
	w, ok1 := sim.LayerOf[*wire](s.Node(i))
	g, ok2 := sim.LayerOf[*greeter](s.Node(i))
	if !ok1 || !ok2 {
		t.Fatalf("node %d is %s: no wire or no greeter layer", i, sim.Dump(s.Node(i)))
	}
	return w, g
}

// A message goes down through the wire layer onto the network, and up
// through the peer's wire layer to its greeter; log lines and event texts
// name the layers.
func TestStackDeliversUpAndDown(t *testing.T) {
	w, s := newWorld(t, stackSpec(2, []sim.Call{{To: 0, Call: "hi"}}, sim.Budget{}))
	w.Record = true
	if d := sim.DumpNode(s, 0); d != `wire:{Sent:0 Got:0 Last:-1 Boots:1 Ticks:0} app:{Heard:[] Epoch:1 Ticks:0} timers=app/tick,wire/tick` {
		t.Errorf("node 0 starts as %s", d)
	}
	if text := w.Describe(s, app(0, 0)); text != `app "hi" at 0 [app]` {
		t.Errorf("the call reads %q", text)
	}
	s = apply(t, w, s, app(0, 0))
	if logs := strings.Join(w.Last().Logs, "; "); logs != "0 app: greet 1; 0 wire: frame 1 to 1" {
		t.Errorf("logs %q", logs)
	}
	net := s.InFlight()
	if len(net) != 1 || net[0].From != 0 || net[0].To != 1 || sim.Dump(net[0].Msg) != `frame{N:1 Body:hello{Text:"hi"}}` {
		t.Fatalf("in flight: %s", s.Dump())
	}
	ev := sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: net[0].FP}
	if text := w.Describe(s, ev); text != `deliver frame{N:1 Body:hello{Text:"hi"}} 0->1 [wire]` {
		t.Errorf("the delivery reads %q", text)
	}
	s = apply(t, w, s, ev)
	wr, g := layers(t, s, 1)
	if wr.Got != 1 || wr.Last != 0 || wr.Sent != 1 || len(g.Heard) != 1 || g.Heard[0] != "hi from 0" {
		t.Errorf("node 1 after the delivery: %s", sim.Dump(s.Node(1)))
	}
	// The answer went down node 1's wire layer.
	net = s.InFlight()
	if len(net) != 1 || net[0].From != 1 || net[0].To != 0 || sim.Dump(net[0].Msg) != `frame{N:1 Body:hello{Text:"back"}}` {
		t.Fatalf("in flight: %s", s.Dump())
	}
	s = apply(t, w, s, sim.Event{Kind: sim.Deliver, Node: 0, Peer: 1, Msg: net[0].FP})
	if _, g := layers(t, s, 0); len(g.Heard) != 1 || g.Heard[0] != "back from 1" || len(s.InFlight()) != 0 {
		t.Errorf("node 0 at the end: %s", s.Dump())
	}
}

// Each layer has its own timers: both set "tick", which are two timers of
// the node, each fired in its own layer; a layer cancels only its own.
func TestStackTimersPerLayer(t *testing.T) {
	w, s := newWorld(t, stackSpec(1, nil, sim.Budget{}))
	if got := strings.Join(s.Timers(0), ","); got != "app/tick,wire/tick" {
		t.Fatalf("timers %s, want app/tick,wire/tick", got)
	}
	s = apply(t, w, s, timer(0, "wire/tick"))
	if wr, g := layers(t, s, 0); wr.Ticks != 1 || g.Ticks != 0 {
		t.Errorf("after wire/tick: %s", sim.Dump(s.Node(0)))
	}
	// app/tick chooses: 0 sets app/again, 1 cancels app/tick (which has
	// fired already, so nothing) and leaves the wire's alone.
	s0 := apply(t, w, s, timer(0, "app/tick"), 0)
	if got := strings.Join(s0.Timers(0), ","); got != "app/again" {
		t.Errorf("timers after app/tick, choice 0: %s", got)
	}
	s1 := apply(t, w, s, timer(0, "app/tick"), 1)
	if got := strings.Join(s1.Timers(0), ","); got != "" {
		t.Errorf("timers after app/tick, choice 1: %q", got)
	}
	if text := w.Describe(s, timer(0, "app/tick")); text != "timer app/tick at 0" {
		t.Errorf("the timer reads %q", text)
	}
	wantNotEnabled(t, w, s, timer(0, "tick"))
}

// A reset restarts every layer: each keeps its durable fields and loses
// the rest, and Init runs again in each.
func TestStackResetKeepsDurablePerLayer(t *testing.T) {
	w, s := newWorld(t, stackSpec(2, []sim.Call{{To: 0, Call: "hi"}}, sim.Budget{Resets: 1}))
	s = apply(t, w, s, app(0, 0))
	s = apply(t, w, s, timer(0, "wire/tick"))
	s = apply(t, w, s, reset(0))
	wr, g := layers(t, s, 0)
	if wr.Boots != 2 || wr.Sent != 0 || wr.Ticks != 0 || g.Epoch != 2 || g.Ticks != 0 {
		t.Errorf("after the reset: %s", sim.Dump(s.Node(0)))
	}
	if got := strings.Join(s.Timers(0), ","); got != "app/tick,wire/tick" {
		t.Errorf("timers after the reset: %s", got)
	}
	// Node 1 is as it was.
	if wr, g := layers(t, s, 1); wr.Boots != 1 || g.Epoch != 1 {
		t.Errorf("node 1: %s", sim.Dump(s.Node(1)))
	}
}

// A stack copies, fingerprints and dumps as its layers do: a copy shares
// nothing, equal stacks hash alike, a change in any layer changes the
// fingerprint.
func TestStackValue(t *testing.T) {
	mk := func(heard ...string) *sim.Stacked {
		return sim.Stack(sim.Layer{Name: "wire", Node: &wire{Sent: 1}}, sim.Layer{Name: "app", Node: &greeter{Heard: heard}})
	}
	a := mk("x")
	b := sim.Copy(a)
	_, gb := b.Layer(1)
	gb.(*greeter).Heard[0] = "y"
	if _, ga := a.Layer(1); ga.(*greeter).Heard[0] != "x" {
		t.Fatal("the copy shares the greeter's slice")
	}
	if sim.Fingerprint(mk("x")) != sim.Fingerprint(a) || sim.Fingerprint(mk("y")) == sim.Fingerprint(a) {
		t.Error("fingerprints do not follow the layers")
	}
	other := sim.Stack(sim.Layer{Name: "wire", Node: &wire{Sent: 2}}, sim.Layer{Name: "app", Node: &greeter{Heard: []string{"x"}}})
	if sim.Fingerprint(other) == sim.Fingerprint(a) {
		t.Error("a change in the bottom layer leaves the fingerprint")
	}
	if d := sim.Dump(a); d != `wire:{Sent:1 Got:0 Last:0 Boots:0 Ticks:0} app:{Heard:["x"] Epoch:0 Ticks:0}` {
		t.Errorf("dump %s", d)
	}
}

// A driver call goes to the top layer, or to the layer a LayerCall names.
func TestStackLayerCall(t *testing.T) {
	w, s := newWorld(t, stackSpec(1, []sim.Call{{To: 0, Call: sim.LayerCall{Layer: "wire", Call: "x"}}}, sim.Budget{}))
	if text := w.Describe(s, app(0, 0)); text != `app LayerCall{Layer:"wire" Call:"x"} at 0 [wire]` {
		t.Errorf("the call reads %q", text)
	}
	s = apply(t, w, s, app(0, 0))
	if wr, _ := layers(t, s, 0); wr.Ticks != 100 {
		t.Errorf("the wire layer did not get the call: %s", sim.Dump(s.Node(0)))
	}
}

// A handler that panics in a layer is reported naming the layer and the
// layer's handler, whichever way it was reached.
func TestStackPanicNamesLayer(t *testing.T) {
	for _, tc := range []struct {
		call sim.AppCall
		want string
	}{
		{"boom", "node 1 panicked in Receive of layer app: greeter cannot take a boom"},
		{sim.LayerCall{Layer: "wire", Call: "panic"}, "node 0 panicked in App of layer wire: wire app"},
		{sim.LayerCall{Layer: "nope"}, `node 0 panicked in App: a driver call for layer "nope", but the node's layers are wire, app`},
	} {
		w, s := newWorld(t, stackSpec(2, []sim.Call{{To: 0, Call: tc.call}}, sim.Budget{}))
		next, err := w.Apply(s, app(0, 0), nil)
		if err == nil && len(next.InFlight()) == 1 {
			e := next.InFlight()[0]
			_, err = w.Apply(next, sim.Event{Kind: sim.Deliver, Node: e.To, Peer: e.From, Msg: e.FP}, nil)
		}
		var hp *sim.HandlerPanic
		if !errors.As(err, &hp) || hp.Error() != tc.want {
			t.Errorf("%v: got %v, want %s", tc.call, err, tc.want)
		}
	}
}

// Stack rejects a stack it cannot run, saying why.
func TestStackMisbuilt(t *testing.T) {
	for _, tc := range []struct {
		layers []sim.Layer
		want   string
	}{
		{nil, "at least one layer"},
		{[]sim.Layer{{Name: "a/b", Node: &wire{}}}, `name "a/b" is not a name`},
		{[]sim.Layer{{Name: "w", Node: nil}}, "layer w has no node"},
		{[]sim.Layer{{Name: "w", Node: &wire{}}, {Name: "w", Node: &greeter{}}}, "two layers are named w"},
		{[]sim.Layer{{Name: "app", Node: &greeter{}}, {Name: "wire", Node: &wire{}}}, "layer app (a *sim_test.greeter) is below layer wire but has no Down method"},
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("%v: panicked with %v, want %q", tc.layers, r, tc.want)
				}
			}()
			sim.Stack(tc.layers...)
		}()
	}
}

// Deliver from a node of one layer has nowhere to go: a finding that says
// so.
func TestDeliverWithoutLayerAbove(t *testing.T) {
	w, s := newWorld(t, sim.Spec{Nodes: 2, Transport: sim.Datagram, Calls: []sim.Call{{To: 0}},
		New: func(sim.NodeID) sim.Node { return &delivering{} }})
	_, err := w.Apply(s, app(0, 0), nil)
	var hp *sim.HandlerPanic
	if !errors.As(err, &hp) || hp.Layer != "" || !strings.Contains(hp.Error(), "node 0 panicked in App: Deliver from 1: there is no layer above") {
		t.Errorf("got %v", err)
	}
}

type delivering struct{ sim.BaseNode }

func (d *delivering) App(ctx sim.Context, _ sim.AppCall) { ctx.Deliver(1, "x") }

// Nodes that are stacks are renamed as plain nodes are: the state where
// node 1 greeted node 2 and the one where node 2 greeted node 1 are one
// class, and the node ids inside the layers (wire.Last) are renamed.
func TestStackSymmetry(t *testing.T) {
	sp := stackSpec(3, nil, sim.Budget{})
	sp.New = func(id sim.NodeID) sim.Node {
		return sim.Stack(sim.Layer{Name: "wire", Node: &wire{}}, sim.Layer{Name: "app", Node: &peerGreeter{}})
	}
	sp.Symmetry = [][]sim.NodeID{{1, 2}}
	w, s := newWorld(t, sp)
	// Node 0 greets one of them (a choice); the greeting is delivered.
	greet := func(choice int) *sim.State {
		n := apply(t, w, s, timer(0, "app/go"), choice)
		e := n.InFlight()[0]
		return apply(t, w, n, sim.Event{Kind: sim.Deliver, Node: e.To, Peer: e.From, Msg: e.FP})
	}
	a, b := greet(0), greet(1)
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("the two greetings lead to the same state")
	}
	if a.Key() != b.Key() {
		t.Errorf("keys %x and %x: renamings of each other should have one key", a.Key(), b.Key())
	}
	if w.RenamedKey(a, []sim.NodeID{0, 2, 1}) != w.RenamedKey(b, []sim.NodeID{0, 1, 2}) {
		t.Error("renaming 1 and 2 in one state does not give the other")
	}
	// In a, node 1 heard from 0; renamed, node 2 did in b.
	if wr, _ := layers2(t, a, 1); wr.Last != 0 {
		t.Errorf("node 1 in a: %s", sim.Dump(a.Node(1)))
	}
}

// peerGreeter greets node 1 or 2 (a choice) when its timer fires.
type peerGreeter struct{ Greeted sim.NodeID }

func (g *peerGreeter) Init(ctx sim.Context) {
	g.Greeted = -1
	if ctx.Self() == 0 {
		ctx.SetTimer("go")
	}
}
func (g *peerGreeter) Timer(ctx sim.Context, name string) {
	g.Greeted = sim.NodeID(1 + ctx.Choose(2))
	ctx.Send(g.Greeted, hello{"hi"})
}
func (g *peerGreeter) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { g.Greeted = from }
func (g *peerGreeter) App(sim.Context, sim.AppCall)                              {}
func (g *peerGreeter) Error(sim.Context, sim.NodeID)                             {}

func layers2(t *testing.T, s *sim.State, i sim.NodeID) (*wire, *peerGreeter) {
	t.Helper()
	w, ok1 := sim.LayerOf[*wire](s.Node(i))
	g, ok2 := sim.LayerOf[*peerGreeter](s.Node(i))
	if !ok1 || !ok2 {
		t.Fatalf("node %d is %s", i, sim.Dump(s.Node(i)))
	}
	return w, g
}

// greetSystem is a layered system whose property the checker breaks: a
// greeter must never hear an answer to its greeting.
var greetSystem = livecheck.System{
	Name: "greet",
	Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
		return &livecheck.Model{
			Spec: stackSpec(0, []sim.Call{{To: 0, Call: "hi"}}, sim.Budget{}),
			Properties: []properties.Property{properties.Always("no-answer", "no greeter hears an answer", func(s *sim.State) error {
				for i, g := range properties.All[*greeter](s) {
					if slices.ContainsFunc(g.Heard, func(h string) bool { return strings.HasPrefix(h, "back") }) {
						return fmt.Errorf("node %d heard %q", i, g.Heard)
					}
				}
				return nil
			})},
		}, nil
	},
}

// A check of a layered system finds the violation (node 0 hears the
// answer to its greeting), and its trace replays to it, with the step
// texts and log lines naming the layers.
func TestStackReplay(t *testing.T) {
	res, err := livecheck.Check(&greetSystem, livecheck.Options{Config: livecheck.Config{Nodes: 2}, NoWalks: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "no-answer" || res.Message != `node 0 heard ["back from 1"]` {
		t.Fatalf("%s of %q: %s", res.Verdict, res.Property, res.Message)
	}
	rep, err := livecheck.Replay(&greetSystem, res.Config, res.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reproduces(livecheck.SafetyViolation, "no-answer") || rep.Message != res.Message {
		t.Fatalf("the replay ends %s of %q: %s", rep.Verdict, rep.Property, rep.Message)
	}
	var texts, logs []string
	for _, st := range rep.Steps {
		texts = append(texts, st.Text)
		logs = append(logs, st.Logs...)
	}
	want := []string{`app "hi" at 0 [app]`, `deliver frame{N:1 Body:hello{Text:"hi"}} 0->1 [wire]`, `deliver frame{N:1 Body:hello{Text:"back"}} 1->0 [wire]`}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(logs, "; "); got != "0 app: greet 1; 0 wire: frame 1 to 1; 1 wire: frame 1 to 0" {
		t.Errorf("logs %q", got)
	}
}

// A reset that New answers with other layers cannot keep the durable
// fields: an error that says so, not a panic.
func TestStackResetNeedsTheSameLayers(t *testing.T) {
	built := 0
	sp := stackSpec(1, nil, sim.Budget{Resets: 1})
	sp.New = func(sim.NodeID) sim.Node {
		built++
		if built > 1 {
			return sim.Stack(sim.Layer{Name: "wire", Node: &wire{}})
		}
		return sim.Stack(sim.Layer{Name: "wire", Node: &wire{}}, sim.Layer{Name: "app", Node: &greeter{}})
	}
	w, s := newWorld(t, sp)
	_, err := w.Apply(s, reset(0), nil)
	if err == nil || err.Error() != "node 0 is a stack of layers wire, app, but New built a stack of layers wire for its restart: durable fields need the same layers" {
		t.Errorf("got %v", err)
	}
}

// A stack can be the top layer of another: its timers carry both names,
// its layers are found by type, and a message goes down through both
// bottoms. It has no Down, so it cannot be below another layer.
func TestStackNested(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "has no Down method") {
				t.Errorf("a stack below a layer: %v, want a panic that says it cannot carry", r)
			}
		}()
		sim.Stack(sim.Layer{Name: "a", Node: sim.Stack(sim.Layer{Name: "b", Node: &wire{}})}, sim.Layer{Name: "c", Node: &greeter{}})
	}()

	sp := stackSpec(2, []sim.Call{{To: 0, Call: "hi"}}, sim.Budget{})
	sp.New = func(sim.NodeID) sim.Node {
		inner := sim.Stack(sim.Layer{Name: "frames", Node: &wire{}}, sim.Layer{Name: "app", Node: &greeter{}})
		return sim.Stack(sim.Layer{Name: "wire", Node: &relay{}}, sim.Layer{Name: "top", Node: inner})
	}
	w, s := newWorld(t, sp)
	if got := strings.Join(s.Timers(0), ","); got != "top/app/tick,top/frames/tick" {
		t.Errorf("timers %s", got)
	}
	s = apply(t, w, s, app(0, 0))
	// Two frames: the inner wire's inside the relay's.
	if net := s.InFlight(); len(net) != 1 || sim.Dump(net[0].Msg) != `frame{N:1 Body:frame{N:1 Body:hello{Text:"hi"}}}` {
		t.Fatalf("in flight: %s", s.Dump())
	}
	e := s.InFlight()[0]
	s = apply(t, w, s, sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: e.FP})
	if _, g := layers(t, s, 1); len(g.Heard) != 1 || g.Heard[0] != "hi from 0" {
		t.Errorf("node 1: %s", sim.Dump(s.Node(1)))
	}
	s = apply(t, w, s, timer(1, "top/frames/tick"))
	if wr, _ := layers(t, s, 1); wr.Ticks != 1 {
		t.Errorf("node 1 after its inner wire's tick: %s", sim.Dump(s.Node(1)))
	}
}
