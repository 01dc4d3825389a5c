package sim

import (
	"math/rand/v2"
	"testing"
)

// namesNode has every kind of field that can name a node, among others.
type namesNode struct {
	A     int
	Self  NodeID
	Peers NodeSet
	Flag  bool
	Arr   [3]NodeID
	Sets  [2]NodeSet
	List  []NodeID
	Seen  []NodeSet
	Name  string
	Hid   NodeID `livecheck:"-"`
}

func (*namesNode) Init(Context)                     {}
func (*namesNode) Receive(Context, NodeID, Message) {}
func (*namesNode) Timer(Context, string)            {}
func (*namesNode) App(Context, AppCall)             {}
func (*namesNode) Error(Context, NodeID)            {}

// A node's blind fingerprint is taken to be its fingerprint when its plan
// says it names no member of a group, without hashing it again: held to
// the blind hash on random values, where it must say so exactly when the
// blind hash differs.
func TestNamesMatchesBlindHash(t *testing.T) {
	const nodes = 6
	spec := Spec{Nodes: nodes, New: func(NodeID) Node { return &namesNode{} }, Symmetry: [][]NodeID{{2, 3, 4}}}
	y := newSymmetry(&spec)
	r := rand.New(rand.NewPCG(29, 1))
	id := func() NodeID { return NodeID(r.IntN(nodes+2) - 1) } // -1 and past the last too
	set := func() NodeSet {
		var s NodeSet
		for i := range nodes {
			if r.IntN(4) == 0 {
				s = s.Add(NodeID(i))
			}
		}
		return s
	}
	var named, plain int
	for range 20000 {
		n := &namesNode{A: r.IntN(5), Flag: r.IntN(2) == 0, Name: "x", Hid: id()}
		if r.IntN(3) == 0 {
			n.Self = id()
		}
		if r.IntN(3) == 0 {
			n.Peers = set()
		}
		if r.IntN(3) == 0 {
			n.Arr[r.IntN(3)] = id()
		}
		if r.IntN(3) == 0 {
			n.Sets[r.IntN(2)] = set()
		}
		for range r.IntN(3) {
			n.List = append(n.List, id())
		}
		for range r.IntN(3) {
			n.Seen = append(n.Seen, set())
		}
		s := NewState([]Node{n})
		var h Hasher
		hashSlot(&h, s, 0)
		s.nodes[0].fp = h.Sum64()
		p := planOf(typeOf(Node(n)))
		if p.namesDirect == nil {
			t.Fatal("a pointer to a struct of plain fields has no namesDirect")
		}
		names := p.namesDirect(ifaceData(n), &y.members)
		differs := y.blindHash(s, 0) != s.nodes[0].fp
		if names != differs {
			t.Fatalf("%+v: names a member %v, but its blind hash differs %v", *n, names, differs)
		}
		if y.blindSlot(s, 0) != y.blindHash(s, 0) {
			t.Fatalf("%+v: blindSlot differs from the blind hash", *n)
		}
		if names {
			named++
		} else {
			plain++
		}
	}
	if named < 1000 || plain < 1000 {
		t.Errorf("%d values named a member, %d did not: tune the test", named, plain)
	}
}
