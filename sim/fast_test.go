package sim_test

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdraft"
)

// The compiled copier and hasher of values that can alias (fast.go) must
// do what the reflective plans do: these tests check them against each
// other, as etcd's quorum/quick_test.go checks its optimised majority
// against the dumb one.

type fcLeaf struct {
	N     int
	S     string
	B     []byte
	Ratio float64 // hashed through the reflective plan
}

type fcNode struct {
	ID     int
	Next   *fcNode // cycles
	Peer   *fcNode
	Leaf   *fcLeaf
	Leaf2  *fcLeaf // aliases Leaf at times
	Any    any     // nil, a *fcLeaf, an fcLeaf, an int, a *fcNode
	Kids   []*fcNode
	M      map[int]*fcLeaf // values shared with Leaf and with each other
	Set    map[string]bool
	Arr    [2]*fcLeaf
	F      func() int // a method value bound to a node of the graph, or nil
	mu     sync.Mutex
	Names  []string
	Hidden *fcLeaf `livecheck:"-"` // shared by a copy, not hashed
	// Maps of each shape the compiled paths copy and hash without
	// reflect (fast.go's mapShape), and one of none.
	Votes  map[uint64]struct{}
	Flags  map[sim.NodeID]bool
	Counts map[int64]uint64
	Prs    map[uint64]*fcNode // cycles through maps
	Prs2   map[uint64]*fcNode // the same map as Prs at times
	Small  map[int32]int
}

func (n *fcNode) Get() int { return n.ID }

// randomGraph builds a graph of fcNodes with aliasing, cycles, maps,
// interfaces and method values, from rng.
func randomGraph(rng *rand.Rand) *fcNode {
	leaves := make([]*fcLeaf, 1+rng.IntN(4))
	for i := range leaves {
		leaves[i] = &fcLeaf{N: rng.IntN(100), S: string(rune('a' + rng.IntN(26))), Ratio: float64(rng.IntN(4)) / 3}
		if rng.IntN(2) == 0 {
			leaves[i].B = []byte{byte(rng.IntN(256)), 1}
		}
	}
	leaf := func() *fcLeaf {
		if rng.IntN(5) == 0 {
			return nil
		}
		return leaves[rng.IntN(len(leaves))]
	}
	nodes := make([]*fcNode, 1+rng.IntN(6))
	for i := range nodes {
		nodes[i] = &fcNode{ID: i}
	}
	node := func() *fcNode {
		if rng.IntN(4) == 0 {
			return nil
		}
		return nodes[rng.IntN(len(nodes))]
	}
	for _, n := range nodes {
		n.Next, n.Peer, n.Leaf, n.Leaf2 = node(), node(), leaf(), leaf()
		switch rng.IntN(6) {
		case 0:
			n.Any = leaf()
		case 1:
			if l := leaf(); l != nil {
				n.Any = *l
			}
		case 2:
			n.Any = rng.IntN(10)
		case 3:
			n.Any = node()
		}
		for range rng.IntN(3) {
			n.Kids = append(n.Kids, node())
		}
		if rng.IntN(3) > 0 {
			n.M = map[int]*fcLeaf{}
			for range rng.IntN(4) {
				n.M[rng.IntN(10)] = leaf()
			}
		}
		if rng.IntN(2) == 0 {
			n.Set = map[string]bool{"x": rng.IntN(2) == 0}
		}
		n.Arr = [2]*fcLeaf{leaf(), leaf()}
		if m := node(); m != nil {
			n.F = m.Get
		}
		if rng.IntN(2) == 0 {
			n.Names = []string{"p", "q"}[:rng.IntN(3)]
		}
		n.Hidden = leaf()
		if rng.IntN(3) > 0 {
			n.Votes, n.Flags, n.Counts, n.Small = map[uint64]struct{}{}, map[sim.NodeID]bool{}, map[int64]uint64{}, map[int32]int{}
			for range rng.IntN(5) {
				n.Votes[rng.Uint64N(8)] = struct{}{}
				n.Flags[sim.NodeID(rng.IntN(8))] = rng.IntN(2) == 0
				n.Counts[rng.Int64N(8)-4] = rng.Uint64N(3)
				n.Small[rng.Int32N(8)] = rng.IntN(3)
			}
		}
		if rng.IntN(2) == 0 {
			n.Prs = map[uint64]*fcNode{}
			for range rng.IntN(4) {
				n.Prs[rng.Uint64N(6)] = node()
			}
		}
		switch rng.IntN(3) {
		case 0:
			n.Prs2 = n.Prs
		case 1:
			if len(n.Prs) > 0 {
				n.Prs2 = map[uint64]*fcNode{9: node()}
			}
		}
	}
	// A map of one node met again in another's.
	if o := nodes[rng.IntN(len(nodes))]; o.Prs2 == nil {
		o.Prs2 = nodes[0].Prs
	}
	// Every node reachable from the root, so that every method value is
	// bound to a node the copy copies.
	nodes[0].Kids = append(nodes[0].Kids, nodes...)
	return nodes[0]
}

