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

const vacuous = "the property would hold vacuously: give it the type of the nodes it is about, or leave it out of configurations that have none"

// A property over a node type no node has is a bug in the property (it
// would hold vacuously): an *Error that names the types, never a crash.
func TestHelperWrongType(t *testing.T) {
	p := properties.AtMostOne("one-leader", "", func(n *replica) bool { return n.Leader })
	s := sim.NewState([]sim.Node{&other{}})
	var pe *properties.Error
	if err := p.CheckSafety(s); !errors.As(err, &pe) || pe.Error() != "property one-leader panicked: no node is a *properties_test.replica or has a layer that is (node 0 is a *properties_test.other): "+vacuous {
		t.Errorf("CheckSafety = %v", err)
	}
	s = sim.NewState([]sim.Node{&other{}, &carrier{}, &other{}})
	if err := p.CheckSafety(s); !errors.As(err, &pe) || pe.Error() != "property one-leader panicked: no node is a *properties_test.replica or has a layer that is (nodes 0 and 2 are each a *properties_test.other; node 1 is a *properties_test.carrier): "+vacuous {
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
	if err := p.CheckSafety(s); !errors.As(err, &pe) || pe.Error() != "property one-leader panicked: no node is a *properties_test.replica or has a layer that is (node 0 is a stack of net (*properties_test.carrier), other (*properties_test.other)): "+vacuous {
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

// primary and backup are the two node types of a primary-backup
// protocol: a property over one type reads the nodes of that type.
type primary struct {
	sim.BaseNode
	Term int
}

type backup struct {
	sim.BaseNode
	Synced bool
	Leader bool // it took over
}

// takeover: node 0 is the primary, the others back it up; the primary
// syncs them when the driver calls it, and a backup that the driver
// calls takes over, whether or not another did.
func (p *primary) App(ctx sim.Context, call sim.AppCall) {
	p.Term++
	for i := 1; i < ctx.Nodes(); i++ {
		ctx.Send(sim.NodeID(i), "sync")
	}
}

func (b *backup) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) { b.Synced = true }
func (b *backup) App(ctx sim.Context, call sim.AppCall)                     { b.Leader = true }

// Issue 25, item 13: the helpers over one node type read the nodes of
// that type and skip the others, ids kept; none panics on a protocol
// with two node types.
func TestHelpersTwoNodeTypes(t *testing.T) {
	mixed := func(p *primary, bs ...*backup) *sim.State {
		ns := []sim.Node{p}
		for _, b := range bs {
			ns = append(ns, b)
		}
		return sim.NewState(ns)
	}
	synced, leader := &backup{Synced: true}, &backup{Synced: true, Leader: true}
	fresh := &backup{}
	oneLeader := properties.AtMostOne("one-leader", "", func(b *backup) bool { return b.Leader })
	onePrimary := properties.AtMostOne("one-primary", "", func(p *primary) bool { return true })
	termOne := properties.AlwaysEach("term-one", "", func(p *primary) error {
		if p.Term > 1 {
			return fmt.Errorf("term %d", p.Term)
		}
		return nil
	})
	agree := properties.AlwaysPairs("agree", "", func(a, b *backup) error {
		if a.Synced != b.Synced {
			return errors.New("one synced, one not")
		}
		return nil
	})
	allSynced := properties.EventuallyEach("all-synced", "", func(b *backup) bool { return b.Synced })
	someLeader := properties.SometimesNode("some-leader", "", func(b *backup) bool { return b.Leader })
	for _, tc := range []struct {
		name string
		p    properties.Property
		s    *sim.State
		want string // safety: the error ("" for none); liveness, reachability: "true" or "false"
	}{
		{"at most one backup leads", oneLeader, mixed(&primary{}, leader, synced, leader), "nodes 1 and 3 at once"},
		{"one backup leads", oneLeader, mixed(&primary{}, synced, leader), ""},
		{"one primary", onePrimary, mixed(&primary{}, synced, synced), ""},
		{"each primary", termOne, mixed(&primary{Term: 2}, synced), "node 0: term 2"},
		{"each primary holds", termOne, mixed(&primary{Term: 1}, fresh), ""},
		{"pairs of backups", agree, mixed(&primary{}, synced, synced, fresh), "nodes 1 and 3: one synced, one not"},
		{"pairs of backups agree", agree, mixed(&primary{}, synced, synced), ""},
		{"every backup synced", allSynced, mixed(&primary{}, synced, leader), "true"},
		{"a backup not synced", allSynced, mixed(&primary{}, synced, fresh), "false"},
		{"a backup leads", someLeader, mixed(&primary{}, synced, leader), "true"},
		{"no backup leads", someLeader, mixed(&primary{}, synced, fresh), "false"},
	} {
		var got string
		switch tc.p.Kind {
		case properties.Safety:
			if err := tc.p.CheckSafety(tc.s); err != nil {
				got = err.Error()
			}
		case properties.Liveness:
			got = fmt.Sprint(tc.p.IsLive(tc.s))
		case properties.Reachability:
			got = fmt.Sprint(tc.p.IsReached(tc.s))
		}
		if got != tc.want {
			t.Errorf("%s: %s gives %q, want %q", tc.name, tc.p.Name, got, tc.want)
		}
	}

	// Local model checking hands Filter and Pair single node states: a
	// node of the other type takes no part.
	if oneLeader.Filter(0, &primary{}) || !oneLeader.Filter(1, leader) {
		t.Error("AtMostOne's Filter: a primary takes part, or a leading backup does not")
	}
	if oneLeader.Pair(&primary{}, leader) != nil || oneLeader.Pair(leader, leader) == nil {
		t.Error("AtMostOne's Pair: a primary and a backup clash, or two leading backups do not")
	}
	if agree.Pair(&primary{}, fresh) != nil || agree.Pair(synced, fresh) == nil {
		t.Error("AlwaysPairs' Pair: a primary and a backup are checked, or two backups are not")
	}

	// All yields the nodes of the type with their ids; Nodes, a slice
	// indexed by id, cannot skip one and says what to write instead.
	var ids []sim.NodeID
	for id := range properties.All[*backup](mixed(&primary{}, synced, fresh)) {
		ids = append(ids, id)
	}
	if !slices.Equal(ids, []sim.NodeID{1, 2}) {
		t.Errorf("All[*backup] yields nodes %v, want 1 and 2", ids)
	}
	func() {
		defer func() {
			msg := fmt.Sprint(recover())
			if !strings.Contains(msg, "node 1 is a *properties_test.backup, not a *properties_test.primary") ||
				!strings.Contains(msg, "properties.All") {
				t.Errorf("Nodes[*primary] on a backup panics with %q", msg)
			}
		}()
		properties.Nodes[*primary](mixed(&primary{}, synced))
	}()

	// The search, global and local, finds the two backups that took
	// over, and passes the properties that hold.
	spec := sim.Spec{Nodes: 3, New: func(id sim.NodeID) sim.Node {
		if id == 0 {
			return &primary{}
		}
		return &backup{}
	}, Calls: []sim.Call{{To: 0}, {To: 1}, {To: 2}}}
	w, err := sim.NewWorld(spec)
	if err != nil {
		t.Fatal(err)
	}
	props := []properties.Property{termOne, onePrimary, agree, oneLeader}
	g, err := search.Global(w, search.Options{Depth: 6, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Violation; v == nil || v.Property != "agree" && v.Property != "one-leader" {
		t.Fatalf("global: violation %+v", v)
	}
	g, err = search.Global(w, search.Options{Depth: 6, Properties: []properties.Property{termOne, onePrimary, oneLeader}})
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Violation; v == nil || v.Property != "one-leader" || v.Message != "nodes 1 and 2 at once" || len(v.Path) != 2 {
		t.Fatalf("global: violation %+v", v)
	}
	l, err := search.Local(w, search.LocalOptions{Properties: []properties.Property{oneLeader}})
	if err != nil {
		t.Fatal(err)
	}
	if v := l.Violation; v == nil || v.Property != "one-leader" {
		t.Fatalf("local: violation %+v", v)
	}
}
