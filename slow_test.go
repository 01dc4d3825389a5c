package livecheck_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// A handler slower than --handler-timeout is not a finding: it is run
// again with the long allowance, and the check waits for it. A short
// timeout makes many handlers overrun (a collection, a busy core), and
// none of them may be blamed: the check ends as with the default timeout,
// never with a "not deterministic" error. How many handlers overrun
// depends on the machine; that none is blamed must not.
func TestShortHandlerTimeoutsBlameNoHandler(t *testing.T) {
	type sys struct {
		name string
		sys  *livecheck.System
		cfg  livecheck.Config
	}
	systems := []sys{
		{"randtree", &randtree.System, livecheck.Config{Nodes: 4}},
		{"ring", &ring.System, livecheck.Config{}},
		{"transport", &transport.System, livecheck.Config{}},
	}
	// Bounded so that the grid runs in seconds; the sweep at the systems'
	// own depths (a minute or so) runs without -short.
	depth, walkDepth := 4, 100
	if !testing.Short() {
		depth, walkDepth = 0, 500
	}
	for _, s := range systems {
		for seed := int64(1); seed <= 3; seed++ {
			opts := livecheck.Options{Config: s.cfg, Seed: seed, Depth: depth, WalkDepth: walkDepth, Workers: 2}
			opts.HandlerTimeout = time.Minute
			want, err := livecheck.Check(s.sys, opts)
			if err != nil {
				t.Fatalf("%s seed %d: %v", s.name, seed, err)
			}
			for _, timeout := range []time.Duration{10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
				t.Run(fmt.Sprintf("%s/seed=%d/%v", s.name, seed, timeout), func(t *testing.T) {
					opts := opts
					opts.HandlerTimeout = timeout
					res, err := livecheck.Check(s.sys, opts)
					if err != nil {
						t.Fatalf("Check: %v", err) // exit 2: the tool blamed the system or itself
					}
					if res.Verdict != livecheck.OK && res.Verdict != livecheck.Inconclusive {
						t.Fatalf("%s of %q: %s", res.Verdict, res.Property, res.Message)
					}
					// A slow handler is waited for: the check does what it
					// does with a timeout no handler reaches.
					if res.Verdict != want.Verdict || res.Stats.States != want.Stats.States || !sameWalks(res, want) {
						t.Fatalf("%s, %d states, walks %+v; with a timeout of a minute %s, %d states, walks %+v",
							res.Verdict, res.Stats.States, res.Live, want.Verdict, want.Stats.States, want.Live)
					}
				})
			}
		}
	}
}

// passOn is a protocol for the watchdog's tests: node 0 counts to 3 on a
// timer, from 0 or 1 (its first Init chooses), and sends each count to
// node 1, which passes it on to node 2 once or twice (it chooses). Node 2
// keeps the largest count it heard; in mode "stuck" it takes counts only
// in order, so that one that overtakes another is lost, and with it the
// liveness property; in mode "fickle" node 0 counts from passTicks.
// Every handler first passes passGate, when set.
type passOn struct {
	N, Heard int
	mode     string `livecheck:"-"`
}

type passCount struct{ N int }

var passGate *gate

// passTicks counts node 0's ticks across every run, in mode "fickle": a
// handler that reads it is not deterministic.
var passTicks atomic.Int64

func (r *passOn) pass(ctx sim.Context, handler string, input any) {
	if g := passGate; g != nil {
		g.pass(fmt.Sprintf("%d %s %+v %v", ctx.Self(), handler, *r, input))
	}
}

func (r *passOn) Init(ctx sim.Context) {
	r.pass(ctx, "Init", nil)
	if ctx.Self() == 0 {
		r.N = ctx.Choose(2)
		ctx.SetTimer("tick")
	}
}

func (r *passOn) Timer(ctx sim.Context, name string) {
	r.pass(ctx, "Timer", name)
	r.N++
	if r.mode == "fickle" {
		r.N = int(passTicks.Add(1)) // counts every run's ticks
	}
	if r.N < 3 {
		ctx.SetTimer("tick")
	}
	ctx.Send(1, passCount{r.N})
}

