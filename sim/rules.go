package sim

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// A node that wraps a library holds types its writer cannot tag: mutexes,
// protobuf's internal message state, loggers, counters that only keep
// statistics. Rules per type say how to copy and hash them instead. A
// rule is read when a type's plan is built, and plans are cached for the
// life of the process, so rules are registered before the first World,
// Copy or Fingerprint that meets the type: in an init func, or at the top
// of TestMain. Registering a rule for a type whose plan is built already
// panics, naming the type: a plan rebuilt mid-search would hash equal
// states apart.
//
// Rules name a type either by a type argument (SkipType[raft.MemoryStorage])
// or, for a type its package does not export, by its package path and
// name ("go.etcd.io/raft/v3.raft"), which is how it prints in a
// TypeError.

// SkipType registers T as holding no state: a value of T is not hashed
// and not dumped, and a copy gets T's zero value. It fits locks and caches
// (sync.Mutex and protobuf's MessageState are skipped already).
func SkipType[T any]() { addRule(reflect.TypeFor[T](), "", rule{kind: ruleSkip}) }

// SkipTypeNamed is SkipType for the named type name, its package path and
// name joined by a dot ("go.etcd.io/raft/v3.raft"): a type that cannot
// be written as a type argument because its package does not export it.
func SkipTypeNamed(name string) { addRule(nil, name, rule{kind: ruleSkip}) }

// ShareType registers T as outside the state: a copy shares the value
// (for a pointer, the object it points to), which is neither hashed nor
// dumped. It fits loggers and files (*log.Logger and *os.File are shared
// already). A rule for a type covers pointers to it.
func ShareType[T any]() { addRule(reflect.TypeFor[T](), "", rule{kind: ruleShare}) }

// ShareTypeNamed is ShareType for a type named as in SkipTypeNamed.
func ShareTypeNamed(name string) { addRule(nil, name, rule{kind: ruleShare}) }

// SkipFields leaves the named fields of the struct type T out of hashes
// and dumps, as the tag `livecheck:"-"` does for a struct one owns: a copy
// keeps their value, shallowly. It fits a counter of calls that makes
// equal states hash apart (raft's MemoryStorage.callStats). It panics if
// T is not a struct or lacks one of the fields.
func SkipFields[T any](fields ...string) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("sim: SkipFields[%v]: %v is not a struct; name the struct type that has the fields", t, t))
	}
	for _, f := range fields {
		if _, ok := t.FieldByName(f); !ok {
			panic(fmt.Sprintf("sim: SkipFields[%v]: no field %q", t, f))
		}
	}
	addRule(t, "", rule{fields: fields})
}

// SkipFieldsNamed is SkipFields for a struct type named as in
// SkipTypeNamed. A name that matches no field panics when the type's plan
// is built.
func SkipFieldsNamed(name string, fields ...string) { addRule(nil, name, rule{fields: fields}) }

// CustomType registers hand-written functions for T, for a type that
// cannot implement StateCopier or StateHasher because its package is not
// the user's. copy returns a deep copy of its argument; hash writes the
// value's canonical encoding, as StateHasher.HashState does. Either may
// be nil, to keep the reflective default for that part.
func CustomType[T any](copy func(T) T, hash func(h *Hasher, v T)) {
	r := rule{kind: ruleCustom}
	if copy != nil {
		r.copy = func(v reflect.Value) reflect.Value {
			return reflect.ValueOf(copy(exported(v).Interface().(T)))
		}
	}
	if hash != nil {
		r.hash = func(h *Hasher, v reflect.Value) { hash(h, exported(v).Interface().(T)) }
	}
	addRule(reflect.TypeFor[T](), "", r)
}

type ruleKind uint8

const (
	ruleNone   ruleKind = iota // only fields left out
	ruleSkip                   // zero on copy, not hashed
	ruleShare                  // shared by copies, not hashed
	ruleCustom                 // copy and hash through funcs
)

type rule struct {
	kind   ruleKind
	fields []string // left out as if tagged `livecheck:"-"`
	copy   func(v reflect.Value) reflect.Value
	hash   func(h *Hasher, v reflect.Value)
}

// merge adds r's parts to q: a type may have fields left out and a kind.
func (q *rule) merge(r rule) {
	if r.kind != ruleNone {
		q.kind, q.copy, q.hash = r.kind, r.copy, r.hash
	}
	q.fields = append(q.fields, r.fields...)
}

