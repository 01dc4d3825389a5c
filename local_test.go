package livecheck_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/paxos"
)

// handoff: the driver tells node 0 to send X to node 1. A node 1 that got
// X while node 0 has not sent it is impossible in a real run, but local
// model checking builds exactly that system state: node 0's initial state
// with node 1's state after X.
type handoff struct{ Sent, Got bool }

type msgX struct{}

func (h *handoff) Init(ctx sim.Context) {}
func (h *handoff) App(ctx sim.Context, call sim.AppCall) {
	h.Sent = true
	ctx.Send(1, msgX{})
}
func (h *handoff) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { h.Got = true }
func (h *handoff) Timer(ctx sim.Context, name string)                        {}
func (h *handoff) Error(ctx sim.Context, peer sim.NodeID)                    {}

func handoffSystem() *livecheck.System {
	noEarly := properties.Always("no-early-receipt", "node 1 never has X that node 0 has not sent", func(s *sim.State) error {
		if properties.Node[*handoff](s, 1).Got && !properties.Node[*handoff](s, 0).Sent {
			return errors.New("node 1 got X, node 0 never sent it")
		}
		return nil
	})
	noEarly.Pair = func(a, b sim.Node) error {
		if x, y := a.(*handoff), b.(*handoff); y.Got && !x.Sent {
			return errors.New("node 1 got X, node 0 never sent it")
		}
		return nil
	}
	return &livecheck.System{
		Name: "handoff", Doc: "one message", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &handoff{} }, Calls: []sim.Call{{To: 0, Call: "go"}}},
				Properties: []properties.Property{noEarly},
			}, nil
		},
	}
}

func TestLocalRejectsUnsoundViolation(t *testing.T) {
	res, err := livecheck.Check(handoffSystem(), livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Local
	if res.Verdict != livecheck.OK || !res.Complete {
		t.Fatalf("%s (%s): the impossible state was reported", res.Verdict, res.Message)
	}
	// Node 0: initial, sent. Node 1: initial, got X. The pair (node 0
	// initial, node 1 got X) conflicts: one preliminary violation, refuted
	// at once: node 1 consumed X on every path to its state, and node 0
	// sends X on no path to its own.
	if fmt.Sprint(l.NodeStates) != "[2 2]" || l.Messages != 1 || l.Preliminary != 1 || l.Unsound != 1 || l.Refuted != 1 || l.Verifications != 0 {
		t.Fatalf("local stats %+v", *l)
	}
}

// relay: node 0 sends A to node 2, which then sends C to node 1. Node 1
// having C while node 0 has not sent A is impossible, but no summary of the
// pair shows it (C comes from node 2): only a search for a run refutes it.
type relay struct{ Sent, Got bool }

type msgA struct{}
type msgC struct{}

func (r *relay) Init(ctx sim.Context) {}
func (r *relay) App(ctx sim.Context, call sim.AppCall) {
	r.Sent = true
	ctx.Send(2, msgA{})
}
func (r *relay) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(type) {
	case msgA:
		ctx.Send(1, msgC{})
	case msgC:
		r.Got = true
	}
}
func (r *relay) Timer(ctx sim.Context, name string)     {}
func (r *relay) Error(ctx sim.Context, peer sim.NodeID) {}

func TestLocalRefutesByVerification(t *testing.T) {
	bad := errors.New("node 1 has C, node 0 never sent A")
	p := properties.Always("causal", "node 1 has C only after node 0 sent A", func(s *sim.State) error {
		if properties.Node[*relay](s, 1).Got && !properties.Node[*relay](s, 0).Sent {
			return bad
		}
		return nil
	})
	p.Filter = func(id sim.NodeID, n sim.Node) bool {
		r := n.(*relay)
		return id == 0 && !r.Sent || id == 1 && r.Got
	}
	p.Pair = func(a, b sim.Node) error {
		if x, y := a.(*relay), b.(*relay); !x.Sent && y.Got {
			return bad
		}
		return nil
	}
	sys := &livecheck.System{
		Name: "relay", Doc: "a relayed message", DefaultNodes: 3, MinNodes: 3, MaxNodes: 3,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &relay{} }, Calls: []sim.Call{{To: 0, Call: "go"}}},
				Properties: []properties.Property{p},
			}, nil
		},
	}
	res, err := livecheck.Check(sys, livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Local
	if res.Verdict != livecheck.OK || !res.Complete {
		t.Fatalf("%s (%s): the impossible state was reported", res.Verdict, res.Message)
	}
	if l.Preliminary != 1 || l.Refuted != 0 || l.Unsound != 1 || l.Verifications != 2 || l.GaveUp != 0 {
		t.Fatalf("local stats %+v", *l)
	}
}

