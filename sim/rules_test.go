package sim_test

import (
	"errors"
	"log"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/livecheck/livecheck/sim"
)

// A library's state, as raft's is: a storage reached through an interface
// and through a pointer, a mutex, a counter of calls that is not state, a
// func bound to its own object and a plain func, a protobuf message and a
// logger.
type (
	libStorage interface{ Len() int }
	libStore   struct {
		mu    sync.Mutex
		ents  []int
		calls int // statistics: left out by a rule
	}
	libCounter struct {
		n    int
		tick func()            // a method value bound to the counter itself
		step func(*libCounter) // a top-level func
	}
	libNode struct {
		mu    sync.Mutex
		msg   *wrapperspb.StringValue
		st    libStorage // the same store as own
		own   *libStore
		bump  func() // bound to c, which comes after it
		c     *libCounter
		lg    *log.Logger
		flag  atomic.Int64
		ptr   atomic.Pointer[libStore]
		after *libStore
	}
)

func (s *libStore) Len() int                   { s.calls++; return len(s.ents) }
func (c *libCounter) inc()                     { c.n++ }
func stepOne(c *libCounter)                    { c.n++ }
func stepTen(c *libCounter)                    { c.n += 10 }
func (n *libNode) storeLen() int               { return n.st.Len() }
func (n *libNode) counterN() int               { return n.c.n }
func (n *libNode) bumpTwice()                  { n.bump(); n.bump() }
func (n *libNode) setStep(f func(*libCounter)) { n.c.step = f }

func init() {
	// Rules are registered before any plan is built: in an init func.
	sim.SkipFields[libStore]("calls")
}

func newLibNode() *libNode {
	st := &libStore{ents: []int{1, 2}}
	c := &libCounter{step: stepOne}
	c.tick = c.inc
	n := &libNode{msg: wrapperspb.String("hello"), st: st, own: st, c: c, bump: c.inc,
		lg: log.New(os.Stderr, "", 0)}
	n.flag.Store(7)
	n.ptr.Store(st)
	n.after = st
	return n
}

func TestLibraryStateHash(t *testing.T) {
	base := sim.Fingerprint(newLibNode())
	same := []struct {
		name string
		edit func(n *libNode)
	}{
		{"another logger", func(n *libNode) { n.lg = log.New(os.Stdout, "x", 0) }},
		{"calls counted", func(n *libNode) { n.own.Len(); n.own.Len() }},
		{"mutexes locked", func(n *libNode) { n.mu.Lock(); n.own.mu.Lock() }},
		{"message marshalled", func(n *libNode) {
			if _, err := proto.Marshal(n.msg); err != nil {
				t.Fatal(err)
			}
		}},
		{"message reflected", func(n *libNode) { n.msg.ProtoReflect() }},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			n := newLibNode()
			tc.edit(n)
			if got := sim.Fingerprint(n); got != base {
				t.Errorf("fingerprint %#x, want %#x: the change is not state", got, base)
			}
		})
	}
	differ := []struct {
		name string
		edit func(n *libNode)
	}{
		{"message", func(n *libNode) { n.msg.Value = "bye" }},
		{"store through the interface", func(n *libNode) { n.st.(*libStore).ents[0] = 9 }},
		{"store appended", func(n *libNode) { n.own.ents = append(n.own.ents, 3) }},
		{"counter", func(n *libNode) { n.c.tick() }},
		{"plain func", func(n *libNode) { n.setStep(stepTen) }},
		{"nil func", func(n *libNode) { n.c.tick = nil }},
		{"method value's receiver", func(n *libNode) { other := &libCounter{}; n.c.tick = other.inc }},
		{"aliasing", func(n *libNode) { n.own = &libStore{ents: []int{1, 2}} }},
		{"aliasing through the interface", func(n *libNode) { n.st = &libStore{ents: []int{1, 2}} }},
		{"atomic", func(n *libNode) { n.flag.Add(1) }},
		{"atomic pointer", func(n *libNode) { n.ptr.Store(&libStore{ents: []int{1, 2}}) }},
	}
	seen := map[uint64]string{base: "base"}
	for _, tc := range differ {
		t.Run(tc.name, func(t *testing.T) {
			n := newLibNode()
			tc.edit(n)
			got := sim.Fingerprint(n)
			if prev, ok := seen[got]; ok {
				t.Errorf("fingerprint %#x, as %s", got, prev)
			}
			seen[got] = tc.name
		})
	}
}

