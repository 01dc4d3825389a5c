package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// Node states and messages need three things: a deep copy, a fingerprint and
// a readable dump. Plain structs get all three by reflection, through a plan
// built once per type and cached. A node or message type can take over any of
// them by implementing the interfaces below (checked on the top-level value,
// not on values nested inside it).

// StateCopier returns a deep copy of the receiver, of the same dynamic type.
type StateCopier interface{ CopyState() any }

// StateHasher writes the receiver's canonical encoding into h. Two values
// that mean the same state must write the same bytes.
type StateHasher interface{ HashState(h *Hasher) }

// StateDumper returns a one-line readable form of the receiver. A type that
// implements fmt.Stringer is dumped with String when it has no DumpState.
type StateDumper interface{ DumpState() string }

// A TypeError says a value cannot be part of a node state or a message,
// where it is and how to fix it.
type TypeError struct {
	Type   reflect.Type
	Reason string
	// Path is where the value is in the node or message, as in
	// "etcdNode.rn.raft.raftLog.storage.(*raft.MemoryStorage).callStats":
	// fields, indices, map keys, and the dynamic type held by an
	// interface. Empty when it could not be found.
	Path string
	// Fix is the advice: a struct tag for one's own struct, or the rule
	// to register (see SkipFields, ShareType).
	Fix string
}

func (e *TypeError) Error() string {
	where := fmt.Sprintf("type %v", e.Type)
	if e.Path != "" {
		where = fmt.Sprintf("%s (type %v)", e.Path, e.Type)
	}
	fix := e.Fix
	if fix == "" {
		fix = fixFor(nil, "", e.Type)
	}
	return fmt.Sprintf("%s cannot be hashed or copied: %s; %s", where, e.Reason, fix)
}

type plan struct {
	t        reflect.Type
	key      uintptr // typeKey(t)
	elem     *plan   // pointers: the plan of the element type
	typeHash uint64
	flat     bool // assignment is a deep copy: no pointers, slices, maps or interfaces inside
	// copier says the type implements StateCopier; rawElem, for a
	// pointer, that its element holds no pointers at all (excluded
	// fields included), so that copying one is a plain memory copy.
	copier  bool
	rawElem bool
	// et and etSize, for a pointer, are its element type and that type's
	// size: asked once, not through reflect.Type's methods at every copy.
	et     reflect.Type
	etSize uintptr
	// direct, when set, hashes a value of the type held in an interface
	// from the interface's data word, without reflection: for structs of
	// plain fields and pointers to them. hashAt hashes such a struct
	// stored at a pointer.
	direct func(h *Hasher, data unsafe.Pointer)
	hashAt func(h *Hasher, ptr unsafe.Pointer)
	// namesDirect and namesAt, set beside direct and hashAt, say whether
	// the value names a node of g: a node id or a member of a node set.
	// One that names none hashes alike whether or not the hasher renames
	// g's nodes (symmetry reduction's blind hashes).
	namesDirect func(data unsafe.Pointer, g *nodeGroup) bool
	namesAt     func(ptr unsafe.Pointer, g *nodeGroup) bool
	custom      bool // implements StateHasher
	// alias says a value can hold a pointer twice, a cycle or a func:
	// Copy and Fingerprint go through a memo (see alias.go).
	alias bool
	// skip and share are set by a rule (see rules.go), ruled by a
	// CustomType rule or atomic.Pointer's: what the plan does no walk of
	// the type may second-guess.
	skip, share, ruled bool
	bad                string      // why a value cannot be hashed (a chan, an unsafe.Pointer)
	kids               []*plan     // the plans of the parts, for canAlias
	fields             []planField // a struct's hashed fields, in order
	deep               []planField // a struct's fields a deep copy works on, in order
	// fast is the compiled copier and hasher of a value that can alias
	// (see fast.go), built at its first use.
	fast atomic.Pointer[fplan]
	hash func(h *Hasher, v reflect.Value)
	// clone deep-copies src into dst: both addressable and writable, dst
	// holding a shallow copy of src. c is nil but for a value that can
	// alias.
	clone func(c *copier, dst, src reflect.Value)
	dump  func(b *strings.Builder, v reflect.Value)
}

type planField struct {
	i    int
	name string
	p    *plan
}

var plans sync.Map // reflect.Type -> *plan

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }

// recent is a cache in front of plans: a step looks up the same few types
// (the node type, the message types) again and again. A type takes the
// first empty slot of the four its key hashes to, and keeps it: once
// filled, the cache is only read, so workers on other cores share its
// lines. (Each type that missed used to take its one slot from the type
// there: two that hash alike wrote it turn about, at every step, and on
// two workers the cores took the line from each other; transport's
// search spent 4% of its time so.) A type that finds its four slots
// taken by others is looked up in plans, which is read-only too.
var recent [256]atomic.Pointer[plan]