// Local and global mode agree on every LCR size and bug they both finish.
func TestLocalAgreesWithGlobal(t *testing.T) {
	for _, n := range []int{3, 4, 5} {
		for _, bugs := range [][]string{nil, {"no-discard"}, {"ignore-early"}} {
			t.Run(fmt.Sprint(n, bugs), func(t *testing.T) {
				cfg := livecheck.Config{Nodes: n, Bugs: bugs}
				g, err := livecheck.Check(&lcr.System, livecheck.Options{Config: cfg, Depth: 64, NoWalks: true})
				if err != nil {
					t.Fatal(err)
				}
				l, err := livecheck.Check(&lcr.System, livecheck.Options{Config: cfg, Mode: "local"})
				if err != nil {
					t.Fatal(err)
				}
				if (g.Verdict == livecheck.SafetyViolation) != (l.Verdict == livecheck.SafetyViolation) {
					t.Fatalf("global %s (%s), local %s (%s)", g.Verdict, g.Property, l.Verdict, l.Property)
				}
				if l.Verdict == livecheck.OK && !l.Complete {
					t.Fatal("local mode did not finish")
				}
				if l.Verdict == livecheck.SafetyViolation {
					// Check already replayed the verified trace in the
					// global simulator; say so again, on its own.
					rep, err := livecheck.Replay(&lcr.System, l.Config, l.Path, 0)
					if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "one-leader") {
						t.Fatalf("verified trace: %v %+v", err, rep)
					}
				}
			})
		}
	}
}

// Local and global mode agree on Paxos: on every space global search
// exhausts, and on the bugs it finds.
func TestLocalAgreesWithGlobalPaxos(t *testing.T) {
	for _, tc := range []struct {
		nodes     int
		proposers string
		bugs      []string
		depth     int
	}{
		{3, "1", nil, 64},
		{2, "2", nil, 64},
		{2, "2", []string{"last-promise"}, 64},
		{2, "2", []string{"quorum=1"}, 64},
		{3, "1", []string{"quorum=1"}, 64},
		{3, "2", []string{"quorum=1"}, 20},
		{3, "2", []string{"last-promise"}, 20},
	} {
		t.Run(fmt.Sprint(tc.nodes, tc.proposers, tc.bugs), func(t *testing.T) {
			if testing.Short() && tc.nodes == 3 && tc.proposers == "2" {
				t.Skip("3 nodes and 2 proposers: the long tier")
			}
			cfg := livecheck.Config{Nodes: tc.nodes, Bugs: tc.bugs, Params: map[string]string{"proposers": tc.proposers}}
			g, err := livecheck.Check(&paxos.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Depth: tc.depth, NoWalks: true})
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != livecheck.SafetyViolation && !g.Exhausted {
				t.Fatalf("global search did not exhaust the space: %s", g.Verdict)
			}
			l, err := livecheck.Check(&paxos.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Mode: "local"})
			if err != nil {
				t.Fatal(err)
			}
			if (g.Verdict == livecheck.SafetyViolation) != (l.Verdict == livecheck.SafetyViolation) {
				t.Fatalf("global %s (%s), local %s (%s) %+v", g.Verdict, g.Property, l.Verdict, l.Property, *l.Local)
			}
			if l.Verdict == livecheck.OK && !l.Complete {
				t.Fatal("local mode did not finish")
			}
			if l.Verdict == livecheck.SafetyViolation {
				if l.Local.Preliminary == 0 || l.Local.Verifications == 0 {
					t.Fatalf("a violation without preliminary violations or verifications: %+v", *l.Local)
				}
				rep, err := livecheck.Replay(&paxos.System, l.Config, l.Path, 0)
				if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "agreement") {
					t.Fatalf("verified trace: %v %+v", err, rep)
				}
			}
		})
	}
}

