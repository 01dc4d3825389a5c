package sim

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The reflective plans copy and hash a value that can alias (plan.alias:
// a node that wraps a library, as the etcd raft node) with a
// reflect.Value per field, which costs most of a step. An fplan is the
// same plan compiled to work on memory: a struct is shallow-copied with
// one typed copy, and only its deep fields (pointers, slices, maps,
// interfaces, funcs, fields a rule zeroes) are worked on, by offset; a
// hash reads the fields at their offsets. Both keep the reflective plans'
// semantics and byte stream exactly (fast_test.go checks them against
// the reflective path), and fall back to the reflective plan, with the
// same memo, for what they do not compile: rules' custom funcs,
// atomic.Pointer, floats, interfaces holding values that are not
// pointers, maps of other than plain keys.
type fplan struct {
	p    *plan
	kind fkind
	prim reflect.Kind // fkScalar: the kind hashPrim hashes
	deep bool         // a copy has work to do: !p.flat
	ptrs bool         // a value holds pointers: a copy of it must be typed
	size uintptr
	// ptrT is the type word of *T, for valueAt; typ T's own, for the
	// runtime's typed copy and allocation.
	ptrT, typ unsafe.Pointer
	// elem is a pointer's, a slice's or an array's element, a map's
	// value; esize its size (a pointer's: the size of what it points to).
	elem  *fplan
	esize uintptr
	n     int    // an array's length
	key   *fplan // a map's key
	refs  bool   // a map's entries can hold what the memo tracks
	id    int    // a map's index in its copier's and hasher's scratch
	// shape is a map's layout when the copier and the hasher can work
	// on it as a map of their own types (see mapShapeOf).
	shape mapShape
	et    reflect.Type
	// A struct's fields: raw are the slices of plain values a copy gives
	// their own arrays, cdeep the other fields a copy works on, hashed
	// the fields hashed, in order; hashAt is the plan's in-place hash of
	// a struct of plain fields.
	raw    []primField
	cdeep  []ffield
	hashed []ffield
	hashAt func(h *Hasher, ptr unsafe.Pointer)
	// dyn caches an interface's dynamic types met: its type word (an
	// itab or a type) and the dynamic type's fplan. A type takes the
	// first empty slot and keeps it, so that once filled the cache is
	// only read, on every worker's core.
	dyn [16]atomic.Pointer[dynType]
}

type fkind uint8

const (
	fkReflect fkind = iota // through the reflective plan
	fkScalar               // a plain number, bool, string, node id or node set
	fkStruct
	fkArray
	fkSlice
	fkPointer
	fkMap
	fkInterface
	fkFunc
	fkSkip  // a skip rule: not hashed, zero in a copy
	fkShare // a share rule: not hashed, shared by a copy
)

type ffield struct {
	off uintptr
	f   *fplan
	// kind and prim are f's, for a hash to dispatch on without reading
	// f: a scalar field is hashed without a call.
	kind fkind
	prim reflect.Kind
}

type dynType struct {
	word unsafe.Pointer
	f    *fplan
}

var fast struct {
	sync.Mutex
	maps int // map fplans made, for their ids
}

// fastOf returns p's fplan, compiling it (and the plans it reaches) at
// the first call.
func fastOf(p *plan) *fplan {
	if f := p.fast.Load(); f != nil {
		return f
	}
	fast.Lock()
	defer fast.Unlock()
	if f := p.fast.Load(); f != nil {
		return f
	}
	built := map[*plan]*fplan{}
	f := compileFast(p, built)
	for _, g := range built {
		// Filled in last: a field's fplan may have been under way when
		// its struct's was made (a recursive type).
		for i := range g.hashed {
			d := &g.hashed[i]
			d.kind, d.prim = d.f.kind, d.f.prim
		}
	}
	// Published once whole: a reader never sees an fplan half made.
	for q, g := range built {
		q.fast.Store(g)
	}
	return f
}

func compileFast(p *plan, built map[*plan]*fplan) *fplan {
	if f := p.fast.Load(); f != nil {
		return f
	}
	if f, ok := built[p]; ok {
		return f
	}
	t := p.t
	f := &fplan{p: p, deep: !p.flat, ptrs: hasPointers(t), size: t.Size(), ptrT: typeWord(reflect.PointerTo(t)), typ: typeWord(t)}
	built[p] = f
	switch {
	case p.skip:
		f.kind = fkSkip
	case p.share:
		f.kind = fkShare
	case p.ruled || p.bad != "" || t.PkgPath() == "sync/atomic" && strings.HasPrefix(t.Name(), "Pointer["):
		f.kind = fkReflect
	case t == nodeIDType:
		f.kind, f.prim = fkScalar, kindNode
	case t == nodeSetType:
		f.kind, f.prim = fkScalar, kindNodeSet
	default:
		switch k := t.Kind(); k {
		case reflect.String:
			f.kind, f.prim = fkScalar, k
		case reflect.Array:
			f.kind, f.elem, f.esize, f.n = fkArray, compileFast(p.kids[0], built), t.Elem().Size(), t.Len()
		case reflect.Slice:
			f.kind, f.elem, f.esize = fkSlice, compileFast(p.kids[0], built), t.Elem().Size()
		case reflect.Map:
			f.kind, f.key, f.elem = fkMap, compileFast(p.kids[0], built), compileFast(p.kids[1], built)
			f.refs = holdsRefs(p.kids[0]) || holdsRefs(p.kids[1])
			f.shape = mapShapeOf(f)
			f.id = fast.maps
			fast.maps++
		case reflect.Pointer:
			f.kind, f.elem, f.esize, f.et = fkPointer, compileFast(p.elem, built), p.etSize, p.et
		case reflect.Interface:
			f.kind = fkInterface
		case reflect.Func:
			f.kind = fkFunc
		case reflect.Struct:
			f.kind, f.hashAt = fkStruct, p.hashAt
			for _, pf := range p.fields {
				f.hashed = append(f.hashed, ffield{off: t.Field(pf.i).Offset, f: compileFast(pf.p, built)})
			}
			var other []ffield
			for _, pf := range p.deep {
				off := t.Field(pf.i).Offset
				if r, ok := primOf(pf.p, off); ok && r.kind == reflect.Slice {
					f.raw = append(f.raw, r)
				} else {
					other = append(other, ffield{off: off, f: compileFast(pf.p, built)})
				}
			}
			f.cdeep = other
		default:
			if plainNumber(k) {
				f.kind, f.prim = fkScalar, k
			}
			// Floats and complex numbers: fkReflect.
		}
	}
	return f
}

// typeWord is the type word of an interface holding a value of type t.
func typeWord(t reflect.Type) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&t))[1] }