const recentWays = 4

// typeKey is the address of the type descriptor behind t.
func typeKey(t reflect.Type) uintptr { return (*[2]uintptr)(unsafe.Pointer(&t))[1] }

func planOf(t reflect.Type) *plan {
	key := typeKey(t)
	h := (key * 0x9e3779b97f4a7c15) >> 56
	for i := range uintptr(recentWays) {
		p := recent[(h+i)%uintptr(len(recent))].Load()
		if p == nil {
			break // slots fill in order and are never emptied
		}
		if p.key == key {
			return p
		}
	}
	var p *plan
	if v, ok := plans.Load(t); ok {
		p = v.(*plan)
	} else {
		np := buildPlan(t, map[reflect.Type]*plan{})
		if !np.custom {
			np.alias = canAlias(np)
		}
		v, _ := plans.LoadOrStore(t, np)
		p = v.(*plan)
	}
	for i := range uintptr(recentWays) {
		slot := &recent[(h+i)%uintptr(len(recent))]
		if slot.CompareAndSwap(nil, p) {
			break
		}
		if q := slot.Load(); q.key == key {
			break // another goroutine put it there
		}
	}
	return p
}

var (
	nodeIDType   = reflect.TypeFor[NodeID]()
	nodeSetType  = reflect.TypeFor[NodeSet]()
	hasherType   = reflect.TypeFor[StateHasher]()
	copierType   = reflect.TypeFor[StateCopier]()
	dumperType   = reflect.TypeFor[StateDumper]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// buildPlan builds the plan for t. Recursive types are resolved through
// building, which holds plans not yet finished.
func buildPlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	name := t.String()
	if t.PkgPath() != "" {
		name = t.PkgPath() + "." + t.Name()
	}
	p := &plan{t: t, key: typeKey(t), typeHash: xxhash.Sum64String(name)}
	p.custom = t.Implements(hasherType)
	p.copier = t.Implements(copierType)
	if t.Kind() == reflect.Pointer {
		p.et = t.Elem()
		p.etSize = p.et.Size()
	}
	building[t] = p
	r := ruleFor(t)
	if r != nil && (r.kind == ruleSkip || r.kind == ruleShare) {
		rulePlan(p, r.kind)
		delete(building, t)
		return p
	}
	switch {
	case t.PkgPath() == "sync/atomic" && strings.HasPrefix(t.Name(), "Pointer["):
		atomicPointerPlan(p, building)
		delete(building, t)
		return p
	case t == nodeIDType:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.Node(NodeID(v.Int())) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(strconv.FormatInt(v.Int(), 10)) }
		delete(building, t)
		return p
	case t == nodeSetType:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.NodeSet(NodeSet(v.Uint())) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(NodeSet(v.Uint()).String()) }
		delete(building, t)
		return p
	}
	switch t.Kind() {
	case reflect.Bool:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.Bool(v.Bool()) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(strconv.FormatBool(v.Bool())) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.Uint64(uint64(v.Int())) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(strconv.FormatInt(v.Int(), 10)) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.Uint64(v.Uint()) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(strconv.FormatUint(v.Uint(), 10)) }
	case reflect.Float32, reflect.Float64:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.Float64(v.Float()) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64)) }
	case reflect.Complex64, reflect.Complex128:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { c := v.Complex(); h.Float64(real(c)); h.Float64(imag(c)) }
		p.dump = func(b *strings.Builder, v reflect.Value) { fmt.Fprint(b, v.Complex()) }
	case reflect.String:
		p.flat = true
		p.hash = func(h *Hasher, v reflect.Value) { h.String(v.String()) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(strconv.Quote(v.String())) }
	case reflect.Array:
		ep := buildPlan(t.Elem(), building)
		n := t.Len()
		p.flat = ep.flat
		p.kids = []*plan{ep}
		p.hash = func(h *Hasher, v reflect.Value) {
			for i := 0; i < n; i++ {
				ep.hash(h, v.Index(i))
			}
		}
		p.clone = func(c *copier, dst, src reflect.Value) {
			for i := 0; i < n; i++ {
				cloneInto(c, ep, dst.Index(i), src.Index(i))
			}
		}
		p.dump = func(b *strings.Builder, v reflect.Value) { dumpList(b, ep, v) }
	case reflect.Slice:
		ep := buildPlan(t.Elem(), building)
		p.kids = []*plan{ep}
		p.hash = func(h *Hasher, v reflect.Value) {
			n := v.Len()
			h.Uint64(uint64(n))
			for i := 0; i < n; i++ {
				ep.hash(h, v.Index(i))
			}
		}
		p.clone = func(c *copier, dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := src.Len()
			s := reflect.MakeSlice(t, n, n)
			reflect.Copy(s, src)
			if !ep.flat {
				for i := 0; i < n; i++ {
					cloneInto(c, ep, s.Index(i), src.Index(i))
				}
			}
			dst.Set(s)
		}
		p.dump = func(b *strings.Builder, v reflect.Value) { dumpList(b, ep, v) }
	case reflect.Map:
		kp := buildPlan(t.Key(), building)
		vp := buildPlan(t.Elem(), building)
		p.kids = []*plan{kp, vp}
		var refs atomic.Int32 // holdsRefs of an entry, worked out once the plans are done: 1 no, 2 yes
		p.hash = func(h *Hasher, v reflect.Value) {
			if v.Len() == 0 {
				h.Uint64(0)
				return
			}
			if h.memo != nil {
				if refs.Load() == 0 {
					refs.Store(1 + int32(b2i(holdsRefs(kp) || holdsRefs(vp))))
				}
				if refs.Load() == 2 {
					hashMapMemo(h, p, kp, vp, v)
					return
				}
			}
			iter := v.MapRange()
			h.unordered(v.Len(), func(c *Hasher, _ int) {
				iter.Next()
				kp.hash(c, iter.Key())
				vp.hash(c, iter.Value())
			})
		}
		p.clone = func(c *copier, dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			if c != nil {
				if e := c.seen.find(src.UnsafePointer()); e != nil && e.t == p.key {
					to := e.copied()
					dst.Set(reflect.NewAt(t, unsafe.Pointer(&to)).Elem())
					return
				}
			}
			m := reflect.MakeMapWithSize(t, src.Len())
			if c != nil {
				if c.seen.find(src.UnsafePointer()) == nil {
					c.seen.add(src.UnsafePointer(), p.key, m.UnsafePointer(), 0)
				}
			}
			iter := src.MapRange()
			for iter.Next() {
				m.SetMapIndex(cloneValue(c, kp, iter.Key()), cloneValue(c, vp, iter.Value()))
			}
			dst.Set(m)
		}
		p.dump = func(b *strings.Builder, v reflect.Value) {
			type kv struct{ k, v string }
			var entries []kv
			iter := v.MapRange()
			for iter.Next() {
				var kb, vb strings.Builder
				kp.dump(&kb, iter.Key())
				vp.dump(&vb, iter.Value())
				entries = append(entries, kv{kb.String(), vb.String()})
			}
			slices.SortFunc(entries, func(a, b kv) int { return strings.Compare(a.k, b.k) })
			b.WriteByte('{')
			for i, e := range entries {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(e.k)
				b.WriteByte(':')
				b.WriteString(e.v)
			}
			b.WriteByte('}')
		}
	case reflect.Pointer:
		ep := buildPlan(t.Elem(), building)
		if ep.share {
			rulePlan(p, ruleShare)
			break
		}
		p.elem = ep
		p.kids = []*plan{ep}
		p.rawElem = !hasPointers(t.Elem()) && ep.flat
		if at := ep.hashAt; at != nil && !ep.custom {
			// A pointer to a struct of plain fields: nothing to recurse
			// into, so no depth to watch.
			p.direct = func(h *Hasher, ptr unsafe.Pointer) {
				if ptr == nil {
					h.buf = append(h.buf, 0)
					return
				}
				h.buf = append(h.buf, 1)
				at(h, ptr)
			}
			names := ep.namesAt
			p.namesDirect = func(ptr unsafe.Pointer, g *nodeGroup) bool { return ptr != nil && names(ptr, g) }
		}
		p.hash = func(h *Hasher, v reflect.Value) {
			if v.IsNil() {
				h.buf = append(h.buf, 0)
				return
			}
			if m := h.memo; m != nil && p.etSize > 0 {
				if i, ok := m.visit(v.UnsafePointer(), p.key); ok {
					h.buf = append(h.buf, 2)
					h.Uint64(uint64(i))
					return
				}
			}
			h.buf = append(h.buf, 1)
			h.depth++
			if h.depth > maxDepth {
				panic(&TypeError{Type: t, Reason: "pointers nested deeper than 512 levels (a list too long?)"})
			}
			ep.hash(h, v.Elem())
			h.depth--
		}
		p.clone = func(c *copier, dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			ptr := src.UnsafePointer()
			var met bool
			if c != nil && p.etSize > 0 {
				if e := c.seen.find(ptr); e != nil {
					if e.t == p.key {
						dst.Set(reflect.NewAt(t.Elem(), e.copied()))
						return
					}
					met = true
				}
			}
			n := reflect.New(t.Elem())
			if c != nil && p.etSize > 0 && !met {
				c.seen.add(ptr, p.key, n.UnsafePointer(), 0)
			}
			n.Elem().Set(src.Elem())
			cloneInto(c, ep, n.Elem(), src.Elem())
			dst.Set(n)
		}
		p.dump = func(b *strings.Builder, v reflect.Value) {
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			if b.Len() > maxDump {
				// A cycle, which a dump does not track.
				b.WriteString("...")
				return
			}
			ep.dump(b, v.Elem())
		}
	case reflect.Interface:
		p.hash = func(h *Hasher, v reflect.Value) {
			if v.IsNil() {
				h.buf = append(h.buf, 0)
				return
			}
			e := v.Elem()
			ep := planOf(e.Type())
			h.buf = append(h.buf, 1)
			h.Uint64(ep.typeHash)
			ep.hash(h, e)
		}
		p.clone = func(c *copier, dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			e := src.Elem()
			ep := planOf(e.Type())
			if ep.flat {
				return
			}
			dst.Set(cloneValue(c, ep, e))
		}
		p.dump = func(b *strings.Builder, v reflect.Value) {
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			dumpValue(b, v.Elem())
		}
	case reflect.Struct:
		type field = planField
		var hashed, deep []field
		p.flat = true
		left := leftOut(t, r)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Tag.Get("livecheck") == "-" || left[f.Name] == leaveOut {
				continue // copied by the shallow copy, left out of hash and dump
			}
			if f.Type.Size() == 0 {
				continue // holds nothing (an embedded BaseNode): nothing to hash or show
			}
			if left[f.Name] == zeroOut {
				p.flat = false
				deep = append(deep, field{i, f.Name, zeroPlan(f.Type)})
				continue
			}
			fp := buildPlan(f.Type, building)
			p.kids = append(p.kids, fp)
			if !fp.skip && !fp.share {
				hashed = append(hashed, field{i, f.Name, fp})
			}
			if !fp.flat {
				p.flat = false
				deep = append(deep, field{i, f.Name, fp})
			}
		}
		p.fields, p.deep = hashed, deep
		p.hash = func(h *Hasher, v reflect.Value) {
			for _, f := range hashed {
				f.p.hash(h, v.Field(f.i))
			}
		}
		// Structs of plain numbers, bools, strings and slices of plain
		// numbers (the usual node state) are hashed and copied in place,
		// without a reflect.Value per field.
		var prim []primField
		for _, f := range hashed {
			pf, ok := primOf(f.p, t.Field(f.i).Offset)
			if !ok {
				prim = nil
				break
			}
			prim = append(prim, pf)
		}
		if len(prim) == len(hashed) && len(prim) > 0 {
			plain, renamed := hashOps(prim, false), hashOps(prim, true)
			at := func(h *Hasher, base unsafe.Pointer) {
				ops := plain
				if h.perm != nil {
					ops = renamed
				}
				for _, op := range ops {
					if op.field < 0 {
						h.buf = append(h.buf, unsafe.Slice((*byte)(unsafe.Add(base, op.off)), op.n)...)
					} else {
						f := &prim[op.field]
						f.hash(h, unsafe.Add(base, f.off))
					}
				}
			}
			p.hashAt, p.direct = at, at
			p.namesAt = namesOf(prim)
			p.namesDirect = p.namesAt
			slow := p.hash
			p.hash = func(h *Hasher, v reflect.Value) {
				if !v.CanAddr() {
					slow(h, v)
					return
				}
				at(h, unsafe.Pointer(v.UnsafeAddr()))
			}
		}
		var rawDeep []primField // deep fields copied in place
		var otherDeep []field
		for _, f := range deep {
			if pf, ok := primOf(f.p, t.Field(f.i).Offset); ok && pf.kind == reflect.Slice {
				rawDeep = append(rawDeep, pf)
			} else {
				otherDeep = append(otherDeep, f)
			}
		}
		p.clone = func(c *copier, dst, src reflect.Value) {
			if len(rawDeep) > 0 {
				base := unsafe.Pointer(dst.UnsafeAddr())
				for _, f := range rawDeep {
					cloneRawSlice(unsafe.Add(base, f.off), f.size)
				}
			}
			for _, f := range otherDeep {
				cloneInto(c, f.p, writable(dst.Field(f.i)), writable(src.Field(f.i)))
			}
		}
		p.dump = func(b *strings.Builder, v reflect.Value) {
			b.WriteByte('{')
			for j, f := range hashed {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(f.name)
				b.WriteByte(':')
				f.p.dump(b, v.Field(f.i))
			}
			b.WriteByte('}')
		}
	case reflect.Func:
		funcPlan(p)
	default: // chan, unsafe.Pointer
		p.bad = fmt.Sprintf("a %v has no value to compare", t.Kind())
		p.hash = func(h *Hasher, v reflect.Value) { panic(&TypeError{Type: t, Reason: p.bad}) }
		p.dump = func(b *strings.Builder, v reflect.Value) { b.WriteString(t.Kind().String()) }
		p.flat = true // shared by copies
	}
	if r != nil && r.kind == ruleCustom {
		customPlan(p, r)
	}
	// Nested values dump through their own DumpState or String, as the
	// top-level value does: an enum field reads as its name.
	if t.Implements(dumperType) || t.Implements(stringerType) {
		plain := p.dump
		p.dump = func(b *strings.Builder, v reflect.Value) {
			if !v.CanInterface() || (v.Kind() == reflect.Pointer && v.IsNil()) {
				plain(b, v)
				return
			}
			switch x := v.Interface().(type) {
			case StateDumper:
				b.WriteString(x.DumpState())
			case fmt.Stringer:
				b.WriteString(x.String())
			}
		}
	}
	delete(building, t)
	return p
}