// lateNode: node 0's driver call sends M to node 1, which sets Got on receipt;
// node 1 also sets Got by itself after its timer fires twice, reaching the
// very same state. Under a bound of one local event per node only the
// first way exists: "node 1 has Got while node 0 has not sent M" is then
// refuted (node 1 consumed M on every path to its state). The second round
// adds the timer path as a new edge to that existing state, which makes
// the violation real.
type lateNode struct {
	Sent, Got bool
	Ticks     int
}

type msgM struct{}

func (l *lateNode) Init(ctx sim.Context) {
	if ctx.Self() == 1 {
		ctx.SetTimer("t")
	}
}
func (l *lateNode) App(ctx sim.Context, call sim.AppCall) {
	l.Sent = true
	ctx.Send(1, msgM{})
}
func (l *lateNode) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	l.Got, l.Ticks = true, 0
	ctx.CancelTimer("t")
}
func (l *lateNode) Timer(ctx sim.Context, name string) {
	if l.Ticks == 0 {
		l.Ticks = 1
		ctx.SetTimer("t")
		return
	}
	l.Got, l.Ticks = true, 0
}
func (l *lateNode) Error(ctx sim.Context, peer sim.NodeID) {}

// lateP is lateNode whose node 1 panics when it gets M while it has Got: a
// real run reaches that only by the timer path, which round 1 lacks.
type lateP struct{ lateNode }

func (l *lateP) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if l.Got {
		panic("M after Got")
	}
	l.lateNode.Receive(ctx, from, msg)
}

func lateNodeSystem(pair bool) *livecheck.System {
	bad := errors.New("node 1 has Got, node 0 never sent M")
	p := properties.Always("got-after-sent", "node 1 has Got only after node 0 sent M", func(s *sim.State) error {
		if properties.Node[*lateNode](s, 1).Got && !properties.Node[*lateNode](s, 0).Sent {
			return bad
		}
		return nil
	})
	if pair {
		p.Pair = func(a, b sim.Node) error {
			if a.(*lateNode).Got && !b.(*lateNode).Sent || b.(*lateNode).Got && !a.(*lateNode).Sent {
				return bad
			}
			return nil
		}
	}
	return &livecheck.System{
		Name: "late", Doc: "a state reached again by a later round", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &lateNode{} }, Calls: []sim.Call{{To: 0, Call: "go"}}},
				Properties: []properties.Property{p},
			}, nil
		},
	}
}

// A preliminary violation refuted in one round is checked again when a
// later round adds edges to the node states it pins (LMC paper, 4.2).
func TestLocalRechecksRefutedAfterNewEdges(t *testing.T) {
	for _, pair := range []bool{false, true} {
		t.Run(fmt.Sprint("pair=", pair), func(t *testing.T) {
			sys := lateNodeSystem(pair)
			g, err := livecheck.Check(sys, livecheck.Options{Depth: 8, NoWalks: true})
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != livecheck.SafetyViolation || g.Property != "got-after-sent" {
				t.Fatalf("global: %s %s", g.Verdict, g.Property)
			}
			l, err := livecheck.Check(sys, livecheck.Options{Mode: "local"})
			if err != nil {
				t.Fatal(err)
			}
			if l.Verdict != livecheck.SafetyViolation || l.Property != "got-after-sent" {
				t.Fatalf("local: %s %s complete=%v %+v", l.Verdict, l.Property, l.Complete, *l.Local)
			}
			// Node 1's two timers, nothing from node 0.
			if got := fmt.Sprint(l.Path); len(l.Path) != 2 || l.Path[0].Event.Kind != sim.Timer || l.Path[1].Event.Kind != sim.Timer {
				t.Fatalf("path %s", got)
			}
			rep, err := livecheck.Replay(sys, l.Config, l.Path, 0)
			if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "got-after-sent") {
				t.Fatalf("verified trace: %v %+v", err, rep)
			}
		})
	}
}

