package sim_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/livecheck/livecheck/sim"
)

type inner struct {
	X    int
	Tags []string
}

// deep has one field of every shape a node state uses.
type deep struct {
	I     int
	S     string
	B     bool
	F     float64
	U     uint8
	Arr   [3]int
	Slice []int
	M     map[string]int
	MS    map[int][]string
	MP    map[string]*inner
	P     *inner
	PS    []*inner
	Nest  inner
	Any   any
	Stats int            `livecheck:"-"`
	Cache map[string]int `livecheck:"-"`
	priv  map[string]int
	ptr   *inner
}

func newDeep() *deep {
	return &deep{
		I: 1, S: "s", B: true, F: 1.5, U: 7,
		Arr:   [3]int{1, 2, 3},
		Slice: []int{10, 20},
		M:     map[string]int{"a": 1, "b": 2},
		MS:    map[int][]string{1: {"x", "y"}},
		MP:    map[string]*inner{"k": {X: 3, Tags: []string{"t"}}},
		P:     &inner{X: 4, Tags: []string{"p"}},
		PS:    []*inner{{X: 5}, nil},
		Nest:  inner{X: 6, Tags: []string{"n"}},
		Any:   &inner{X: 8, Tags: []string{"any"}},
		Stats: 99,
		Cache: map[string]int{"c": 1},
		priv:  map[string]int{"q": 1},
		ptr:   &inner{X: 9},
	}
}

const deepDump = `deep{I:1 S:"s" B:true F:1.5 U:7 Arr:[1 2 3] Slice:[10 20] M:{"a":1 "b":2} ` +
	`MS:{1:["x" "y"]} MP:{"k":{X:3 Tags:["t"]}} P:{X:4 Tags:["p"]} PS:[{X:5 Tags:[]} nil] ` +
	`Nest:{X:6 Tags:["n"]} Any:inner{X:8 Tags:["any"]} priv:{"q":1} ptr:{X:9 Tags:[]}}`

// mutations change one part of a deep. same says whether the fingerprint
// must stay the same (only for fields tagged livecheck:"-").
var mutations = []struct {
	name   string
	change func(d *deep)
	same   bool
}{
	{"int", func(d *deep) { d.I++ }, false},
	{"string", func(d *deep) { d.S = "t" }, false},
	{"bool", func(d *deep) { d.B = false }, false},
	{"float", func(d *deep) { d.F = 2.5 }, false},
	{"uint8", func(d *deep) { d.U = 8 }, false},
	{"array element", func(d *deep) { d.Arr[2] = 4 }, false},
	{"slice element", func(d *deep) { d.Slice[1] = 21 }, false},
	{"slice append", func(d *deep) { d.Slice = append(d.Slice, 0) }, false},
	{"slice truncate", func(d *deep) { d.Slice = d.Slice[:1] }, false},
	{"map value", func(d *deep) { d.M["a"] = 5 }, false},
	{"map key added", func(d *deep) { d.M["c"] = 0 }, false},
	{"map key deleted", func(d *deep) { delete(d.M, "b") }, false},
	{"map key renamed", func(d *deep) { delete(d.M, "b"); d.M["B"] = 2 }, false},
	{"map of slices element", func(d *deep) { d.MS[1][0] = "z" }, false},
	{"map of pointers field", func(d *deep) { d.MP["k"].X = 0 }, false},
	{"map of pointers nil", func(d *deep) { d.MP["k"] = nil }, false},
	{"nested pointer field", func(d *deep) { d.P.X = 40 }, false},
	{"nested pointer slice", func(d *deep) { d.P.Tags[0] = "P" }, false},
	{"pointer to nil", func(d *deep) { d.P = nil }, false},
	{"slice of pointers field", func(d *deep) { d.PS[0].X = 50 }, false},
	{"slice of pointers nil to value", func(d *deep) { d.PS[1] = &inner{} }, false},
	{"nested struct field", func(d *deep) { d.Nest.X = 60 }, false},
	{"nested struct slice", func(d *deep) { d.Nest.Tags = nil }, false},
	{"interface pointee", func(d *deep) { d.Any.(*inner).X = 80 }, false},
	// *inner and inner dump alike but are different states
	{"interface dynamic type", func(d *deep) { d.Any = inner{X: 8, Tags: []string{"any"}} }, false},
	{"interface to nil", func(d *deep) { d.Any = nil }, false},
	{"unexported map", func(d *deep) { d.priv["q"] = 2 }, false},
	{"unexported pointer", func(d *deep) { d.ptr.X = 90 }, false},
	{"ignored int", func(d *deep) { d.Stats = 0 }, true},
	{"ignored map replaced", func(d *deep) { d.Cache = map[string]int{"z": 26} }, true},
	{"ignored map nil", func(d *deep) { d.Cache = nil }, true},
}