// valueAt returns the addressable, settable value of type T at ptr, ptrT
// being the type word of *T: reflect.NewAt without its lookup of *T.
func valueAt(ptrT, ptr unsafe.Pointer) reflect.Value {
	var x any
	w := (*[2]unsafe.Pointer)(unsafe.Pointer(&x))
	w[0], w[1] = ptrT, ptr
	return reflect.ValueOf(x).Elem()
}

// typedMove copies the value of f's type at src to dst, through the
// garbage collector's barriers when it holds pointers.
func typedMove(f *fplan, dst, src unsafe.Pointer) {
	if !f.ptrs {
		copy(unsafe.Slice((*byte)(dst), f.size), unsafe.Slice((*byte)(src), f.size))
		return
	}
	typedmemmove(f.typ, dst, src)
}

// The runtime's typed copy and allocation, which reflect's Value.Set and
// New wrap: the runtime exports them to reflect by linkname, and keeps
// their signatures for the packages that call them as this one does (see
// go.dev/issue/67401). Their first argument is a type's *abi.Type, the
// type word of an interface holding the type (typeWord).
//
//go:linkname typedmemmove reflect.typedmemmove
//go:noescape
func typedmemmove(typ, dst, src unsafe.Pointer)

//go:linkname unsafeNew reflect.unsafe_New
func unsafeNew(typ unsafe.Pointer) unsafe.Pointer

//go:linkname unsafeNewArray reflect.unsafe_NewArray
func unsafeNewArray(typ unsafe.Pointer, n int) unsafe.Pointer

//go:linkname typedslicecopy reflect.typedslicecopy
//go:noescape
func typedslicecopy(elem unsafe.Pointer, dst, src sliceHeader) int