var rules = struct {
	mu      sync.Mutex
	byType  map[reflect.Type]*rule
	byName  map[string]*rule // package path "." name
	planned map[reflect.Type]bool
}{
	byType:  map[reflect.Type]*rule{},
	byName:  map[string]*rule{},
	planned: map[reflect.Type]bool{},
}

// Rules for types of the standard library and of protobuf-go, matched by
// name so that sim imports neither protobuf nor anything that uses it.
// sync.Once needs none: its done flag is state, hashed and copied as the
// atomic it is, and its mutex is skipped. Atomics of numbers are structs
// of one number and need none either; atomic.Pointer is special-cased in
// buildPlan, as its value is an unsafe.Pointer.
func init() {
	for _, n := range []string{"sync.Mutex", "sync.RWMutex", "sync.WaitGroup", "sync.Cond",
		protoImpl + ".MessageState"} {
		rules.byName[n] = &rule{kind: ruleSkip}
	}
	for _, n := range []string{"log.Logger", "os.File", "log/slog.Logger"} {
		rules.byName[n] = &rule{kind: ruleShare}
	}
}

// protoImpl is the package of protobuf-go's MessageState. A generated
// message holds one, beside a sizeCache (an int32 by alias, so only its
// field name tells it) that Marshal fills in: both are left out.
const protoImpl = "google.golang.org/protobuf/internal/impl"

func addRule(t reflect.Type, name string, r rule) {
	rules.mu.Lock()
	defer rules.mu.Unlock()
	if t != nil {
		if rules.planned[t] {
			panic(fmt.Sprintf("sim: rule for %v registered after a value of it was copied or hashed; register rules before the first World, Copy or Fingerprint (in an init func)", t))
		}
		q := rules.byType[t]
		if q == nil {
			q = &rule{}
			rules.byType[t] = q
		}
		q.merge(r)
		return
	}
	if !strings.Contains(name, ".") {
		panic(fmt.Sprintf("sim: rule for %q: name a type by its package path and name, as in \"go.etcd.io/raft/v3.raft\"", name))
	}
	for pt := range rules.planned {
		if typeName(pt) == name {
			panic(fmt.Sprintf("sim: rule for %s registered after a value of it was copied or hashed; register rules before the first World, Copy or Fingerprint (in an init func)", name))
		}
	}
	q := rules.byName[name]
	if q == nil {
		q = &rule{}
		rules.byName[name] = q
	}
	q.merge(r)
}

// ruleFor returns t's rule (nil if none) and records that t has a plan,
// so that a rule registered later is refused.
func ruleFor(t reflect.Type) *rule {
	rules.mu.Lock()
	defer rules.mu.Unlock()
	rules.planned[t] = true
	if r := rules.byType[t]; r != nil {
		return r
	}
	if t.Name() != "" {
		return rules.byName[typeName(t)]
	}
	return nil
}