// pointers returns the addresses of the objects, maps and backing arrays
// reachable from v, funcs' closures included.
func pointers(v reflect.Value, met map[unsafe.Pointer]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		if v.IsNil() || met[v.UnsafePointer()] != "" {
			return
		}
		met[v.UnsafePointer()] = v.Type().String()
		if v.Kind() == reflect.Pointer {
			pointers(v.Elem(), met)
			return
		}
		it := v.MapRange()
		for it.Next() {
			pointers(it.Key(), met)
			pointers(it.Value(), met)
		}
	case reflect.Func:
		// A method value's closure, which a copy makes again; a
		// top-level func's is static, shared.
		if !v.IsNil() && v.CanAddr() && strings.HasSuffix(runtime.FuncForPC(v.Pointer()).Name(), "-fm") {
			met[*(*unsafe.Pointer)(v.Addr().UnsafePointer())] = v.Type().String()
		}
	case reflect.Interface:
		if !v.IsNil() {
			pointers(v.Elem(), met)
		}
	case reflect.Slice:
		if v.Len() > 0 && v.Type().Elem().Size() > 0 {
			met[v.UnsafePointer()] = v.Type().String()
		}
		for i := range v.Len() {
			pointers(v.Index(i), met)
		}
	case reflect.Array:
		for i := range v.Len() {
			pointers(v.Index(i), met)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("livecheck") == "-" {
				continue
			}
			pointers(v.Field(i), met)
		}
	}
}

// shared returns the type of an object a and b share that a copy must
// not share, "" if none.
func shared(a, b any) string {
	ma, mb := map[unsafe.Pointer]string{}, map[unsafe.Pointer]string{}
	pointers(reflect.ValueOf(a), ma)
	pointers(reflect.ValueOf(b), mb)
	for p, t := range ma {
		if mb[p] != "" {
			return t
		}
	}
	return ""
}

// checkCopies checks the compiled copy and hash of v against the
// reflective ones: the same fingerprints, copies independent of v.
func checkCopies[T any](t *testing.T, v T, mutate func(T)) {
	t.Helper()
	fp := sim.Fingerprint(v)
	if r := sim.FingerprintReflective(v); r != fp {
		t.Fatalf("compiled fingerprint %x, reflective %x", fp, r)
	}
	fast, slow := sim.Copy(v), sim.CopyReflective(v)
	for name, c := range map[string]T{"compiled": fast, "reflective": slow} {
		if got := sim.Fingerprint(c); got != fp {
			t.Fatalf("fingerprint of the %s copy %x, of the original %x", name, got, fp)
		}
		if got := sim.FingerprintReflective(c); got != fp {
			t.Fatalf("reflective fingerprint of the %s copy %x, of the original %x", name, got, fp)
		}
	}
	if typ := shared(v, fast); typ != "" {
		t.Fatalf("the compiled copy shares a %s with the original", typ)
	}
	if mutate != nil {
		mutate(fast)
		if got := sim.Fingerprint(v); got != fp {
			t.Fatalf("mutating the compiled copy changed the original's fingerprint")
		}
	}
}

