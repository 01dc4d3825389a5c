package sim_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// walNode keeps a term and a log on disk (durable fields), and the rest in
// memory. Its App takes an int: the term to write.
type walNode struct {
	sim.BaseNode
	Term int      `livecheck:"durable"`
	Log  []string `livecheck:"durable"`
	walMeta
	Pending map[string]int
	Seen    int // the term Init found
}

// walMeta is embedded by value: its durable field is kept, the other not.
type walMeta struct {
	Boots   int `livecheck:"durable"`
	Scratch int
}

func (n *walNode) Init(ctx sim.Context) {
	n.Boots++
	n.Seen = n.Term
	if len(n.Log) > 0 {
		// Recovery edits the log in place: the crashed node's log, which
		// the states before the reset hold, must not change with it.
		n.Log[0] = "recovered"
	}
}

func (n *walNode) App(ctx sim.Context, call sim.AppCall) {
	n.Term = call.(int)
	n.Log = append(n.Log, "t"+strings.Repeat("|", n.Term))
	if n.Pending == nil {
		n.Pending = map[string]int{}
	}
	n.Pending["x"] = n.Term
	n.Scratch++
}

func walWorld(t *testing.T, terms ...int) (*sim.World, *sim.State) {
	var calls []sim.Call
	for _, tm := range terms {
		calls = append(calls, sim.Call{To: 0, Call: tm})
	}
	return newWorld(t, sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node { return &walNode{} }, Calls: calls, Budget: sim.Budget{Resets: 2}})
}