func TestFingerprintSeesEveryField(t *testing.T) {
	base := newDeep()
	baseFP := sim.Fingerprint(base)
	if got := sim.Dump(base); got != deepDump {
		t.Fatalf("Dump:\n got  %s\n want %s", got, deepDump)
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			c := sim.Copy(base)
			if sim.Fingerprint(c) != baseFP {
				t.Fatalf("a copy has another fingerprint")
			}
			m.change(c)
			if got := sim.Fingerprint(c) == baseFP; got != m.same {
				t.Errorf("fingerprint unchanged = %v, want %v (dump %s)", got, m.same, sim.Dump(c))
			}
			if got := sim.Dump(c) == deepDump; got != m.same && m.name != "interface dynamic type" {
				t.Errorf("dump unchanged = %v, want %v", got, m.same)
			}
			// The copy is deep: the change did not reach the original.
			if sim.Fingerprint(base) != baseFP || sim.Dump(base) != deepDump {
				t.Errorf("changing the copy changed the original: %s", sim.Dump(base))
			}
			if m.name != "ignored map replaced" && m.name != "ignored map nil" && base.Stats != 99 {
				t.Errorf("ignored field of the original changed")
			}
		})
	}
}

// mutating the original after a copy leaves the copy alone.
func TestCopyIndependentOfOriginal(t *testing.T) {
	for _, m := range mutations {
		if m.same {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			orig := newDeep()
			c := sim.Copy(orig)
			m.change(orig)
			if got := sim.Dump(c); got != deepDump {
				t.Errorf("changing the original changed the copy:\n got  %s\n want %s", got, deepDump)
			}
			if sim.Fingerprint(c) != sim.Fingerprint(newDeep()) {
				t.Errorf("copy fingerprint changed")
			}
		})
	}
}

func TestCopySharesIgnoredFields(t *testing.T) {
	// Fields tagged livecheck:"-" are copied shallowly: a map there is the
	// same map in the copy. Ignored fields are for statistics and handles,
	// not for state.
	d := newDeep()
	c := sim.Copy(d)
	if c.Stats != 99 {
		t.Errorf("ignored int not copied: %d", c.Stats)
	}
	c.Cache["new"] = 1
	if d.Cache["new"] != 1 {
		t.Errorf("ignored map was deep-copied; the tag is documented to share it")
	}
	// Everything else is fresh memory.
	if c == d || c.P == d.P || c.PS[0] == d.PS[0] || c.MP["k"] == d.MP["k"] || c.Any == d.Any || c.ptr == d.ptr {
		t.Errorf("copy shares pointers with the original")
	}
	if &c.Slice[0] == &d.Slice[0] || &c.MS[1][0] == &d.MS[1][0] || &c.Nest.Tags[0] == &d.Nest.Tags[0] {
		t.Errorf("copy shares slice arrays with the original")
	}
}