func TestFastMatchesReflective(t *testing.T) {
	if !sim.CanAlias(&fcNode{}) {
		t.Fatal("fcNode does not go through the memo")
	}
	rng := rand.New(rand.NewPCG(36, 1))
	for i := range 2000 {
		g := randomGraph(rng)
		checkCopies(t, g, func(c *fcNode) {
			met := map[*fcNode]bool{}
			var walk func(n *fcNode)
			walk = func(n *fcNode) {
				if n == nil || met[n] {
					return
				}
				met[n] = true
				n.ID += 1000
				if n.Leaf != nil {
					n.Leaf.N++
					n.Leaf.B = append(n.Leaf.B, 7)
				}
				for k, l := range n.M {
					if l != nil {
						l.S += "!"
					}
					n.M[k+100] = nil
				}
				for k := range n.Votes {
					n.Votes[k+100] = struct{}{}
				}
				for k := range n.Flags {
					n.Flags[k] = !n.Flags[k]
				}
				for k := range n.Counts {
					n.Counts[k]++
				}
				for k := range n.Small {
					n.Small[k]++
				}
				for k, p := range n.Prs {
					n.Prs[k+100] = p
					walk(p)
				}
				walk(n.Next)
				walk(n.Peer)
				for _, k := range n.Kids {
					walk(k)
				}
			}
			walk(c)
		})
		// Aliasing kept, method values rebound to the copy of their
		// receiver.
		c := sim.Copy(g)
		if (g.Leaf == g.Leaf2) != (c.Leaf == c.Leaf2) || (g.Next == g) != (c.Next == c) || (g.Next == g.Peer) != (c.Next == c.Peer) ||
			(g.Prs != nil && reflect.ValueOf(g.Prs).Pointer() == reflect.ValueOf(g.Prs2).Pointer()) != (c.Prs != nil && reflect.ValueOf(c.Prs).Pointer() == reflect.ValueOf(c.Prs2).Pointer()) {
			t.Fatalf("graph %d: aliasing not kept", i)
		}
		bumped := map[*fcNode]bool{}
		for _, k := range c.Kids {
			if k != nil && !bumped[k] {
				bumped[k] = true
				k.ID += 1000
			}
		}
		if g.F != nil && c.F() != g.F()+1000 {
			t.Fatalf("graph %d: method value bound to the original: %d, want %d", i, c.F(), g.F()+1000)
		}
		if c.Hidden != g.Hidden {
			t.Fatalf("graph %d: a field tagged livecheck:\"-\" was not shared", i)
		}
	}
}

// TestFastMethodValueRebound pins the rebinding of a method value to the
// copy of its receiver, whether the receiver is copied before or after
// the func.
func TestFastMethodValueRebound(t *testing.T) {
	a := &fcNode{ID: 1}
	b := &fcNode{ID: 2}
	a.F, a.Next = b.Get, b // the func before its receiver
	b.F, b.Peer = b.Get, a // the receiver before the func
	c := sim.Copy(a)
	c.Next.ID = 20
	if c.F() != 20 || c.Next.F() != 20 {
		t.Fatalf("method values not rebound: %d %d", c.F(), c.Next.F())
	}
	if a.F() != 2 {
		t.Fatalf("the original's method value changed: %d", a.F())
	}
}

// TestFastEtcdRaft checks the compiled copier and hasher against the
// reflective ones on the etcd raft nodes of a random run of 2,000 steps.
func TestFastEtcdRaft(t *testing.T) {
	steps := 2000
	if testing.Short() {
		steps = 300
	}
	_, m, err := etcdraft.System.Model(livecheck.Config{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(36, 2))
	w.Chooser = func(n int) int { return rng.IntN(n) }
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	if !sim.CanAlias(s.Node(0)) {
		t.Fatal("the raft node does not go through the memo")
	}
	var evs []sim.Event
	for step := range steps {
		for i := range s.N() {
			n := s.Node(sim.NodeID(i)).(*etcdraft.Node)
			checkCopies(t, n, func(c *etcdraft.Node) {
				c.Raft.Tick()
				_ = c.Raft.Campaign()
				c.Raft.Ready()
				c.Applied = append(c.Applied, etcdraft.Entry{ID: 99})
			})
			fp := sim.Fingerprint(n)
			for name, c := range map[string]sim.Node{"compiled": sim.CopyIntoFast(n), "reflective": sim.CopyIntoReflective(n)} {
				if got := sim.Fingerprint(c); got != fp {
					t.Fatalf("step %d node %d: fingerprint of the %s copy into a spare %x, of the original %x", step, i, name, got, fp)
				}
				// The storage stays one object, raft's log's and the
				// node's.
				if storageOf(c) != unsafe.Pointer(c.(*etcdraft.Node).Storage) {
					t.Fatalf("step %d node %d: the %s copy's raft log does not read the copy's storage", step, i, name)
				}
			}
		}
		evs = w.Enabled(s, evs[:0])
		if len(evs) == 0 {
			break
		}
		if s, err = w.Apply(s, evs[rng.IntN(len(evs))], nil); err != nil {
			t.Fatal(err)
		}
	}
}

// storageOf returns the storage raft's log reads, an unexported field.
func storageOf(n sim.Node) unsafe.Pointer {
	v := reflect.ValueOf(n).Elem().FieldByName("Raft").Elem().FieldByName("raft").Elem()
	return v.FieldByName("raftLog").Elem().FieldByName("storage").Elem().UnsafePointer()
}
