package properties_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// regOp is an operation on a register of ints: a write of V, or a read.
type regOp struct {
	Write bool
	V     int
}

func (o regOp) String() string {
	if o.Write {
		return fmt.Sprintf("write(%d)", o.V)
	}
	return "read()"
}

// register is a register of ints, 0 at first; a write returns 0.
var register = properties.Spec[int, regOp, int]{
	Name: "register",
	Init: func() int { return 0 },
	Step: func(s int, in regOp) []properties.Outcome[int, int] {
		if in.Write {
			return []properties.Outcome[int, int]{{Out: 0, Next: in.V}}
		}
		return []properties.Outcome[int, int]{{Out: s, Next: s}}
	},
}

// kvOp is an operation on a key-value store of ints.
type kvOp struct {
	Key   string
	Write bool
	V     int
}

func (o kvOp) String() string {
	if o.Write {
		return fmt.Sprintf("put(%s,%d)", o.Key, o.V)
	}
	return fmt.Sprintf("get(%s)", o.Key)
}

// kv is a store of int registers by key, partitioned by key.
var kv = properties.Spec[int, kvOp, int]{
	Name: "kv",
	Init: func() int { return 0 },
	Step: func(s int, in kvOp) []properties.Outcome[int, int] {
		if in.Write {
			return []properties.Outcome[int, int]{{Out: 0, Next: in.V}}
		}
		return []properties.Outcome[int, int]{{Out: s, Next: s}}
	},
	Key: func(in kvOp) string { return in.Key },
}

// lossy is a register whose writes may be lost: a nondeterministic spec.
var lossy = properties.Spec[int, regOp, int]{
	Name: "lossy",
	Init: func() int { return 0 },
	Step: func(s int, in regOp) []properties.Outcome[int, int] {
		if in.Write {
			return []properties.Outcome[int, int]{{Out: 0, Next: in.V}, {Out: 0, Next: s}}
		}
		return []properties.Outcome[int, int]{{Out: s, Next: s}}
	},
}

// ev is one event of a history in a test: client C invokes In, or
// (Ret) returns Out.
type ev struct {
	c   int
	ret bool
	in  any
	out any
}

func call(c int, in any) ev    { return ev{c: c, in: in} }
func ret(c int, out any) ev    { return ev{c: c, ret: true, out: out} }
func w(v int) regOp            { return regOp{Write: true, V: v} }
func r() regOp                 { return regOp{} }
func put(k string, v int) kvOp { return kvOp{Key: k, Write: true, V: v} }
func get(k string) kvOp        { return kvOp{Key: k} }

func record(h properties.History, evs ...ev) properties.History {
	for _, e := range evs {
		if e.ret {
			h.Return(e.c, e.out)
		} else {
			h.Invoke(e.c, e.in)
		}
	}
	return h
}