func TestDurableKeptAcrossReset(t *testing.T) {
	w, s := walWorld(t, 1, 2)
	s = apply(t, w, s, app(0, 0))
	before := apply(t, w, s, app(0, 1))
	r := apply(t, w, before, reset(0))
	n := r.Node(0).(*walNode)
	want := walNode{Term: 2, Log: []string{"recovered", "t||"}, walMeta: walMeta{Boots: 2}, Seen: 2}
	if n.Term != want.Term || !slices.Equal(n.Log, want.Log) || n.walMeta != want.walMeta || n.Seen != want.Seen || n.Pending != nil {
		t.Errorf("after the reset the node is %+v, want %+v", *n, want)
	}
	old := before.Node(0).(*walNode)
	if !slices.Equal(old.Log, []string{"t|", "t||"}) || old.Boots != 1 || old.Scratch != 2 || old.Seen != 0 {
		t.Errorf("the state before the reset changed: %+v", *old)
	}
	const dump = `node 0: walNode{Term:2 Log:["recovered" "t||"] walMeta:{Boots:2 Scratch:0} Pending:{} Seen:2}` + "\n"
	if got := r.Dump(); got != dump {
		t.Errorf("Dump after the reset:\n%s\nwant\n%s", got, dump)
	}
	// In place, as walks step, the same.
	own := w.Own(before)
	if err := w.Step(own, reset(0), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Seal(own); err != nil {
		t.Fatal(err)
	}
	if own.Fingerprint() != r.Fingerprint() {
		t.Errorf("Step and Apply of the reset give different states:\n%s\n%s", own.Dump(), r.Dump())
	}
	// A second reset keeps them again.
	r2 := apply(t, w, r, reset(0))
	if n := r2.Node(0).(*walNode); n.Boots != 3 || n.Term != 2 || n.Seen != 2 {
		t.Errorf("after a second reset: %+v", *n)
	}
}

// Two states that differ only in a durable field have different
// fingerprints; with equal durable fields, equal ones.
func TestDurableFingerprint(t *testing.T) {
	after := func(term int) *sim.State {
		w, s := walWorld(t, term)
		return apply(t, w, apply(t, w, s, app(0, 0)), reset(0))
	}
	a, b, a2 := after(1), after(2), after(1)
	if a.Fingerprint() == b.Fingerprint() || a.NodeFingerprint(0) == b.NodeFingerprint(0) {
		t.Errorf("states differing only in the durable term hash alike")
	}
	if a.Fingerprint() != a2.Fingerprint() {
		t.Errorf("equal states hash differently")
	}
	if da, db := a.Dump(), b.Dump(); !strings.Contains(da, "Term:1 ") || !strings.Contains(db, "Term:2 ") {
		t.Errorf("dumps do not show the durable term:\n%s%s", da, db)
	}
}

func TestDurableNeedsTheSameType(t *testing.T) {
	built := 0
	w, s := newWorld(t, sim.Spec{Nodes: 1, Budget: sim.Budget{Resets: 1}, New: func(sim.NodeID) sim.Node {
		built++
		if built > 1 {
			return &tnode{}
		}
		return &walNode{}
	}})
	_, err := w.Apply(s, reset(0), nil)
	const want = "node 0 is a *sim_test.walNode with durable fields, but New built a *sim_test.tnode for its restart: durable fields need the same type"
	if err == nil || err.Error() != want {
		t.Errorf("Apply = %v, want %q", err, want)
	}
}

// bootNode counts its starts; Durable says whether the count is on disk.
type bootNode struct {
	sim.BaseNode
	Boots int `livecheck:"durable"`
}

func (n *bootNode) Init(sim.Context) { n.Boots++ }

type volatileBootNode struct {
	sim.BaseNode
	Boots int
}

func (n *volatileBootNode) Init(sim.Context) { n.Boots++ }

// A violation that only the durable field makes reachable: the search
// finds it, through both resets, and not when the field is volatile.
func TestSearchFindsDurableBug(t *testing.T) {
	prop := func(boots func(s *sim.State) int) properties.Property {
		return properties.Always("two-boots", "a node starts at most twice", func(s *sim.State) error {
			if b := boots(s); b > 2 {
				return fmt.Errorf("%d boots", b)
			}
			return nil
		})
	}
	check := func(n func() sim.Node, boots func(s *sim.State) int) *search.Result {
		w, err := sim.NewWorld(sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return n() }, Budget: sim.Budget{Resets: 2}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := search.Global(w, search.Options{Depth: 6, Properties: []properties.Property{prop(boots)}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := check(func() sim.Node { return &bootNode{} }, func(s *sim.State) int {
		return max(s.Node(0).(*bootNode).Boots, s.Node(1).(*bootNode).Boots)
	})
	v := res.Violation
	if v == nil || v.Property != "two-boots" || v.Message != "3 boots" ||
		!slices.EqualFunc(v.Path, sim.Path{{Event: reset(0)}, {Event: reset(0)}}, func(a, b sim.Step) bool { return a.Event == b.Event }) {
		t.Fatalf("durable boots: violation %+v, want two-boots after reset 0, reset 0", v)
	}
	res = check(func() sim.Node { return &volatileBootNode{} }, func(s *sim.State) int {
		return max(s.Node(0).(*volatileBootNode).Boots, s.Node(1).(*volatileBootNode).Boots)
	})
	// Its states differ only in the resets used: 0, 1 or 2.
	if res.Violation != nil || !res.Exhausted || res.Stats.States != 3 {
		t.Errorf("volatile boots: violation %+v, exhausted %v, %d states; want none, exhausted, 3 states", res.Violation, res.Exhausted, res.Stats.States)
	}
}

// ticker counts the firings of its periodic timer and stops it at 2.
type ticker struct {
	sim.BaseNode
	Count int
}

func (n *ticker) Init(ctx sim.Context) { ctx.SetPeriodic("tick") }

func (n *ticker) Timer(ctx sim.Context, name string) {
	n.Count++
	if n.Count == 2 {
		ctx.CancelTimer("tick")
	}
}

// The search follows a periodic timer through every firing, with and
// without sleep sets: each node is at 0, 1 or 2 (its timer stopped).
func TestSearchPeriodic(t *testing.T) {
	for _, reduce := range []bool{false, true} {
		w, err := sim.NewWorld(sim.Spec{Nodes: 2, New: func(sim.NodeID) sim.Node { return &ticker{} }})
		if err != nil {
			t.Fatal(err)
		}
		done := properties.Eventually("done", "both counted to 2", func(s *sim.State) bool {
			return s.Node(0).(*ticker).Count == 2 && s.Node(1).(*ticker).Count == 2
		})
		res, err := search.Global(w, search.Options{Depth: 10, Reduce: reduce, Properties: []properties.Property{done}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation != nil || !res.Exhausted || res.Stats.States != 9 || res.Stats.MaxDepth != 4 {
			t.Errorf("reduce %v: violation %+v, exhausted %v, %d states to depth %d; want none, exhausted, 9 states to depth 4",
				reduce, res.Violation, res.Exhausted, res.Stats.States, res.Stats.MaxDepth)
		}
	}
}