func (r *passOn) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	r.pass(ctx, "Receive", msg)
	m := msg.(passCount)
	if ctx.Self() == 1 {
		for range 1 + ctx.Choose(2) {
			ctx.Send(2, m)
		}
		return
	}
	if r.mode == "stuck" && m.N > r.Heard+1 {
		return
	}
	r.Heard = max(r.Heard, m.N)
}

func (r *passOn) App(ctx sim.Context, call sim.AppCall)  {}
func (r *passOn) Error(ctx sim.Context, peer sim.NodeID) {}

func passOnSystem(mode string) *livecheck.System {
	return &livecheck.System{
		Name: "pass-on", Doc: "a test system", DefaultNodes: 3, MinNodes: 3, MaxNodes: 3,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &passOn{mode: mode} }},
				Properties: []properties.Property{
					properties.Always("heard-sent", "node 2 never hears more than node 0 sent", func(s *sim.State) error {
						if h, n := properties.Node[*passOn](s, 2).Heard, properties.Node[*passOn](s, 0).N; h > n {
							return fmt.Errorf("heard %d, sent %d", h, n)
						}
						return nil
					}),
					properties.Eventually("heard-all", "node 2 hears 3", func(s *sim.State) bool {
						return properties.Node[*passOn](s, 2).Heard == 3
					}),
				},
			}, nil
		},
	}
}

// A gate holds handler calls made on the check's own worlds (the search's,
// the walk workers', the main world's) until the same call (by its key:
// the node, the handler, the node's state and the input) is made on
// another: in the check, only the watchdog's run of the stuck step on its
// own does that, once the held call has run past the timeout. Every such
// call is thus slow, by no clock, in every phase of the check (the search,
// making periphery states again, walks, the critical-transition search,
// local mode): the watchdog must say where each one is well enough to run
// it again. Calls on other worlds (the watchdog's runs, the replays of
// what the check reports) pass, and let the held ones with their key go.
type gate struct {
	mu      sync.Mutex
	seq     int                        // calls so far
	again   map[string]int             // the last call of each key on another world, by seq
	ended   map[string]int             // the seq at which each goroutine's last call ended
	waiting map[string][]chan struct{} // the calls held, by key
	every   int                        // one call in every is held, on the check's worlds
	calls   int                        // on the check's worlds
	held    int
	done    chan struct{} // lets every held call go, when the test ends
}

func newGate(t *testing.T, every int) *gate {
	g := &gate{again: map[string]int{}, ended: map[string]int{}, waiting: map[string][]chan struct{}{}, every: every, done: make(chan struct{})}
	passGate = g
	t.Cleanup(func() {
		passGate = nil
		close(g.done)
	})
	return g
}

// goroutine says which goroutine calls it, and whether it runs one of the
// check's own worlds: the check's main goroutine, a walk worker, a search
// worker.
func goroutine() (id string, check bool) {
	buf := make([]byte, 1<<16)
	st := string(buf[:runtime.Stack(buf, false)])
	id, _, _ = strings.Cut(st, " [")
	return id, strings.Contains(st, "check.(*checker).run(") || strings.Contains(st, "check.(*checker).walkPeriphery.func") ||
		strings.Contains(st, "search.(*worker).")
}

func (g *gate) pass(key string) {
	id, check := goroutine()
	g.mu.Lock()
	g.seq++
	if !check {
		g.again[key] = g.seq
		for _, ch := range g.waiting[key] {
			close(ch)
		}
		delete(g.waiting, key)
		g.mu.Unlock()
		return
	}
	defer func() {
		g.mu.Lock()
		g.seq++
		g.ended[id] = g.seq
		g.mu.Unlock()
	}()
	g.calls++
	if g.again[key] > g.ended[id] || g.calls%g.every != 0 {
		// Not held; or made again since this goroutine's last call: the
		// watchdog ran this one again before it got here (it was slow
		// already).
		g.mu.Unlock()
		return
	}
	again := make(chan struct{})
	g.waiting[key] = append(g.waiting[key], again)
	g.held++
	g.mu.Unlock()
	select {
	case <-again:
	case <-g.done:
	}
}

// count says how many calls the gate held, and how many of them wait
// still, never made again.
func (g *gate) count() (held, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.waiting {
		waiting += len(w)
	}
	return g.held, waiting
}

