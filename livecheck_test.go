package livecheck_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
)

// counter is a toy protocol: node 0 counts up on a timer and tells node 1,
// which records the largest count it heard. Its bugs are knobs for the
// checker's own tests.
type counter struct {
	N, Heard int
	mode     string `livecheck:"-"`
}

type count struct{ N int }

var release atomic.Bool // lets a diverged handler return when a test ends

// onCount2 is called by mode "hook" when node 1 gets count 2.
var onCount2 func()

func (c *counter) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.SetTimer("tick")
	}
}

func (c *counter) Timer(ctx sim.Context, name string) {
	c.N++
	if c.N < 3 {
		ctx.SetTimer("tick")
	}
	ctx.Send(1, count{c.N})
}

func (c *counter) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	m := msg.(count)
	switch {
	case c.mode == "panic" && m.N == 2:
		var table []int
		_ = table[m.N] // an index out of range, as a real slip would make
	case c.mode == "hook" && m.N == 2:
		onCount2()
	case c.mode == "loop" && m.N == 2:
		for !release.Load() {
		}
	case c.mode == "overcount" && m.N == 3:
		m.N++ // an off-by-one on the last count
	case c.mode == "stuck" && m.N > c.Heard+1:
		return // takes counts only in order: a count that overtook another is lost
	}
	c.Heard = max(c.Heard, m.N)
}

func (c *counter) App(ctx sim.Context, call sim.AppCall)  {}
func (c *counter) Error(ctx sim.Context, peer sim.NodeID) {}

func counterSystem(mode string) *livecheck.System {
	return &livecheck.System{
		Name: "counter", Doc: "a toy", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Bugs: []livecheck.Bug{{Name: "x", Doc: "unused"}},
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &counter{mode: mode} }},
				Properties: []properties.Property{
					properties.Always("heard-sent", "node 1 never hears more than node 0 sent", func(s *sim.State) error {
						if h, n := properties.Node[*counter](s, 1).Heard, properties.Node[*counter](s, 0).N; h > n {
							return fmt.Errorf("heard %d, sent %d", h, n)
						}
						return nil
					}),
					properties.Eventually("heard-all", "node 1 hears 3", func(s *sim.State) bool {
						return properties.Node[*counter](s, 1).Heard == 3
					}),
				},
			}, nil
		},
	}
}