func TestCopyValues(t *testing.T) {
	// top-level values of several shapes
	t.Run("map of pointers", func(t *testing.T) {
		m := map[string]*inner{"a": {X: 1}}
		c := sim.Copy(m)
		c["a"].X = 2
		c["b"] = nil
		if m["a"].X != 1 || len(m) != 1 {
			t.Errorf("original changed: %s", sim.Dump(m))
		}
	})
	t.Run("slice of maps", func(t *testing.T) {
		s := []map[string][]int{{"a": {1}}}
		c := sim.Copy(s)
		c[0]["a"][0] = 2
		c[0]["b"] = nil
		if got := sim.Dump(s); got != `[{"a":[1]}]` {
			t.Errorf("original changed: %s", got)
		}
	})
	t.Run("interface holding a struct with a map", func(t *testing.T) {
		type box struct{ M map[int]int }
		var v any = box{M: map[int]int{1: 1}}
		c := sim.Copy(v)
		c.(box).M[1] = 2
		if v.(box).M[1] != 1 {
			t.Errorf("original changed")
		}
	})
	t.Run("array of pointers", func(t *testing.T) {
		a := [2]*inner{{X: 1}, nil}
		c := sim.Copy(a)
		c[0].X = 2
		if a[0].X != 1 || c[1] != nil {
			t.Errorf("copy not deep: %s %s", sim.Dump(a), sim.Dump(c))
		}
	})
	t.Run("flat struct", func(t *testing.T) {
		type flat struct {
			A int
			B string
			C [2]bool
		}
		v := flat{1, "b", [2]bool{true, false}}
		if c := sim.Copy(v); c != v {
			t.Errorf("Copy = %v, want %v", c, v)
		}
	})
	t.Run("recursive list", func(t *testing.T) {
		type list struct {
			V    int
			Next *list
		}
		l := &list{1, &list{2, &list{3, nil}}}
		c := sim.Copy(l)
		c.Next.Next.V = 30
		if l.Next.Next.V != 3 || sim.Dump(c) != "list{V:1 Next:{V:2 Next:{V:30 Next:nil}}}" {
			t.Errorf("copy of a list: original %s, copy %s", sim.Dump(l), sim.Dump(c))
		}
	})
	t.Run("unexported and embedded fields", func(t *testing.T) {
		type key struct{ A, B int }
		type emb struct{ M map[int]int }
		type hidden struct {
			emb
			a   any
			arr [2]map[string]int
			ps  []*inner
			in  inner
			mk  map[key]*inner
		}
		h := &hidden{emb: emb{M: map[int]int{1: 1}}, a: &inner{X: 1, Tags: []string{"a"}},
			arr: [2]map[string]int{{"a": 1}, nil}, ps: []*inner{{X: 2}}, in: inner{Tags: []string{"t"}},
			mk: map[key]*inner{{1, 2}: {X: 2}}}
		const want = `hidden{emb:{M:{1:1}} a:inner{X:1 Tags:["a"]} arr:[{"a":1} {}] ps:[{X:2 Tags:[]}] ` +
			`in:{X:0 Tags:["t"]} mk:{{A:1 B:2}:{X:2 Tags:[]}}}`
		if got := sim.Dump(h); got != want {
			t.Fatalf("Dump:\n got  %s\n want %s", got, want)
		}
		c := sim.Copy(h)
		c.M[1] = 2
		c.a.(*inner).Tags[0] = "b"
		c.arr[0]["a"] = 2
		c.ps[0].X = 3
		c.in.Tags[0] = "u"
		c.mk[key{1, 2}].X = 9
		const changed = `hidden{emb:{M:{1:2}} a:inner{X:1 Tags:["b"]} arr:[{"a":2} {}] ps:[{X:3 Tags:[]}] ` +
			`in:{X:0 Tags:["u"]} mk:{{A:1 B:2}:{X:9 Tags:[]}}}`
		if got := sim.Dump(c); got != changed {
			t.Errorf("copy after changes:\n got  %s\n want %s", got, changed)
		}
		if got := sim.Dump(h); got != want {
			t.Errorf("original changed:\n got  %s\n want %s", got, want)
		}
	})
	t.Run("nil", func(t *testing.T) {
		if sim.Copy[any](nil) != nil || sim.Copy[*inner](nil) != nil {
			t.Errorf("Copy of nil is not nil")
		}
	})
}

