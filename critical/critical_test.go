package critical_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// climber climbs to 10 on its "up" timer; its "trip" timer, once fired,
// makes every later "up" fall back to 0, so the climb can never finish.
type climber struct {
	N       int
	Tripped bool
	noTrip  bool `livecheck:"-"`
}

func (c *climber) Init(ctx sim.Context) {
	ctx.SetTimer("up")
	if !c.noTrip {
		ctx.SetTimer("trip")
	}
}

// onClimb, when set, is called by every Timer call.
var onClimb func()

func (c *climber) Timer(ctx sim.Context, name string) {
	if onClimb != nil {
		onClimb()
	}
	switch {
	case name == "trip":
		c.Tripped = true
	case c.Tripped:
		c.N = 0
		ctx.SetTimer("up")
	default:
		c.N++
		ctx.SetTimer("up")
	}
}
func (c *climber) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {}
func (c *climber) App(ctx sim.Context, call sim.AppCall)                     {}
func (c *climber) Error(ctx sim.Context, peer sim.NodeID)                    {}

// upFirst is a chooser that takes "up" 19 times in 20 when it can, so a
// walk climbs to 10 before tripping more often than not.
type upFirst struct{}

func (upFirst) Choose(evs []sim.Event, r *rand.Rand) int {
	for i, e := range evs {
		if e.Timer == "up" && r.IntN(20) != 0 {
			return i
		}
	}
	return r.IntN(len(evs))
}

func live(s *sim.State) bool { return s.Node(0).(*climber).N >= 10 }

func setup(t *testing.T, tripAt, length int) (*sim.World, *sim.State, sim.Path) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &climber{noTrip: tripAt == 0} }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	var p sim.Path
	for i := 1; i <= length; i++ {
		name := "up"
		if i == tripAt {
			name = "trip"
		}
		p = append(p, sim.Step{Event: sim.Event{Kind: sim.Timer, Node: 0, Timer: name}})
	}
	return w, s, p
}