// A nodeGroup is the nodes of symmetry groups, for plan.namesAt.
type nodeGroup struct {
	member []bool  // by node id
	set    NodeSet // the members below 64
}

func (g *nodeGroup) has(id NodeID) bool { return id >= 0 && int(id) < len(g.member) && g.member[id] }

// namesOf returns the plan.namesAt of a struct of the plain fields prim.
func namesOf(prim []primField) func(ptr unsafe.Pointer, g *nodeGroup) bool {
	var ids []primField
	for _, f := range prim {
		k := f.kind
		if k == reflect.Slice || k == reflect.Array {
			k = f.elem
		}
		if k == kindNode || k == kindNodeSet {
			ids = append(ids, f)
		}
	}
	return func(base unsafe.Pointer, g *nodeGroup) bool {
		for i := range ids {
			f := &ids[i]
			ptr, n, k := unsafe.Add(base, f.off), 1, f.kind
			switch f.kind {
			case reflect.Slice:
				hdr := (*sliceHeader)(ptr)
				ptr, n, k = hdr.data, hdr.len, f.elem
			case reflect.Array:
				n, k = f.n, f.elem
			}
			for j := range n {
				at := unsafe.Add(ptr, uintptr(j)*f.size)
				if k == kindNode && g.has(*(*NodeID)(at)) || k == kindNodeSet && *(*NodeSet)(at)&g.set != 0 {
					return true
				}
			}
		}
		return false
	}
}