// Map fingerprints must not depend on how the map was built or iterated.
func TestFingerprintMapOrder(t *testing.T) {
	const n = 300
	keys := make([]int, n)
	for i := range keys {
		keys[i] = i * 7
	}
	build := func(order []int) *deep {
		d := &deep{M: map[string]int{}, MS: map[int][]string{}, MP: map[string]*inner{}}
		for _, k := range order {
			s := string(rune('a'+k%26)) + strings.Repeat("x", k%5) + string(rune('0'+k%10)) + string(rune('A'+k/26%26))
			d.M[s] = k
			d.MS[k] = []string{s, s + "!"}
			d.MP[s] = &inner{X: k, Tags: []string{s}}
		}
		return d
	}
	asc := append([]int(nil), keys...)
	desc := make([]int, n)
	for i, k := range keys {
		desc[n-1-i] = k
	}
	shuffled := append([]int(nil), keys...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	want := sim.Fingerprint(build(asc))
	wantDump := sim.Dump(build(asc))
	for name, order := range map[string][]int{"desc": desc, "shuffled": shuffled} {
		d := build(order)
		if got := sim.Fingerprint(d); got != want {
			t.Errorf("%s: fingerprint %016x, want %016x", name, got, want)
		}
		if sim.Dump(d) != wantDump {
			t.Errorf("%s: dump differs", name)
		}
	}
	// The same map hashed many times (Go iterates maps in a random order).
	d := build(shuffled)
	for i := 0; i < 50; i++ {
		if got := sim.Fingerprint(d); got != want {
			t.Fatalf("hash %d: fingerprint %016x, want %016x", i, got, want)
		}
	}
	// Nested maps built in different orders.
	nested := func(order []int) map[int]map[int]bool {
		m := map[int]map[int]bool{}
		for _, k := range order {
			in := m[k%10]
			if in == nil {
				in = map[int]bool{}
				m[k%10] = in
			}
			in[k] = k%3 == 0
		}
		return m
	}
	if sim.Fingerprint(nested(asc)) != sim.Fingerprint(nested(shuffled)) ||
		sim.Fingerprint(nested(asc)) != sim.Fingerprint(nested(desc)) {
		t.Errorf("nested maps: fingerprint depends on insertion order")
	}
	// Map entries stay paired: swapping two values is a different map.
	if sim.Fingerprint(map[int]string{1: "a", 2: "b"}) == sim.Fingerprint(map[int]string{1: "b", 2: "a"}) {
		t.Errorf("swapping the values of two keys does not change the fingerprint")
	}
	// Nested maps stay paired with their outer key.
	if sim.Fingerprint(map[int]map[int]int{1: {1: 1}, 2: {2: 2}}) == sim.Fingerprint(map[int]map[int]int{1: {2: 2}, 2: {1: 1}}) {
		t.Errorf("swapping inner maps does not change the fingerprint")
	}
}

func TestFingerprintNilAndEmpty(t *testing.T) {
	type holder struct {
		S []int
		M map[string]int
		P *inner
		A any
	}
	cases := []struct {
		name     string
		a, b     holder
		same     bool
		dumpA    string
		dumpB    string
		nilAfter bool // Copy(a) keeps a's field nil
	}{
		// nil and empty slices and maps are the same state
		{"slice", holder{S: nil}, holder{S: []int{}}, true,
			"holder{S:[] M:{} P:nil A:nil}", "holder{S:[] M:{} P:nil A:nil}", true},
		{"map", holder{M: nil}, holder{M: map[string]int{}}, true,
			"holder{S:[] M:{} P:nil A:nil}", "holder{S:[] M:{} P:nil A:nil}", true},
		// a nil pointer is not a pointer to a zero value
		{"pointer", holder{P: nil}, holder{P: &inner{}}, false,
			"holder{S:[] M:{} P:nil A:nil}", "holder{S:[] M:{} P:{X:0 Tags:[]} A:nil}", true},
		// a nil interface is not an interface holding a zero value
		{"interface", holder{A: nil}, holder{A: 0}, false,
			"holder{S:[] M:{} P:nil A:nil}", "holder{S:[] M:{} P:nil A:0}", true},
		// values of different dynamic types differ even when they print alike
		{"interface types", holder{A: 0}, holder{A: int64(0)}, false,
			"holder{S:[] M:{} P:nil A:0}", "holder{S:[] M:{} P:nil A:0}", false},
		{"slice with a zero", holder{S: []int{}}, holder{S: []int{0}}, false,
			"holder{S:[] M:{} P:nil A:nil}", "holder{S:[0] M:{} P:nil A:nil}", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sim.Fingerprint(c.a) == sim.Fingerprint(c.b); got != c.same {
				t.Errorf("equal fingerprints = %v, want %v", got, c.same)
			}
			if got := sim.Dump(c.a); got != c.dumpA {
				t.Errorf("Dump(a) = %s, want %s", got, c.dumpA)
			}
			if got := sim.Dump(c.b); got != c.dumpB {
				t.Errorf("Dump(b) = %s, want %s", got, c.dumpB)
			}
		})
	}
	// Copy keeps nil as nil and empty as empty.
	ca := sim.Copy(holder{})
	cb := sim.Copy(holder{S: []int{}, M: map[string]int{}})
	if ca.S != nil || ca.M != nil || ca.P != nil || ca.A != nil {
		t.Errorf("copy of nils is not nil: %#v", ca)
	}
	if cb.S == nil || cb.M == nil {
		t.Errorf("copy of empty slice/map is nil: %#v", cb)
	}
}