func TestCriticalStepIsTheTrip(t *testing.T) {
	for _, tc := range []struct {
		tripAt, step int
		timer        string
	}{
		{1, 1, "trip"}, {2, 2, "trip"}, {5, 5, "trip"}, {9, 9, "trip"},
		// Tripped after reaching 10: still live until the next "up" falls
		// back to 0, which is then the critical step.
		{37, 38, "up"},
	} {
		tripAt := tc.tripAt
		w, s, p := setup(t, tripAt, 60)
		r, err := critical.Search(w, s, p, live, critical.Options{Walks: 4, Dmax: 1000, Seed: 3, Chooser: upFirst{}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Case != critical.C1 || r.Step != tc.step || r.Event.Timer != tc.timer || r.LiveStep != tc.step-1 {
			t.Fatalf("trip at %d: case %s step %d event %v live step %d (%s)", tripAt, r.Case, r.Step, r.Event, r.LiveStep, r.Why)
		}
		// The nearest live path shares the dead path up to the live step
		// and ends live.
		for i := 0; i < r.LiveStep; i++ {
			if r.LivePath[i].Event != p[i].Event {
				t.Fatalf("live path departs at step %d", i+1)
			}
		}
		w.Strict = true
		end, err := w.Run(s, r.LivePath, nil)
		w.Strict = false
		if err != nil || !live(end) {
			t.Fatalf("live path: %v, live %v", err, end != nil && live(end))
		}
	}
}

func TestTooShortIsC2(t *testing.T) {
	// Tripped at step 30 of a path whose walk budget is 40: probes past
	// step 20 would get under half the walk, so the search cannot tell.
	w, s, p := setup(t, 30, 40)
	r, err := critical.Search(w, s, p, live, critical.Options{Walks: 4, Dmax: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Case != critical.C2 || r.Why == "" {
		t.Fatalf("case %s step %d: want C2", r.Case, r.Step)
	}
	// A path that is not dead at all (no trip timer): every probe
	// recovers, C2 again.
	w, s, p = setup(t, 0, 5)
	r, err = critical.Search(w, s, p, live, critical.Options{Walks: 4, Dmax: 1000, Seed: 3})
	if err != nil || r.Case != critical.C2 || r.Why != "walks from the end of the path still recover: it was not dead, only slow" {
		t.Fatalf("live path: %v %s %q", err, r.Case, r.Why)
	}
}

// combo opens when its ten keys are turned in order, k0 to k9 (a wrong
// key starts over); once its "trip" timer fires, every key starts over.
// A walk almost never turns ten keys in a row (1 in 11^10), a
// breadth-first search finds the way in ten steps: only the search tells
// a state before the trip from one after.
type combo struct {
	Next    int
	Tripped bool
}

var keys = []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}

func (c *combo) Init(ctx sim.Context) {
	for _, k := range keys {
		ctx.SetTimer(k)
	}
	ctx.SetTimer("trip")
}
func (c *combo) Timer(ctx sim.Context, name string) {
	if name == "trip" {
		c.Tripped = true
		return
	}
	if !c.Tripped && c.Next < len(keys) && name == keys[c.Next] {
		c.Next++
	} else {
		c.Next = 0
	}
	ctx.SetTimer(name)
}
func (c *combo) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {}
func (c *combo) App(ctx sim.Context, call sim.AppCall)                     {}
func (c *combo) Error(ctx sim.Context, peer sim.NodeID)                    {}

func open(s *sim.State) bool { return s.Node(0).(*combo).Next == len(keys) }

// comboPath: keys k0 k1 k2, then the trip, then 16 wrong keys.
func comboPath(t *testing.T) (*sim.World, *sim.State, sim.Path) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &combo{} }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	var p sim.Path
	for _, name := range []string{"k0", "k1", "k2", "trip"} {
		p = append(p, sim.Step{Event: sim.Event{Kind: sim.Timer, Node: 0, Timer: name}})
	}
	for range 16 {
		p = append(p, sim.Step{Event: sim.Event{Kind: sim.Timer, Node: 0, Timer: "k5"}})
	}
	return w, s, p
}

func TestRecoversEvidence(t *testing.T) {
	w, s, p := comboPath(t)
	before, err := w.Run(s, p[:3], nil)
	if err != nil {
		t.Fatal(err)
	}
	// Walks alone: none of 300 opens it.
	ev, err := critical.Recovers(w, before, open, critical.Test{Walks: 300, WalkDepth: 200, Seed: 1})
	if err != nil || ev.Live || ev.Walks != 300 || ev.SearchStates != 0 {
		t.Fatalf("walks: %+v %v", ev, err)
	}
	// The search finds the 7 keys left; every state within 6 steps was
	// searched before.
	ev, err = critical.Recovers(w, before, open, critical.Test{States: 1000, Walks: 300, WalkDepth: 200, Seed: 1})
	if err != nil || !ev.Live || ev.ByWalk || len(ev.Path) != 7 || ev.SearchDepth != 6 || ev.Walks != 0 {
		t.Fatalf("search: %+v %v", ev, err)
	}
	if end, err := w.Run(before, ev.Path, nil); err != nil || !open(end) {
		t.Fatalf("the search's path does not open it: %v", err)
	}
	// After the trip the search sees every reachable state (the one it
	// starts in, and the one a key leads to): dead for
	// certain, no walk needed.
	after, err := w.Run(before, p[3:4], nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, err = critical.Recovers(w, after, open, critical.Test{States: 1000, Walks: 300, WalkDepth: 200, Seed: 1})
	if err != nil || ev.Live || !ev.SearchAll || ev.SearchStates != 2 || ev.Walks != 0 {
		t.Fatalf("after the trip: %+v %v", ev, err)
	}
}

func TestDeadTestOverturnsProbes(t *testing.T) {
	// Probes that search only one state call every step dead; the dead
	// test's search shows the steps before the trip recover, and the
	// search goes on past them to the trip.
	w, s, p := comboPath(t)
	r, err := critical.Search(w, s, p, open, critical.Options{Walks: 4, States: 1, Dmax: 400, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Case != critical.C1 || r.Step != 4 || r.Event.Timer != "trip" || r.LiveStep != 3 || r.Overturned == 0 {
		t.Fatalf("case %s step %d event %v live step %d, %d overturned (%s)", r.Case, r.Step, r.Event, r.LiveStep, r.Overturned, r.Why)
	}
	if r.Dead == nil || r.Dead.Live || !r.Dead.SearchAll || r.End == nil || r.End.Live || r.Alive == nil || !r.Alive.Live || len(r.Alive.Path) != 7 {
		t.Fatalf("evidence: dead %+v end %+v alive %+v", r.Dead, r.End, r.Alive)
	}
	w.Strict = true
	end, err := w.Run(s, r.LivePath, nil)
	if err != nil || !open(end) {
		t.Fatalf("live path: %v", err)
	}
}

func TestRecoversPropertyPanic(t *testing.T) {
	// A liveness property that panics where the lock is half open: the
	// search reports it as a Finding with the path there, not a crash.
	w, s, p := comboPath(t)
	before, err := w.Run(s, p[:3], nil)
	if err != nil {
		t.Fatal(err)
	}
	prop := properties.Eventually("open", "the lock opens", func(s *sim.State) bool {
		if s.Node(0).(*combo).Next == 5 {
			panic("half open")
		}
		return open(s)
	})
	_, err = critical.Recovers(w, before, prop.IsLive, critical.Test{States: 1000, Walks: 10, WalkDepth: 100, Seed: 1})
	var f *critical.Finding
	if !errors.As(err, &f) || f.PropertyError == nil || f.PropertyError.Property != "open" || len(f.Path) != 2 ||
		f.Path[0].Event.Timer != "k3" || f.Path[1].Event.Timer != "k4" {
		t.Fatalf("got %v (%+v)", err, f)
	}
}

// The trail says where the search is, for a watchdog to run a stuck step
// again: the initial state the caller named, and a path from the start to
// the state the step is applied to.
func TestTrailIsWhereTheSearchIs(t *testing.T) {
	w, s, p := setup(t, 5, 60)
	w2, _, _ := setup(t, 5, 0)
	trail := &walk.Trail{Init: []int{7}} // the caller's: the search keeps it
	steps, applied := 0, 0
	var failed error
	onClimb = func() {
		steps++
		ev, _, from := w.Current()
		switch {
		case failed != nil:
		case !slices.Equal(trail.Init, []int{7}):
			failed = fmt.Errorf("the trail's Init is %v", trail.Init)
		case trail.Event != ev:
			failed = fmt.Errorf("the trail names %v, the world runs %v", trail.Event, ev)
		case from != nil && len(trail.Path) == trail.Steps:
			// Apply (not a walk's Step, which changes its state in
			// place): the trail leads to the state it is given.
			applied++
			saved := onClimb
			onClimb = nil
			end, err := w2.Run(s, append(trail.Base.Clone(), trail.Path...), nil)
			onClimb = saved
			if err != nil || end.Fingerprint() != from.Fingerprint() {
				failed = fmt.Errorf("the trail's path (%d+%d steps) does not lead to the state %v is applied to (%v)", len(trail.Base), len(trail.Path), ev, err)
			}
		}
	}
	defer func() { onClimb = nil }()
	r, err := critical.Search(w, s, p, live, critical.Options{Walks: 4, Dmax: 1000, Seed: 3, Chooser: upFirst{}, Trail: trail})
	if err != nil {
		t.Fatal(err)
	}
	if failed != nil {
		t.Fatalf("after %d steps: %v", steps, failed)
	}
	if r.Case != critical.C1 || applied == 0 {
		t.Fatalf("case %s, %d of %d steps applied", r.Case, applied, steps)
	}
}

// A pool of worlds runs a test's walks at once and gives the evidence one
// world gives taking them in order: the same walks counted, steps, and
// the path of the first walk that recovers.
func TestRecoversPoolSameEvidence(t *testing.T) {
	w, s, p := comboPath(t)
	before, err := w.Run(s, p[:1], nil) // k0 turned
	if err != nil {
		t.Fatal(err)
	}
	three := func(s *sim.State) bool { return s.Node(0).(*combo).Next >= 3 }
	pool := func(n int) *critical.Pool {
		cp := &critical.Pool{}
		for range n {
			x, err := sim.NewWorld(sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &combo{} }})
			if err != nil {
				t.Fatal(err)
			}
			cp.Worlds = append(cp.Worlds, x)
		}
		return cp
	}
	decidedLate, none := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		test := critical.Test{Walks: 12, WalkDepth: 6, Seed: seed}
		want, err := critical.Recovers(w, before, three, test)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want.Live && want.Walks > 1:
			decidedLate++
		case !want.Live:
			none++
		}
		for _, n := range []int{1, 3} {
			test.Pool = pool(n)
			got, err := critical.Recovers(w, before, three, test)
			if err != nil {
				t.Fatal(err)
			}
			if got.Live != want.Live || got.Walks != want.Walks || got.Steps != want.Steps || !reflect.DeepEqual(got.Path, want.Path) {
				t.Fatalf("seed %d, a pool of %d: live %v after %d walks, %d steps, path %v; one world: %v, %d, %d, %v",
					seed, n, got.Live, got.Walks, got.Steps, got.Path, want.Live, want.Walks, want.Steps, want.Path)
			}
		}
	}
	if decidedLate == 0 || none == 0 {
		t.Fatalf("of 40 seeds, %d recovered after the first walk and %d never: the test shows too little", decidedLate, none)
	}
}
