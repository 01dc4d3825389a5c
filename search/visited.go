package search

import "math"

// visitedSet is the search's visited set: an open-addressing hash table
// from 64-bit fingerprints to what the search keeps of each state, with
// linear probing, grown by doubling at a load factor of 3/4.
//
// A Go map costs about 40 bytes a state here and allocates as it grows in
// small steps; this table holds 16 bytes a slot in one array (fingerprint
// and value side by side, so a probe touches one cache line), that is
// 16 to 43 bytes a state depending on where the last doubling left it,
// and it allocates once per doubling.
//
// Slots whose fingerprint is 0 are empty, so fingerprint 0 itself is kept
// apart, in zero: the table must be exact for every distinct fingerprint,
// or state counts would change.
type visitedSet struct {
	slots   []visitedSlot
	shift   uint8 // 64 - log2(len(slots)): the bits of the home slot
	n       int   // fingerprints in slots (fingerprint 0 not counted)
	grow    int   // n at which the table doubles
	hasZero bool
	zero    seen
}

type visitedSlot struct {
	fp uint64
	v  seen
}

// minVisitedSlots is the size of a new table: small, so that the many
// short searches the checker runs (shortest paths, tests from one state)
// do not each pay for a large one.
const minVisitedSlots = 64

// newVisitedSet returns a table that holds hint fingerprints without
// growing.
func newVisitedSet(hint int) *visitedSet {
	size := minVisitedSlots
	for size/4*3 < hint {
		size *= 2
	}
	t := &visitedSet{}
	t.alloc(size)
	return t
}

func (t *visitedSet) alloc(size int) {
	t.slots = make([]visitedSlot, size)
	t.shift = 64
	for n := size; n > 1; n >>= 1 {
		t.shift--
	}
	t.grow = size / 4 * 3
}

// home is the slot where probing for fp starts. Fingerprints are xxhash
// values already, but a multiplication by 2^64/φ (Fibonacci hashing) and
// taking the top bits costs next to nothing and keeps the table well
// spread even for fingerprints whose low bits are not.
func (t *visitedSet) home(fp uint64) uint64 {
	return (fp * 0x9e3779b97f4a7c15) >> t.shift
}

// get returns the value kept for fp, and whether there is one.
func (t *visitedSet) get(fp uint64) (seen, bool) {
	if fp == 0 {
		return t.zero, t.hasZero
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(fp); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fp == fp {
			return s.v, true
		}
		if s.fp == 0 {
			return seen{}, false
		}
	}
}

// upsert returns a pointer to the value kept for fp, adding fp with the
// value init when it is not there yet; found says it was there. The
// pointer is good until the next upsert.
func (t *visitedSet) upsert(fp uint64, init seen) (v *seen, found bool) {
	if fp == 0 {
		if !t.hasZero {
			t.hasZero, t.zero = true, init
			return &t.zero, false
		}
		return &t.zero, true
	}
	mask := uint64(len(t.slots) - 1)
	i := t.home(fp)
	for ; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fp == fp {
			return &s.v, true
		}
		if s.fp == 0 {
			break
		}
	}
	if t.n >= t.grow {
		t.double()
		mask = uint64(len(t.slots) - 1)
		i = t.home(fp)
		for t.slots[i].fp != 0 {
			i = (i + 1) & mask
		}
	}
	t.n++
	s := &t.slots[i]
	s.fp, s.v = fp, init
	return &s.v, false
}

// double moves every fingerprint into a table twice the size.
func (t *visitedSet) double() {
	old := t.slots
	t.alloc(2 * len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.fp == 0 {
			continue
		}
		i := t.home(s.fp)
		for t.slots[i].fp != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// len is the number of fingerprints kept.
func (t *visitedSet) len() int {
	if t.hasZero {
		return t.n + 1
	}
	return t.n
}

// bytes is the memory the table holds.
func (t *visitedSet) bytes() int {
	return len(t.slots) * 16
}

// collisionChance is TLC's estimate of the probability that a fingerprint
// collision hid a state, for a search that found distinct fingerprints
// among the states its transitions generated: each of the
// generated − distinct states found again could have been a new state
// whose fingerprint equals one of the distinct ones, with probability
// distinct/2^64 each. The start state is generated too, without a
// transition.
func collisionChance(distinct, transitions int64) float64 {
	again := transitions + 1 - distinct
	if distinct <= 0 || again <= 0 {
		return 0
	}
	return math.Ldexp(float64(distinct)*float64(again), -64)
}