func TestFingerprintDistinguishes(t *testing.T) {
	type pair struct{ A, B string }
	type ints struct{ A, B []int }
	type other struct{ A, B string }
	cases := []struct {
		name string
		a, b any
	}{
		{"string boundaries", pair{"ab", "c"}, pair{"a", "bc"}},
		{"slice boundaries", ints{[]int{1}, []int{2, 3}}, ints{[]int{1, 2}, []int{3}}},
		{"empty vs zero", ints{nil, []int{0}}, ints{[]int{0}, nil}},
		{"named types", pair{"a", "b"}, other{"a", "b"}},
		{"int sizes", int(1), int64(1)},
		{"int vs uint", int(1), uint(1)},
		{"value vs pointer", inner{X: 1}, &inner{X: 1}},
		{"negative", -1, 1},
		{"bool", true, false},
		{"nil vs zero", nil, 0},
		{"float sign", 1.0, -1.0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if sim.Fingerprint(c.a) == sim.Fingerprint(c.b) {
				t.Errorf("Fingerprint(%s) == Fingerprint(%s)", sim.Dump(c.a), sim.Dump(c.b))
			}
		})
	}
	if sim.Fingerprint(math.NaN()) != sim.Fingerprint(-math.NaN()) {
		t.Errorf("NaNs hash differently")
	}
}

// pinned is hashed to a literal below: if the encoding changes, every stored
// trace and every pinned state count changes with it, so it must be noticed.
type pinned struct {
	A int
	B string
	C []uint8
	D map[string]bool
	E *pinned
	F bool `livecheck:"-"`
}

