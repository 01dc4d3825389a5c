package walk_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// pinger sends a ping to the other node on every timer tick; each ping is
// counted on arrival.
type pinger struct{ Sent, Got int }

func (p *pinger) Init(ctx sim.Context) { ctx.SetTimer("tick") }
func (p *pinger) Timer(ctx sim.Context, name string) {
	p.Sent++
	ctx.Send(1-ctx.Self(), p.Sent)
	ctx.SetTimer("tick")
}
func (p *pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	p.Got++
	if ctx.Choose(2) == 1 {
		p.Got += 10
	}
}
func (p *pinger) App(ctx sim.Context, call sim.AppCall)  {}
func (p *pinger) Error(ctx sim.Context, peer sim.NodeID) {}

func world(t *testing.T) (*sim.World, *sim.State) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &pinger{} }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	return w, s
}

func never(*sim.State) bool { return false }

func TestWalkIsDeterministicAndReplays(t *testing.T) {
	w, s := world(t)
	wt := walk.DefaultWeights
	a, err := walk.New(w, never, &wt, 7).Walk(s, 500, true, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := walk.New(w, never, &wt, 7).Walk(s, 500, true, true)
	c, _ := walk.New(w, never, &wt, 8).Walk(s, 500, true, true)
	if a.Steps != 500 || len(a.Path) != 500 || a.LiveAt != -1 {
		t.Fatalf("steps %d path %d live at %d", a.Steps, len(a.Path), a.LiveAt)
	}
	if a.End.Fingerprint() != b.End.Fingerprint() {
		t.Fatal("the same seed gave two different walks")
	}
	if a.End.Fingerprint() == c.End.Fingerprint() {
		t.Fatal("seeds 7 and 8 gave the same walk")
	}
	choices := 0
	for _, st := range a.Path {
		choices += len(st.Choices)
	}
	if choices == 0 {
		t.Fatal("the walk recorded no Choose values")
	}
	// The recorded path replays exactly, choices included.
	w.Strict = true
	end, err := w.Run(s, a.Path, nil)
	if err != nil || end.Fingerprint() != a.End.Fingerprint() {
		t.Fatalf("replay: %v", err)
	}
}

func TestWalkStopsAtLive(t *testing.T) {
	w, s := world(t)
	wt := walk.DefaultWeights
	live := func(s *sim.State) bool { return s.Node(1).(*pinger).Got >= 3 }
	r, err := walk.New(w, live, &wt, 1).Walk(s, 10000, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.LiveAt < 0 || r.LiveAt != r.Steps || !live(r.End) || r.Path != nil {
		t.Fatalf("live at %d after %d steps, path %d", r.LiveAt, r.Steps, len(r.Path))
	}
}

// A walk that does not stop at a live state goes on for what AfterLive
// allows after it first recovers, never past dmax; unset, on to dmax. A
// state live from the start counts as recovered after 0 steps.
func TestWalkAfterLive(t *testing.T) {
	w, s := world(t)
	wt := walk.DefaultWeights
	live := func(s *sim.State) bool { return s.Node(1).(*pinger).Got >= 3 }
	wk := walk.New(w, live, &wt, 1)
	first, err := wk.Walk(s, 10000, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		after      func(int) int
		dmax, want int
	}{
		{nil, 400, 400},
		{func(l int) int { return 2 * l }, 10000, 3 * first.LiveAt},
		{func(l int) int { return 2 * l }, 3*first.LiveAt - 1, 3*first.LiveAt - 1},
		{func(int) int { return 0 }, 10000, first.LiveAt},
		{func(int) int { return -7 }, 10000, first.LiveAt},
	} {
		wk.Reseed(1)
		wk.AfterLive = c.after
		r, err := wk.Walk(s, c.dmax, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if r.LiveAt != first.LiveAt || r.Steps != c.want {
			t.Errorf("dmax %d: live at %d (%d stopping there), %d steps; want %d", c.dmax, r.LiveAt, first.LiveAt, r.Steps, c.want)
		}
	}
	wk.AfterLive = func(l int) int { return 10 + l }
	r, err := wk.Walk(first.End, 10000, false, false)
	if err != nil || r.LiveAt != 0 || r.Steps != 10 {
		t.Fatalf("from a live state: live at %d, %d steps (%v); want 0 and 10", r.LiveAt, r.Steps, err)
	}
}

func TestWeights(t *testing.T) {
	evs := []sim.Event{{Kind: sim.Deliver}, {Kind: sim.Timer}, {Kind: sim.Reset}}
	w := walk.Weights{}
	w[sim.Deliver], w[sim.Timer] = 3, 1
	r := rand.New(rand.NewPCG(1, 2))
	var n [3]int
	for range 40000 {
		n[w.Choose(evs, r)]++
	}
	if n[2] != 0 {
		t.Fatalf("a kind of weight 0 was chosen %d times", n[2])
	}
	if ratio := float64(n[0]) / float64(n[1]); ratio < 2.8 || ratio > 3.2 {
		t.Fatalf("deliver:timer = %.2f, want about 3", ratio)
	}
	// All weights zero: uniform.
	z := walk.Weights{}
	n = [3]int{}
	for range 30000 {
		n[z.Choose(evs, r)]++
	}
	for i, c := range n {
		if c < 9000 || c > 11000 {
			t.Fatalf("event %d chosen %d of 30000 times with all weights 0", i, c)
		}
	}
}

func TestParseWeights(t *testing.T) {
	w, err := walk.ParseWeights("app=8, deliver=4,timer=1,reset=0", walk.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	if w[sim.App] != 8 || w[sim.Deliver] != 4 || w[sim.Timer] != 1 || w[sim.Reset] != 0 || w[sim.Drop] != walk.DefaultWeights[sim.Drop] {
		t.Fatalf("parsed %v", w)
	}
	if got := w.String(); got != "deliver=4,timer=1,app=8,drop=0.1,socket-error=0.1,reset=0,duplicate=0.1,partition=0.1,heal=1" {
		t.Fatalf("String() = %q", got)
	}
	for in, want := range map[string]string{
		"app":         "is not KIND=NUMBER",
		"fly=1":       `unknown event kind "fly"`,
		"timer=-1":    "must be a number from 0 to 1e9",
		"timer=x":     "must be a number from 0 to 1e9",
		"deliver=NaN": "must be a number from 0 to 1e9",
		// Issue 25, item 12: a kind twice, and weights that choose nothing.
		"deliver=1, timer=2,deliver=1": "the weight of deliver is given twice: deliver=1 and deliver=1",
		"app=0,deliver=0,timer=0,drop=0,duplicate=0,socket-error=0,reset=0,partition=0,heal=0,crash=0": "every weight is 0: give some kind a positive weight",
	} {
		if _, err := walk.ParseWeights(in, walk.DefaultWeights); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// BenchmarkWalkPinger is walk throughput on a tiny system, as a baseline.
func BenchmarkWalkPinger(b *testing.B) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &pinger{} }})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := w.Initial()
	wt := walk.DefaultWeights
	wk := walk.New(w, never, &wt, 1)
	b.ReportAllocs()
	var steps int
	for b.Loop() {
		r, _ := wk.Walk(s, 1000, true, false)
		steps += r.Steps
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}

// The weight of a crash is written only when it is not the default: a
// string of weights reads as before, and round-trips either way.
func TestWeightsCrash(t *testing.T) {
	w := walk.DefaultWeights
	if strings.Contains(w.String(), "crash") {
		t.Errorf("default weights write the crash's: %s", w.String())
	}
	w[sim.Crash] = 3
	back, err := walk.ParseWeights(w.String(), walk.DefaultWeights)
	if err != nil || back != w || !strings.Contains(w.String(), "crash=3") {
		t.Errorf("%s read back as %v, %v", w.String(), back, err)
	}
	if d, err := walk.ParseWeights(walk.DefaultWeights.String(), walk.Weights{}); err != nil || d[sim.Crash] != 0 {
		t.Errorf("the defaults on nothing: %v, %v", d, err)
	}
}