// A handler panic in a node state no real run reaches in round 1 is kept
// and verified again once round 2 adds the timer path to that state.
func TestLocalRechecksPanicAfterNewEdges(t *testing.T) {
	sys := latePanicSystem()
	g, err := livecheck.Check(sys, livecheck.Options{Depth: 8, NoWalks: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != livecheck.SafetyViolation || g.Property != "no-panic" {
		t.Fatalf("global: %s %s", g.Verdict, g.Property)
	}
	l, err := livecheck.Check(sys, livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.SafetyViolation || l.Property != "no-panic" || l.Local.Rounds != 2 {
		t.Fatalf("local: %s %s complete=%v %+v", l.Verdict, l.Property, l.Complete, *l.Local)
	}
	if want := "node 1 panicked in Receive: M after Got"; l.Message != want {
		t.Fatalf("message %q, want %q", l.Message, want)
	}
	rep, err := livecheck.Replay(sys, l.Config, l.Path, 0)
	if err != nil || rep.Property != "no-panic" || rep.Message != l.Message {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
}

// latePanicSystem is lateP's: only the built-in no-panic can be broken.
func latePanicSystem() *livecheck.System {
	return &livecheck.System{
		Name: "late-panic", Doc: "a panic reached by a later round", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			// Only the built-in no-panic matters; a system needs one of its own.
			return &livecheck.Model{Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &lateP{} }, Calls: []sim.Call{{To: 0, Call: "go"}}},
				Properties: []properties.Property{properties.Always("anything", "holds in every state", func(*sim.State) error { return nil })}}, nil
		},
	}
}

// fifo, over streams: node 0's timer sends B, its driver call sends A then
// B; node 1 sets a timer once it has both and is Done when it fires. "node
// 1 Done while node 0's timer has not fired" is real (A, B, timer), but
// node 1's recorded steps take B first (B entered I+ first, by the
// timer): a verification that ignores the streams' order meets the
// state with both first by B-then-A, which the replay refuses, and prunes
// the in-order way to that state.
type fifo struct {
	Fired, A, B, Done bool
}

type msgK struct{ K byte }

func (f *fifo) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.SetTimer("t")
	}
}
func (f *fifo) App(ctx sim.Context, call sim.AppCall) {
	ctx.Send(1, msgK{'A'})
	ctx.Send(1, msgK{'B'})
}
func (f *fifo) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if msg.(msgK).K == 'A' {
		f.A = true
	} else {
		f.B = true
	}
	if f.A && f.B {
		ctx.SetTimer("t")
	}
}
func (f *fifo) Timer(ctx sim.Context, name string) {
	if ctx.Self() == 0 {
		f.Fired = true
		ctx.Send(1, msgK{'B'})
		return
	}
	f.Done = true
}
func (f *fifo) Error(ctx sim.Context, peer sim.NodeID) {}

