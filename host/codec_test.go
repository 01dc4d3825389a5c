package host

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

type (
	inner struct {
		A     int8
		b     string // unexported: it crosses all the same
		Ids   sim.NodeSet
		Ratio float64
	}
	shapes struct {
		N     int
		U     uint16
		S     string
		B     []byte
		NilB  []byte
		L     []inner
		M     map[string][]int
		Ptr   *inner
		Nil   *inner
		Any   sim.Message
		Anys  []any
		Arr   [3]sim.NodeID
		C     complex128
		Ok    bool
		hid   map[sim.NodeID]bool
		Empty struct{}
	}
	list struct {
		V    int
		Next *list
	}
)

// Every shape of value crosses the codec unchanged: the same
// fingerprint, which is what the simulator compares states and messages
// by; unexported fields included.
func TestCodecRoundTrip(t *testing.T) {
	registerType(reflect.TypeFor[inner]())
	registerType(reflect.TypeFor[list]())
	registerType(reflect.TypeFor[*list]())
	values := []any{
		Ping{N: 7},
		shapes{},
		shapes{N: -5, U: 9, S: "héllo", B: []byte{1, 2}, L: []inner{{A: -1, b: "x", Ids: 5, Ratio: 0.5}},
			M: map[string][]int{"a": {1}, "b": nil}, Ptr: &inner{b: "p"}, Any: inner{A: 3}, Anys: []any{1, "two", nil, &list{V: 1}},
			Arr: [3]sim.NodeID{2, 1, 0}, C: 1 + 2i, Ok: true, hid: map[sim.NodeID]bool{1: true}},
		&list{V: 1, Next: &list{V: 2}},
		"a string", 42, []sim.NodeID{}, map[int]int(nil),
	}
	for _, v := range values {
		registerValue(reflect.ValueOf(v))
		var in sim.Message = v
		b, err := encodeValue(nil, reflect.ValueOf(&in).Elem())
		if err != nil {
			t.Fatalf("%s: %v", sim.Dump(v), err)
		}
		var out sim.Message
		if err := decodeValue(b, reflect.ValueOf(&out).Elem()); err != nil {
			t.Fatalf("%s: %v", sim.Dump(v), err)
		}
		if sim.Fingerprint(out) != sim.Fingerprint(v) || sim.Dump(out) != sim.Dump(v) {
			t.Errorf("sent %s, got %s", sim.Dump(v), sim.Dump(out))
		}
	}
}

// Damaged and random bytes are an error, never a panic nor a huge
// allocation; a cycle is refused.
func TestCodecDamage(t *testing.T) {
	v := shapes{L: []inner{{A: 1}}, M: map[string][]int{"a": {1, 2}}, Any: Ping{N: 1}}
	registerValue(reflect.ValueOf(v))
	var in sim.Message = v
	b, err := encodeValue(nil, reflect.ValueOf(&in).Elem())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		d := append([]byte(nil), b...)
		switch i % 3 {
		case 0:
			d = d[:rng.IntN(len(d))]
		case 1:
			d[rng.IntN(len(d))] = byte(rng.IntN(256))
		case 2:
			d = make([]byte, rng.IntN(40))
			for j := range d {
				d[j] = byte(rng.IntN(256))
			}
		}
		var out sim.Message
		decodeValue(d, reflect.ValueOf(&out).Elem()) // must not panic
	}
	long := &list{}
	for i := 0; i < maxDepth+1; i++ {
		long = &list{V: i, Next: long}
	}
	var m sim.Message = long
	if _, err := encodeValue(nil, reflect.ValueOf(&m).Elem()); err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("a list deeper than %d was encoded (%v)", maxDepth, err)
	}
}

type (
	// A library's objects, as a RawNode holds them: a storage reached
	// through two pointers and an interface, a method value bound to
	// its own object, a top-level func, a map reached twice, a cycle.
	store struct {
		Log []int
		M   map[int]int
	}
	machine struct {
		s     *store
		tick  func()
		step  func(*machine, int)
		Ticks int
	}
	holder struct {
		Store *store
		M     *machine
		Any   any
		Back  map[int]int
		Self  *holder
	}
	// early holds a method value before its receiver.
	early struct {
		F func()
		M *machine
	}
	onePtr struct{ P *int8 }
	twoPtr struct{ A, B *int8 }
)

func (m *machine) tickA() { m.Ticks++ }

func stepB(m *machine, x int) { m.Ticks += x }