type primField struct {
	off  uintptr
	kind reflect.Kind // a plain kind, or Slice or Array of elem
	elem reflect.Kind // for a slice or an array: its elements' plain kind
	size uintptr      // for a slice or an array: its elements' size
	n    int          // for an array: its length
}

// Node ids and node sets are hashed in place as plain numbers are, but
// through Hasher.Node and Hasher.NodeSet, which rename them: primKindOf
// gives them kinds of their own, past reflect's.
const (
	kindNode reflect.Kind = reflect.UnsafePointer + 1 + iota
	kindNodeSet
)

// primKindOf is the kind hashPrim hashes a value of plan fp as, if it
// can.
func primKindOf(t reflect.Type) (reflect.Kind, bool) {
	switch {
	case t.Implements(hasherType):
		return 0, false
	case t == nodeIDType:
		return kindNode, true
	case t == nodeSetType:
		return kindNodeSet, true
	case plainNumber(t.Kind()):
		return t.Kind(), true
	}
	return 0, false
}

func plainNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// primOf says whether a field of plan fp at offset off can be read in
// place: a plain number, bool or string, or a slice of plain numbers.
func primOf(fp *plan, off uintptr) (primField, bool) {
	if fp.skip || fp.share || fp.ruled {
		return primField{}, false
	}
	if k, ok := primKindOf(fp.t); ok {
		return primField{off: off, kind: k}, true
	}
	if fp.custom {
		return primField{}, false
	}
	switch k := fp.t.Kind(); k {
	case reflect.String:
		return primField{off: off, kind: k}, true
	case reflect.Slice, reflect.Array:
		ek, ok := primKindOf(fp.t.Elem())
		if !ok {
			break
		}
		f := primField{off: off, kind: k, elem: ek, size: fp.t.Elem().Size()}
		if k == reflect.Array {
			f.n = fp.t.Len()
		}
		return f, true
	}
	return primField{}, false
}