func TestLocalVerificationKeepsStreamOrder(t *testing.T) {
	p := properties.Always("done-after-fired", "node 1 is Done only after node 0's timer fired", func(s *sim.State) error {
		if properties.Node[*fifo](s, 1).Done && !properties.Node[*fifo](s, 0).Fired {
			return errors.New("node 1 Done, node 0's timer not fired")
		}
		return nil
	})
	sys := &livecheck.System{
		Name: "fifo", Doc: "stream order in verification", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &fifo{} }, Calls: []sim.Call{{To: 0, Call: "go"}},
					Transport: sim.Stream},
				Properties: []properties.Property{p},
			}, nil
		},
	}
	g, err := livecheck.Check(sys, livecheck.Options{Depth: 8, NoWalks: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != livecheck.SafetyViolation || g.Property != "done-after-fired" {
		t.Fatalf("global: %s %s", g.Verdict, g.Property)
	}
	l, err := livecheck.Check(sys, livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.SafetyViolation || l.Property != "done-after-fired" {
		t.Fatalf("local: %s %s complete=%v %+v", l.Verdict, l.Property, l.Complete, *l.Local)
	}
	rep, err := livecheck.Replay(sys, l.Config, l.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "done-after-fired") {
		t.Fatalf("verified trace: %v %+v", err, rep)
	}
}

// twice: node 0's driver call sends the same M to node 1 twice; node 1
// counts what it gets, up to Cap (counting on past it, with no cap).
type twice struct{ Cap, N int }

func (tw *twice) Init(ctx sim.Context) {}
func (tw *twice) App(ctx sim.Context, call sim.AppCall) {
	ctx.Send(1, msgM{})
	ctx.Send(1, msgM{})
}
func (tw *twice) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if tw.Cap == 0 || tw.N < tw.Cap {
		tw.N++
	}
}
func (tw *twice) Timer(ctx sim.Context, name string)     {}
func (tw *twice) Error(ctx sim.Context, peer sim.NodeID) {}

func twiceSystem(limit, capped int) *livecheck.System {
	p := properties.Always("below", "node 1 gets fewer than the limit", func(s *sim.State) error {
		if properties.Node[*twice](s, 1).N >= limit {
			return errors.New("node 1 got too many")
		}
		return nil
	})
	return &livecheck.System{
		Name: "twice", Doc: "one message sent twice", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &twice{Cap: capped} }, Calls: []sim.Call{{To: 0, Call: "go"}}},
				Properties: []properties.Property{p},
			}, nil
		},
	}
}