// typeName is a named type's package path and name.
func typeName(t reflect.Type) string {
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// exported returns v usable with Interface even when it was reached
// through an unexported field, for a rule's funcs, which take a T.
func exported(v reflect.Value) reflect.Value {
	if v.CanInterface() {
		return v
	}
	if v.CanAddr() {
		return reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem()
	}
	a := reflect.New(v.Type()).Elem()
	typedCopy(a, v)
	return a
}

// fixFor is the advice in a TypeError for the field named field of the
// struct type st, or for a value of type t elsewhere (st nil).
func fixFor(st reflect.Type, field string, t reflect.Type) string {
	if st != nil && st.Name() != "" {
		call := fmt.Sprintf("sim.SkipFieldsNamed(%q, %q)", typeName(st), field)
		if isExported(st) {
			call = fmt.Sprintf("sim.SkipFields[%v](%q)", st, field)
		}
		return fmt.Sprintf("tag the field `livecheck:\"-\"` if %v is yours, or register %s (or a ShareType or SkipType rule for %v) before the search", st, call, t)
	}
	b := t
	for b.Kind() == reflect.Pointer {
		b = b.Elem()
	}
	switch {
	case b.Name() == "":
		return fmt.Sprintf("register a rule (sim.ShareType, sim.SkipType) for the type that holds the %v", t)
	case isExported(b):
		return fmt.Sprintf("register sim.ShareType[%v]() or sim.SkipType[%v]() before the search", b, b)
	}
	return fmt.Sprintf("register sim.ShareTypeNamed(%q) or sim.SkipTypeNamed(%q) before the search", typeName(b), typeName(b))
}

// isExported says whether a named type can be written in another package.
func isExported(t reflect.Type) bool {
	n := t.Name()
	if i := strings.IndexByte(n, '['); i >= 0 {
		return false // an instance of a generic type: its arguments may not be
	}
	return n != "" && n[0] >= 'A' && n[0] <= 'Z'
}

// rulePlan makes p the plan of a type with a skip or share rule.
func rulePlan(p *plan, kind ruleKind) {
	t := p.t
	p.hash = func(*Hasher, reflect.Value) {}
	if kind == ruleShare {
		p.share, p.flat = true, true
		p.dump = func(b *strings.Builder, _ reflect.Value) { b.WriteString(t.String()) }
		return
	}
	p.skip = true
	p.clone = func(_ *copier, dst, _ reflect.Value) { dst.SetZero() }
	p.dump = func(b *strings.Builder, _ reflect.Value) { b.WriteByte('_') }
}

// zeroPlan is the plan of a field left out that a copy zeroes.
func zeroPlan(t reflect.Type) *plan {
	p := &plan{t: t, key: typeKey(t)}
	rulePlan(p, ruleSkip)
	return p
}

// customPlan puts a CustomType rule's funcs in p.
func customPlan(p *plan, r *rule) {
	p.ruled = true
	if r.copy != nil {
		p.flat = false
		p.clone = func(_ *copier, dst, src reflect.Value) { dst.Set(r.copy(src)) }
	}
	if r.hash != nil {
		p.hash = r.hash
		p.direct, p.hashAt, p.namesDirect, p.namesAt = nil, nil, nil, nil
	}
}

type fieldRule uint8

const (
	keepField fieldRule = iota
	leaveOut            // as if tagged `livecheck:"-"`: shared by a copy
	zeroOut             // not hashed, zero in a copy
)

// leftOut returns what the rule r and the built-in rules leave out of
// the struct type t's fields.
func leftOut(t reflect.Type, r *rule) map[string]fieldRule {
	var out map[string]fieldRule
	if r != nil && len(r.fields) > 0 {
		out = map[string]fieldRule{}
		for _, f := range r.fields {
			if _, ok := t.FieldByName(f); !ok {
				panic(fmt.Sprintf("sim: a SkipFields rule for %s names field %q, which it does not have", typeName(t), f))
			}
			out[f] = leaveOut
		}
	}
	for i := 0; i < t.NumField(); i++ {
		if ft := t.Field(i).Type; ft.PkgPath() == protoImpl && ft.Name() == "MessageState" {
			if _, ok := t.FieldByName("sizeCache"); ok {
				if out == nil {
					out = map[string]fieldRule{}
				}
				out["sizeCache"] = zeroOut
			}
		}
	}
	return out
}

// atomicPointerPlan makes p the plan of an atomic.Pointer[T]: its value is
// an unsafe.Pointer, copied and hashed as the *T it is.
func atomicPointerPlan(p *plan, building map[reflect.Type]*plan) {
	t := p.t
	pt := t.Field(0).Type.Elem() // the field _ [0]*T
	var off uintptr
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type.Kind() == reflect.UnsafePointer {
			off = t.Field(i).Offset
		}
	}
	pp := buildPlan(pt, building)
	view := func(v reflect.Value) reflect.Value {
		v = addressable(v)
		return reflect.NewAt(pt, unsafe.Add(unsafe.Pointer(v.UnsafeAddr()), off)).Elem()
	}
	p.kids = []*plan{pp}
	p.hash = func(h *Hasher, v reflect.Value) { pp.hash(h, view(v)) }
	p.clone = func(c *copier, dst, src reflect.Value) { cloneInto(c, pp, view(dst), view(src)) }
	p.dump = func(b *strings.Builder, v reflect.Value) { pp.dump(b, view(v)) }
}

// LeftOut says whether a type rule (SkipType, ShareType, or a built-in
// one: mutexes, protobuf's MessageState, loggers, files) leaves values of
// type t out of fingerprints and dumps: state that is not the node's, as
// the wire and the state file of a node run for real leave it out too.
func LeftOut(t reflect.Type) bool {
	p := planOf(t)
	return p.skip || p.share
}

// FieldZeroed says whether the built-in rules zero field i of struct type
// t in a copy and leave it out of the fingerprint (protobuf's sizeCache,
// a cache Marshal fills in): state that is not the node's either.
func FieldZeroed(t reflect.Type, i int) bool {
	return leftOut(t, ruleFor(t))[t.Field(i).Name] == zeroOut
}
