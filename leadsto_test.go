package livecheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// The asking system: node 0 answers, the others each ask once. A client
// sends its question in Init and, unless noRetry, asks again on a timer
// (at most twice more) until it has its answer. P of the leads-to
// property: an answer is in flight; Q: every client has its answer. So a
// lost question leaves P unheld (nothing to answer yet), while a lost
// answer leaves P waiting: with noRetry that is a liveness violation.
type (
	question struct{}
	answer   struct{}
)

type answerer struct {
	sim.BaseNode
	// Answered is the monitor's bit folded into the node by hand (only
	// in the by-hand variant): an answer was ever sent.
	Answered bool
	byHand   bool
}

func (a *answerer) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if a.byHand {
		a.Answered = true
	}
	ctx.Send(from, answer{})
}

type asker struct {
	sim.BaseNode
	Got     bool
	Tries   int
	noRetry bool
}

func (c *asker) ask(ctx sim.Context) {
	c.Tries++
	ctx.Send(0, question{})
	if !c.noRetry && c.Tries < 3 {
		ctx.SetTimer("retry")
	}
}

func (c *asker) Init(ctx sim.Context) { c.ask(ctx) }

func (c *asker) Timer(ctx sim.Context, name string) {
	if !c.Got {
		c.ask(ctx)
	}
}

func (c *asker) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	c.Got = true
	ctx.CancelTimer("retry")
}

func allGot(s *sim.State) bool {
	for i := 1; i < s.N(); i++ {
		if !properties.Node[*asker](s, sim.NodeID(i)).Got {
			return false
		}
	}
	return true
}

func answerInFlight(s *sim.State) bool {
	for _, e := range s.InFlight() {
		if _, ok := e.Msg.(answer); ok {
			return true
		}
	}
	return false
}

// answeredProp is the system's leads-to property; one value serves every
// build of every variant.
var answeredProp = properties.LeadsTo("answered", "once an answer is sent, every client gets one",
	answerInFlight, allGot)

// The variants of the asking system's property.
const (
	leadsTo = iota // answeredProp
	byHand         // its bit kept by node 0 instead, checked as an Eventually
	plain          // no bit: eventually every client has its answer
)

// askSystem is the asking system: with noRetry the buggy clients. In the
// byHand variant node 0 keeps Answered, which with allGot says what the
// monitor's bit would: the bit is Answered && !allGot.
func askSystem(noRetry bool, variant int) *livecheck.System {
	return &livecheck.System{
		Name: "asking", DefaultNodes: 2, MinNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			m := &livecheck.Model{Spec: sim.Spec{New: func(id sim.NodeID) sim.Node {
				if id == 0 {
					return &answerer{byHand: variant == byHand}
				}
				return &asker{noRetry: noRetry}
			}}}
			if cfg.Nodes > 2 {
				m.Spec.Symmetry = [][]sim.NodeID{make([]sim.NodeID, 0, cfg.Nodes-1)}
				for i := 1; i < cfg.Nodes; i++ {
					m.Spec.Symmetry[0] = append(m.Spec.Symmetry[0], sim.NodeID(i))
				}
			}
			switch variant {
			case leadsTo:
				m.Properties = []properties.Property{answeredProp}
			case byHand:
				m.Properties = []properties.Property{properties.Eventually("answered", "", func(s *sim.State) bool {
					return !properties.Node[*answerer](s, 0).Answered || allGot(s)
				})}
			case plain:
				m.Properties = []properties.Property{properties.Eventually("answered", "", allGot)}
			}
			return m, nil
		},
	}
}