// Identical messages count once in I+, but each may be delivered again:
// the LMC paper's rule (not again to a state whose first path delivered
// it) lost node 1's state with N = 2, and local mode said ok complete.
func TestLocalDeliversIdenticalMessagesAgain(t *testing.T) {
	l, err := livecheck.Check(twiceSystem(2, 2), livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.SafetyViolation || l.Property != "below" || len(l.Path) != 3 {
		t.Fatalf("local: %s %s complete=%v path %v", l.Verdict, l.Property, l.Complete, l.Path)
	}
	// N = 3 is no real run's (two copies of M), though I+ lets local mode
	// build it: verification, which counts the copies, refutes it, and
	// the capped counter leaves nothing held back. (Two candidates: N = 3
	// with each of node 0's states.)
	l, err = livecheck.Check(twiceSystem(3, 3), livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.OK || !l.Complete || !l.Exhausted || l.Local.Preliminary != 2 {
		t.Fatalf("local: %s %s complete=%v %+v", l.Verdict, l.Property, l.Complete, *l.Local)
	}
}

// A counter with no cap has a new state for every repeated delivery: the
// round bound holds one back in every round, and the result says what
// it covered instead of "complete".
func TestLocalHeldBackIsNotComplete(t *testing.T) {
	l, err := livecheck.Check(twiceSystem(100, 0), livecheck.Options{Mode: "local", Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.Inconclusive || l.Complete || l.Exhausted || l.Local.Rounds != 3 {
		t.Fatalf("local: %s complete=%v exhausted=%v %+v", l.Verdict, l.Complete, l.Exhausted, *l.Local)
	}
	want := "the round bound still held steps back after round 3: local mode covered every node state reachable under the local rules up to round 3 (at most 3 timers, driver calls and repeated deliveries per node on the first path to each state), not every reachable one; raise --rounds"
	if l.Message != want {
		t.Fatalf("message %q, want %q", l.Message, want)
	}
	// Node 1: N = 0..4 (one first delivery, three repeated); node 0:
	// before and after its call.
	if fmt.Sprint(l.Local.NodeStates) != "[2 5]" {
		t.Fatalf("node states %v", l.Local.NodeStates)
	}
}

// Stop is polled in every phase of local mode (exploration, combination,
// summaries, verification), every 256 units of work. Early stops land in
// exploration: the work done (node steps, pairs and system states built,
// verification steps, each of which polls) stays within the polls made;
// were a phase to go on after the stop, it would pass that bound (the
// whole run does about 193,000). Stops a few polls before the end land
// in verification, and end it: most of its steps are left undone.
func TestLocalStopsPromptly(t *testing.T) {
	cfg := livecheck.Config{Nodes: 2, Bugs: []string{"last-promise"}, Params: map[string]string{"proposers": "2"}}
	run := func(k int) (*livecheck.Result, int) {
		calls := 0
		stop := func() bool { calls++; return k > 0 && calls >= k }
		l, err := livecheck.Check(&paxos.System, livecheck.Options{Config: cfg, Mode: "local", Interrupted: stop})
		if err != nil {
			t.Fatal(err)
		}
		return l, calls
	}
	full, total := run(0)
	if full.Verdict != livecheck.OK || full.Local.Sequences < 5000 {
		t.Fatalf("full run: %s %+v", full.Verdict, *full.Local)
	}
	for _, k := range []int{1, 40, 300, 700, total - 12, total - 8} {
		l, _ := run(k)
		s := l.Local
		if l.Verdict != livecheck.Inconclusive || !l.Interrupted || l.Complete {
			t.Fatalf("stop at call %d: %s interrupted=%v complete=%v", k, l.Verdict, l.Interrupted, l.Complete)
		}
		if work := s.Transitions + s.Pairs + s.SystemStates + s.Sequences; k < 1000 && work > int64(256*(k+2)) {
			t.Fatalf("stop at call %d: %d units of work", k, work)
		}
		if k > 1000 && (s.Verifications == 0 || s.Sequences > full.Local.Sequences-1024) {
			t.Fatalf("stop at call %d of %d: %+v, full run %+v", k, total, *s, *full.Local)
		}
	}
}

// initSend: node 1 sends M to node 0 in Init, which node 0 records.
type initSend struct{ Got bool }

func (n *initSend) Init(ctx sim.Context) {
	if ctx.Self() == 1 {
		ctx.Send(0, msgM{})
	}
}
func (n *initSend) App(ctx sim.Context, call sim.AppCall)                     {}
func (n *initSend) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { n.Got = true }
func (n *initSend) Timer(ctx sim.Context, name string)                        {}
func (n *initSend) Error(ctx sim.Context, peer sim.NodeID)                    {}

// The message summaries count what a node sent in Init as sent on its
// way to every state: they refuted node 0 with M beside node 1's first
// state, the one it sent M in, and local mode said ok complete.
func TestLocalSummariesCountInitMessages(t *testing.T) {
	bad := errors.New("node 0 got M")
	p := properties.Always("no-m", "node 0 never gets M", func(s *sim.State) error {
		if properties.Node[*initSend](s, 0).Got {
			return bad
		}
		return nil
	})
	p.Pair = func(a, b sim.Node) error {
		if a.(*initSend).Got || b.(*initSend).Got {
			return bad
		}
		return nil
	}
	sys := &livecheck.System{
		Name: "init-send", Doc: "a message sent in Init", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &initSend{} }}, Properties: []properties.Property{p}}, nil
		},
	}
	l, err := livecheck.Check(sys, livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.SafetyViolation || l.Property != "no-m" || len(l.Path) != 1 || l.Local.Refuted != 0 {
		t.Fatalf("local: %s %s complete=%v path %v %+v", l.Verdict, l.Property, l.Complete, l.Path, *l.Local)
	}
}

// chain: node 0's driver call sends X to node 1 (node 0 is then A);
// node 1 on X sends Y to node 2 (node 1 is then B); node 2 panics on Y.
// Every run to the panic passes a state with A and B, which breaks
// "not-both".
type chain struct{ A, B bool }

func (c *chain) Init(ctx sim.Context) {}
func (c *chain) App(ctx sim.Context, call sim.AppCall) {
	c.A = true
	ctx.Send(1, msgM{})
}
func (c *chain) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if ctx.Self() == 2 {
		panic("Y")
	}
	c.B = true
	ctx.Send(2, msgM{})
}
func (c *chain) Timer(ctx sim.Context, name string)     {}
func (c *chain) Error(ctx sim.Context, peer sim.NodeID) {}

