package sim

import (
	"encoding/binary"
	"math"
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
}

// maxDepth bounds pointer nesting while hashing, so a state with a pointer
// cycle fails with a clear panic instead of overflowing the stack.
const maxDepth = 512

// Reset empties the hasher for reuse.
func (h *Hasher) Reset() { h.buf = h.buf[:0]; h.depth = 0 }

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
func (h *Hasher) Value(v any) {
	if v == nil {
		h.buf = append(h.buf, 0)
		return
	}
	h.buf = append(h.buf, 1)
	planOf(typeOf(v)).hashAny(h, v)
}

// child returns an empty hasher for one nesting level below h.
func (h *Hasher) child() *Hasher {
	if h.level == len(h.subs) {
		h.subs = append(h.subs, &Hasher{})
	}
	c := h.subs[h.level]
	c.Reset()
	c.depth = h.depth
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
	h.Value(v)
	return h.Sum64()
}
