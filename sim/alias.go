package sim

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// A node that wraps a library can hold one object through two pointers
// (raft's MemoryStorage, as the log's Storage interface and as the
// adapter's own field), pointer cycles, and method values bound to its
// own objects. For such a type (plan.alias, decided once per type by
// canAlias) copies and hashes go through a memo of the pointers met:
//
//   - a copy copies a pointer met again as the copy made the first time,
//     so that aliasing, cycles included, is kept;
//   - a hash writes a pointer met again as a back-reference, the index of
//     its first visit, so that no object is hashed twice and two shapes of
//     aliasing hash apart.
//
// The memo knows pointers and maps, keyed by address and type; slices
// that share a backing array are copied apart, as are pointers into the
// inside of an object (a field, an element) that the copy reaches
// through another way. Every other type keeps the plain paths, which
// build no memo.

// A hashMemo is what a Hasher met while hashing an aliasing value.
type hashMemo struct {
	seen memoTable
	n    int
	// recvs are the receivers of method values met before their
	// receiver (if ever): whether and where each was met is written
	// after the value.
	recvs []unsafe.Pointer
	// entries is the stack of the entries of the maps under way (see
	// Hasher.hashMapMemo in fast.go).
	entries []mapEntry
}

// A copier is what a copy of an aliasing value made so far.
type copier struct {
	seen   memoTable
	fixups []fixup
	// scratch holds, per compiled map type (fplan.id), the key and
	// value a copy of such a map works in (see fast.go).
	scratch []mapScratch
}

// A fixup is a method value copied before its receiver: at, in the copy,
// holds cl, bound to the original receiver, until finish rebinds it.
type fixup struct{ at, cl unsafe.Pointer }

var (
	hashMemos = sync.Pool{New: func() any { return &hashMemo{} }}
	copiers   = sync.Pool{New: func() any { return &copier{} }}
)

// visit records ptr of type key, returning the index of its first visit
// if it was met before.
func (m *hashMemo) visit(ptr unsafe.Pointer, key uintptr) (int, bool) {
	e := m.seen.probe(ptr)
	if !m.seen.met(e) {
		m.seen.fill(e, ptr, key, nil, m.n)
		m.n++
		return 0, false
	}
	if e.t == key {
		return int(e.i), true
	}
	return 0, false
}

// hashAliased hashes v, of plan p, through a memo.
func (h *Hasher) hashAliased(p *plan, v reflect.Value) {
	m := hashMemos.Get().(*hashMemo)
	h.memo = m
	p.hash(h, v)
	h.endMemo(m)
}

// endMemo writes where the receivers of the method values met before
// their receivers were met, and puts the memo back.
func (h *Hasher) endMemo(m *hashMemo) {
	for _, r := range m.recvs {
		if e := m.seen.find(r); e != nil {
			h.buf = append(h.buf, 1)
			h.Uint64(uint64(e.i))
		} else {
			// Bound to an object outside the node, which a copy
			// shares.
			h.buf = append(h.buf, 0)
		}
	}
	h.memo = nil
	m.seen.reset()
	clear(m.recvs)
	m.n, m.recvs = 0, m.recvs[:0]
	hashMemos.Put(m)
}

// finish rebinds the method values copied before their receivers, to the
// receivers' copies; one bound to an object outside the value copied
// stays bound to it, as a pointer to it would be shared.
func (c *copier) finish() {
	for _, f := range c.fixups {
		recv := (*methodValue)(f.cl).recv
		if e := c.seen.find(recv); e != nil {
			*(*unsafe.Pointer)(f.at) = rebind(f.cl, e.copied())
		}
	}
}

func (c *copier) release() {
	c.seen.reset()
	clear(c.fixups)
	c.fixups = c.fixups[:0]
	copiers.Put(c)
}

// copyAliased returns a deep copy of src, of plan p, through a copier.
func copyAliased(p *plan, src reflect.Value) reflect.Value {
	c := copiers.Get().(*copier)
	defer func() {
		if r := recover(); r != nil {
			locatePanic(r, exported(src).Interface())
		}
		c.release()
	}()
	out := cloneValue(c, p, src)
	c.finish()
	return out
}

// copyAliasedInto deep-copies the object at src into the one at dst, both
// of type p.et, p being a pointer's plan.
func copyAliasedInto(p *plan, dst, src unsafe.Pointer) {
	c := copiers.Get().(*copier)
	defer func() {
		if r := recover(); r != nil {
			locatePanic(r, reflect.NewAt(p.et, src).Interface())
		}
		c.release()
	}()
	c.seen.add(src, p.key, dst, 0)
	d := reflect.NewAt(p.et, dst).Elem()
	s := reflect.NewAt(p.et, src).Elem()
	d.Set(s)
	cloneInto(c, p.elem, d, s)
	c.finish()
}

// canAlias says whether a value of plan p can hold one pointer or map
// twice (its type reaches a pointer or map type twice, itself included,
// as a recursive type does), or values only a memo can copy or hash:
// funcs, and interfaces, which can hold anything.
func canAlias(p *plan) bool {
	met := map[*plan]bool{}
	var walk func(q *plan) bool
	walk = func(q *plan) bool {
		if q.skip || q.share || q.ruled {
			return false
		}
		switch q.t.Kind() {
		case reflect.Func, reflect.Interface:
			return true
		case reflect.Pointer, reflect.Map:
			if met[q] {
				return true
			}
		default:
			if met[q] {
				return false // a struct met again by value: its parts were walked
			}
		}
		met[q] = true
		for _, k := range q.kids {
			if walk(k) {
				return true
			}
		}
		return false
	}
	return walk(p)
}

