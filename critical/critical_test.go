package critical_test

import (
	"math/rand/v2"
	"testing"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/sim"
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
func (c *climber) Timer(ctx sim.Context, name string) {
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