// With retries every answer gets through one lost message; without, a
// lost answer leaves P waiting for ever: the critical step is the drop
// of the answer, after the question was delivered (step 1), and the
// trace replays to the same violation. A lost question is no violation:
// nothing was answered.
func TestLeadsTo(t *testing.T) {
	opts := livecheck.Options{Depth: 12, Config: livecheck.Config{Budget: sim.Budget{Drops: 1}}}
	res, err := livecheck.Check(askSystem(false, leadsTo), opts)
	if err != nil || res.Verdict != livecheck.OK || !res.Exhausted {
		t.Fatalf("with retries: %v, %v: %s", res.Verdict, err, res.Message)
	}
	sys := askSystem(true, leadsTo)
	res, err = livecheck.Check(sys, opts)
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != livecheck.LivenessViolation || res.Property != "answered" || cx == nil {
		t.Fatalf("no retry: %s of %q: %s", res.Verdict, res.Property, res.Message)
	}
	if cx.Step != 2 || cx.Event.Kind != sim.Drop || cx.EventText != "drop answer{} 0->1" || len(res.Path) != 2 {
		t.Fatalf("critical step %d of %d: %q", cx.Step, len(res.Path), cx.EventText)
	}
	want := []livecheck.Waiting{{Property: "answered", Doc: "once an answer is sent, every client gets one", Step: 1}}
	if fmt.Sprint(res.Waiting) != fmt.Sprint(want) ||
		!strings.HasSuffix(res.Message, "; answered (once an answer is sent, every client gets one): P held at step 1 and Q never held after") {
		t.Fatalf("waiting %v: %s", res.Waiting, res.Message)
	}
	rep, err := livecheck.Replay(sys, res.Config, res.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.LivenessViolation, "answered") || rep.Live || fmt.Sprint(rep.Waiting) != fmt.Sprint(want) {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
	rep, err = livecheck.Replay(sys, res.Config, cx.LivePath, 0)
	if err != nil || !rep.Live || len(rep.Waiting) != 0 {
		t.Fatalf("live path replay: %+v, %v", rep, err)
	}

	// Two clients, interchangeable: the same verdicts with symmetry
	// reduction (the default) and without, each critical step a drop (of
	// a question, once an answer to the other client is in flight, is
	// as final as of an answer).
	opts.Config.Nodes = 3
	for _, reduce := range []string{"none", ""} {
		opts.Reduce = reduce
		ok, err := livecheck.Check(askSystem(false, leadsTo), opts)
		if err != nil || ok.Verdict != livecheck.OK {
			t.Fatalf("3 nodes, reduce %q, with retries: %v, %v: %s", reduce, ok.Verdict, err, ok.Message)
		}
		bad, err := livecheck.Check(askSystem(true, leadsTo), opts)
		if err != nil || bad.Verdict != livecheck.LivenessViolation || bad.Critical == nil || bad.Critical.Event.Kind != sim.Drop ||
			len(bad.Waiting) != 1 {
			t.Fatalf("3 nodes, reduce %q, no retry: %v, %v: %s", reduce, bad.Verdict, err, bad.Message)
		}
		if (reduce == "") != (len(bad.Symmetry) == 1) {
			t.Fatalf("reduce %q: symmetry %v", reduce, bad.Symmetry)
		}
	}
}

// The monitor's bit splits states exactly as the same bit kept in node
// 0's state by hand does: the same number of states, with and without
// symmetry and sleep sets, and more than the system has without it (a
// lost question and a lost answer leave the same nodes and network,
// but only the second waits). The verdicts agree too.
func TestLeadsToStates(t *testing.T) {
	for _, c := range []struct {
		nodes         int
		plain, states int64
		reduce        string
	}{
		{2, 29, 32, "none"},
		{2, 29, 32, ""},
		{3, 721, 739, "none"},
		{3, 371, 380, ""}, // symmetry: clients 1 and 2
	} {
		for _, noRetry := range []bool{false, true} {
			count := func(variant int) *livecheck.Result {
				opts := livecheck.Options{Depth: 14, NoWalks: true, Reduce: c.reduce,
					Config: livecheck.Config{Nodes: c.nodes, Budget: sim.Budget{Drops: 1}}}
				res, err := livecheck.Check(askSystem(noRetry, variant), opts)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			mon, hand, pl := count(leadsTo), count(byHand), count(plain)
			if !noRetry && (mon.Stats.States != c.states || pl.Stats.States != c.plain || mon.Verdict != livecheck.OK) {
				t.Errorf("nodes %d reduce %q: %d states (%s), without the bit %d; want %d and %d", c.nodes, c.reduce,
					mon.Stats.States, mon.Verdict, pl.Stats.States, c.states, c.plain)
			}
			if mon.Stats.States != hand.Stats.States || mon.Verdict != hand.Verdict {
				t.Errorf("nodes %d reduce %q noRetry %v: %d states (%s), by hand %d (%s)", c.nodes, c.reduce, noRetry,
					mon.Stats.States, mon.Verdict, hand.Stats.States, hand.Verdict)
			}
		}
	}
}

// flagger sets its Flag when its timer fires.
type flagger struct {
	sim.BaseNode
	Flag bool
}

func (f *flagger) Init(ctx sim.Context)      { ctx.SetTimer("set") }
func (f *flagger) Timer(sim.Context, string) { f.Flag = true }

// Two timers of two nodes commute, but for a monitor whose P holds only
// between them in one order (node 0's flag set, node 1's not yet): the
// bit then tells the two orders apart, so sleep sets, which take one
// order for both, would lose a state. The search drops them for a world
// with monitors: the same states either way.
func TestLeadsToNoSleepSets(t *testing.T) {
	flag := func(s *sim.State, i sim.NodeID) bool { return properties.Node[*flagger](s, i).Flag }
	sys := &livecheck.System{Name: "flags", DefaultNodes: 2, Build: func(livecheck.Config) (*livecheck.Model, error) {
		return &livecheck.Model{Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &flagger{} }},
			Properties: []properties.Property{properties.LeadsTo("between", "",
				func(s *sim.State) bool { return flag(s, 0) && !flag(s, 1) },
				func(*sim.State) bool { return false })}}, nil
	}}
	for _, reduce := range []string{"none", "sleep"} {
		res, err := livecheck.Check(sys, livecheck.Options{Depth: 4, NoWalks: true, Reduce: reduce})
		// Initial; 0 or 1 set; both set, by way of the P-state or not.
		if err != nil || res.Stats.States != 5 {
			t.Fatalf("reduce %s: %d states, %v", reduce, res.Stats.States, err)
		}
	}
}