func TestCounterSpace(t *testing.T) {
	// Node 0 counts to 3, node 1 takes the datagrams in any order: states
	// are (count, counts delivered), 1+2+4+8 = 15 of them, 4 of them live
	// (3 delivered); 24 transitions in all, 20 of them leave the 11 others
	// (paths go on past live states: safety is checked on every state).
	// Counting and taking a datagram commute: sleep sets take 19 of them.
	for _, c := range []struct {
		reduce      string
		transitions int64
	}{{"none", 24}, {"sleep", 19}} {
		res, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10, Reduce: c.reduce})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK || !res.Exhausted {
			t.Fatalf("%s %s, exhausted %v", res.Verdict, res.Message, res.Exhausted)
		}
		if res.Stats.States != 15 || res.Stats.Transitions != c.transitions || res.Stats.Live != 4 || res.Stats.MaxDepth != 6 {
			t.Fatalf("--reduce %s: stats %+v", c.reduce, res.Stats)
		}
	}
	res, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A bound of 3 steps cuts paths: the periphery is the 3 states first
	// reached in 3 steps (count 3 with nothing delivered; count 2 with 1 or 2
	// delivered).
	res, err = livecheck.Check(counterSystem(""), livecheck.Options{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.OK || res.Exhausted || res.Stats.Periphery != 3 || res.Stats.MaxDepth != 3 {
		t.Fatalf("depth 3: %s exhausted %v stats %+v", res.Verdict, res.Exhausted, res.Stats)
	}
	// Cut by --max-states: depth 3 would make 7 states, so the search
	// ends with the 4 states within 2 steps, and passes to depth 2; asked
	// for depth 3, it is inconclusive.
	res, err = livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10, MaxStates: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.OK || res.Complete || res.Covered != 2 || res.Stats.States != 4 {
		t.Fatalf("max-states 5: %s, complete %v, to depth %d after %d states", res.Verdict, res.Complete, res.Covered, res.Stats.States)
	}
	res, err = livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10, MaxStates: 5, MinDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.Inconclusive || res.Covered != 2 || res.Stats.States != 4 {
		t.Fatalf("max-states 5, min depth 3: %s to depth %d after %d states", res.Verdict, res.Covered, res.Stats.States)
	}
}

func TestWalksCheckSafety(t *testing.T) {
	// The violation needs 4 steps; the search stops at 3 and the walks
	// from its periphery run into it.
	sys := counterSystem("overcount")
	res, err := livecheck.Check(sys, livecheck.Options{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "heard-sent" || res.Message != "heard 4, sent 3" || len(res.Path) < 4 {
		t.Fatalf("%s of %q (%s) after %d steps", res.Verdict, res.Property, res.Message, len(res.Path))
	}
	rep, err := livecheck.Replay(sys, res.Config, res.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "heard-sent") {
		t.Fatalf("replay: %+v %v", rep, err)
	}
}

func TestHandlerPanicIsAFinding(t *testing.T) {
	res, err := livecheck.Check(counterSystem("panic"), livecheck.Options{Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "no-panic" {
		t.Fatalf("%s of %q: want a no-panic safety violation", res.Verdict, res.Property)
	}
	last := res.Path[len(res.Path)-1].Event
	if last.Kind != sim.Deliver || last.Node != 1 {
		t.Fatalf("last step %v, want the delivery to node 1", last)
	}
	if want := "node 1 panicked in Receive: runtime error: index out of range [2] with length 0"; res.Message != want {
		t.Fatalf("message %q, want %q", res.Message, want)
	}
	rep, err := livecheck.Replay(counterSystem("panic"), res.Config, res.Path, 0)
	if err != nil || rep.Property != "no-panic" || rep.Message != res.Message {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
}

func TestDivergenceIsAFinding(t *testing.T) {
	release.Store(false)
	defer release.Store(true)
	res, err := livecheck.Check(counterSystem("loop"), livecheck.Options{Depth: 10, HandlerTimeout: 100 * time.Millisecond, ConfirmTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.LivenessViolation || res.Property != livecheck.DivergenceProperty {
		t.Fatalf("%s of %q: want a divergence", res.Verdict, res.Property)
	}
	// Reported only once the step hung again in a run of its own.
	if want := "a handler did not return within 100ms on deliver count{N:2} 0->1, nor within 200ms when run again from the initial state"; res.Message != want {
		t.Fatalf("message %q, want %q", res.Message, want)
	}
	last := res.Path[len(res.Path)-1].Event
	if last.Kind != sim.Deliver || last.Node != 1 {
		t.Fatalf("last step %v, want the delivery to node 1", last)
	}
	rep, err := livecheck.Replay(counterSystem("loop"), res.Config, res.Path, 100*time.Millisecond)
	if err != nil || rep.Property != livecheck.DivergenceProperty {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
}

func TestDivergenceInAWalk(t *testing.T) {
	release.Store(false)
	defer release.Store(true)
	// The search stops at depth 2, before count 2 can arrive; a walk from
	// its periphery delivers it and the handler never returns.
	res, err := livecheck.Check(counterSystem("loop"), livecheck.Options{Depth: 2, HandlerTimeout: 100 * time.Millisecond, ConfirmTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.LivenessViolation || res.Property != livecheck.DivergenceProperty || len(res.Path) < 3 {
		t.Fatalf("%s of %q after %d steps", res.Verdict, res.Property, len(res.Path))
	}
	if want := "a handler did not return within 100ms on deliver count{N:2} 0->1, during a random walk, nor within 200ms when run again from the initial state"; res.Message != want {
		t.Fatalf("message %q, want %q", res.Message, want)
	}
	rep, err := livecheck.Replay(counterSystem("loop"), res.Config, res.Path, 100*time.Millisecond)
	if err != nil || !rep.Reproduces(livecheck.LivenessViolation, livecheck.DivergenceProperty) {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
}

func TestQuiescentDeadState(t *testing.T) {
	// Node 1 takes counts only in order, so a count that overtakes another
	// is lost for good: once 3 has been dropped, nothing can happen that
	// makes node 1 hear 3. The search reaches a state where nothing can
	// happen; the critical search finds the delivery that lost count 3.
	sys := counterSystem("stuck")
	res, err := livecheck.Check(sys, livecheck.Options{Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != livecheck.LivenessViolation || res.Property != "heard-all" || cx == nil {
		t.Fatalf("%s of %q, critical %v", res.Verdict, res.Property, cx)
	}
	if cx.Case != "C1" || cx.Step != 5 || len(res.Path) != 6 || cx.EventText != "deliver count{N:3} 0->1" || cx.LiveStep != 4 {
		t.Fatalf("critical %s at step %d of %d: %q, live step %d", cx.Case, cx.Step, len(res.Path), cx.EventText, cx.LiveStep)
	}
	if cx.Before[1] != "counter{N:0 Heard:1}" || cx.After[1] != cx.Before[1] || cx.LiveAfter[1] != "counter{N:0 Heard:2}" {
		t.Fatalf("node 1 before %q after %q, live after %q", cx.Before[1], cx.After[1], cx.LiveAfter[1])
	}
	// The live path shares the dead path's prefix up to the live step.
	for i := 0; i < cx.LiveStep; i++ {
		if cx.LivePath[i].Event != res.Path[i].Event {
			t.Fatalf("live path departs at step %d, before the live step %d", i+1, cx.LiveStep)
		}
	}
	rep, err := livecheck.Replay(sys, res.Config, res.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.LivenessViolation, "heard-all") || rep.Property != "heard-all" || !rep.Stuck {
		t.Fatalf("dead path replay: %+v, %v", rep, err)
	}
	stuck := rep.Message
	rep, err = livecheck.Replay(sys, res.Config, cx.LivePath, 0)
	if err != nil || !rep.Live || !rep.Reproduces(livecheck.Live, "") {
		t.Fatalf("live path replay: %+v, %v", rep, err)
	}
	// Without walks the search still reports the stuck state itself, as
	// replay does.
	res, err = livecheck.Check(sys, livecheck.Options{Depth: 10, NoWalks: true})
	if err != nil || res.Property != "heard-all" || res.Message != stuck || res.Critical != nil {
		t.Fatalf("no walks: %s of %q: %q, %v", res.Verdict, res.Property, res.Message, err)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  livecheck.Config
		want string
	}{
		{livecheck.Config{Nodes: 3}, "counter needs 2 to 2 nodes, not 3"},
		{livecheck.Config{Bugs: []string{"y"}}, `counter has no bug "y" (valid: x)`},
		{livecheck.Config{Params: map[string]string{"k": "v"}}, `counter has no parameter "k" (valid: none)`},
	} {
		_, err := livecheck.Check(counterSystem(""), livecheck.Options{Config: tc.cfg})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// late is a protocol whose safety violation comes after it is live: node 0
// sends A once and B on every tick; node 1 is live once it has A, and a B
// that arrives after A trips it.
type late struct {
	HasA, Bad bool
	Ticks     int
}

type lateA struct{}
type lateB struct{}

func (l *late) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.Send(1, lateA{})
		ctx.SetTimer("tick")
	}
}
func (l *late) Timer(ctx sim.Context, name string) {
	l.Ticks++
	ctx.Send(1, lateB{})
	ctx.SetTimer("tick")
}
func (l *late) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(type) {
	case lateA:
		l.HasA = true
	case lateB:
		l.Bad = l.Bad || l.HasA
	}
}
func (l *late) App(ctx sim.Context, call sim.AppCall)  {}
func (l *late) Error(ctx sim.Context, peer sim.NodeID) {}

func lateSystem() *livecheck.System {
	return &livecheck.System{
		Name: "late", Doc: "a violation after the first live state", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &late{} }},
				Properties: []properties.Property{
					properties.Always("no-b-after-a", "node 1 takes no B after A", func(s *sim.State) error {
						if properties.Node[*late](s, 1).Bad {
							return fmt.Errorf("node 1 took B after A")
						}
						return nil
					}),
					properties.Eventually("has-a", "node 1 has A", func(s *sim.State) bool {
						return properties.Node[*late](s, 1).HasA
					}),
				},
			}, nil
		},
	}
}

// Safety is checked past the first live state: a path that recovers goes
// on. Before, the search ended every path at "deliver A" and said ok,
// exhausted.
func TestSafetyPastLiveStates(t *testing.T) {
	res, err := livecheck.Check(lateSystem(), livecheck.Options{Depth: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "no-b-after-a" || len(res.Path) != 3 {
		t.Fatalf("%s of %q after %d steps (%s); want the no-b-after-a violation in 3 steps", res.Verdict, res.Property, len(res.Path), res.Message)
	}
	// With a bound of one step the search cannot reach it; the walks from
	// its periphery (the tick fired, A not yet delivered) go on past the
	// delivery of A and find it.
	res, err = livecheck.Check(lateSystem(), livecheck.Options{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "no-b-after-a" || res.Stats.Periphery != 1 {
		t.Fatalf("depth 1: %s of %q (%s), periphery %d; want the no-b-after-a violation found by a walk", res.Verdict, res.Property, res.Message, res.Stats.Periphery)
	}
	// After it recovered (delivered A), and the report says so.
	if n := res.Live.FoundAfterLive; n < 1 || n > len(res.Path) {
		t.Fatalf("depth 1: found %d steps after the walk recovered; want at least 1, within its %d steps", n, len(res.Path))
	}
	var text strings.Builder
	reports.WriteCheck(&text, res.Report("", ""), false)
	if !strings.Contains(text.String(), fmt.Sprintf("found by a walk from the depth bound %s after it first reached a live state", reports.Count(res.Live.FoundAfterLive, "step"))) {
		t.Fatalf("the report does not say the walk found it after it recovered:\n%s", text.String())
	}
	rep, err := livecheck.Replay(lateSystem(), res.Config, res.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "no-b-after-a") {
		t.Fatalf("replay: %+v %v", rep, err)
	}
}

// panicky is late with a property that panics (a nil map written): the
// safety property once node 1 took B after A; or, with which "liveness",
// a liveness property alone that never holds and panics once node 0
// ticked twice.
func panicky(which string) *livecheck.System {
	return lateWith(func(m *livecheck.Model) {
		var seen map[bool]int // never made: writing it panics
		if which == "liveness" {
			m.Properties = []properties.Property{properties.Eventually("ticks-end", "node 0 stops ticking", func(s *sim.State) bool {
				if properties.Node[*late](s, 0).Ticks >= 2 {
					seen[true]++
				}
				return false
			})}
			return
		}
		check := m.Properties[0].Check
		m.Properties[0].Check = func(s *sim.State) error {
			if properties.Node[*late](s, 1).Bad {
				seen[true]++
			}
			return check(s)
		}
	})
}

// lateWith is late with its model changed by change.
func lateWith(change func(m *livecheck.Model)) *livecheck.System {
	sys := lateSystem()
	build := sys.Build
	sys.Build = func(cfg livecheck.Config) (*livecheck.Model, error) {
		m, err := build(cfg)
		if err == nil {
			change(m)
		}
		return m, err
	}
	return sys
}

// A property that panics is a property error, not a violation of it: the
// check names the property and the panic, with the path to the state it
// failed on, which replays to the same error; found by the search (depth
// 6), by the walks (depth 1) and by local mode. (Before, a panicking liveness property
// counted as "not live", and one of safety as violated.)
func TestPropertyPanics(t *testing.T) {
	for _, tc := range []struct {
		which, prop, mode string
		depth             int
	}{
		{"safety", "no-b-after-a", "global", 6},
		{"safety", "no-b-after-a", "global", 1},
		{"safety", "no-b-after-a", "local", 6},
		{"liveness", "ticks-end", "global", 6},
		{"liveness", "ticks-end", "global", 1},
	} {
		sys := panicky(tc.which)
		res, err := livecheck.Check(sys, livecheck.Options{Depth: tc.depth, Mode: tc.mode})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if res.Verdict != livecheck.PropertyError || res.Property != tc.prop ||
			res.Message != "property "+tc.prop+" panicked: assignment to entry in nil map" {
			t.Fatalf("%+v: %s of %q: %s", tc, res.Verdict, res.Property, res.Message)
		}
		rep, err := livecheck.Replay(sys, res.Config, res.Path, 0)
		if err != nil || !rep.Reproduces(livecheck.PropertyError, tc.prop) || rep.Message != res.Message {
			t.Fatalf("%+v: replay: %+v %v", tc, rep, err)
		}
		// The path's last step is the B that node 1 took after A, or
		// node 0's second tick.
		want := sim.Event{Kind: sim.Deliver, Node: 1}
		if tc.which == "liveness" {
			want = sim.Event{Kind: sim.Timer, Node: 0}
		}
		if last := res.Path[len(res.Path)-1].Event; last.Kind != want.Kind || last.Node != want.Node {
			t.Fatalf("%+v: the path ends with %v", tc, last)
		}
	}
}

// aheadSystem is counter's "stuck" mode with one more safety property:
// node 1 must not have heard 2 while count 3 is still on its way. Every
// path to a live state (node 1 hears 1, 2, 3 in order) passes such a
// state; the dead paths (count 3 lost by arriving early) never do.
func aheadSystem() *livecheck.System {
	sys := counterSystem("stuck")
	build := sys.Build
	sys.Build = func(cfg livecheck.Config) (*livecheck.Model, error) {
		m, err := build(cfg)
		if err != nil {
			return nil, err
		}
		m.Properties = append(m.Properties, properties.Always("not-ahead", "node 1 has not heard 2 while 3 is in flight", func(s *sim.State) error {
			if properties.Node[*counter](s, 1).Heard != 2 {
				return nil
			}
			for _, e := range s.InFlight() {
				if c, ok := e.Msg.(count); ok && c.N == 3 {
					return fmt.Errorf("heard 2 with count 3 in flight")
				}
			}
			return nil
		}))
		return m, nil
	}
	return sys
}

func TestCriticalSearchChecksSafety(t *testing.T) {
	// The search stops short of the unsafe states (5 steps away). In these
	// two cases the first periphery walk goes dead (count 3 arrives early)
	// and the critical search's probes from the path's early steps find a
	// way to a live state, through an unsafe state: that is the finding.
	// (Before, the probes ignored safety, and the check ended in "internal
	// error: the nearest live path does not replay to a live state".)
	sys := aheadSystem()
	for _, tc := range []struct {
		depth int
		seed  int64
	}{{1, 1}, {3, 6}} {
		res, err := livecheck.Check(sys, livecheck.Options{Depth: tc.depth, Seed: tc.seed})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if res.Verdict != livecheck.SafetyViolation || res.Property != "not-ahead" || res.Message != "heard 2 with count 3 in flight" {
			t.Fatalf("%+v: %s of %q (%s), want a safety violation of not-ahead", tc, res.Verdict, res.Property, res.Message)
		}
		if res.Live.Suspects == 0 {
			t.Fatalf("%+v: %d walks, no suspect: the finding did not come from the critical search", tc, res.Live.Walks)
		}
		rep, err := livecheck.Replay(sys, res.Config, res.Path, 0)
		if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "not-ahead") || len(rep.Steps) != len(res.Path) {
			t.Fatalf("%+v: replay: %+v, %v", tc, rep, err)
		}
	}
}

// A dead region that the search closes within its bound (the states cycle
// through timers, none live, none at the bound) gives no walk a place to
// start: the search itself reports it. RandTree's RT3 at 2 nodes: node 1
// lost its recovery timer while joining (the slip: the timer fired and
// was not set again), and its join timer makes it found a tree of its own
// that nothing merges (before: ok, exhausted). The search finds the
// nearest state of the region, 3 steps away.
func TestClosedDeadRegion(t *testing.T) {
	res, err := livecheck.Check(&randtree.System, livecheck.Options{Config: livecheck.Config{Nodes: 2, Bugs: []string{"RT3"}}})
	if err != nil {
		t.Fatal(err)
	}
	cx := res.Critical
	if res.Verdict != livecheck.LivenessViolation || res.Property != "single-tree" || cx == nil || res.Live.Walks != 0 ||
		cx.Case != "C1" || cx.Step != 3 || cx.EventText != "timer recovery at 1" || len(res.Path) != 3 {
		t.Fatalf("%s of %q (%s), critical %+v, path %d steps", res.Verdict, res.Property, res.Message, cx, len(res.Path))
	}
	rep, err := livecheck.Replay(&randtree.System, res.Config, res.Path, 0)
	if err != nil || rep.Live {
		t.Fatalf("replay: live %v, %v", rep != nil && rep.Live, err)
	}
	// The correct RandTree at 2 nodes has no such region.
	ok, err := livecheck.Check(&randtree.System, livecheck.Options{Config: livecheck.Config{Nodes: 2}})
	if err != nil || ok.Verdict != livecheck.OK {
		t.Fatalf("correct: %v %v", ok.Verdict, err)
	}
}

// A liveness property that no reachable state satisfies is a violation
// from the start, not an inconclusive result, where that is certain: here
// node 0 ticks 6 times at most, and with a bound of 2 steps the search
// closes nothing, but the dead test from the start sees every reachable
// state (before: C2, "even the start of the path does not recover",
// inconclusive). Where the space is unbounded (ticking for ever), the
// result stays inconclusive: walks too short could be why.
func TestDeadFromTheStart(t *testing.T) {
	for _, limit := range []int{6, 0} {
		if limit == 0 && testing.Short() {
			continue // its dead tests walk for long: the long tier
		}
		sys := lateWith(func(m *livecheck.Model) {
			if limit > 0 {
				m.Spec.New = func(sim.NodeID) sim.Node { return &cappedLate{Limit: limit} }
			}
			m.Properties = []properties.Property{properties.Eventually("never", "holds nowhere", func(s *sim.State) bool { return false })}
		})
		res, err := livecheck.Check(sys, livecheck.Options{Time: livecheck.NoTimeLimit, Depth: 2, WalkDepth: 100, Escalations: 1})
		if err != nil {
			t.Fatal(err)
		}
		if limit == 0 {
			if res.Verdict != livecheck.Inconclusive || !strings.Contains(res.Message, "even the start of the path does not recover") {
				t.Fatalf("unbounded: %s of %q: %s", res.Verdict, res.Property, res.Message)
			}
			continue
		}
		want := "never can never hold: the state the check starts from is already dead: none of the "
		if res.Verdict != livecheck.LivenessViolation || res.Property != "never" || !strings.HasPrefix(res.Message, want) ||
			!strings.HasSuffix(res.Message, " states reachable from it is live (all searched)") || res.Critical != nil {
			t.Fatalf("%s of %q: %s", res.Verdict, res.Property, res.Message)
		}
	}
}

// cappedLate is late whose node 0 stops ticking after Limit ticks.
type cappedLate struct {
	late
	Limit int
}

func (l *cappedLate) Timer(ctx sim.Context, name string) {
	l.Ticks++
	ctx.Send(1, lateB{})
	if l.Ticks < l.Limit {
		ctx.SetTimer("tick")
	}
}

// A search cut short by a budget covers exactly the levels it finished,
// says so, and walks from the last of them: the same as a check bounded
// at that depth, and it passes to that depth; asked for a deeper one
// (MinDepth), it is inconclusive and names the flag. (The clock is only
// used with a budget already spent, so the cut is certain.)
func TestCutCoverage(t *testing.T) {
	cut, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10, MaxStates: 5})
	if err != nil {
		t.Fatal(err)
	}
	bounded, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "no violation to depth 2, complete to depth 2: every state within 2 steps explored (4 states); walks from all 2 states at depth 2 that are not live reached a live state; not to the depth bound 10: depth 3 would pass the limit of 5 states (--max-states) (--min-depth K fails a check that cannot complete depth K)"
	if cut.Verdict != livecheck.OK || cut.Complete || cut.Cut != "max-states" || cut.Covered != 2 || cut.Message != want {
		t.Fatalf("%s cut %q covered %d: %q\nwant %q", cut.Verdict, cut.Cut, cut.Covered, cut.Message, want)
	}
	short, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10, MaxStates: 5, MinDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	want = "depth 3 would pass the limit of 5 states (--max-states): every state within 2 steps explored (4 states), no violation; depth 3 partly explored; walks from all 2 states at depth 2 that are not live reached a live state; the check must complete depth 3 (--min-depth 3): give it more time (--time) or states (--max-states), or ask for less (--min-depth)"
	if short.Verdict != livecheck.Inconclusive || short.Cut != "max-states" || short.Covered != 2 || short.Message != want {
		t.Fatalf("min depth 3: %s cut %q covered %d: %q\nwant %q", short.Verdict, short.Cut, short.Covered, short.Message, want)
	}
	if bounded.Verdict != livecheck.OK || bounded.Stats.States != cut.Stats.States || bounded.Stats.Periphery != cut.Stats.Periphery ||
		bounded.Live.Walks != cut.Live.Walks || bounded.Live.WalkSteps != cut.Live.WalkSteps {
		t.Fatalf("bounded at depth 2: %s %+v %+v; cut: %+v %+v", bounded.Verdict, bounded.Stats, bounded.Live, cut.Stats, cut.Live)
	}
	spent, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 10, Time: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	want = "the search used its three quarters of the time budget (--time 1ns): every state within 0 steps explored (1 state), no violation; depth 1 partly explored; walks from 0 of the 1 state at depth 0 that are not live reached a live state before the walks' seven eighths of the time budget (--time 1ns) ran out; the others were not walked from; a check must complete at least depth 1 to pass: give it more time (--time) or states (--max-states)"
	if spent.Verdict != livecheck.Inconclusive || spent.Cut != "time" || spent.Covered != 0 || spent.Message != want {
		t.Fatalf("%s cut %q covered %d: %q\nwant %q", spent.Verdict, spent.Cut, spent.Covered, spent.Message, want)
	}
}

// An unknown reduction is an error that names the valid ones.
func TestUnknownReduce(t *testing.T) {
	_, err := livecheck.Check(counterSystem(""), livecheck.Options{Depth: 3, Reduce: "por"})
	if err == nil || err.Error() != `unknown reduction "por" (valid: a comma-separated list of sleep, symmetry and observers, or none)` {
		t.Fatalf("error %v", err)
	}
}