func TestFingerprintPinned(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want uint64
	}{
		{"nil", nil, 0xe934a84adb052768},
		{"int", 42, 0x147c676e995f31f7},
		{"string", "hello", 0x7d0856d062c91073},
		{"struct", pinned{A: -3, B: "b", C: []uint8{1, 2}, D: map[string]bool{"x": true, "y": false}, E: &pinned{A: 1}, F: true}, 0xc686fee0db20e55e},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sim.Fingerprint(c.v); got != c.want {
				t.Errorf("Fingerprint(%s) = %#016x, want %#016x", sim.Dump(c.v), got, c.want)
			}
		})
	}

	// The encoding, spelled out: a non-nil marker, the type's hash, then the
	// value in fixed-width little endian.
	le := func(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
	enc := le([]byte{1}, xxhash.Sum64String("int"))
	enc = le(enc, 42)
	if got, want := sim.Fingerprint(42), xxhash.Sum64(enc); got != want {
		t.Errorf("Fingerprint(42) = %#x, want xxhash of its encoding %#x", got, want)
	}
	enc = le([]byte{1}, xxhash.Sum64String("string"))
	enc = le(enc, 5)
	enc = append(enc, "hello"...)
	if got, want := sim.Fingerprint("hello"), xxhash.Sum64(enc); got != want {
		t.Errorf(`Fingerprint("hello") = %#x, want xxhash of its encoding %#x`, got, want)
	}
}

func TestHasher(t *testing.T) {
	sum := func(f func(h *sim.Hasher)) uint64 {
		var h sim.Hasher
		f(&h)
		return h.Sum64()
	}
	a := sum(func(h *sim.Hasher) { h.String("ab"); h.String("c") })
	b := sum(func(h *sim.Hasher) { h.String("a"); h.String("bc") })
	if a == b {
		t.Errorf("String writes are ambiguous")
	}
	if sum(func(h *sim.Hasher) { h.Int(1) }) != sum(func(h *sim.Hasher) { h.Uint64(1) }) {
		t.Errorf("Int(1) and Uint64(1) encode differently")
	}
	if sum(func(h *sim.Hasher) { h.Bool(true) }) == sum(func(h *sim.Hasher) { h.Bool(false) }) {
		t.Errorf("Bool(true) == Bool(false)")
	}
	var h sim.Hasher
	h.Int(5)
	h.Reset()
	h.Value(42)
	if h.Sum64() != sim.Fingerprint(42) {
		t.Errorf("Reset does not empty the hasher")
	}
	// Sum64 with nothing written is xxhash of nothing.
	if got := sum(func(*sim.Hasher) {}); got != xxhash.Sum64(nil) {
		t.Errorf("empty Sum64 = %#x", got)
	}
}

func TestFingerprintTypeErrors(t *testing.T) {
	type withChan struct {
		N int
		C chan int
	}
	type chanIgnored struct {
		N int
		C chan int `livecheck:"-"`
	}
	type node struct {
		V    int
		Next *node
	}
	cyc := &node{V: 1}
	cyc.Next = cyc

	catch := func(v any) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err, _ = r.(error)
				if err == nil {
					t.Fatalf("panic with a non-error %v", r)
				}
			}
		}()
		sim.Fingerprint(v)
		return nil
	}
	var te *sim.TypeError
	if err := catch(withChan{C: make(chan int)}); !errors.As(err, &te) || !strings.Contains(err.Error(), `livecheck:"-"`) {
		t.Errorf("chan field: %v, want a *TypeError that suggests the tag", err)
	}
	if err := catch(map[string]any{"f": func() {}}); !errors.As(err, &te) {
		t.Errorf("func in a map: %v, want a *TypeError", err)
	}
	// A cycle is hashed with a back-reference (see alias.go), not refused.
	if err := catch(cyc); err != nil {
		t.Errorf("pointer cycle: %v", err)
	}
	if err := catch(chanIgnored{N: 1, C: make(chan int)}); err != nil {
		t.Errorf("ignored chan field: %v", err)
	}
	// The hasher is still sound after those panics.
	if sim.Fingerprint(map[string]int{"a": 1}) != sim.Fingerprint(map[string]int{"a": 1}) ||
		sim.Fingerprint(chanIgnored{N: 1}) != sim.Fingerprint(chanIgnored{N: 1, C: make(chan int)}) {
		t.Errorf("fingerprints unstable after a type error")
	}
}

// Types that take over copy, hash and dump.

