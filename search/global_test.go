package search_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/lcr"
	"github.com/livecheck/livecheck/systems/paxos"
	"github.com/livecheck/livecheck/systems/randtree"
	"github.com/livecheck/livecheck/systems/ring"
)

// run searches paxos (3 nodes, 2 proposers, the given bugs) to depth with
// the given number of workers, and returns the result with what the
// periphery holds, made again: one path per state.
func run(t *testing.T, workers, depth, maxStates int, bugs ...string) (*search.Result, []string) {
	t.Helper()
	cfg := livecheck.Config{Nodes: 3, Bugs: bugs, Params: map[string]string{"proposers": "2"}}
	r := search1(t, &paxos.System, cfg, search.Options{Depth: depth, MaxStates: maxStates}, workers)
	r.res.Stats = r.stats
	return r.res, r.pairs
}

// The search's levels are cut into chunks that the workers take in any
// order; what it finds must not depend on how many there are. Paxos at 3
// nodes and 2 proposers has levels of thousands of states: many chunks.
func TestWorkersSameResult(t *testing.T) {
	for _, tc := range []struct {
		name             string
		depth, maxStates int
		bugs             []string
		states           int64
		covered          int
	}{
		{"complete", 10, 0, nil, 7975, 10},
		{"max-states", 10, 5000, nil, 3223, 9},
		{"violation", 12, 0, []string{"quorum=1"}, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, p1 := run(t, 1, tc.depth, tc.maxStates, tc.bugs...)
			three, p3 := run(t, 3, tc.depth, tc.maxStates, tc.bugs...)
			if !reflect.DeepEqual(one.Stats, three.Stats) || one.Depth != three.Depth || one.Complete != three.Complete {
				t.Fatalf("1 worker: %+v\n3 workers: %+v", one.Stats, three.Stats)
			}
			if !reflect.DeepEqual(p1, p3) {
				t.Fatalf("the periphery differs: %d states with 1 worker, %d with 3", len(p1), len(p3))
			}
			if tc.states >= 0 && (one.Stats.States != tc.states || one.Depth != tc.covered) {
				t.Fatalf("%d states, depth %d covered; want %d, %d", one.Stats.States, one.Depth, tc.states, tc.covered)
			}
			if tc.bugs != nil {
				v1, v3 := one.Violation, three.Violation
				if v1 == nil || v3 == nil || v1.Property != "agreement" || v1.Path.Hash() != v3.Path.Hash() || v1.Message != v3.Message {
					t.Fatalf("violations differ or missing: %+v / %+v", v1, v3)
				}
			}
		})
	}
}

