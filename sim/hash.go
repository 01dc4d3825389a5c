package sim

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// A Hasher accumulates the canonical encoding of a value and returns its
// 64-bit fingerprint. The encoding has fixed widths and fixed seeds, so a
// fingerprint is the same in every run and on every machine.
//
// Types that implement [StateHasher] write themselves into a Hasher; every
// other type is encoded by reflection.
type Hasher struct {
	buf   []byte
	depth int
	subs  []*Hasher // reusable child hashers for map entries, one per nesting level
	level int
	keys  []uint64
	// perm renames nodes as they are written (Node, NodeSet): node i is
	// written as perm[i], which may be anonymous or marked. Nil writes
	// ids as they are.
	perm []NodeID
	// memo is set while a value that can alias is hashed (see alias.go).
	memo *hashMemo
	// scratch holds, per compiled map type, the key and value a hash of
	// such a map reads an entry into (see fast.go).
	scratch []mapScratch
}

// anonymous and marked stand in a Hasher's perm for nodes written
// without their identity: the sort keys of symmetry reduction see only
// what a group member is, not which one it is (anonymous), except for the
// one member whose sort key is under way (marked).
const (
	anonymous NodeID = -1 << 40
	marked    NodeID = -1 << 41
)

// maxDepth bounds pointer nesting while hashing, so a state with a pointer
// cycle fails with a clear panic instead of overflowing the stack.
const maxDepth = 512

// Reset empties the hasher for reuse.
func (h *Hasher) Reset() { h.buf = h.buf[:0]; h.depth = 0; h.memo = nil }

// Sum64 returns the fingerprint of everything written since the last Reset.
func (h *Hasher) Sum64() uint64 { return xxhash.Sum64(h.buf) }

// Uint64 writes v.
func (h *Hasher) Uint64(v uint64) { h.buf = binary.LittleEndian.AppendUint64(h.buf, v) }

// Int writes v.
func (h *Hasher) Int(v int) { h.Uint64(uint64(v)) }

// Bool writes v.
func (h *Hasher) Bool(v bool) {
	if v {
		h.buf = append(h.buf, 1)
	} else {
		h.buf = append(h.buf, 0)
	}
}

// Node writes a node id, renamed when the hasher renames nodes (symmetry
// reduction). A StateHasher must write node ids through Node, never as
// plain integers, for a system that declares symmetric nodes.
func (h *Hasher) Node(id NodeID) {
	if h.perm != nil && id >= 0 && int(id) < len(h.perm) {
		id = h.perm[id]
	}
	h.Uint64(uint64(id))
}

// NodeSet writes a set of node ids, its members renamed when the hasher
// renames nodes. Members written anonymously are counted, not listed. A
// set without such members is written as it is without renaming, one
// word, so that a node that names no group member hashes alike either
// way (symmetry reduction relies on that to skip renaming it).
func (h *Hasher) NodeSet(s NodeSet) {
	if h.perm == nil {
		h.Uint64(uint64(s))
		return
	}
	var out uint64
	anon, mark := 0, 0
	for t := uint64(s); t != 0; t &= t - 1 {
		id := NodeID(bits.TrailingZeros64(t))
		if int(id) < len(h.perm) {
			id = h.perm[id]
		}
		switch id {
		case anonymous:
			anon++
		case marked:
			mark++
		default:
			out |= 1 << uint(id)
		}
	}
	// The counts go into the word as pseudo-random patterns, which no
	// set of ids matches but by a fingerprint collision's chance.
	if anon > 0 {
		out ^= mix(uint64(anon), 0xa5)
	}
	if mark > 0 {
		out ^= mix(uint64(mark), 0x5a)
	}
	h.Uint64(out)
}

// Float64 writes v (all NaNs encode alike).
func (h *Hasher) Float64(v float64) {
	if v != v {
		v = math.NaN()
	}
	h.Uint64(math.Float64bits(v))
}

// String writes s, length first, so that ("ab","c") and ("a","bc") differ.
func (h *Hasher) String(s string) {
	h.Uint64(uint64(len(s)))
	h.buf = append(h.buf, s...)
}

// Value writes any value: through its HashState method when it has one, by
// reflection otherwise.
func (h *Hasher) Value(v any) { h.value(v) }

// value is Value, returning the plan it hashed v by (nil for nil).
func (h *Hasher) value(v any) *plan {
	if v == nil {
		h.buf = append(h.buf, 0)
		return nil
	}
	h.buf = append(h.buf, 1)
	p := planOf(typeOf(v))
	p.hashAny(h, v)
	return p
}

// child returns an empty hasher for one nesting level below h.
func (h *Hasher) child() *Hasher {
	if h.level == len(h.subs) {
		h.subs = append(h.subs, &Hasher{})
	}
	c := h.subs[h.level]
	c.Reset()
	c.depth = h.depth
	c.perm = h.perm
	c.memo = nil
	return c
}

// unordered writes n entries whose order must not matter (map entries): each
// entry is hashed on its own, the entry hashes are sorted and written.
func (h *Hasher) unordered(n int, each func(c *Hasher, i int)) {
	start := len(h.keys)
	for i := 0; i < n; i++ {
		c := h.child()
		h.level++
		each(c, i)
		h.level--
		h.keys = append(h.keys, c.Sum64())
	}
	ks := h.keys[start:]
	slices.Sort(ks)
	h.Uint64(uint64(n))
	for _, k := range ks {
		h.Uint64(k)
	}
	h.keys = h.keys[:start]
}

// Fingerprint returns the canonical 64-bit fingerprint of v.
func Fingerprint(v any) uint64 {
	var h Hasher
	defer func() {
		if r := recover(); r != nil {
			locatePanic(r, v)
		}
	}()
	h.Value(v)
	return h.Sum64()
}
