package search_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// picker chooses its value in its first Init and sends it to the next
// node, which keeps the last value it got.
type picker struct {
	sim.BaseNode
	V, Got int
}

func (p *picker) Init(ctx sim.Context) {
	p.V, p.Got = ctx.Choose(3), -1
	ctx.Send((ctx.Self()+1)%sim.NodeID(ctx.Nodes()), p.V)
}

func (p *picker) Receive(_ sim.Context, _ sim.NodeID, msg sim.Message) { p.Got = msg.(int) }

// allTwos fails where every node chose 2 and one has got a value: only
// the initial state [2 2 ... 2] leads there.
var allTwos = properties.Always("all-twos", "not every node chose 2 with a value delivered", func(s *sim.State) error {
	got := false
	for _, p := range properties.Nodes[*picker](s) {
		if p.V != 2 {
			return nil
		}
		got = got || p.Got >= 0
	}
	if got {
		return errors.New("every node chose 2 and one got a value")
	}
	return nil
})

func pickerWorld(t *testing.T, n int) *sim.World {
	t.Helper()
	w, err := sim.NewWorld(sim.Spec{Nodes: n, New: func(sim.NodeID) sim.Node { return &picker{} }})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// bruteCount counts the states reachable from every initial state by a
// plain breadth-first search on fingerprints, every choice enumerated.
func bruteCount(t *testing.T, w *sim.World) int {
	t.Helper()
	starts, err := w.Starts()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	var queue []*sim.State
	for _, st := range starts {
		if !seen[st.State.Fingerprint()] {
			seen[st.State.Fingerprint()] = true
			queue = append(queue, st.State)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, ev := range w.Enabled(s, nil) {
			var tape []int
			for {
				next, err := w.Apply(s, ev, tape)
				if err != nil {
					t.Fatal(err)
				}
				if !seen[next.Fingerprint()] {
					seen[next.Fingerprint()] = true
					queue = append(queue, next)
				}
				info := w.Last()
				var more bool
				if tape, more = sim.NextTape(info.Choices, info.Bounds, nil); !more {
					break
				}
			}
		}
	}
	return len(seen)
}

// A system whose nodes choose in their first Init has one initial state
// per combination: the search explores all of them, counts what a brute
// force counts, finds the same with 1 and 2 workers, and reports a
// violation with the choices of the initial state its path starts from.
func TestSearchInitChoices(t *testing.T) {
	// 4 nodes, 3 values each: 81 initial states, each with its 4
	// deliveries in any order, 16 states: 1296, levels over a chunk.
	w := pickerWorld(t, 4)
	brute := bruteCount(t, w)
	if brute != 81*16 {
		t.Fatalf("the brute force counts %d states, want %d", brute, 81*16)
	}
	var results []*search.Result
	for workers := 1; workers <= 2; workers++ {
		opts := search.Options{Depth: 10}
		for range workers - 1 {
			opts.Workers = append(opts.Workers, search.Worker{World: pickerWorld(t, 4)})
		}
		res, err := search.Global(pickerWorld(t, 4), opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.States != int64(brute) || !res.Exhausted || res.Coverage.Init != 81*4 {
			t.Fatalf("%d workers: %d states (exhausted %v, %d Init calls); want %d, exhausted, %d", workers, res.Stats.States, res.Exhausted,
				res.Coverage.Init, brute, 81*4)
		}
		res.Stats.Elapsed, res.Stats.Workers, res.Stats.CollisionChance, res.Stats.Remade = 0, 0, 0, 0
		results = append(results, res)
	}
	if !reflect.DeepEqual(results[0].Stats, results[1].Stats) {
		t.Errorf("1 worker: %+v\n2 workers: %+v", results[0].Stats, results[1].Stats)
	}

	for workers := 1; workers <= 2; workers++ {
		opts := search.Options{Depth: 10, Properties: []properties.Property{allTwos}}
		for range workers - 1 {
			opts.Workers = append(opts.Workers, search.Worker{World: pickerWorld(t, 4)})
		}
		w := pickerWorld(t, 4)
		res, err := search.Global(w, opts)
		if err != nil {
			t.Fatal(err)
		}
		v := res.Violation
		if v == nil || v.Property != "all-twos" || !slices.Equal(v.Init, []int{2, 2, 2, 2}) || len(v.Path) != 1 {
			t.Fatalf("%d workers: violation %+v; want all-twos from [2 2 2 2] in 1 step", workers, v)
		}
		// The path replays, strictly, from the initial state it names.
		w.Strict = true
		s, err := w.InitialFrom(v.Init)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = w.Run(s, v.Path, nil); err != nil || allTwos.CheckSafety(s) == nil {
			t.Fatalf("the violation's path replays to %v, %v; want the violation", s, err)
		}
	}

	// The periphery's paths start from their own initial states.
	res, err := search.Global(w, search.Options{Depth: 2, Properties: []properties.Property{
		properties.Eventually("never", "no state is live", func(*sim.State) bool { return false })}})
	if err != nil {
		t.Fatal(err)
	}
	inits := map[string]bool{}
	for i := range res.Periphery.Len() {
		f, err := res.Periphery.At(w, i, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := w.InitialFrom(f.Init)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = w.Run(s, f.Path, nil); err != nil || s.Fingerprint() != f.State.Fingerprint() {
			t.Fatalf("periphery state %d does not replay from %v: %v", i, f.Init, err)
		}
		inits[fmt.Sprint(f.Init)] = true
	}
	if res.Periphery.Len() != 81*6 || len(inits) != 81 {
		t.Errorf("the periphery at depth 2 holds %d states from %d initial states; want %d from 81", res.Periphery.Len(), len(inits), 81*6)
	}
}
