package host

import (
	"math/rand/v2"
	"reflect"
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
		Ping{7},
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
	v := shapes{L: []inner{{A: 1}}, M: map[string][]int{"a": {1, 2}}, Any: Ping{1}}
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
	loop := &list{V: 1}
	loop.Next = loop
	var m sim.Message = loop
	if _, err := encodeValue(nil, reflect.ValueOf(&m).Elem()); err == nil {
		t.Error("a cycle was encoded")
	}
}
