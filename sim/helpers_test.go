package sim_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// tnode is the node the world tests drive. It records every handler call in
// Log, so a state says exactly what happened to the node, and it obeys the
// commands handed to it as application calls or messages (see run).
type tnode struct {
	Log []string
	// PanicOnError makes the Error handler panic (set by the armError command).
	PanicOnError bool
	// Boot is what Init does; it comes from the spec, not from the node's
	// history, so it is left out of the state.
	Boot []any `livecheck:"-"`
	// Quiet nodes keep no Log, so states reached by different histories can
	// be equal.
	Quiet bool `livecheck:"-"`
	// Up says Init has run once: it survives resets, so an Init can tell a
	// restart from the first start.
	Up bool `livecheck:"durable"`
}

func (n *tnode) log(line string) {
	if !n.Quiet {
		n.Log = append(n.Log, line)
	}
}

// Commands a tnode obeys, as an application call, a message or in Boot.
type (
	send struct {
		To  sim.NodeID
		Msg sim.Message
	}
	setTimer    string
	setPeriodic string
	cancelTimer string
	choose      int    // Choose(n); the value is logged
	laterChoose int    // choose, but only if the node is Up (an Init after a reset)
	dependent   int    // choose, but only if the last choice logged was 1
	panicOn     int    // panic if the last choice logged was this
	boom        string // panic with this value
	armError    struct{}
	batch       []any
)

// lastChoice is the value of the last choice logged, or -1.
func (n *tnode) lastChoice() int {
	for i := len(n.Log) - 1; i >= 0; i-- {
		var v, m int
		if _, err := fmt.Sscanf(n.Log[i], "chose %d/%d", &v, &m); err == nil {
			return v
		}
	}
	return -1
}

// note is a plain message: it does nothing but get logged.
type note string

func (n *tnode) run(ctx sim.Context, c any) {
	switch c := c.(type) {
	case send:
		ctx.Send(c.To, c.Msg)
	case setTimer:
		ctx.SetTimer(string(c))
	case setPeriodic:
		ctx.SetPeriodic(string(c))
	case cancelTimer:
		ctx.CancelTimer(string(c))
	case choose:
		v := ctx.Choose(int(c))
		n.log(fmt.Sprintf("chose %d/%d", v, int(c)))
	case laterChoose:
		if n.Up {
			n.run(ctx, choose(c))
		}
	case dependent:
		if n.lastChoice() == 1 {
			n.run(ctx, choose(c))
		}
	case panicOn:
		if n.lastChoice() == int(c) {
			panic(fmt.Sprintf("chose %d", c))
		}
	case boom:
		panic(string(c))
	case armError:
		n.PanicOnError = true
	case batch:
		for _, x := range c {
			n.run(ctx, x)
		}
	}
}

func (n *tnode) Init(ctx sim.Context) {
	n.log("init")
	ctx.Logf("init")
	for _, c := range n.Boot {
		n.run(ctx, c)
	}
	n.Up = true
}

func (n *tnode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	n.log(fmt.Sprintf("recv %d %s", from, sim.Dump(msg)))
	ctx.Logf("got %s from %d", sim.Dump(msg), from)
	n.run(ctx, msg)
}

func (n *tnode) Timer(ctx sim.Context, name string) {
	n.log("timer " + name)
	if name == "panic" {
		panic("timer went off")
	}
}

func (n *tnode) App(ctx sim.Context, call sim.AppCall) {
	n.log("app " + sim.Dump(call))
	n.run(ctx, call)
}

func (n *tnode) Error(ctx sim.Context, peer sim.NodeID) {
	n.log(fmt.Sprintf("error %d", peer))
	ctx.Logf("error from %d", peer)
	if n.PanicOnError {
		panic("error handler")
	}
}

// spec returns a spec of n tnodes; boot[i], if present, is node i's Init.
func spec(n int, tr sim.Transport, calls []sim.Call, b sim.Budget, boot ...[]any) sim.Spec {
	return mkSpec(false, n, tr, calls, b, boot...)
}