// A leads-to property whose P panics is a property error, with the path
// to the step it panicked on, in the search as in replay; local mode
// checks no liveness and so does not run the monitor at all.
func TestLeadsToPanicsAndLocal(t *testing.T) {
	sys := askSystem(true, leadsTo)
	build := sys.Build
	sys.Build = func(cfg livecheck.Config) (*livecheck.Model, error) {
		m, err := build(cfg)
		m.Properties = []properties.Property{properties.LeadsTo("answered", "", func(s *sim.State) bool {
			if answerInFlight(s) {
				panic("no answers")
			}
			return false
		}, allGot)}
		return m, err
	}
	res, err := livecheck.Check(sys, livecheck.Options{Depth: 6})
	if err != nil || res.Verdict != livecheck.PropertyError || res.Property != "answered" || len(res.Path) != 1 ||
		res.Message != "property answered panicked: no answers" {
		t.Fatalf("%v of %q in %d steps: %s (%v)", res.Verdict, res.Property, len(res.Path), res.Message, err)
	}
	rep, err := livecheck.Replay(sys, res.Config, res.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.PropertyError, "answered") {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
	// In the initial state: a property error at step 0.
	sys.Build = func(cfg livecheck.Config) (*livecheck.Model, error) {
		m, err := build(cfg)
		m.Properties = []properties.Property{properties.LeadsTo("answered", "", func(*sim.State) bool { panic("at once") }, allGot)}
		return m, err
	}
	res, err = livecheck.Check(sys, livecheck.Options{Depth: 6})
	if err != nil || res.Verdict != livecheck.PropertyError || res.Property != "answered" || len(res.Path) != 0 {
		t.Fatalf("initial: %+v (%v)", res, err)
	}
	res, err = livecheck.Check(askSystem(true, leadsTo), livecheck.Options{Mode: "local"})
	if err != nil || res.Verdict != livecheck.OK {
		t.Fatalf("local: %+v, %v", res, err)
	}
}