// Sleep sets prune transitions, never states: with and without reduction
// the search finds the same states at the same depths (the periphery, as
// a set of states), the same closed dead region and the same violation,
// at the same depth; with 1 and 3 workers, the same everything.
func TestReduceSameStates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sys   *livecheck.System
		cfg   livecheck.Config
		depth int
	}{
		{"paxos 3x2", &paxos.System, livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}}, 10},
		{"paxos 3x2 quorum=1", &paxos.System, livecheck.Config{Nodes: 3, Bugs: []string{"quorum=1"}, Params: map[string]string{"proposers": "2"}}, 14},
		{"paxos split 2x2", &paxos.System, livecheck.Config{Nodes: 5, Params: map[string]string{"proposers": "2", "roles": "split"}}, 100},
		{"lcr 5", &lcr.System, livecheck.Config{Nodes: 5}, 100},
		{"randtree 3 peers=all", &randtree.System, livecheck.Config{Nodes: 3, Params: map[string]string{"peers": "all"}}, 9},
		{"randtree 3 reset", &randtree.System, livecheck.Config{Nodes: 3, Budget: sim.Budget{Resets: 1}}, 8},
		{"randtree RT3 2 nodes", &randtree.System, livecheck.Config{Nodes: 2, Bugs: []string{"RT3"}}, 20}, // a closed dead region
		{"ring 3 reset", &ring.System, livecheck.Config{Nodes: 3, Budget: sim.Budget{Resets: 1, Errors: livecheck.None}}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			none := search1(t, tc.sys, tc.cfg, search.Options{Depth: tc.depth}, 1)
			sleep := search1(t, tc.sys, tc.cfg, search.Options{Depth: tc.depth, Reduce: true}, 1)
			sleep3 := search1(t, tc.sys, tc.cfg, search.Options{Depth: tc.depth, Reduce: true}, 3)
			if none.stats.States != sleep.stats.States || none.stats.MaxDepth != sleep.stats.MaxDepth ||
				none.stats.Periphery != sleep.stats.Periphery || none.stats.Live != sleep.stats.Live ||
				none.res.Complete != sleep.res.Complete || none.res.Exhausted != sleep.res.Exhausted || none.res.Dead != sleep.res.Dead {
				t.Fatalf("without reduction %+v dead %x\nwith sleep sets %+v dead %x", none.stats, none.res.Dead, sleep.stats, sleep.res.Dead)
			}
			if strings.Contains(tc.name, "RT3") && none.res.Dead == 0 {
				t.Fatalf("no closed dead region found")
			}
			if !reflect.DeepEqual(none.periphery, sleep.periphery) {
				t.Fatalf("the periphery holds other states with sleep sets")
			}
			if (none.res.Violation == nil) != (sleep.res.Violation == nil) {
				t.Fatalf("violation %v without reduction, %v with", none.res.Violation, sleep.res.Violation)
			}
			if v, w := none.res.Violation, sleep.res.Violation; v != nil && (v.Property != w.Property || len(v.Path) != len(w.Path)) {
				t.Fatalf("violation of %s in %d steps without reduction, of %s in %d with", v.Property, len(v.Path), w.Property, len(w.Path))
			}
			if none.res.Violation == nil && (sleep.stats.Transitions >= none.stats.Transitions || sleep.stats.Slept == 0) {
				t.Errorf("sleep sets spared nothing: %d transitions (%d slept), %d without", sleep.stats.Transitions, sleep.stats.Slept, none.stats.Transitions)
			}
			if !reflect.DeepEqual(sleep.stats, sleep3.stats) || !reflect.DeepEqual(sleep.pairs, sleep3.pairs) || sleep.res.Dead != sleep3.res.Dead {
				t.Fatalf("1 worker: %+v\n3 workers: %+v", sleep.stats, sleep3.stats)
			}
			t.Logf("%d states; %d transitions without reduction, %d with sleep sets", none.stats.States, none.stats.Transitions, sleep.stats.Transitions)
		})
	}
}

// Reachability properties and coverage counts are merged in chunk order,
// as violations are: the same for any number of workers, complete or
// ended by a violation.
func TestWorkersSameReach(t *testing.T) {
	busy := properties.Sometimes("busy", "five messages in flight", func(s *sim.State) bool { return len(s.InFlight()) >= 5 })
	never := properties.Sometimes("never", "", func(s *sim.State) bool { return len(s.InFlight()) > 1000 })
	for _, bugs := range [][]string{nil, {"quorum=1"}} {
		cfg := livecheck.Config{Nodes: 3, Bugs: bugs, Params: map[string]string{"proposers": "2"}}
		opts := search.Options{Depth: 8, Properties: []properties.Property{busy, never}}
		one := search1(t, &paxos.System, cfg, opts, 1)
		three := search1(t, &paxos.System, cfg, opts, 3)
		r1, r3 := one.res.Sometimes, three.res.Sometimes
		if len(r1) != 2 || r1[0].Depth <= 0 || r1[1].Depth != -1 || !reflect.DeepEqual(r1, r3) {
			t.Fatalf("bugs %v: 1 worker %+v, 3 workers %+v", bugs, r1, r3)
		}
		c1, c3 := one.res.Coverage.Summary(), three.res.Coverage.Summary()
		if c1.Transitions != one.stats.Transitions || len(c1.Receive) == 0 || !reflect.DeepEqual(c1, c3) {
			t.Fatalf("bugs %v: coverage %+v with 1 worker, %+v with 3; %d transitions", bugs, c1, c3, one.stats.Transitions)
		}
		t.Logf("bugs %v: busy at depth %d; %+v", bugs, r1[0].Depth, c1)
	}
}

type searched struct {
	res       *search.Result
	stats     search.Stats // but time, workers and the collision chance
	periphery []uint64     // the periphery's states, sorted
	pairs     []string     // the periphery's paths and states, in order
}

// noStepCache turns the worlds' step cache off in search1.
var noStepCache bool