func TestLibraryStateCopy(t *testing.T) {
	n := newLibNode()
	n.mu.Lock()
	n.own.calls = 5
	fp := sim.Fingerprint(n)
	c := sim.Copy(n)
	if sim.Fingerprint(c) != fp {
		t.Fatalf("copy fingerprint %#x, want %#x", sim.Fingerprint(c), fp)
	}
	// Aliasing kept, on new objects.
	if c.own == n.own || c.st.(*libStore) != c.own || c.after != c.own || c.ptr.Load() != c.own {
		t.Errorf("copy's store: own %p st %p after %p ptr %p, want one new object (original %p)",
			c.own, c.st, c.after, c.ptr.Load(), n.own)
	}
	if c.c == n.c || c.msg == n.msg || !proto.Equal(c.msg, n.msg) {
		t.Errorf("copy shares the counter or the message, or the message differs")
	}
	// Shared, zeroed, kept.
	if c.lg != n.lg {
		t.Errorf("logger not shared")
	}
	if !c.mu.TryLock() {
		t.Errorf("copy's mutex is locked: a copy must get a zero mutex")
	}
	if c.own.calls != 5 {
		t.Errorf("field left out by SkipFields: %d in the copy, want the original's 5", c.own.calls)
	}
	// Method values rebound: calling the copy's changes the copy only,
	// whether the receiver was copied before the func (tick) or after
	// (bump).
	c.c.tick()
	c.bumpTwice()
	c.c.step(c.c)
	if c.counterN() != 4 || n.counterN() != 0 {
		t.Errorf("after tick, bump twice and step on the copy: copy %d, original %d; want 4 and 0", c.counterN(), n.counterN())
	}
	c.own.ents[0] = 42
	c.msg.Value = "changed"
	if n.own.ents[0] != 1 || n.msg.Value != "hello" || sim.Fingerprint(n) != fp {
		t.Errorf("changing the copy changed the original")
	}
	if c.storeLen() != 2 || c.own.calls != 6 || n.own.calls != 5 {
		t.Errorf("Len through the copy's interface counted on calls %d (original %d), want 6 (5)", c.own.calls, n.own.calls)
	}
}

// TestMethodValueLayout pins what rebinding relies on, on this Go: a
// method value bound to a pointer is a closure {code pointer, receiver},
// named "...-fm".
func TestMethodValueLayout(t *testing.T) {
	c := &libCounter{}
	f := c.inc
	cl := *(*unsafe.Pointer)(unsafe.Pointer(&f))
	words := (*[2]unsafe.Pointer)(cl)
	if words[1] != unsafe.Pointer(c) {
		t.Fatalf("closure's second word %p, want the receiver %p", words[1], c)
	}
	name := runtime.FuncForPC(uintptr(words[0])).Name()
	if !strings.HasSuffix(name, ".(*libCounter).inc-fm") {
		t.Errorf("method value named %q, want it to end in .(*libCounter).inc-fm", name)
	}
	if got := reflect.ValueOf(f).Pointer(); got != uintptr(words[0]) {
		t.Errorf("reflect's code pointer %#x, the closure's first word %p", got, words[0])
	}
}

func TestSizeCacheIgnored(t *testing.T) {
	for _, msg := range []proto.Message{wrapperspb.String("x"), wrapperspb.Int64(-3), wrapperspb.Bytes([]byte("ab"))} {
		before := sim.Fingerprint(msg)
		if _, err := proto.Marshal(msg); err != nil {
			t.Fatal(err)
		}
		if after := sim.Fingerprint(msg); after != before {
			t.Errorf("%T: fingerprint %#x after Marshal, %#x before", msg, after, before)
		}
		c := sim.Copy(msg)
		if !proto.Equal(c, msg) || sim.Fingerprint(c) != before {
			t.Errorf("%T: copy %v differs", msg, c)
		}
	}
}

type closureHolder struct {
	N     int
	inner closureInner
}

type closureInner struct{ f func() int }

type valueRecv int

func (v valueRecv) get() int { return int(v) }

func TestUncopyableFuncNamesPathAndRule(t *testing.T) {
	x := 3
	cases := []struct {
		name string
		f    func() int
		want []string
	}{
		{"closure", func() int { return x }, []string{
			"closureHolder.inner.f (type func() int)",
			".TestUncopyableFuncNamesPathAndRule.func",
			"is a closure",
			"tag the field `livecheck:\"-\"`",
			`sim.SkipFieldsNamed("github.com/livecheck/livecheck/sim_test.closureInner", "f")`,
		}},
		{"method value on a value", valueRecv(4).get, []string{
			"closureHolder.inner.f (type func() int)",
			"valueRecv.get-fm is a method value bound to a value",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &closureHolder{N: 1}
			n.inner.f = tc.f
			for _, op := range []struct {
				name string
				do   func()
			}{
				{"Fingerprint", func() { sim.Fingerprint(n) }},
				{"Copy", func() { sim.Copy(n) }},
			} {
				err := catchTypeError(t, op.do)
				if err == nil {
					t.Fatalf("%s: no error", op.name)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q\nwant it to contain %q", op.name, err, w)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: error on more than one line: %q", op.name, err)
				}
			}
		})
	}
}

