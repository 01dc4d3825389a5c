package sim_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// drawer draws from crypto/rand as a library does (go.etcd.io/raft draws its
// election timeout with rand.Int(rand.Reader, n)): in its first Init when
// InitMax is set, and at every firing of its "draw" timer.
type drawer struct {
	sim.BaseNode
	InitMax int64 `livecheck:"-"`
	Max     int64 `livecheck:"-"`
	Drawn   []int64
}

func (d *drawer) draw(n int64) {
	v, err := rand.Int(rand.Reader, big.NewInt(n))
	if err != nil {
		panic(err)
	}
	d.Drawn = append(d.Drawn, v.Int64())
}

func (d *drawer) Init(ctx sim.Context) {
	if d.InitMax > 0 && len(d.Drawn) == 0 {
		d.draw(d.InitMax)
	}
	ctx.SetTimer("draw")
}

func (d *drawer) Timer(ctx sim.Context, name string) {
	d.draw(d.Max)
	ctx.SetTimer("draw")
}

func drawSpec(initMax, max int64) sim.Spec {
	return sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &drawer{InitMax: initMax, Max: max} }}
}

// stepValues runs every choice of ev from s, as the search does (NextTape
// over the step's choices and bounds), and returns the values the node drew
// in each run and how many runs there were.
func stepValues(t *testing.T, w *sim.World, s *sim.State, ev sim.Event) (vals []int64, runs int) {
	t.Helper()
	var tape []int
	for {
		n, err := w.Apply(s, ev, tape)
		if err != nil {
			t.Fatal(err)
		}
		runs++
		d := n.Node(0).(*drawer)
		vals = append(vals, d.Drawn[len(d.Drawn)-1])
		next, more := sim.NextTape(w.Last().Choices, w.Last().Bounds, nil)
		if !more {
			return vals, runs
		}
		tape = next
		if runs > 10000 {
			t.Fatalf("the choices of %v do not end", ev)
		}
	}
}

// A draw of rand.Int(rand.Reader, max) is a choice whose values are
// exactly 0..max-1: the search tries each once, and stops at the first
// value Int rejects (max itself) rather than trying all 256.
func TestDrawIsAChoice(t *testing.T) {
	for _, max := range []int64{1, 2, 3, 10, 16, 17, 200, 256} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			w, s := newWorld(t, drawSpec(0, max))
			vals, runs := stepValues(t, w, s, timer(0, "draw"))
			distinct := slices.Compact(slices.Sorted(slices.Values(vals)))
			want := make([]int64, max)
			for i := range want {
				want[i] = int64(i)
			}
			if !slices.Equal(distinct, want) {
				t.Errorf("values drawn %v, want each of 0..%d", distinct, max-1)
			}
			// max runs that Int accepts, and one with max itself,
			// which Int rejects or masks, unless max fills the byte.
			wantRuns := int(max) + 1
			if max == 1 {
				wantRuns = 1 // Int(1) reads nothing: 0 is its only value
			}
			if max == 256 {
				wantRuns = 256
			}
			if runs != wantRuns {
				t.Errorf("%d runs of the step, want %d", runs, wantRuns)
			}
		})
	}
}

// Draws in a node's first Init make initial states, one per value.
func TestDrawInFirstInit(t *testing.T) {
	w, err := sim.NewWorld(drawSpec(4, 2))
	if err != nil {
		t.Fatal(err)
	}
	starts, err := w.Starts()
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, st := range starts {
		got = append(got, st.State.Node(0).(*drawer).Drawn[0])
	}
	// 0..3, then 4, which Int masks to 0.
	if want := []int64{0, 1, 2, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("initial states drew %v, want %v", got, want)
	}
}