// holdsRefs says whether a value of plan p can hold what a memo tracks:
// a pointer, a map, a func or an interface.
func holdsRefs(p *plan) bool {
	met := map[*plan]bool{}
	var walk func(q *plan) bool
	walk = func(q *plan) bool {
		if q.skip || q.share || met[q] {
			return false
		}
		met[q] = true
		switch q.t.Kind() {
		case reflect.Func, reflect.Interface, reflect.Pointer, reflect.Map:
			return true
		}
		for _, k := range q.kids {
			if walk(k) {
				return true
			}
		}
		return false
	}
	return walk(p)
}

// locatePanic re-panics r, a TypeError given the path in root of the
// value it is about when it has none yet.
func locatePanic(r any, root any) {
	if te, ok := r.(*TypeError); ok {
		te.locate(root)
	}
	panic(r)
}

// locate fills in e's Path and Fix: the first value in root, in the order
// a hash visits them, that cannot be hashed or copied. The plans do not
// carry paths, which would cost every hash; an error walks again.
func (e *TypeError) locate(root any) {
	if e.Path != "" || root == nil {
		return
	}
	met := map[unsafe.Pointer]bool{}
	var walk func(v reflect.Value, path string, st reflect.Type, field string) bool
	walk = func(v reflect.Value, path string, st reflect.Type, field string) bool {
		t := v.Type()
		p := planOf(t)
		if p.skip || p.share || p.ruled {
			return false
		}
		if reason := p.failure(v); reason != "" {
			e.Type, e.Reason, e.Path, e.Fix = t, reason, path, fixFor(st, field, t)
			return true
		}
		switch t.Kind() {
		case reflect.Pointer:
			if v.IsNil() || met[v.UnsafePointer()] {
				return false
			}
			met[v.UnsafePointer()] = true
			return walk(v.Elem(), path, nil, "")
		case reflect.Interface:
			if v.IsNil() {
				return false
			}
			return walk(v.Elem(), path+".("+v.Elem().Type().String()+")", nil, "")
		case reflect.Struct:
			for _, f := range p.fields {
				if walk(v.Field(f.i), path+"."+f.name, t, f.name) {
					return true
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), nil, "") {
					return true
				}
			}
		case reflect.Map:
			iter := v.MapRange()
			for iter.Next() {
				k := iter.Key()
				at := fmt.Sprintf("%s[%s]", path, dumpBareValue(k))
				if walk(k, at, nil, "") || walk(iter.Value(), at, nil, "") {
					return true
				}
			}
		}
		return false
	}
	v := reflect.ValueOf(root)
	walk(v, rootName(v.Type()), nil, "")
}

// rootName names a node's or a message's type at the head of a path: its
// name without package, pointers dropped.
func rootName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	if t.Name() == "" {
		return t.String()
	}
	return t.Name()
}

// failure says why v, of plan p, cannot be hashed or copied, "" if it
// can (its parts aside).
func (p *plan) failure(v reflect.Value) string {
	if p.bad != "" {
		return p.bad
	}
	if p.t.Kind() == reflect.Func {
		v = addressable(v)
		if cl, fi := funcOf(unsafe.Pointer(v.UnsafeAddr())); cl != nil && fi.kind == funcCaptures {
			return capturesReason(fi)
		}
	}
	return ""
}

func capturesReason(fi funcInfo) string {
	if strings.HasSuffix(fi.name, "-fm") {
		return fmt.Sprintf("%s is a method value bound to a value or an interface, which it holds a copy of", fi.name)
	}
	return fmt.Sprintf("%s is a closure, whose captured variables a copy would share", fi.name)
}

func dumpBareValue(v reflect.Value) string {
	var b strings.Builder
	planOf(v.Type()).dump(&b, v)
	return b.String()
}

// hashMapMemo hashes a map whose entries can hold what the memo tracks.
// The entries are hashed in the order of their keys' hashes (each key on
// its own, without the memo), not each on its own as a plain map's are,
// so that the first visit of a pointer two entries share does not depend
// on the map's order.
func hashMapMemo(h *Hasher, p, kp, vp *plan, v reflect.Value) {
	if i, ok := h.memo.visit(v.UnsafePointer(), p.key); ok {
		h.Uint64(^uint64(0))
		h.Uint64(uint64(i))
		return
	}
	type entry struct {
		k uint64
		v reflect.Value
	}
	es := make([]entry, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		c := h.child()
		h.level++
		kp.hash(c, iter.Key())
		h.level--
		es = append(es, entry{c.Sum64(), iter.Value()})
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.k, b.k) })
	h.Uint64(uint64(len(es)))
	for _, e := range es {
		h.Uint64(e.k)
		vp.hash(h, e.v)
	}
}

// maxDump bounds a dump, which follows pointers without a memo: past it
// a pointer is written "...", so that a cycle ends.
const maxDump = 1 << 20