// A handler call that is slow (held by the gate until the watchdog runs
// its step again) is waited for, wherever the check runs it: the check
// finds what it finds when no call is slow.
func TestSlowHandlersAreWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  string
		opts  livecheck.Options
		every int // one call in every held
	}{
		// The search, on two workers' worlds.
		{"search", "", livecheck.Options{Depth: 10}, 3},
		// Walks from the periphery, on the walk workers' worlds: each
		// makes its periphery state again, then walks.
		{"walks", "", livecheck.Options{Depth: 3, WalkDepth: 40}, 3},
		// A state where nothing can happen: the critical-transition
		// search, its probes and dead test, on the main world.
		{"quiescent", "stuck", livecheck.Options{Depth: 12, WalkDepth: 40}, 3},
		// Walks that never recover: the same, from the periphery.
		{"dead-walks", "stuck", livecheck.Options{Depth: 3, WalkDepth: 30, Escalations: 1}, 8},
		{"local", "", livecheck.Options{Mode: "local"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Workers = 2
			opts.HandlerTimeout = time.Minute
			want, err := livecheck.Check(passOnSystem(tc.mode), opts)
			if err != nil {
				t.Fatal(err)
			}
			g := newGate(t, tc.every)
			// A millisecond is far less than the check waits in a held
			// call (until the watchdog runs it again); 10 s to confirm
			// is far more than the run again takes, on a busy machine
			// too (a held call that the watchdog cannot run again fails
			// the check after 10 s).
			opts.HandlerTimeout, opts.ConfirmTimeout = time.Millisecond, 10*time.Second
			res, err := livecheck.Check(passOnSystem(tc.mode), opts)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if res.Verdict != want.Verdict || res.Property != want.Property || res.Stats.States != want.Stats.States ||
				!pathsEqual(res.Path, want.Path) {
				t.Fatalf("with slow handlers: %s of %q after %d steps, %d states; without: %s of %q after %d steps, %d states",
					res.Verdict, res.Property, len(res.Path), res.Stats.States, want.Verdict, want.Property, len(want.Path), want.Stats.States)
			}
			held, waiting := g.count()
			if held == 0 || waiting != 0 {
				t.Fatalf("%d calls held, %d of them never made again", held, waiting)
			}
			t.Logf("%s: %d slow calls, each run again", res.Verdict, held)
		})
	}
}

func pathsEqual(a, b sim.Path) bool {
	return slices.EqualFunc(a, b, func(x, y sim.Step) bool { return x.Event == y.Event && slices.Equal(x.Choices, y.Choices) })
}

// A short timeout does not hide a handler that is not deterministic, nor
// one that never returns.
func TestShortTimeoutsStillFind(t *testing.T) {
	for _, timeout := range []time.Duration{10 * time.Microsecond, time.Millisecond} {
		t.Run(fmt.Sprintf("nondeterministic/%v", timeout), func(t *testing.T) {
			res, err := livecheck.Check(passOnSystem("fickle"), livecheck.Options{Depth: 12, HandlerTimeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != livecheck.SafetyViolation || res.Property != search.DeterministicProperty || !strings.Contains(res.Message, "node 0's Timer") {
				t.Fatalf("%s of %q: %s; want node 0's Timer named as not deterministic", res.Verdict, res.Property, res.Message)
			}
		})
		t.Run(fmt.Sprintf("hang/%v", timeout), func(t *testing.T) {
			release.Store(false)
			defer release.Store(true)
			res, err := livecheck.Check(counterSystem("loop"), livecheck.Options{Depth: 10, HandlerTimeout: timeout, ConfirmTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != livecheck.LivenessViolation || res.Property != livecheck.DivergenceProperty || len(res.Path) == 0 {
				t.Fatalf("%s of %q after %d steps: want a divergence with its path", res.Verdict, res.Property, len(res.Path))
			}
			if last := res.Path[len(res.Path)-1].Event; last.Kind != sim.Deliver || last.Node != 1 {
				t.Fatalf("last step %v, want the delivery to node 1", last)
			}
		})
	}
}

// sameWalks says whether two checks walked alike, whatever their times.
func sameWalks(a, b *livecheck.Result) bool {
	x, y := a.Live, b.Live
	x.Elapsed, x.Critical, y.Elapsed, y.Critical = 0, 0, 0, 0
	return x == y
}