// An exported struct one does not own gets the generic call in the advice.
type Foreign struct{ Hook func() }

func TestTypeErrorAdvice(t *testing.T) {
	y := 0
	err := catchTypeError(t, func() { sim.Fingerprint(map[string]Foreign{"a": {Hook: func() { y++ }}}) })
	var te *sim.TypeError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *TypeError", err)
	}
	if te.Path != `map[string]sim_test.Foreign["a"].Hook` {
		t.Errorf("path %q", te.Path)
	}
	if want := `sim.SkipFields[sim_test.Foreign]("Hook")`; !strings.Contains(te.Fix, want) {
		t.Errorf("fix %q, want it to contain %s", te.Fix, want)
	}
}

type lateRuled struct{ N int }

func TestRuleRegisteredLatePanics(t *testing.T) {
	sim.Fingerprint(lateRuled{N: 1})
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "sim_test.lateRuled") || !strings.Contains(s, "init func") {
			t.Errorf("late rule: panic %v, want one naming the type and saying to register in an init func", r)
		}
	}()
	sim.SkipType[lateRuled]()
}

func TestWorldReportsFuncPath(t *testing.T) {
	x := 0
	w, err := sim.NewWorld(sim.Spec{Nodes: 1, New: func(sim.NodeID) sim.Node {
		return &funcNode{f: func() { x++ }}
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Initial()
	var te *sim.TypeError
	if !errors.As(err, &te) || te.Path != "funcNode.f" || !strings.Contains(te.Fix, `sim.SkipFieldsNamed("github.com/livecheck/livecheck/sim_test.funcNode", "f")`) {
		t.Errorf("Initial: %v, want a *TypeError at funcNode.f that names the rule", err)
	}
}

type funcNode struct {
	tnode
	f func()
}

func catchTypeError(t *testing.T, do func()) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			var ok bool
			if err, ok = r.(error); !ok {
				t.Fatalf("panic with a non-error %v", r)
			}
		}
	}()
	do()
	return nil
}

// Types given rules in init, one per kind.
type (
	ruledSkip   struct{ N int }
	ruledShare  struct{ N int }
	ruledCustom struct {
		N     int
		cache []int // rebuilt from N: neither copied nor hashed
	}
	ruledHolder struct {
		A ruledSkip
		B *ruledShare
		C ruledCustom
		D int
	}
)

func init() {
	sim.SkipType[ruledSkip]()
	sim.ShareType[ruledShare]()
	sim.CustomType(func(c ruledCustom) ruledCustom { return ruledCustom{N: c.N} },
		func(h *sim.Hasher, c ruledCustom) { h.Int(c.N) })
}

func TestTypeRules(t *testing.T) {
	mk := func() *ruledHolder {
		return &ruledHolder{A: ruledSkip{1}, B: &ruledShare{2}, C: ruledCustom{N: 3, cache: []int{3}}, D: 4}
	}
	base := sim.Fingerprint(mk())
	for _, tc := range []struct {
		name string
		edit func(h *ruledHolder)
		same bool
	}{
		{"skipped type", func(h *ruledHolder) { h.A.N = 9 }, true},
		{"shared type", func(h *ruledHolder) { h.B = &ruledShare{9} }, true},
		{"custom hash's input", func(h *ruledHolder) { h.C.N = 9 }, false},
		{"what the custom hash leaves out", func(h *ruledHolder) { h.C.cache = nil }, true},
		{"plain field", func(h *ruledHolder) { h.D = 9 }, false},
	} {
		h := mk()
		tc.edit(h)
		if got := sim.Fingerprint(h); (got == base) != tc.same {
			t.Errorf("%s: fingerprint %#x, base %#x, want same=%v", tc.name, got, base, tc.same)
		}
	}
	h := mk()
	c := sim.Copy(h)
	if c.A != (ruledSkip{}) || c.B != h.B || c.C.N != 3 || c.C.cache != nil || c.D != 4 {
		t.Errorf("copy %+v: want A zero, B shared, C through the custom copy (no cache), D kept", c)
	}
	if d := sim.Dump(h); d != "ruledHolder{C:{N:3 cache:[3]} D:4}" {
		t.Errorf("dump %q: want the skipped and shared fields left out", d)
	}
	if d := sim.Dump(newLibNode()); !strings.Contains(d, ".(*libCounter).inc-fm") || strings.Contains(d, "calls") || strings.Contains(d, "sizeCache") {
		t.Errorf("library dump %q: want funcs by name, left-out fields absent", d)
	}
}