type custom struct {
	Items  []string
	Copies *int `livecheck:"-"`
}

func (c *custom) CopyState() any {
	*c.Copies++
	return &custom{Items: append([]string(nil), c.Items...), Copies: c.Copies}
}

// HashState hashes Items as a set.
func (c *custom) HashState(h *sim.Hasher) {
	items := append([]string(nil), c.Items...)
	for i := range items { // insertion sort: tiny
		for j := i; j > 0 && items[j] < items[j-1]; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
	h.Int(len(items))
	for _, s := range items {
		h.String(s)
	}
}

func (c *custom) DumpState() string { return "set(" + strings.Join(c.Items, ",") + ")" }

type color int

func (c color) String() string { return [...]string{"red", "green", "blue"}[c] }

func TestCustomInterfaces(t *testing.T) {
	n := 0
	a := &custom{Items: []string{"x", "y"}, Copies: &n}
	c := sim.Copy(a)
	if n != 1 {
		t.Errorf("CopyState called %d times, want 1", n)
	}
	c.Items[0] = "z"
	if a.Items[0] != "x" {
		t.Errorf("CopyState copy shares Items")
	}
	b := &custom{Items: []string{"y", "x"}, Copies: &n}
	if sim.Fingerprint(a) != sim.Fingerprint(b) {
		t.Errorf("HashState not used: set {x,y} and {y,x} hash differently")
	}
	if sim.Fingerprint(a) == sim.Fingerprint(c) {
		t.Errorf("HashState: {x,y} and {z,y} hash alike")
	}
	// By reflection the order would count.
	type plain struct{ Items []string }
	if sim.Fingerprint(plain{[]string{"x", "y"}}) == sim.Fingerprint(plain{[]string{"y", "x"}}) {
		t.Errorf("reflection hash ignores slice order")
	}
	// The type's hash still prefixes the custom encoding.
	var h sim.Hasher
	a.HashState(&h)
	if h.Sum64() == sim.Fingerprint(a) {
		t.Errorf("Fingerprint of a StateHasher is its bare HashState")
	}

	dumps := []struct {
		v    any
		want string
	}{
		{a, "set(x,y)"},
		{color(2), "blue"},
		{[]color{0, 1}, "[red green]"}, // nested values are asked too
		{struct{ C any }{color(1)}, "{C:green}"},
		{struct{ C color }{1}, "{C:green}"},
		{map[string]any{"s": a}, `{"s":set(x,y)}`},
	}
	for _, d := range dumps {
		if got := sim.Dump(d.v); got != d.want {
			t.Errorf("Dump = %s, want %s", got, d.want)
		}
	}
}

func TestDump(t *testing.T) {
	type named struct {
		A int
		b string
	}
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, "nil"},
		{"int", -42, "-42"},
		{"uint", uint16(7), "7"},
		{"float", 0.25, "0.25"},
		{"bool", true, "true"},
		{"string", "a\"b", `"a\"b"`},
		{"complex", complex(1, 2), "(1+2i)"},
		{"slice", []int{3, 1, 2}, "[3 1 2]"},
		{"array", [2]string{"x", "y"}, `["x" "y"]`},
		{"string keys sorted", map[string]int{"b": 2, "c": 3, "a": 1}, `{"a":1 "b":2 "c":3}`},
		// keys are sorted by their dump: "10" sorts before "2"
		{"int keys sorted as text", map[int]bool{10: true, 2: false, 1: true}, "{1:true 10:true 2:false}"},
		{"struct keys", map[named]int{{2, "x"}: 1, {1, "y"}: 2}, `{{A:1 b:"y"}:2 {A:2 b:"x"}:1}`},
		{"struct", named{1, "u"}, `named{A:1 b:"u"}`},
		{"pointer to struct", &named{1, "u"}, `named{A:1 b:"u"}`},
		{"nil pointer to struct", (*named)(nil), "nil"},
		{"anonymous struct", struct{ X []int }{[]int{1}}, "{X:[1]}"},
		{"named string", note("hi"), `"hi"`},
		{"message", send{To: 1, Msg: note("x")}, `send{To:1 Msg:"x"}`},
		{"interface pointer", struct{ A any }{&named{}}, `{A:named{A:0 b:""}}`},
		{"interface nil pointer", struct{ A any }{(*named)(nil)}, `{A:nil}`},
		{"ignored field", pinned{A: 1, F: true}, `pinned{A:1 B:"" C:[] D:{} E:nil}`},
		{"ignored chan", struct {
			N int
			C chan int `livecheck:"-"`
		}{N: 1}, "{N:1}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sim.Dump(c.v); got != c.want {
				t.Errorf("Dump = %s, want %s", got, c.want)
			}
		})
	}
}