// roundTrip encodes v (a pointer) and decodes it into a fresh value of
// its type.
func roundTrip[T any](t *testing.T, v T) (T, []byte, error) {
	t.Helper()
	var out T
	if err := registerValue(reflect.ValueOf(v)); err != nil {
		return out, nil, err
	}
	b, err := encodeValue(nil, reflect.ValueOf(&v).Elem())
	if err != nil {
		return out, nil, err
	}
	return out, b, decodeValue(b, reflect.ValueOf(&out).Elem())
}

// A value that can alias crosses with its aliasing, its cycles and its
// funcs: one storage reached through a field, another object's field
// and an interface arrives as one; a map reached twice as one; a
// pointer to itself as a cycle; a method value bound to the copy of
// its receiver (calling it ticks the copy, not the original), a
// top-level func as itself; the fingerprint is the same.
func TestCodecIdentity(t *testing.T) {
	st := &store{Log: []int{1, 2}, M: map[int]int{1: 2}}
	m := &machine{s: st, step: stepB}
	m.tick = m.tickA
	h := &holder{Store: st, M: m, Any: st, Back: st.M}
	h.Self = h
	registerType(reflect.TypeFor[*store]())
	out, _, err := roundTrip(t, h)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case out.Store != out.M.s || out.Any.(*store) != out.Store:
		t.Error("the storage reached three ways arrived as several")
	case reflect.ValueOf(out.Back).UnsafePointer() != reflect.ValueOf(out.Store.M).UnsafePointer():
		t.Error("the map reached twice arrived as two")
	case out.Self != out:
		t.Error("the cycle arrived open")
	case out.Store == st || out.M == m:
		t.Error("the value arrived sharing the sender's objects")
	case sim.Fingerprint(out) != sim.Fingerprint(h):
		t.Errorf("sent %s, got %s", sim.Dump(h), sim.Dump(out))
	}
	out.M.tick()
	out.M.step(out.M, 5)
	if out.M.Ticks != 6 || m.Ticks != 0 {
		t.Errorf("after a tick and a step of 5 the copy has %d ticks and the original %d, want 6 and 0", out.M.Ticks, m.Ticks)
	}

	// A method value met before its receiver.
	m2 := &machine{}
	m2.tick = m2.tickA
	e, _, err := roundTrip(t, &early{F: m2.tickA, M: m2})
	if err != nil {
		t.Fatal(err)
	}
	e.F()
	e.M.tick()
	if e.M.Ticks != 2 || m2.Ticks != 0 {
		t.Errorf("the method value met before its receiver ticks %d (the original %d), want 2 (0)", e.M.Ticks, m2.Ticks)
	}
}

// What cannot cross is refused with the reason: a method value bound to
// an object outside the value, a closure; a func the receiving program
// does not have at that place (another build) is refused, never called.
func TestCodecFuncsRefused(t *testing.T) {
	m := &machine{}
	if _, _, err := roundTrip(t, &early{F: m.tickA}); err == nil || !strings.Contains(err.Error(), "bound to an object outside the value") {
		t.Errorf("a method value bound outside the value: %v", err)
	}
	x := 0
	if _, _, err := roundTrip(t, &early{F: func() { x++ }}); err == nil || !strings.Contains(err.Error(), "is a closure") {
		t.Errorf("a closure: %v", err)
	}
	name := "github.com/livecheck/livecheck/host.stepB"
	off := int64(reflect.ValueOf(stepB).Pointer()) - int64(funcBase)
	if _, err := funcAt(name, off); err != nil {
		t.Errorf("stepB where it is: %v", err)
	}
	for _, c := range []struct {
		name string
		off  int64
	}{{name, off + 1}, {name + "x", off}, {name, 1 << 40}} {
		if _, err := funcAt(c.name, c.off); err == nil || !strings.Contains(err.Error(), "same build of the same program") {
			t.Errorf("%s at %d: %v", c.name, c.off, err)
		}
	}
}

// A value that cannot alias crosses in the bytes it always did (a
// pointer: 1, then its value); one that can writes a pointer met again
// as a back-reference (2 + its index).
func TestCodecIdentityFormat(t *testing.T) {
	v := int8(-1)
	_, b, err := roundTrip(t, onePtr{&v})
	if err != nil || !bytes.Equal(b, []byte{1, 1}) || sim.Aliases(reflect.TypeFor[onePtr]()) {
		t.Errorf("onePtr: % x (%v), want 01 01", b, err)
	}
	out, b, err := roundTrip(t, twoPtr{&v, &v})
	if err != nil || !bytes.Equal(b, []byte{1, 1, 2}) || out.A != out.B {
		t.Errorf("twoPtr: % x (%v), want 01 01 02, one pointer", b, err)
	}
}
