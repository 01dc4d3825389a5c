package properties_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

func TestHelperForms(t *testing.T) {
	leader := &replica{Leader: true}
	follower := &replica{}
	one := properties.AtMostOne("one-leader", "", func(n *replica) bool { return n.Leader })
	if one.Kind != properties.Safety || one.Filter == nil || one.Pair == nil {
		t.Fatalf("AtMostOne: kind %v, Filter set %v, Pair set %v", one.Kind, one.Filter != nil, one.Pair != nil)
	}
	if !one.Filter(0, leader) || one.Filter(1, follower) {
		t.Errorf("AtMostOne's Filter keeps followers or drops leaders")
	}
	if one.Pair(leader, leader) == nil || one.Pair(leader, follower) != nil || one.Pair(follower, follower) != nil {
		t.Errorf("AtMostOne's Pair is wrong")
	}
	if err := one.Check(state(leader, follower, leader, leader)); err == nil || err.Error() != "nodes 0, 2 and 3 at once" {
		t.Errorf("AtMostOne on three leaders = %v", err)
	}

	bad := errors.New("differ")
	var seen [][2]int
	pairs := properties.AlwaysPairs("pairs", "", func(a, b *replica) error {
		seen = append(seen, [2]int{a.Term, b.Term})
		if a.Term == 1 && b.Term == 3 {
			return bad
		}
		return nil
	})
	if pairs.Pair == nil || pairs.Filter != nil {
		t.Fatalf("AlwaysPairs: Pair set %v, Filter set %v", pairs.Pair != nil, pairs.Filter != nil)
	}
	// Each pair once, the lower id first, until the first that fails.
	err := pairs.Check(state(&replica{Term: 0}, &replica{Term: 1}, &replica{Term: 2}, &replica{Term: 3}))
	if !errors.Is(err, bad) || err.Error() != "nodes 1 and 3: differ" {
		t.Errorf("AlwaysPairs = %v", err)
	}
	if want := [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}}; !slices.Equal(seen, want) {
		t.Errorf("AlwaysPairs checked %v, want %v", seen, want)
	}
	if !errors.Is(pairs.Pair(&replica{Term: 1}, &replica{Term: 3}), bad) {
		t.Errorf("AlwaysPairs' Pair does not run check")
	}
	if err := pairs.Check(state(&replica{Term: 1})); err != nil {
		t.Errorf("AlwaysPairs on one node = %v", err)
	}

	each := properties.AlwaysEach("each", "", func(n *replica) error {
		if n.Term > 1 {
			return bad
		}
		return nil
	})
	// Each checks a node on its own, so its Filter could not stand for it
	// in local model checking (a violation needs one node, not a pair).
	if each.Kind != properties.Safety || each.Filter != nil || each.Pair != nil {
		t.Errorf("AlwaysEach: kind %v, Filter set %v, Pair set %v", each.Kind, each.Filter != nil, each.Pair != nil)
	}
	if err := each.Check(state(&replica{Term: 1}, &replica{Term: 2}, &replica{Term: 3})); !errors.Is(err, bad) || err.Error() != "node 1: differ" {
		t.Errorf("AlwaysEach = %v", err)
	}
	ev := properties.EventuallyEach("ev", "", func(n *replica) bool { return n.Leader })
	if ev.Kind != properties.Liveness || ev.Live(state(leader, follower)) || !ev.Live(state(leader, leader)) {
		t.Errorf("EventuallyEach is wrong")
	}
	some := properties.SometimesNode("some", "", func(n *replica) bool { return n.Leader })
	if some.Kind != properties.Reachability || some.Kind.String() != "reachability" ||
		some.Reach(state(follower, follower)) || !some.Reach(state(follower, leader)) {
		t.Errorf("SometimesNode is wrong")
	}
	if err := properties.Validate([]properties.Property{one, pairs, each, ev, some}); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// A property of a kind without its function is named, never run.