func TestHistoryVerdicts(t *testing.T) {
	cases := []struct {
		name string
		h    properties.History
		evs  []ev
		want string // "" linearizable, else the violation
	}{
		{"concurrent write read new", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, r()), ret(1, 1), ret(0, 0)}, ""},
		{"concurrent write read old", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, r()), ret(1, 0), ret(0, 0)}, ""},
		{"stale read", properties.NewHistory(register),
			[]ev{call(0, w(1)), ret(0, 0), call(1, r()), ret(1, 0)},
			"not linearizable (register): client 1's read() returned 0, which no order of the operations allows; the operation: client 1: read() -> 0 (3-4); completed before it: client 0: write(1) -> 0 (1-2); the spec's state before it can be: 1"},
		{"read goes back", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, r()), ret(1, 1), call(2, r()), ret(2, 0)},
			"not linearizable (register): client 2's read() returned 0, which no order of the operations allows; the operation: client 2: read() -> 0 (4-5); completed before it: client 1: read() -> 1 (2-3); concurrent with it: client 0: write(1) pending (from 1); the spec's state before it can be: 1"},
		{"read of a value never written", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, r()), ret(1, 2)},
			"not linearizable (register): client 1's read() returned 2, which no order of the operations allows; the operation: client 1: read() -> 2 (2-3); concurrent with it: client 0: write(1) pending (from 1); the spec's state before it can be: 0"},
		{"a pending write linearized early must keep its place", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, w(2)), call(2, r()), ret(2, 2), call(3, r()), ret(3, 1), ret(0, 0), ret(1, 0)}, ""},
		{"two reads disagree on the order of two writes", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, w(2)), ret(0, 0), ret(1, 0), call(2, r()), ret(2, 2), call(3, r()), ret(3, 1)},
			"not linearizable (register): client 3's read() returned 1, which no order of the operations allows; the operation: client 3: read() -> 1 (7-8); completed before it: client 0: write(1) -> 0 (1-3), client 1: write(2) -> 0 (2-4), client 2: read() -> 2 (5-6); the spec's state before it can be: 2"},
		{"keys are independent", properties.NewHistory(kv),
			[]ev{call(0, put("x", 1)), ret(0, 0), call(1, get("y")), ret(1, 0), call(1, get("x")), ret(1, 1)}, ""},
		{"stale read on one key", properties.NewHistory(kv),
			[]ev{call(0, put("x", 1)), ret(0, 0), call(0, put("y", 2)), call(1, get("x")), ret(1, 0)},
			"not linearizable (kv on key x): client 1's get(x) returned 0, which no order of the operations allows; the operation: client 1: get(x) -> 0 (4-5); completed before it: client 0: put(x,1) -> 0 (1-2); the spec's state before it can be: 1"},
		{"an orphan may take effect late", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(0, r()), ret(0, 0), call(1, r()), ret(1, 1)}, ""},
		{"an orphan takes effect once", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(0, w(2)), ret(0, 0), call(1, r()), ret(1, 1), call(1, r()), ret(1, 2)},
			"not linearizable (register): client 1's read() returned 2, which no order of the operations allows; the operation: client 1: read() -> 2 (6-7); completed before it: client 0: write(2) -> 0 (2-3), client 1: read() -> 1 (4-5); concurrent with it: client 0: write(1) pending (from 1); the spec's state before it can be: 1"},
		{"a lossy write may be lost", properties.NewHistory(lossy),
			[]ev{call(0, w(1)), ret(0, 0), call(1, r()), ret(1, 0)}, ""},
		{"but a lost write does not come back", properties.NewHistory(lossy),
			[]ev{call(0, w(1)), ret(0, 0), call(1, r()), ret(1, 0), call(1, r()), ret(1, 1)},
			"not linearizable (lossy): client 1's read() returned 1, which no order of the operations allows; the operation: client 1: read() -> 1 (5-6); completed before it: client 0: write(1) -> 0 (1-2), client 1: read() -> 0 (3-4); the spec's state before it can be: 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := record(c.h, c.evs...)
			if h.Err() != "" {
				t.Fatalf("error %q", h.Err())
			}
			if got := h.Violation(); got != c.want {
				t.Errorf("violation\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// NotLinearizable is the violation as data: the operation no order
// allows, those on its key before it and beside it, the states, and the
// longest linearizable prefix with an order of it; String is Violation.
// Events counts Invoke and Return calls up to the violation, none after.
func TestNotLinearizable(t *testing.T) {
	op := func(c int, in, out any, call, ret int) properties.Op {
		o := properties.Op{Client: c, Input: in, Output: out, Call: call, Return: ret}
		if k, ok := in.(kvOp); ok {
			o.Key = k.Key
		}
		return o
	}
	cases := []struct {
		name   string
		h      properties.History
		evs    []ev
		events int
		want   properties.NotLinearizable
	}{
		// The read of 1 needs the pending write before it: the order
		// takes it in, after nothing that returned could go first.
		{"read goes back", properties.NewHistory(register),
			[]ev{call(0, w(1)), call(1, r()), ret(1, 1), call(2, r()), ret(2, 0), call(0, r())}, 5,
			properties.NotLinearizable{Spec: "register", Op: op(2, r(), 0, 4, 5),
				Before: []properties.Op{op(1, r(), 1, 2, 3)}, Concurrent: []properties.Op{op(0, w(1), nil, 1, 0)},
				States: []string{"1"}, Prefix: 4,
				Order: []properties.Op{op(0, w(1), nil, 1, 0), op(1, r(), 1, 2, 3)}}},
		// Another key's operations are in no list; a write pending on
		// the key that need not take effect is not in the order.
		{"stale read on one key", properties.NewHistory(kv),
			[]ev{call(0, put("x", 1)), ret(0, 0), call(0, put("y", 2)), call(2, put("x", 3)), call(1, get("x")), ret(1, 0)}, 6,
			properties.NotLinearizable{Spec: "kv", Key: "x", Op: op(1, get("x"), 0, 5, 6),
				Before: []properties.Op{op(0, put("x", 1), 0, 1, 2)}, Concurrent: []properties.Op{op(2, put("x", 3), nil, 4, 0)},
				States: []string{"1"}, Prefix: 5,
				Order: []properties.Op{op(0, put("x", 1), 0, 1, 2)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := record(c.h, c.evs...)
			got := h.NotLinearizable()
			if got == nil {
				t.Fatalf("linearizable: %v", h)
			}
			if fmt.Sprintf("%#v", *got) != fmt.Sprintf("%#v", c.want) {
				t.Errorf("got\n%+v\nwant\n%+v", *got, c.want)
			}
			if got.String() != h.Violation() || h.Events() != c.events {
				t.Errorf("String %q, Violation %q; %d events, want %d", got, h.Violation(), h.Events(), c.events)
			}
		})
	}
	if h := record(properties.NewHistory(register), call(0, w(1)), ret(0, 0)); h.NotLinearizable() != nil || h.Events() != 2 {
		t.Errorf("a linearizable history: %v, %d events", h.NotLinearizable(), h.Events())
	}
}

// Two interleavings that leave the same possibilities are one state: the
// History's fingerprint (and a node's that holds it) is equal; others
// differ.
func TestHistoryFingerprint(t *testing.T) {
	fp := func(h properties.History) uint64 { return sim.Fingerprint(&holder{H: h}) }
	a := record(properties.NewHistory(kv), call(0, put("x", 1)), call(1, put("y", 2)), ret(0, 0), ret(1, 0))
	b := record(properties.NewHistory(kv), call(1, put("y", 2)), ret(1, 0), call(0, put("x", 1)), ret(0, 0))
	if fp(a) != fp(b) {
		t.Errorf("independent keys in two orders: fingerprints %x and %x; want equal (%v, %v)", fp(a), fp(b), a, b)
	}
	// A read that returned the initial value leaves no trace.
	c := record(properties.NewHistory(kv), call(0, get("z")), ret(0, 0))
	if e := properties.NewHistory(kv); fp(c) != fp(e) {
		t.Errorf("a history of one read of 0 hashes %x, the empty one %x; want equal (%v)", fp(c), fp(e), c)
	}
	// Two concurrent writes that both returned leave either value; one
	// after the other, only the last.
	d := record(properties.NewHistory(register), call(0, w(1)), call(1, w(2)), ret(0, 0), ret(1, 0))
	e := record(properties.NewHistory(register), call(0, w(1)), ret(0, 0), call(1, w(2)), ret(1, 0))
	if fp(d) == fp(e) {
		t.Errorf("concurrent and ordered writes hash the same, %x (%v, %v)", fp(d), d, e)
	}
	if d.Possibilities() != 2 || e.Possibilities() != 1 {
		t.Errorf("possibilities %d and %d; want 2 and 1", d.Possibilities(), e.Possibilities())
	}
	// A pending operation is part of the state.
	f := record(properties.NewHistory(register), call(0, w(1)))
	if fp(f) == fp(properties.NewHistory(register)) || f.Pending() != 1 {
		t.Errorf("a pending write: fingerprint %x like the empty history's, %d pending", fp(f), f.Pending())
	}
	// The copy a step makes shares the history and is equal.
	n := &holder{H: d}
	if cp := sim.Copy(n); sim.Fingerprint(cp) != sim.Fingerprint(n) || cp.H.String() != n.H.String() {
		t.Errorf("copy %v hashes %x, original %v %x", cp.H, sim.Fingerprint(cp), n.H, sim.Fingerprint(n))
	}
	if got := sim.Dump(&holder{H: f}); !strings.Contains(got, "history{[c0:write(1)] 1 possible}") {
		t.Errorf("dump %q", got)
	}
}

// Misuse is an error, never a panic, and no verdict.
func TestHistoryMisuse(t *testing.T) {
	cases := []struct {
		name string
		h    properties.History
		evs  []ev
		want string
	}{
		{"return with nothing pending", properties.NewHistory(register), []ev{ret(0, 0)},
			"client 0 returned 0 with no operation pending"},
		{"input of another type", properties.NewHistory(register), []ev{call(0, "write")},
			"client 0 invoked write, a string, but spec register takes a properties_test.regOp"},
		{"output of another type", properties.NewHistory(register), []ev{call(0, r()), ret(0, "0")},
			"client 0 returned 0, a string, but spec register's outputs are int"},
		{"zero history", properties.History{}, []ev{call(0, r())},
			"Invoke on a History without a spec: build it with properties.NewHistory"},
		{"spec without a name", properties.NewHistory(properties.Spec[int, regOp, int]{Init: register.Init, Step: register.Step}), []ev{call(0, r())},
			"a sequential spec needs a Name, for reports"},
		{"step panics", properties.NewHistory(properties.Spec[int, regOp, int]{Name: "bad", Init: register.Init,
			Step: func(int, regOp) []properties.Outcome[int, int] { panic("boom") }}), []ev{call(0, r()), ret(0, 0)},
			"spec bad's Step panicked on read() from state 0: boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := record(c.h, c.evs...)
			if h.Err() != c.want || h.Violation() != "" {
				t.Errorf("error %q, violation %q; want error %q", h.Err(), h.Violation(), c.want)
			}
		})
	}
}

// holder is a node that keeps a history, as a system's client node does.
type holder struct {
	sim.BaseNode
	H properties.History
}

type bystander struct{ sim.BaseNode }

func TestLinearizableProperty(t *testing.T) {
	p := properties.Linearizable(register)
	ok := record(properties.NewHistory(register), call(0, w(1)), ret(0, 0))
	bad := record(ok, call(1, r()), ret(1, 0))
	if err := p.CheckSafety(sim.NewState([]sim.Node{&bystander{}, &holder{H: ok}})); err != nil {
		t.Errorf("linearizable history: %v", err)
	}
	err := p.CheckSafety(sim.NewState([]sim.Node{&bystander{}, &holder{H: bad}}))
	if want := "node 1: " + bad.Violation(); err == nil || err.Error() != want {
		t.Errorf("stale read: %v; want %s", err, want)
	}
	// No history of the spec: vacuous, a property error.
	err = p.CheckSafety(sim.NewState([]sim.Node{&bystander{}, &holder{H: properties.NewHistory(kv)}}))
	if _, isErr := err.(*properties.Error); !isErr || !strings.Contains(err.Error(), "no node holds a properties.History of spec register") {
		t.Errorf("no history of the spec: %v", err)
	}
	// A misused history: a property error.
	mis := record(properties.NewHistory(register), ret(0, 0))
	err = p.CheckSafety(sim.NewState([]sim.Node{&holder{H: mis}}))
	if _, isErr := err.(*properties.Error); !isErr || !strings.Contains(err.Error(), "node 0's history: client 0 returned 0 with no operation pending") {
		t.Errorf("misused history: %v", err)
	}
	if p.Name != "linearizable" || p.Kind != properties.Safety {
		t.Errorf("name %q kind %v", p.Name, p.Kind)
	}
}