// A walk draws at random; replay with the recorded choices, strictly, draws
// the same values, retries of rejected values included.
func TestDrawReplays(t *testing.T) {
	w, s := newWorld(t, drawSpec(0, 10))
	r := mrand.New(mrand.NewPCG(1, 2))
	w.Chooser = func(n int) int { return r.IntN(n) }
	var path sim.Path
	cur := s
	retried := false
	for range 200 {
		n, err := w.Apply(cur, timer(0, "draw"), nil)
		if err != nil {
			t.Fatal(err)
		}
		retried = retried || len(w.Last().Choices) > 1
		path = append(path, sim.Step{Event: timer(0, "draw"), Choices: slices.Clone(w.Last().Choices)})
		cur = n
	}
	if !retried {
		t.Fatal("200 draws of Int(10) from 256 values never retried: the walk is not drawing")
	}
	drawn := cur.Node(0).(*drawer).Drawn
	for _, v := range drawn {
		if v < 0 || v >= 10 {
			t.Fatalf("drew %d, outside [0, 10)", v)
		}
	}
	rw, rs := newWorld(t, drawSpec(0, 10))
	rw.Strict = true
	end, err := rw.Run(rs, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := end.Node(0).(*drawer).Drawn; !slices.Equal(got, drawn) {
		t.Errorf("replay drew %v, the walk %v", got, drawn)
	}
}

// Outside a handler, crypto/rand is the operating system's: not a choice,
// and not the same bytes twice.
func TestDrawOutsideHandlers(t *testing.T) {
	a, b := make([]byte, 16), make([]byte, 16)
	if _, err := rand.Read(a); err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Reader.Read(b); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 16)) {
		t.Errorf("two reads outside a handler gave %x and %x", a, b)
	}
}

// Worlds on several goroutines draw at once, each from its own choices.
func TestDrawWorkers(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := sim.NewWorld(drawSpec(0, 200))
			if err != nil {
				errs <- err
				return
			}
			s, err := w.Initial()
			if err != nil {
				errs <- err
				return
			}
			for j := range 300 {
				want := (i*31 + j) % 200
				n, err := w.Apply(s, timer(0, "draw"), []int{want})
				if err != nil {
					errs <- err
					return
				}
				if got := n.Node(0).(*drawer).Drawn[0]; got != int64(want) || len(w.Last().Choices) != 1 {
					errs <- fmt.Errorf("worker %d drew %d with choices %v, its tape said %d", i, got, w.Last().Choices, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The determinism check runs a drawing step twice: the draws are choices,
// so both runs agree, rejected values and all.
func TestDrawIsDeterministic(t *testing.T) {
	w, s := newWorld(t, drawSpec(0, 10))
	w.Recheck = 1
	for v := range 12 {
		if _, err := w.Apply(s, timer(0, "draw"), []int{v}); err != nil {
			t.Fatalf("draw %d: %v", v, err)
		}
	}
}

// FirstDifference names the first field that differs, down through
// pointers, slices, maps and structs.
func TestFirstDifference(t *testing.T) {
	type inner struct {
		M    map[string][]int
		Skip int `livecheck:"-"`
	}
	type outer struct {
		A  int
		In *inner
		L  []string
	}
	mk := func() *outer {
		return &outer{A: 1, In: &inner{M: map[string][]int{"a": {1}, "b": {2, 3}}}, L: []string{"x"}}
	}
	for _, tc := range []struct {
		name   string
		change func(o *outer)
		want   string
	}{
		{"same", func(o *outer) {}, ""},
		{"skipped field", func(o *outer) { o.In.Skip = 9 }, ""},
		{"top field", func(o *outer) { o.A = 2 }, "A: 1 vs 2"},
		{"map element", func(o *outer) { o.In.M["b"][1] = 4 }, `In.M["b"][1]: 3 vs 4`},
		{"map key", func(o *outer) { delete(o.In.M, "a"); o.In.M["c"] = []int{1} }, `In.M["a"]: present vs absent`},
		{"slice length", func(o *outer) { o.L = append(o.L, "y") }, "L: 1 elements vs 2"},
		{"nil pointer", func(o *outer) { o.In = nil }, "In: {M:{\"a\":[1] \"b\":[2 3]}} vs nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mk(), mk()
			tc.change(b)
			if got := sim.FirstDifference(a, b); got != tc.want {
				t.Errorf("FirstDifference = %q, want %q", got, tc.want)
			}
		})
	}
}