// hash writes the field at ptr as the reflective plan would.
func (f *primField) hash(h *Hasher, ptr unsafe.Pointer) {
	switch f.kind {
	case reflect.Slice:
		hdr := (*sliceHeader)(ptr)
		h.Uint64(uint64(hdr.len))
		for i := 0; i < hdr.len; i++ {
			hashPrim(h, unsafe.Add(hdr.data, uintptr(i)*f.size), f.elem)
		}
	case reflect.Array:
		for i := 0; i < f.n; i++ {
			hashPrim(h, unsafe.Add(ptr, uintptr(i)*f.size), f.elem)
		}
	default:
		hashPrim(h, ptr, f.kind)
	}
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// cloneRawSlice gives the slice at ptr (a shallow copy) its own backing
// array. Its elements hold no pointers, so untyped memory serves.
func cloneRawSlice(ptr unsafe.Pointer, size uintptr) {
	hdr := (*sliceHeader)(ptr)
	if hdr.data == nil {
		return
	}
	n := uintptr(hdr.len) * size
	if n == 0 {
		// Keep it empty but not nil, as the reflective copy does.
		hdr.data, hdr.cap = unsafe.Pointer(&zeroWord), 0
		return
	}
	buf := make([]uint64, (n+7)/8)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), n), unsafe.Slice((*byte)(hdr.data), n))
	hdr.data, hdr.cap = unsafe.Pointer(&buf[0]), hdr.len
}