func TestValidateMissingFunction(t *testing.T) {
	for _, c := range []struct {
		p    properties.Property
		want string
	}{
		{properties.Property{Name: "s", Kind: properties.Safety}, `safety property "s" has no Check function`},
		{properties.Property{Name: "l", Kind: properties.Liveness}, `liveness property "l" has no Live function`},
		{properties.Property{Name: "r", Kind: properties.Reachability}, `reachability property "r" has no Reach function`},
		{properties.Sometimes("r", "", nil), `reachability property "r" has no Reach function`},
		{properties.Property{Name: "k", Kind: 7, Check: func(*sim.State) error { return nil }}, `property "k" has unknown kind 7`},
	} {
		if err := properties.Validate([]properties.Property{c.p}); err == nil || err.Error() != c.want {
			t.Errorf("Validate(%s) = %v, want %s", c.p.Name, err, c.want)
		}
	}
}

type other struct{ sim.BaseNode }

// A property over the wrong node type is a bug in the property: an
// *Error that names both types, never a crash.
func TestHelperWrongType(t *testing.T) {
	p := properties.AtMostOne("one-leader", "", func(n *replica) bool { return n.Leader })
	s := sim.NewState([]sim.Node{&other{}})
	var pe *properties.Error
	if err := p.CheckSafety(s); !errors.As(err, &pe) || pe.Error() != "property one-leader panicked: node 0 is a *properties_test.other, not a *properties_test.replica" {
		t.Errorf("CheckSafety = %v", err)
	}
}

// carrier is a layer that carries another.
type carrier struct{ sim.BaseNode }

func (carrier) Down(sim.Context, sim.NodeID, sim.Message) {}

// Properties read a layer of a stacked node by its type, in the system
// state (Node) and in local mode's Filter and Pair (as); a node with no
// layer of the type is named with its layers.
func TestHelperLayers(t *testing.T) {
	p := properties.AtMostOne("one-leader", "", func(n *replica) bool { return n.Leader })
	stack := func(leader bool) sim.Node {
		return sim.Stack(sim.Layer{Name: "net", Node: &carrier{}}, sim.Layer{Name: "log", Node: &replica{Leader: leader}})
	}
	s := sim.NewState([]sim.Node{stack(true), stack(false), stack(true)})
	if err := p.Check(s); err == nil || err.Error() != "nodes 0 and 2 at once" {
		t.Errorf("Check = %v", err)
	}
	if err := p.Pair(stack(true), stack(true)); err == nil {
		t.Error("Pair of two leaders in layers is nil")
	}
	s = sim.NewState([]sim.Node{sim.Stack(sim.Layer{Name: "net", Node: &carrier{}}, sim.Layer{Name: "other", Node: &other{}})})
	var pe *properties.Error
	if err := p.CheckSafety(s); !errors.As(err, &pe) || pe.Error() != "property one-leader panicked: node 0 has no layer that is a *properties_test.replica: its layers are net (*properties_test.carrier), other (*properties_test.other)" {
		t.Errorf("CheckSafety = %v", err)
	}
}

// candidate becomes leader when the driver says so, and steps down when
// it hears of another leader.
type candidate struct {
	sim.BaseNode
	Leader bool
}

func (c *candidate) App(ctx sim.Context, call sim.AppCall) {
	c.Leader = true
	for i := range ctx.Nodes() {
		if sim.NodeID(i) != ctx.Self() {
			ctx.Send(sim.NodeID(i), "leader")
		}
	}
}

func (c *candidate) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { c.Leader = false }