func chainSystem() *livecheck.System {
	p := properties.Always("not-both", "node 0 A and node 1 B never together", func(s *sim.State) error {
		if properties.Node[*chain](s, 0).A && properties.Node[*chain](s, 1).B {
			return errors.New("both")
		}
		return nil
	})
	return &livecheck.System{
		Name: "chain", Doc: "a panic past a violation", DefaultNodes: 3, MinNodes: 3, MaxNodes: 3,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &chain{} }, Calls: []sim.Call{{To: 0, Call: "go"}}},
				Properties: []properties.Property{p},
			}, nil
		},
	}
}

// The panic is the shallowest candidate and verified first; the run found
// for it meets a violation of not-both on the way, and that violation is
// the finding (a replay stops there too), not the panic.
func TestLocalReportsFirstViolationOnTheWay(t *testing.T) {
	l, err := livecheck.Check(chainSystem(), livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != livecheck.SafetyViolation || l.Property != "not-both" || len(l.Path) != 2 {
		t.Fatalf("local: %s %s path %v %+v", l.Verdict, l.Property, l.Path, *l.Local)
	}
}

// Local mode verifies its shortest candidates one by one (the quick
// checks) on every worker at once, and counts them in order as one
// worker would: the verdict, the path and every statistic but the times
// are the same for any number of workers. On the bugs here a quick check
// finds the violation, with candidates after it in the same batch that
// more workers verified too and must not count; on the correct systems
// every quick check fails and every one counts.
func TestLocalWorkersAgree(t *testing.T) {
	paxosConfig := func(nodes int, proposers string, bugs ...string) livecheck.Config {
		cfg := livecheck.Config{Nodes: nodes, Params: map[string]string{"proposers": proposers}}
		for _, b := range bugs {
			if b == "roles=split" {
				cfg.Params["roles"] = "split"
			} else {
				cfg.Bugs = append(cfg.Bugs, b)
			}
		}
		return cfg
	}
	for _, tc := range []struct {
		name    string
		sys     *livecheck.System
		cfg     livecheck.Config
		verdict livecheck.Verdict
	}{
		{"lcr-no-discard", &lcr.System, livecheck.Config{Bugs: []string{"no-discard"}}, livecheck.SafetyViolation},
		{"lcr-5-no-discard", &lcr.System, livecheck.Config{Nodes: 5, Bugs: []string{"no-discard"}}, livecheck.SafetyViolation},
		{"paxos-split-quorum=1", &paxos.System, paxosConfig(5, "2", "quorum=1", "roles=split"), livecheck.SafetyViolation},
		// 256 quick checks, all in vain, then the search of them all.
		{"paxos-3-2-quorum=1", &paxos.System, paxosConfig(3, "2", "quorum=1"), livecheck.SafetyViolation},
		{"paxos-last-promise", &paxos.System, paxosConfig(2, "2", "last-promise"), livecheck.OK},
		{"chain", chainSystem(), livecheck.Config{}, livecheck.SafetyViolation},
		{"late-panic", latePanicSystem(), livecheck.Config{}, livecheck.SafetyViolation},
		{"lcr-5", &lcr.System, livecheck.Config{Nodes: 5}, livecheck.OK},
		{"paxos", &paxos.System, paxosConfig(3, "1"), livecheck.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want string
			for _, workers := range []int{1, 2, 4} {
				r, err := livecheck.Check(tc.sys, livecheck.Options{Config: tc.cfg, Mode: "local", Workers: workers, Time: livecheck.NoTimeLimit})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != tc.verdict {
					t.Fatalf("%d workers: %s (%s), want %s", workers, r.Verdict, r.Message, tc.verdict)
				}
				st := *r.Local
				st.Explore, st.Combine, st.Verify, st.Elapsed = 0, 0, 0, 0
				got := fmt.Sprintf("%s %s %q init %v path %v\n%+v", r.Verdict, r.Property, r.Message, r.Init, r.Path, st)
				if workers == 1 {
					want = got
					continue
				}
				if got != want {
					t.Fatalf("%d workers:\n%s\none worker:\n%s", workers, got, want)
				}
			}
		})
	}
}
