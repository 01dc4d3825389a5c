package sim

import (
	"reflect"
	"unsafe"
)

// A memoTable is the memo of a copy or a hash of a value that can alias
// (see alias.go): the pointers and maps met, by address, each with the
// type it was first met as and what the walk made of it (the copy, or the
// index of the first visit). It is an open-addressing table that a pooled
// copier or hashMemo keeps from one walk to the next: a walk starts a new
// generation instead of clearing it, and the table keeps the size the
// largest walk needed.
//
// It holds addresses as integers: the table is memory the garbage
// collector does not scan and stores into it need no write barrier. That
// is sound because every object it names stays reachable for the walk
// (the original's from the value walked, a copy's from the copy under
// way, which the walk holds) and Go's collector does not move objects;
// entries of older generations are never read.
type memoTable struct {
	es    []memoRef
	gen   uint32
	n     int  // entries of this generation
	shift uint // 64 - log2(len(es))
}

type memoRef struct {
	ptr uintptr
	to  uintptr // a copy's: the copy of ptr
	t   uintptr // typeKey of the pointer's (or map's) type
	i   int32   // a hash's: the index of ptr's first visit
	gen uint32
}

// copied is the copy of e's object.
func (e *memoRef) copied() unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&e.to)) }

// memoMinBits is the size of a new table; memoLoad the inverse of the
// highest load before it doubles: at a quarter full, linear probing
// mostly finds its slot at the first try, a branch the processor
// predicts.
const (
	memoMinBits = 6
	memoLoad    = 4
)

func (m *memoTable) slot(ptr uintptr) uintptr {
	return (ptr * 0x9e3779b97f4a7c15) >> m.shift
}

// find returns ptr's entry, nil if ptr was not met in this walk.
func (m *memoTable) find(p unsafe.Pointer) *memoRef {
	if m.n == 0 {
		return nil
	}
	ptr := uintptr(p)
	mask := uintptr(len(m.es) - 1)
	for i := m.slot(ptr); ; i = (i + 1) & mask {
		e := &m.es[i]
		if e.gen != m.gen {
			return nil
		}
		if e.ptr == ptr {
			return e
		}
	}
}

// probe returns ptr's entry in this walk or, where ptr was not met, the
// free slot where fill records it: one probe for a lookup and an insert.
// The table has room for one more entry when it returns, and must not
// change before the slot is filled.
func (m *memoTable) probe(p unsafe.Pointer) *memoRef {
	if memoLoad*(m.n+1) > len(m.es) {
		m.grow()
	}
	ptr := uintptr(p)
	mask := uintptr(len(m.es) - 1)
	for i := m.slot(ptr); ; i = (i + 1) & mask {
		if e := &m.es[i]; e.gen != m.gen || e.ptr == ptr {
			return e
		}
	}
}

// met says whether e, which probe returned, is an entry of this walk
// (else a free slot).
func (m *memoTable) met(e *memoRef) bool { return e.gen == m.gen }

// fill records ptr in e, the free slot probe returned for it.
func (m *memoTable) fill(e *memoRef, ptr unsafe.Pointer, t uintptr, to unsafe.Pointer, idx int) {
	// Field by field: a composite literal is built on the stack and
	// copied in 16-byte moves that read back its 4-byte stores, a
	// stall of the store buffer that cost a tenth of a hash.
	e.ptr, e.to, e.t, e.i, e.gen = uintptr(ptr), uintptr(to), t, int32(idx), m.gen
	m.n++
}

// add records ptr, which find did not find.
func (m *memoTable) add(ptr unsafe.Pointer, t uintptr, to unsafe.Pointer, idx int) {
	m.put(uintptr(ptr), t, uintptr(to), int32(idx))
}

func (m *memoTable) put(ptr, t, to uintptr, idx int32) {
	if memoLoad*(m.n+1) > len(m.es) {
		m.grow()
	}
	mask := uintptr(len(m.es) - 1)
	i := m.slot(ptr)
	for m.es[i].gen == m.gen {
		i = (i + 1) & mask
	}
	e := &m.es[i]
	e.ptr, e.to, e.t, e.i, e.gen = ptr, to, t, idx, m.gen
	m.n++
}

func (m *memoTable) grow() {
	old, gen := m.es, m.gen
	bits := uint(memoMinBits)
	for 1<<bits < 2*memoLoad*(m.n+1) {
		bits++
	}
	m.es, m.shift, m.gen, m.n = make([]memoRef, 1<<bits), 64-bits, 1, 0
	for i := range old {
		if e := &old[i]; e.gen == gen {
			m.put(e.ptr, e.t, e.to, e.i)
		}
	}
}

// reset empties the table for the next walk.
func (m *memoTable) reset() {
	m.n = 0
	m.gen++
	if m.gen == 0 {
		// Wrapped: entries of generation 0 would read as current.
		clear(m.es)
		m.gen = 1
	}
}

// A mapScratch is a key and a value of a map's types that a copy of the
// map works in, and whether a copy is using them (a map nested in the
// value of a map of the same type uses its own).
type mapScratch struct {
	k, v     reflect.Value
	kAt, vAt unsafe.Pointer
	it       reflect.MapIter
	busy     bool
}