// dynamic returns the fplan of the dynamic type of the interface at ptr,
// which is not nil. (The cache's slots used to be taken in turn: an
// interface of more dynamic types than slots, such as a node's messages,
// missed at every few steps, made the fplan again and wrote a slot that
// every worker reads.)
func (f *fplan) dynamic(ptr unsafe.Pointer) *fplan {
	word := *(*unsafe.Pointer)(ptr)
	for i := range f.dyn {
		d := f.dyn[i].Load()
		if d == nil {
			break // slots fill in order and are never emptied
		}
		if d.word == word {
			return d.f
		}
	}
	d := fastOf(planOf(valueAt(f.ptrT, ptr).Elem().Type()))
	nd := &dynType{word, d}
	for i := range f.dyn {
		if f.dyn[i].CompareAndSwap(nil, nd) || f.dyn[i].Load().word == word {
			break
		}
	}
	return d
}

// fix deep-copies in place the value of f at ptr, which holds a shallow
// copy of the original: what the reflective plan's clone does.
func (c *copier) fix(f *fplan, ptr unsafe.Pointer) {
	switch f.kind {
	case fkStruct:
		for i := range f.raw {
			cloneRawSlice(unsafe.Add(ptr, f.raw[i].off), f.raw[i].size)
		}
		for i := range f.cdeep {
			if d := &f.cdeep[i]; d.f.deep {
				c.fix(d.f, unsafe.Add(ptr, d.off))
			}
		}
	case fkPointer:
		if src := *(*unsafe.Pointer)(ptr); src != nil {
			*(*unsafe.Pointer)(ptr) = c.copyPointer(f, src)
		}
	case fkSlice:
		c.copySlice(f, ptr)
	case fkArray:
		if f.elem.deep {
			for i := range f.n {
				c.fix(f.elem, unsafe.Add(ptr, uintptr(i)*f.esize))
			}
		}
	case fkMap:
		c.copyMap(f, ptr)
	case fkInterface:
		if *(*unsafe.Pointer)(ptr) == nil {
			return
		}
		d := f.dynamic(ptr)
		if !d.deep {
			return
		}
		if d.p.t.Kind() == reflect.Pointer {
			// The data word is the pointer: copied in place.
			c.fix(d, unsafe.Add(ptr, unsafe.Sizeof(uintptr(0))))
			return
		}
		v := valueAt(f.ptrT, ptr)
		f.p.clone(c, v, v)
	case fkFunc:
		cl, fi := funcOf(ptr)
		switch {
		case cl == nil || fi.kind == funcStatic:
			return
		case fi.kind == funcCaptures:
			panic(&TypeError{Type: f.p.t, Reason: capturesReason(fi)})
		}
		recv := (*methodValue)(cl).recv
		if e := c.seen.find(recv); e != nil {
			*(*unsafe.Pointer)(ptr) = rebind(cl, e.copied())
			return
		}
		c.fixups = append(c.fixups, fixup{at: ptr, cl: cl})
	case fkSkip:
		if !f.ptrs {
			clear(unsafe.Slice((*byte)(ptr), f.size))
			return
		}
		valueAt(f.ptrT, ptr).SetZero()
	case fkReflect:
		if f.deep {
			v := valueAt(f.ptrT, ptr)
			f.p.clone(c, v, v)
		}
	}
}

// copyPointer returns the copy of src, a pointer of f: the copy made
// before if the memo has one.
func (c *copier) copyPointer(f *fplan, src unsafe.Pointer) unsafe.Pointer {
	n := unsafe.Pointer(nil)
	if f.esize > 0 {
		e := c.seen.probe(src)
		if c.seen.met(e) {
			if e.t == f.p.key {
				return e.copied()
			}
			// Met as another type, a pointer into it: copied apart.
			n = unsafeNew(f.elem.typ)
		} else {
			n = unsafeNew(f.elem.typ)
			c.seen.fill(e, src, f.p.key, n, 0)
		}
	} else {
		n = unsafeNew(f.elem.typ)
	}
	typedMove(f.elem, n, src)
	if f.elem.deep {
		c.fix(f.elem, n)
	}
	return n
}