// search1 searches sys with cfg and the given options (their properties
// the system's) on workers workers, and makes the periphery again.
func search1(t *testing.T, sys *livecheck.System, cfg livecheck.Config, opts search.Options, workers int) searched {
	t.Helper()
	_, m, err := sys.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	world := func() *sim.World {
		w, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatal(err)
		}
		w.NoStepCache = noStepCache
		return w
	}
	opts.Properties = append(slices.Clone(m.Properties), opts.Properties...)
	for range workers - 1 {
		opts.Workers = append(opts.Workers, search.Worker{World: world()})
	}
	w := world()
	res, err := search.Global(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := searched{res: res}
	for i := range res.Periphery.Len() {
		f, err := res.Periphery.At(w, i, nil)
		if err != nil {
			t.Fatal(err)
		}
		out.periphery = append(out.periphery, f.State.Fingerprint())
		out.pairs = append(out.pairs, fmt.Sprintf("%x %x", f.Path.Hash(), f.State.Fingerprint()))
	}
	slices.Sort(out.periphery)
	out.stats = res.Stats
	out.stats.Elapsed, out.stats.Workers, out.stats.CollisionChance, out.stats.Remade = 0, 0, 0, 0
	return out
}

// The reduced search of split Paxos 2 x 4 (sleep sets, the acceptors'
// symmetry, the learner an observer) finds the same classes, takes the
// same transitions and leaves out the same observer events on 1 and 2
// workers, under either way to meet the cycle proviso: the graph's
// (reduce.go), where the learner's deliveries wait in every state that
// has others' events, and the levels' (every state one of whose steps
// goes back takes every event), as it did before its lookups were
// batched (issue 29). A proviso decided otherwise changes the counts.
// The figures are those of `check paxos --roles split --proposers 2
// --nodes 7 --no-walks --depth 100000`, the levels' before issue 29's
// graph proviso.
func TestReducedPaxos2x4Counts(t *testing.T) {
	if testing.Short() {
		t.Skip("4 searches of 16,326 to 56,675 classes: about a second")
	}
	_, m, err := paxos.System.Model(livecheck.Config{Nodes: 7, Params: map[string]string{"proposers": "2", "roles": "split"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		graph                          bool
		states, transitions, postponed int64
	}{{true, 16326, 43308, 40141}, {false, 56675, 146910, 78984}} {
		was := search.SetOptimisticProviso(tc.graph)
		for _, workers := range []int{1, 2} {
			opts := search.Options{Depth: 100, Properties: m.Properties, Reduce: true, Observers: true}
			world := func() *sim.World {
				w, err := sim.NewWorld(m.Spec)
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			for range workers - 1 {
				opts.Workers = append(opts.Workers, search.Worker{World: world()})
			}
			res, err := search.Global(world(), opts)
			if err != nil || res.Violation != nil || !res.Exhausted {
				t.Fatalf("graph proviso %v, %d workers: err %v, violation %v, exhausted %v", tc.graph, workers, err, res.Violation, res.Exhausted)
			}
			if s := res.Stats; s.States != tc.states || s.Transitions != tc.transitions || s.Postponed != tc.postponed || s.ProvisoRerun {
				t.Fatalf("graph proviso %v, %d workers: %d classes, %d transitions, %d observer events left out, run again %v; want %d, %d, %d, false",
					tc.graph, workers, s.States, s.Transitions, s.Postponed, s.ProvisoRerun, tc.states, tc.transitions, tc.postponed)
			}
		}
		search.SetOptimisticProviso(was)
	}
}

// A search cut short at depth d (by MaxStates here; Stop cuts the same
// way, before the level is merged) covers what the search bounded at d
// covers: the same states, the same periphery and the same closed dead
// region, which a check that passes "complete to depth d" must have
// looked for. RandTree RT3 on 2 nodes has one within a few steps.
func TestCutSearchFindsTheBoundedSearchsDeadRegion(t *testing.T) {
	found := 0
	for _, tc := range []struct {
		sys      *livecheck.System
		cfg      livecheck.Config
		maxDepth int
	}{
		{&randtree.System, livecheck.Config{Nodes: 2, Bugs: []string{"RT3"}}, 12},
		{&randtree.System, livecheck.Config{Nodes: 3, Bugs: []string{"RT3"}}, 7},
		{&ring.System, livecheck.Config{Nodes: 2, Bugs: []string{"partition-forget"}}, 8},
	} {
		for d := 1; d <= tc.maxDepth; d++ {
			for _, reduce := range []bool{false, true} {
				bounded := search1(t, tc.sys, tc.cfg, search.Options{Depth: d, Reduce: reduce}, 1)
				if !bounded.res.Complete || bounded.res.Exhausted {
					continue // the space ends before d: nothing to cut
				}
				cut := search1(t, tc.sys, tc.cfg, search.Options{Depth: 40, MaxStates: int(bounded.stats.States), Reduce: reduce}, 2)
				if cut.res.Complete || cut.res.Depth != d {
					t.Fatalf("%s %v, depth %d: cut at %d states: complete %v at depth %d, want cut at depth %d", tc.sys.Name, tc.cfg.Bugs, d, bounded.stats.States, cut.res.Complete, cut.res.Depth, d)
				}
				if cut.stats.States != bounded.stats.States || !reflect.DeepEqual(cut.periphery, bounded.periphery) || cut.res.Dead != bounded.res.Dead {
					t.Fatalf("%s %d nodes, depth %d (reduce %v): cut %d states, periphery %d, dead %x; bounded %d states, periphery %d, dead %x",
						tc.sys.Name, tc.cfg.Nodes, d, reduce, cut.stats.States, len(cut.periphery), cut.res.Dead, bounded.stats.States, len(bounded.periphery), bounded.res.Dead)
				}
				if cut.res.Dead != 0 {
					found++
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no depth with a closed dead region: the test shows nothing")
	}
	t.Logf("%d searches cut short found the bounded search's closed dead region", found)
}

// A Remaker makes every state of the periphery again as At does, with the
// same path, whatever the order it is asked in: in order (each state
// made from the ancestors the last one left), backwards, and at random,
// each state asked for twice in a row too.
func TestRemakerMatchesAt(t *testing.T) {
	for _, tc := range []struct {
		sys   *livecheck.System
		cfg   livecheck.Config
		depth int
	}{
		{&ring.System, livecheck.Config{Nodes: 3}, 6},
		{&lcr.System, livecheck.Config{Nodes: 4}, 5},
		{&paxos.System, livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}}, 6},
	} {
		_, m, err := tc.sys.Model(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		w, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatal(err)
		}
		res, err := search.Global(w, search.Options{Depth: tc.depth, Properties: m.Properties})
		if err != nil {
			t.Fatal(err)
		}
		n := res.Periphery.Len()
		if n < 20 {
			t.Fatalf("%s: a periphery of %d states: too few to tell", tc.sys.Name, n)
		}
		want := make([]string, n)
		for i := range n {
			f, err := res.Periphery.At(w, i, nil)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = fmt.Sprintf("%v %v %x", f.Init, f.Path, f.State.Fingerprint())
		}
		order := make([]int, 0, 3*n+1)
		for i := range n {
			order = append(order, i, i)
		}
		for i := n - 1; i >= 0; i-- {
			order = append(order, i)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range n {
			order = append(order, rng.IntN(n))
		}
		rw, err := sim.NewWorld(m.Spec)
		if err != nil {
			t.Fatal(err)
		}
		rm := res.Periphery.Remaker(rw)
		// A state the Remaker returned stays as it was: a walk's result
		// and its trail hold it after the next ask.
		var held []*sim.State
		var heldAt []int
		for k, i := range order {
			f, err := rm.At(i, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%v %v %x", f.Init, f.Path, f.State.Fingerprint()); got != want[i] {
				t.Fatalf("%s: ask %d, periphery state %d: the Remaker made %s, At %s", tc.sys.Name, k, i, got, want[i])
			}
			held, heldAt = append(held, f.State), append(heldAt, i)
		}
		for k, s := range held {
			if got := fmt.Sprintf("%x", s.Fingerprint()); !strings.HasSuffix(want[heldAt[k]], " "+got) || s.Node(0) == nil {
				t.Fatalf("%s: the state of ask %d (periphery state %d) changed after it was returned: %s, want %s", tc.sys.Name, k, heldAt[k], got, want[heldAt[k]])
			}
		}
	}
}

// A search stopped within a level keeps what it expanded of it: every
// state within its depth, exactly the bounded search's, and beyond them
// states of the next depth only (Stats.Beyond of them), none twice. Its
// periphery is what it left unexpanded: states of the covered depth that
// the bounded search's periphery holds, and new states. On 1 worker the
// stop comes at the same poll each time, so the result is the same; on 2
// it may differ, and must hold to the same.
func TestStoppedSearchKeepsWhatItExpanded(t *testing.T) {
	cfg := livecheck.Config{Nodes: 3, Params: map[string]string{"proposers": "2"}}
	// The states within each depth, and the periphery there: the same
	// with sleep sets (TestReduceSameStates).
	fps, peri := map[int]map[uint64]bool{}, map[int][]uint64{}
	within := func(d int) (map[uint64]bool, []uint64) {
		if fps[d] == nil {
			b := search1(t, &paxos.System, cfg, search.Options{Depth: d, Fingerprints: true}, 1)
			fps[d], peri[d] = map[uint64]bool{}, b.periphery
			for _, fp := range b.res.Fingerprints {
				fps[d][fp] = true
			}
		}
		return fps[d], peri[d]
	}
	beyond := 0
	for _, reduce := range []bool{false, true} {
		for _, workers := range []int{1, 2} {
			for _, after := range []int{9, 40, 120} {
				calls := 0
				stop := func() bool { calls++; return calls > after }
				r := search1(t, &paxos.System, cfg, search.Options{Depth: 40, Reduce: reduce, Fingerprints: true, Stop: stop}, workers)
				st, d := r.res.Stats, r.res.Depth
				name := fmt.Sprintf("reduce %v, %d workers, stopped after %d polls at depth %d", reduce, workers, after, d)
				if r.res.Complete || !r.res.Stopped || r.res.Violation != nil {
					t.Fatalf("%s: complete %v, stopped %v, violation %v", name, r.res.Complete, r.res.Stopped, r.res.Violation)
				}
				in, bounded := within(d)
				next, _ := within(d + 1)
				if st.States-st.Beyond != int64(len(in)) || int64(len(r.res.Fingerprints)) != st.States {
					t.Fatalf("%s: %d states, %d of them beyond; the bounded search has %d within depth %d", name, st.States, st.Beyond, len(in), d)
				}
				n := 0
				for _, fp := range r.res.Fingerprints {
					if !next[fp] {
						t.Fatalf("%s: a state not within depth %d", name, d+1)
					}
					if !in[fp] {
						n++
					}
				}
				if int64(n) != st.Beyond || st.Beyond > 0 != (st.BeyondFrom > 0) || st.Beyond > 0 && st.MaxDepth != d+1 {
					t.Fatalf("%s: %d states past depth %d, Beyond %d from %d, max depth %d", name, n, d, st.Beyond, st.BeyondFrom, st.MaxDepth)
				}
				left := map[uint64]bool{}
				for _, fp := range bounded {
					left[fp] = true
				}
				pin := 0 // the periphery's states at depth d: those not expanded
				for _, fp := range r.periphery {
					if in[fp] && !left[fp] || !in[fp] && !next[fp] {
						t.Fatalf("%s: a state of the periphery is neither at depth %d nor new", name, d)
					}
					if in[fp] {
						pin++
					}
				}
				// The states expanded leave the periphery, and no others:
				// none of them is live at these depths (nothing is chosen
				// yet), so all of them leave it.
				if pin != len(left)-int(st.BeyondFrom) {
					t.Fatalf("%s: %d of the %d states of the bounded periphery left in it, %d expanded", name, pin, len(left), st.BeyondFrom)
				}
				if st.Beyond > 0 {
					beyond++
				}
				if workers == 1 {
					calls = 0
					again := search1(t, &paxos.System, cfg, search.Options{Depth: 40, Reduce: reduce, Fingerprints: true, Stop: stop}, 1)
					if !reflect.DeepEqual(again.stats, r.stats) || !reflect.DeepEqual(again.pairs, r.pairs) {
						t.Fatalf("%s: stopped again at the same poll: %+v, first %+v", name, again.stats, r.stats)
					}
				}
			}
		}
	}
	if beyond == 0 {
		t.Fatal("no search was stopped within a level it had expanded part of: the test shows nothing")
	}
}