var zeroWord uint64

// hashPrim writes the plain value of kind k stored at ptr.
func hashPrim(h *Hasher, ptr unsafe.Pointer, k reflect.Kind) {
	switch k {
	case reflect.Bool:
		h.Bool(*(*bool)(ptr))
	case reflect.Int:
		h.Uint64(uint64(*(*int)(ptr)))
	case reflect.Int8:
		h.Uint64(uint64(*(*int8)(ptr)))
	case reflect.Int16:
		h.Uint64(uint64(*(*int16)(ptr)))
	case reflect.Int32:
		h.Uint64(uint64(*(*int32)(ptr)))
	case reflect.Int64:
		h.Uint64(uint64(*(*int64)(ptr)))
	case reflect.Uint, reflect.Uintptr:
		h.Uint64(uint64(*(*uint)(ptr)))
	case reflect.Uint8:
		h.Uint64(uint64(*(*uint8)(ptr)))
	case reflect.Uint16:
		h.Uint64(uint64(*(*uint16)(ptr)))
	case reflect.Uint32:
		h.Uint64(uint64(*(*uint32)(ptr)))
	case reflect.Uint64:
		h.Uint64(*(*uint64)(ptr))
	case reflect.String:
		h.String(*(*string)(ptr))
	case kindNode:
		h.Node(*(*NodeID)(ptr))
	case kindNodeSet:
		h.NodeSet(*(*NodeSet)(ptr))
	}
}

func dumpList(b *strings.Builder, ep *plan, v reflect.Value) {
	b.WriteByte('[')
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		ep.dump(b, v.Index(i))
	}
	b.WriteByte(']')
}

// writable returns v made addressable-writable even when it was reached
// through an unexported field. v must be addressable.
func writable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// cloneInto deep-copies src into dst, which already holds a shallow copy.
// c is the copier of a value that can alias, nil otherwise.
func cloneInto(c *copier, p *plan, dst, src reflect.Value) {
	if p.flat {
		return
	}
	if !src.CanAddr() {
		src = addressable(src)
	}
	p.clone(c, writable(dst), writable(src))
}

// cloneValue returns a new deep copy of src.
func cloneValue(c *copier, p *plan, src reflect.Value) reflect.Value {
	if p.flat {
		return src
	}
	dst := reflect.New(src.Type()).Elem()
	typedCopy(dst, src)
	cloneInto(c, p, dst, src)
	return dst
}

// deepCopyInto deep-copies src into dst, which holds a shallow copy,
// through a copier when the type can alias.
func deepCopyInto(p *plan, dst, src reflect.Value) {
	if !p.alias {
		cloneInto(nil, p, dst, src)
		return
	}
	c := copiers.Get().(*copier)
	defer c.release()
	cloneInto(c, p, dst, src)
	c.finish()
}

func (p *plan) hashAny(h *Hasher, v any) {
	h.Uint64(p.typeHash)
	if p.custom {
		v.(StateHasher).HashState(h)
		return
	}
	if p.direct != nil {
		p.direct(h, (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1])
		return
	}
	if p.alias && h.memo == nil {
		if p.t.Kind() == reflect.Pointer {
			h.hashAliasedFast(p, (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1])
			return
		}
		h.hashAliased(p, reflect.ValueOf(v))
		return
	}
	p.hash(h, reflect.ValueOf(v))
}