func (c *copier) copySlice(f *fplan, ptr unsafe.Pointer) {
	hdr := (*sliceHeader)(ptr)
	if hdr.data == nil {
		return
	}
	if !f.elem.ptrs {
		cloneRawSlice(ptr, f.esize)
	} else {
		n := hdr.len
		data := unsafeNewArray(f.elem.typ, n)
		typedslicecopy(f.elem.typ, sliceHeader{data, n, n}, *hdr)
		hdr.data, hdr.cap = data, n
	}
	if f.elem.deep {
		for i := range hdr.len {
			c.fix(f.elem, unsafe.Add(hdr.data, uintptr(i)*f.esize))
		}
	}
}

func (c *copier) copyMap(f *fplan, ptr unsafe.Pointer) {
	src := *(*unsafe.Pointer)(ptr)
	if src == nil {
		return
	}
	e := c.seen.find(src)
	if e != nil && e.t == f.p.key {
		*(*unsafe.Pointer)(ptr) = e.copied()
		return
	}
	var m unsafe.Pointer
	switch f.shape {
	case msEmpty:
		m = cloneMap[struct{}](ptr)
	case msByte:
		m = cloneMap[uint8](ptr)
	case msWord:
		m = cloneMap[uint64](ptr)
	case msPointer:
		c.copyMapPointers(f, ptr, e == nil)
		return
	default:
		c.copyMapReflect(f, ptr, e == nil)
		return
	}
	if e == nil {
		c.seen.add(src, f.p.key, m, 0)
	}
	*(*unsafe.Pointer)(ptr) = m
}

// copyMapPointers copies the map at ptr, of shape msPointer, its values
// through the memo; record says whether the memo takes the map.
func (c *copier) copyMapPointers(f *fplan, ptr unsafe.Pointer, record bool) {
	src := *(*map[uint64]unsafe.Pointer)(ptr)
	m := make(map[uint64]unsafe.Pointer, len(src))
	if record {
		c.seen.add(*(*unsafe.Pointer)(ptr), f.p.key, *(*unsafe.Pointer)(unsafe.Pointer(&m)), 0)
	}
	for k, v := range src {
		if v != nil {
			v = c.copyPointer(f.elem, v)
		}
		m[k] = v
	}
	*(*map[uint64]unsafe.Pointer)(ptr) = m
}

// copyMapReflect copies the map at ptr through reflect's map API.
func (c *copier) copyMapReflect(f *fplan, ptr unsafe.Pointer, record bool) {
	v := valueAt(f.ptrT, ptr)
	m := reflect.MakeMapWithSize(f.p.t, v.Len())
	if record {
		c.seen.add(v.UnsafePointer(), f.p.key, m.UnsafePointer(), 0)
	}
	sc := scratchOf(&c.scratch, f)
	sc.it.Reset(v)
	for sc.it.Next() {
		sc.k.SetIterKey(&sc.it)
		sc.v.SetIterValue(&sc.it)
		if f.key.deep {
			c.fix(f.key, sc.kAt)
		}
		if f.elem.deep {
			c.fix(f.elem, sc.vAt)
		}
		m.SetMapIndex(sc.k, sc.v)
	}
	sc.done()
	*(*unsafe.Pointer)(ptr) = m.UnsafePointer()
}

// scratchOf returns the scratch of map fplan f in s, made busy: a new
// one if it is busy already (a map nested in a map of its type).
func scratchOf(s *[]mapScratch, f *fplan) *mapScratch {
	if f.id >= len(*s) {
		*s = append(*s, make([]mapScratch, f.id+1-len(*s))...)
	}
	sc := &(*s)[f.id]
	if sc.busy {
		sc = &mapScratch{}
	}
	if !sc.k.IsValid() {
		sc.k, sc.v = reflect.New(f.key.p.t).Elem(), reflect.New(f.elem.p.t).Elem()
		sc.kAt, sc.vAt = sc.k.Addr().UnsafePointer(), sc.v.Addr().UnsafePointer()
	}
	sc.busy = true
	return sc
}

func (sc *mapScratch) done() {
	sc.it.Reset(reflect.Value{})
	sc.busy = false
}