// quietSpec is spec with Quiet nodes.
func quietSpec(n int, tr sim.Transport, calls []sim.Call, b sim.Budget, boot ...[]any) sim.Spec {
	return mkSpec(true, n, tr, calls, b, boot...)
}

func mkSpec(quiet bool, n int, tr sim.Transport, calls []sim.Call, b sim.Budget, boot ...[]any) sim.Spec {
	return sim.Spec{
		Nodes:     n,
		Transport: tr,
		Calls:     calls,
		Budget:    b,
		New: func(id sim.NodeID) sim.Node {
			t := &tnode{Quiet: quiet}
			if int(id) < len(boot) {
				t.Boot = boot[id]
			}
			return t
		},
	}
}

func newWorld(t *testing.T, sp sim.Spec) (*sim.World, *sim.State) {
	t.Helper()
	w, err := sim.NewWorld(sp)
	if err != nil {
		t.Fatalf("NewWorld: %v", err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatalf("Initial: %v", err)
	}
	return w, s
}

func apply(t *testing.T, w *sim.World, s *sim.State, ev sim.Event, tape ...int) *sim.State {
	t.Helper()
	n, err := w.Apply(s, ev, tape)
	if err != nil {
		t.Fatalf("Apply(%v): %v", ev, err)
	}
	return n
}

// applyAll applies evs in turn.
func applyAll(t *testing.T, w *sim.World, s *sim.State, evs ...sim.Event) *sim.State {
	t.Helper()
	for _, ev := range evs {
		s = apply(t, w, s, ev)
	}
	return s
}

func wantNotEnabled(t *testing.T, w *sim.World, s *sim.State, ev sim.Event) {
	t.Helper()
	before, dump := s.Fingerprint(), s.Dump()
	n, err := w.Apply(s, ev, nil)
	if !errors.Is(err, sim.ErrNotEnabled) {
		t.Fatalf("Apply(%v) = %v, %v; want ErrNotEnabled", ev, n, err)
	}
	if n != nil {
		t.Errorf("Apply(%v) failed but returned a state", ev)
	}
	if s.Fingerprint() != before || s.Dump() != dump {
		t.Errorf("a rejected Apply(%v) changed its input", ev)
	}
}

func enabled(w *sim.World, s *sim.State) []sim.Event { return w.Enabled(s, nil) }

func wantEvents(t *testing.T, got, want []sim.Event) {
	t.Helper()
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("enabled events:\n got  %s\n want %s", evList(got), evList(want))
	}
}

func evList(evs []sim.Event) string {
	var b strings.Builder
	for i, e := range evs {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(e.String())
	}
	return "[" + b.String() + "]"
}

// logOf is node i's Log.
func logOf(s *sim.State, i sim.NodeID) []string { return s.Node(i).(*tnode).Log }

func wantLog(t *testing.T, s *sim.State, i sim.NodeID, want ...string) {
	t.Helper()
	got := logOf(s, i)
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("node %d log:\n got  %q\n want %q", i, got, want)
	}
}

// Event constructors.
func deliver(from, to sim.NodeID, msg sim.Message) sim.Event {
	return sim.Event{Kind: sim.Deliver, Node: to, Peer: from, Msg: sim.Fingerprint(msg)}
}

func drop(from, to sim.NodeID, msg sim.Message) sim.Event {
	return sim.Event{Kind: sim.Drop, Node: to, Peer: from, Msg: sim.Fingerprint(msg)}
}

func timer(node sim.NodeID, name string) sim.Event {
	return sim.Event{Kind: sim.Timer, Node: node, Timer: name}
}

func app(node sim.NodeID, call int) sim.Event {
	return sim.Event{Kind: sim.App, Node: node, Call: call}
}

func sockErr(a, b sim.NodeID) sim.Event { return sim.Event{Kind: sim.SocketError, Node: a, Peer: b} }

func reset(node sim.NodeID) sim.Event { return sim.Event{Kind: sim.Reset, Node: node} }