// A hashOp writes part of a struct of plain fields: either a stretch of
// its memory whose bytes are the fields' encoding as the Hasher writes
// them (little-endian 64-bit integers, one-byte bools), with one copy, or
// one field through primField.hash (field >= 0).
type hashOp struct {
	off, n uintptr
	field  int
}

// rawMachine says the machine stores integers as the Hasher encodes them:
// little-endian, int and uint 64 bits wide.
var rawMachine = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1 && unsafe.Sizeof(int(0)) == 8
}()

// rawSize is how many bytes a plain value of kind k takes when it is
// stored as it is encoded, 0 when it is not; node ids and node sets are
// stored as encoded unless the hasher renames nodes.
func rawSize(k reflect.Kind, rename bool) uintptr {
	switch k {
	case reflect.Bool:
		return 1
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return 8
	case kindNode, kindNodeSet:
		if !rename {
			return 8
		}
	}
	return 0
}

// hashOps returns the ops that hash the prim fields (in offset order):
// stored-as-encoded fields and arrays of them in runs, the others one by
// one. rename says the ops are for a hasher that renames nodes.
func hashOps(prim []primField, rename bool) []hashOp {
	var ops []hashOp
	for i, f := range prim {
		var n uintptr
		if rawMachine {
			switch f.kind {
			case reflect.Array:
				if es := rawSize(f.elem, rename); es == f.size {
					n = es * uintptr(f.n)
				}
			case reflect.Slice:
			default:
				n = rawSize(f.kind, rename)
			}
		}
		switch k := len(ops) - 1; {
		case n == 0:
			ops = append(ops, hashOp{field: i})
		case k >= 0 && ops[k].field < 0 && ops[k].off+ops[k].n == f.off:
			ops[k].n += n
		default:
			ops = append(ops, hashOp{off: f.off, n: n, field: -1})
		}
	}
	return ops
}

// Copy returns a deep copy of v: through its CopyState method when it has
// one, by reflection otherwise. Strings and values without references inside
// are shared, since they cannot change.
func Copy[T any](v T) T {
	var a any = v
	if a == nil {
		return v
	}
	if c, ok := a.(StateCopier); ok {
		return c.CopyState().(T)
	}
	t := reflect.TypeOf(a)
	p := planOf(t)
	if p.flat {
		return v
	}
	if t.Kind() != reflect.Pointer && indirect(t) {
		// A value held in the interface through a pointer to its own copy
		// (a message struct, most often): a new one through the compiled
		// copier, whose memo sees a pointer met twice, for a type that
		// can alias too (transport's Data, a struct with a message in it,
		// went through reflect.New and Value.Interface at every send: 74
		// of the 858 MB its search to depth 50 allocated).
		out := a
		(*[2]unsafe.Pointer)(unsafe.Pointer(&out))[1] = copyValueFast(p, (*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1])
		return out.(T)
	}
	src := reflect.ValueOf(a)
	if p.alias {
		if t.Kind() == reflect.Pointer {
			out := a
			(*[2]unsafe.Pointer)(unsafe.Pointer(&out))[1] = copyPointerFast(p, (*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1])
			return out.(T)
		}
		return copyAliased(p, src).Interface().(T)
	}
	if t.Kind() == reflect.Pointer {
		// The usual node state, a pointer to a struct: one allocation for
		// the new struct, then the deep parts.
		if src.IsNil() {
			return v
		}
		n := reflect.New(t.Elem())
		n.Elem().Set(src.Elem())
		cloneInto(nil, p.elem, n.Elem(), src.Elem())
		return n.Interface().(T)
	}
	return cloneValue(nil, p, src).Interface().(T)
}

// indirect says an interface holding a value of type t, not a pointer,
// holds a pointer to a copy of the value: every such type but those of
// one pointer word (a map, a func, a struct of one pointer), which the
// interface holds as they are.
func indirect(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Map, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return false
	}
	return t.Size() != unsafe.Sizeof(uintptr(0)) || !hasPointers(t)
}

// hasPointers says whether a value of type t holds a pointer anywhere,
// which a copy must then make through the garbage collector's barriers.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return !plainNumber(t.Kind()) && t.Kind() != reflect.Float32 && t.Kind() != reflect.Float64 &&
		t.Kind() != reflect.Complex64 && t.Kind() != reflect.Complex128
}