// copyAliasedFast is copyAliasedInto through p's fplan; copyInto uses it
// for a type that cannot alias too (its memo then meets no pointer twice).
func copyAliasedFast(p *plan, dst, src unsafe.Pointer) {
	c := copiers.Get().(*copier)
	defer func() {
		if r := recover(); r != nil {
			locatePanic(r, reflect.NewAt(p.et, src).Interface())
		}
		c.release()
	}()
	f := fastOf(p)
	c.seen.add(src, p.key, dst, 0)
	typedMove(f.elem, dst, src)
	if f.elem.deep {
		c.fix(f.elem, dst)
	}
	c.finish()
}

// copyValueFast returns a new copy of the value of plan p at src, p not
// a pointer: what cloneValue makes, through p's fplan.
func copyValueFast(p *plan, src unsafe.Pointer) unsafe.Pointer {
	c := copiers.Get().(*copier)
	defer func() {
		if r := recover(); r != nil {
			locatePanic(r, reflect.NewAt(p.t, src).Elem().Interface())
		}
		c.release()
	}()
	f := fastOf(p)
	n := unsafeNew(f.typ)
	typedMove(f, n, src)
	c.fix(f, n)
	c.finish()
	return n
}

// copyPointerFast is copyAliased for a pointer of plan p, through its
// fplan.
func copyPointerFast(p *plan, src unsafe.Pointer) unsafe.Pointer {
	c := copiers.Get().(*copier)
	defer func() {
		if r := recover(); r != nil {
			locatePanic(r, reflect.NewAt(p.et, src).Interface())
		}
		c.release()
	}()
	n := c.copyPointer(fastOf(p), src)
	c.finish()
	return n
}

// hashFast writes the value of f at ptr as the reflective plan's hash
// does.
func (h *Hasher) hashFast(f *fplan, ptr unsafe.Pointer) {
	switch f.kind {
	case fkScalar:
		hashPrim(h, ptr, f.prim)
	case fkStruct:
		if f.hashAt != nil {
			f.hashAt(h, ptr)
			return
		}
		for i := range f.hashed {
			d := &f.hashed[i]
			switch at := unsafe.Add(ptr, d.off); d.kind {
			case fkScalar:
				hashPrim(h, at, d.prim)
			case fkPointer:
				h.hashPointer(d.f, *(*unsafe.Pointer)(at))
			default:
				h.hashFast(d.f, at)
			}
		}
	case fkPointer:
		h.hashPointer(f, *(*unsafe.Pointer)(ptr))
	case fkSlice:
		hdr := (*sliceHeader)(ptr)
		h.Uint64(uint64(hdr.len))
		for i := range hdr.len {
			h.hashFast(f.elem, unsafe.Add(hdr.data, uintptr(i)*f.esize))
		}
	case fkArray:
		for i := range f.n {
			h.hashFast(f.elem, unsafe.Add(ptr, uintptr(i)*f.esize))
		}
	case fkMap:
		h.hashMap(f, ptr)
	case fkInterface:
		if *(*unsafe.Pointer)(ptr) == nil {
			h.buf = append(h.buf, 0)
			return
		}
		d := f.dynamic(ptr)
		h.buf = append(h.buf, 1)
		h.Uint64(d.p.typeHash)
		if d.p.t.Kind() == reflect.Pointer {
			h.hashFast(d, unsafe.Add(ptr, unsafe.Sizeof(uintptr(0))))
			return
		}
		d.p.hash(h, valueAt(f.ptrT, ptr).Elem())
	case fkFunc:
		h.hashFunc(f, ptr)
	case fkSkip, fkShare:
	case fkReflect:
		f.p.hash(h, valueAt(f.ptrT, ptr))
	}
}

func (h *Hasher) hashPointer(f *fplan, ptr unsafe.Pointer) {
	if ptr == nil {
		h.buf = append(h.buf, 0)
		return
	}
	if m := h.memo; m != nil && f.esize > 0 {
		if i, ok := m.visit(ptr, f.p.key); ok {
			h.buf = append(h.buf, 2)
			h.Uint64(uint64(i))
			return
		}
	}
	h.buf = append(h.buf, 1)
	h.depth++
	if h.depth > maxDepth {
		panic(&TypeError{Type: f.p.t, Reason: "pointers nested deeper than 512 levels (a list too long?)"})
	}
	h.hashFast(f.elem, ptr)
	h.depth--
}