type withBase struct {
	sim.BaseNode
	X int
}

// An embedded BaseNode holds nothing: the node dumps and hashes as it
// would without it, and keeps the fast path for plain fields.
func TestBaseNodeAddsNothing(t *testing.T) {
	a := &withBase{X: 3}
	if got := sim.Dump(a); got != "withBase{X:3}" {
		t.Errorf("Dump = %s, want withBase{X:3}", got)
	}
	if sim.Fingerprint(a) == sim.Fingerprint(&withBase{X: 4}) {
		t.Errorf("X is not hashed")
	}
	var n sim.Node = a
	n.Init(nil) // BaseNode's handlers do nothing, even without a context
	n.App(nil, nil)
	if a.X != 3 {
		t.Errorf("a BaseNode handler changed the node: X = %d", a.X)
	}
}

// rawAll's fields are all stored as the Hasher encodes them (with padding
// between B and C), rawSome's int16 is not: both must hash as the field
// by field encoding, held in an interface as a value or as a pointer.
type rawAll struct {
	A int
	B bool
	C uint64
	D sim.NodeID
	E sim.NodeSet
	F bool
	G bool
	H [2]sim.NodeSet
	I [3]bool
	J [2]int32
}

type rawSome struct {
	A int
	B int16
	C bool
}

func TestFingerprintInPlace(t *testing.T) {
	le := func(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
	enc := func(name string, ptr bool, fields func([]byte) []byte) uint64 {
		b := le([]byte{1}, xxhash.Sum64String(name))
		if ptr {
			b = append(b, 1)
		}
		return xxhash.Sum64(fields(b))
	}
	all := rawAll{A: -7, B: true, C: 1 << 40, D: 3, E: 0b1010, F: false, G: true, H: [2]sim.NodeSet{5, 9}, I: [3]bool{true, false, true}, J: [2]int32{-1, 4}}
	allEnc := func(b []byte) []byte {
		b = le(b, uint64(all.A))
		b = append(b, 1)
		b = le(b, all.C)
		b = le(b, 3)
		b = le(b, 0b1010)
		b = append(b, 0, 1)
		b = le(le(b, 5), 9)
		b = append(b, 1, 0, 1)
		return le(le(b, uint64(0xffffffffffffffff)), 4)
	}
	some := rawSome{A: 5, B: -2, C: true}
	someEnc := func(b []byte) []byte {
		b = le(b, 5)
		b = le(b, uint64(0xfffffffffffffffe))
		return append(b, 1)
	}
	const pkg = "github.com/livecheck/livecheck/sim_test."
	for _, c := range []struct {
		name string
		v    any
		want uint64
	}{
		{"all", all, enc(pkg+"rawAll", false, allEnc)},
		{"*all", &all, enc("*sim_test.rawAll", true, allEnc)},
		{"some", some, enc(pkg+"rawSome", false, someEnc)},
		{"*some", &some, enc("*sim_test.rawSome", true, someEnc)},
	} {
		if got := sim.Fingerprint(c.v); got != c.want {
			t.Errorf("Fingerprint(%s) = %#x, want %#x", c.name, got, c.want)
		}
	}
}