// copyNode returns a deep copy of node n, as Copy does, but into a spare
// object of the same type when the world holds one (see Discard), and
// without reflection for the usual node, a pointer to a struct of plain
// values.
//
// raw is the size of the node's struct when the copy is a plain memory
// copy (see World.unchanged), 0 otherwise.
func (w *World) copyNode(n Node) (c Node, raw uintptr) {
	if n == nil {
		return n, 0
	}
	if st, ok := n.(*Stacked); ok {
		return w.copyStacked(st), 0
	}
	p := planOf(typeOf(n))
	if p.copier || p.t.Kind() != reflect.Pointer {
		return Copy(n), 0
	}
	if p.rawElem {
		raw = p.etSize
	}
	return copyInto(p, w.spare(n), n), raw
}

// spare takes a spare node of n's type from the world, nil if it has none.
func (w *World) spare(n Node) Node {
	for k := len(w.spareNodes) - 1; k >= 0; k-- {
		// Two Node values have the same dynamic type exactly when their
		// itabs are the same.
		if s := w.spareNodes[k]; ifaceTab(s) == ifaceTab(n) {
			w.spareNodes[k] = w.spareNodes[len(w.spareNodes)-1]
			w.spareNodes[len(w.spareNodes)-1] = nil
			w.spareNodes = w.spareNodes[:len(w.spareNodes)-1]
			return s
		}
	}
	return nil
}

// copyStacked copies a stacked node as copyNode copies a plain one: into a
// spare stack of as many layers, each layer into the spare's layer when it
// is of the same type.
func (w *World) copyStacked(st *Stacked) Node {
	if st == nil {
		return st
	}
	out, _ := w.spare(st).(*Stacked)
	if out == nil || len(out.layers) != len(st.layers) {
		out = newStacked(len(st.layers))
	}
	out.names = st.names
	for i, l := range st.layers {
		var into Node
		if o := out.layers[i]; o != nil && ifaceTab(o) == ifaceTab(l) {
			into = o
		}
		p := planOf(typeOf(l))
		if _, ok := l.(*Stacked); ok || p.copier || p.t.Kind() != reflect.Pointer {
			out.layers[i] = Copy(l)
			continue
		}
		out.layers[i] = copyInto(p, into, l)
	}
	return out
}

// copyInto returns a deep copy of n, a pointer of plan p, made in spare
// when spare is not nil: a node of the same type that nothing else holds.
// It copies through p's fplan whether the type can alias or not. It used
// to copy a type that cannot by reflection (cloneInto), and then each
// copy of transport's application layer, two slices of plain structs,
// went through reflect.MakeSlice.
func copyInto(p *plan, spare, n Node) Node {
	src := ifaceData(n)
	if src == nil {
		return n
	}
	out := spare
	et := p.et
	if out == nil {
		out = n
		(*[2]unsafe.Pointer)(unsafe.Pointer(&out))[1] = reflect.New(et).UnsafePointer()
	}
	dst := ifaceData(out)
	if p.rawElem {
		copy(unsafe.Slice((*byte)(dst), p.etSize), unsafe.Slice((*byte)(src), p.etSize))
		return out
	}
	copyAliasedFast(p, dst, src)
	return out
}

// ifaceTab and ifaceData are the two words of an interface value: its type
// (or itab) and its data pointer, which for a pointer type is the pointer.
func ifaceTab(n Node) unsafe.Pointer  { return (*[2]unsafe.Pointer)(unsafe.Pointer(&n))[0] }
func ifaceData(n Node) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&n))[1] }

// Dump returns a one-line readable form of v: through DumpState or String
// when v has one, by reflection otherwise (map keys sorted, pointers
// followed, fields tagged `livecheck:"-"` left out).
func Dump(v any) string {
	var b strings.Builder
	if v == nil {
		return "nil"
	}
	dumpValue(&b, reflect.ValueOf(v))
	return b.String()
}

// dumpBare is Dump without the name of a struct's type.
func dumpBare(v any) string {
	if v == nil {
		return "nil"
	}
	var b strings.Builder
	rv := reflect.ValueOf(v)
	planOf(rv.Type()).dump(&b, rv)
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	if v.CanInterface() {
		switch x := v.Interface().(type) {
		case StateDumper:
			b.WriteString(x.DumpState())
			return
		case fmt.Stringer:
			if v.Kind() != reflect.Pointer || !v.IsNil() {
				b.WriteString(x.String())
				return
			}
		}
	}
	t := v.Type()
	p := planOf(t)
	if t.Kind() == reflect.Struct || (t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !v.IsNil()) {
		st := t
		if st.Kind() == reflect.Pointer {
			st = st.Elem()
		}
		if st.Name() != "" {
			b.WriteString(st.Name())
		}
	}
	p.dump(b, v)
}