func (h *Hasher) hashFunc(f *fplan, ptr unsafe.Pointer) { h.funcAt(f.p.t, ptr) }

// mapEntry is an entry of a map hashed through the memo: its key's hash
// and its value, a pointer.
type mapEntry struct {
	k uint64
	v unsafe.Pointer
}

func (h *Hasher) hashMap(f *fplan, ptr unsafe.Pointer) {
	if f.shape != msNone {
		// The typed paths below: every map of a shape has the layout
		// of a map[uint64]V, and its length as its first word.
		n := 0
		if m := *(*unsafe.Pointer)(ptr); m != nil {
			n = len(*(*map[uint64]struct{})(ptr))
		}
		switch {
		case n == 0:
			h.Uint64(0)
		case h.memo != nil && f.refs:
			// msPointer: the only shape that holds references.
			h.hashMapPointers(f, ptr)
		case f.shape == msEmpty:
			hashMapFlat[struct{}](h, f, ptr)
		case f.shape == msByte:
			hashMapFlat[uint8](h, f, ptr)
		case f.shape == msWord:
			hashMapFlat[uint64](h, f, ptr)
		default:
			hashMapFlat[unsafe.Pointer](h, f, ptr)
		}
		return
	}
	v := valueAt(f.ptrT, ptr)
	n := v.Len()
	if n == 0 {
		h.Uint64(0)
		return
	}
	if h.memo != nil && f.refs {
		if f.key.kind != fkScalar || f.elem.kind != fkPointer {
			hashMapMemo(h, f.p, f.p.kids[0], f.p.kids[1], v)
			return
		}
		h.hashMapMemo(f, v)
		return
	}
	sc := scratchOf(&h.scratch, f)
	sc.it.Reset(v)
	start := len(h.keys)
	for sc.it.Next() {
		sc.k.SetIterKey(&sc.it)
		sc.v.SetIterValue(&sc.it)
		c := h.child()
		h.level++
		c.hashFast(f.key, sc.kAt)
		c.hashFast(f.elem, sc.vAt)
		h.level--
		h.keys = append(h.keys, c.Sum64())
	}
	sc.done()
	ks := h.keys[start:]
	slices.Sort(ks)
	h.Uint64(uint64(n))
	for _, k := range ks {
		h.Uint64(k)
	}
	h.keys = h.keys[:start]
}

// hashMapMemo is the package's hashMapMemo for a map of plain keys and
// pointer values, f.
func (h *Hasher) hashMapMemo(f *fplan, v reflect.Value) {
	m := h.memo
	if i, ok := m.visit(v.UnsafePointer(), f.p.key); ok {
		h.Uint64(^uint64(0))
		h.Uint64(uint64(i))
		return
	}
	sc := scratchOf(&h.scratch, f)
	sc.it.Reset(v)
	start := len(m.entries)
	for sc.it.Next() {
		sc.k.SetIterKey(&sc.it)
		c := h.child()
		h.level++
		c.hashFast(f.key, sc.kAt)
		h.level--
		m.entries = append(m.entries, mapEntry{c.Sum64(), sc.it.Value().UnsafePointer()})
	}
	sc.done()
	h.hashEntries(f, start)
}

// hashEntries writes the entries of the map f from start in h's memo's
// stack of entries, sorted by their keys' hashes, and pops them.
func (h *Hasher) hashEntries(f *fplan, start int) {
	m := h.memo
	es := m.entries[start:]
	slices.SortFunc(es, func(a, b mapEntry) int { return cmp.Compare(a.k, b.k) })
	h.Uint64(uint64(len(es)))
	for i := range len(es) {
		// Indexed afresh: hashing a value can grow m.entries.
		e := m.entries[start+i]
		h.Uint64(e.k)
		h.hashPointer(f.elem, e.v)
	}
	clear(m.entries[start:])
	m.entries = m.entries[:start]
}

// hashAliasedFast is hashAliased for a pointer of plan p, through its
// fplan.
func (h *Hasher) hashAliasedFast(p *plan, ptr unsafe.Pointer) {
	m := hashMemos.Get().(*hashMemo)
	h.memo = m
	h.hashPointer(fastOf(p), ptr)
	h.endMemo(m)
}