// The global search and local model checking (through the Pair form)
// both find two leaders, two steps in.
func TestAtMostOneSearched(t *testing.T) {
	spec := sim.Spec{Nodes: 3, New: func(sim.NodeID) sim.Node { return &candidate{} }, Calls: []sim.Call{{To: 0}, {To: 2}}}
	props := []properties.Property{properties.AtMostOne("one-leader", "", func(n *candidate) bool { return n.Leader })}
	w, err := sim.NewWorld(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := search.Global(w, search.Options{Depth: 5, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Violation; v == nil || v.Property != "one-leader" || v.Message != "nodes 0 and 2 at once" || len(v.Path) != 2 {
		t.Fatalf("global: violation %+v", v)
	}
	l, err := search.Local(w, search.LocalOptions{Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	v := l.Violation
	if v == nil || v.Property != "one-leader" || l.Stats.Pairs == 0 || l.Stats.SystemStates != 0 {
		t.Fatalf("local: violation %+v, %d pairs, %d system states", v, l.Stats.Pairs, l.Stats.SystemStates)
	}
	// Its path (not always a shortest) ends where the property fails.
	s0, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	end, err := w.Run(s0, v.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := props[0].Check(end); err == nil || err.Error() != "nodes 0 and 2 at once" {
		t.Errorf("local: at the end of its path the property gives %v", err)
	}
}

// One LeadsTo value serves any number of specs: Bind leaves the caller's
// slice as it was and gives each spec its own monitor; unbound, its Live
// panics with a message that says so.
func TestLeadsToBind(t *testing.T) {
	yes := func(*sim.State) bool { return true }
	p := properties.LeadsTo("p", "", yes, yes)
	props := []properties.Property{properties.Eventually("e", "", yes), p}
	var a, b sim.Spec
	b.Monitors = []sim.Monitor{{Name: "other", P: yes, Q: yes}}
	pa, pb := properties.Bind(&a, props), properties.Bind(&b, props)
	if len(a.Monitors) != 1 || len(b.Monitors) != 2 || a.Monitors[0].Name != "p" || b.Monitors[1].Name != "p" {
		t.Fatalf("monitors %v, %v", a.Monitors, b.Monitors)
	}
	s := sim.NewState(nil)
	if !pa[1].IsLive(s) || !pb[1].IsLive(s) || !pa[0].IsLive(s) {
		t.Fatal("a bound property is not live where no bit is set")
	}
	func() {
		defer func() {
			pe, ok := recover().(*properties.Error)
			if !ok || pe.Property != "p" || !strings.Contains(pe.Error(), "not bound to a monitor") {
				t.Fatalf("unbound Live: %v", pe)
			}
		}()
		props[1].IsLive(s)
	}()
	if err := properties.Validate([]properties.Property{properties.LeadsTo("q", "", yes, nil)}); err == nil ||
		err.Error() != `leads-to property "q" needs both P and Q, and the liveness kind` {
		t.Fatalf("Validate: %v", err)
	}
}

// All yields what Nodes returns, in id order, stops when the loop does,
// and allocates nothing.
func TestAll(t *testing.T) {
	w, err := sim.NewWorld(sim.Spec{Nodes: 3, New: func(sim.NodeID) sim.Node { return &candidate{} }, Calls: []sim.Call{{To: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	if s, err = w.Apply(s, sim.Event{Kind: sim.App, Node: 1, Call: 0}, nil); err != nil {
		t.Fatal(err)
	}
	nodes := properties.Nodes[*candidate](s)
	var got []string
	for id, n := range properties.All[*candidate](s) {
		if n != nodes[id] {
			t.Errorf("All gives node %d as %p, Nodes as %p", id, n, nodes[id])
		}
		got = append(got, fmt.Sprintf("%d:%v", id, n.Leader))
		if id == 1 {
			break
		}
	}
	if want := []string{"0:false", "1:true"}; !slices.Equal(got, want) {
		t.Errorf("All yielded %v, want %v", got, want)
	}
	leaders := 0
	if a := testing.AllocsPerRun(100, func() {
		for _, n := range properties.All[*candidate](s) {
			if n.Leader {
				leaders++
			}
		}
	}); a != 0 {
		t.Errorf("All allocates %v times a loop", a)
	}
}