// A mapShape is a map layout that the copier and the hasher work on
// through maps of their own types: a key of 8 bytes hashed as a word (an
// integer, a node id), and a value of no size, of one byte, of one word,
// none of them holding pointers, or a pointer. Such a map has the layout
// of the map[uint64]V of the shape's V (the runtime's maps keep no type
// in the map: it comes with each operation, and these types have the same
// group layout, hash function and pointer bitmap as the map's own), so
// the map at a field is read, cloned and iterated as one, without
// reflect's map API: maps.Clone for a map of plain values, a typed loop
// for pointers. TestFastMatchesReflective and TestFastMapShapes check
// them against the reflective plans.
type mapShape uint8

const (
	msNone    mapShape = iota
	msEmpty            // map[uint64]struct{}
	msByte             // map[uint64]uint8
	msWord             // map[uint64]uint64
	msPointer          // map[uint64]unsafe.Pointer, values copied through the memo
)

// mapShapeOf returns the shape of map f, msNone if it has none.
func mapShapeOf(f *fplan) mapShape {
	kt, vt := f.p.t.Key(), f.p.t.Elem()
	switch {
	case f.key.kind != fkScalar || f.key.deep || kt.Size() != 8 || kt.Align() != 8:
		return msNone
	}
	switch kt.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
	default:
		return msNone
	}
	switch e := f.elem; {
	case e.kind == fkPointer:
		return msPointer
	case e.deep || e.ptrs || e.kind == fkSkip || e.kind == fkShare:
		return msNone
	case vt.Size() == 0 && vt.Align() == 1:
		return msEmpty
	case vt.Size() == 1 && vt.Align() == 1:
		return msByte
	case vt.Size() == 8 && vt.Align() == 8 && !isFloat(vt.Kind()):
		return msWord
	}
	return msNone
}

// isFloat says whether k is a floating-point kind: its keys and values
// compare and hash apart from a word's.
func isFloat(k reflect.Kind) bool {
	return k == reflect.Float32 || k == reflect.Float64 || k == reflect.Complex64 || k == reflect.Complex128
}

// cloneMap returns a copy of the map at ptr, of a shape whose value type
// is V: the pointer a map variable holds.
func cloneMap[V any](ptr unsafe.Pointer) unsafe.Pointer {
	m := maps.Clone(*(*map[uint64]V)(ptr))
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// hashMapFlat is hashMap's plain path for the map at ptr, of a shape
// whose value type is V.
func hashMapFlat[V any](h *Hasher, f *fplan, ptr unsafe.Pointer) {
	m := *(*map[uint64]V)(ptr)
	sc := scratchOf(&h.scratch, f)
	start := len(h.keys)
	for k, v := range m {
		*(*uint64)(sc.kAt) = k
		*(*V)(sc.vAt) = v
		c := h.child()
		h.level++
		c.hashFast(f.key, sc.kAt)
		c.hashFast(f.elem, sc.vAt)
		h.level--
		h.keys = append(h.keys, c.Sum64())
	}
	sc.busy = false
	ks := h.keys[start:]
	slices.Sort(ks)
	h.Uint64(uint64(len(ks)))
	for _, k := range ks {
		h.Uint64(k)
	}
	h.keys = h.keys[:start]
}

// hashMapPointers is hashMapMemo for the map at ptr, of shape msPointer.
func (h *Hasher) hashMapPointers(f *fplan, ptr unsafe.Pointer) {
	mem := h.memo
	if i, ok := mem.visit(*(*unsafe.Pointer)(ptr), f.p.key); ok {
		h.Uint64(^uint64(0))
		h.Uint64(uint64(i))
		return
	}
	sc := scratchOf(&h.scratch, f)
	start := len(mem.entries)
	for k, v := range *(*map[uint64]unsafe.Pointer)(ptr) {
		*(*uint64)(sc.kAt) = k
		c := h.child()
		h.level++
		c.hashFast(f.key, sc.kAt)
		h.level--
		mem.entries = append(mem.entries, mapEntry{c.Sum64(), v})
	}
	sc.busy = false
	h.hashEntries(f, start)
}
