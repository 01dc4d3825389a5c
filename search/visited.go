package search

import (
	"iter"
	"math"
)

// visitedSet is the search's visited set: an open-addressing hash table
// of 64-bit fingerprints, with linear probing, grown by doubling at a load
// factor of 3/4: 8 bytes a slot, so 10.7 to 21 bytes a state depending on
// where the last doubling left it, allocated once per doubling, and
// nothing in it for the garbage collector to scan.
//
// The search reads it from every worker while it expands a level and
// adds to it from one goroutine between levels, so it needs no lock.
//
// Slots whose fingerprint is 0 are empty, so fingerprint 0 itself is kept
// apart: the table must be exact for every distinct fingerprint, or state
// counts would change.
type visitedSet struct {
	slots   []uint64
	shift   uint8 // 64 - log2(len(slots)): the bits of the home slot
	n       int   // fingerprints in slots (fingerprint 0 not counted)
	grow    int   // n at which the table doubles
	hasZero bool
}

// shardedSet is the visited set in visitedShards tables, a fingerprint's
// chosen by its low bits (the tables' slots by its mixed high bits): the
// merge of a level adds to the tables on every worker at once, each
// worker to its own tables, in the level's order, so that what is new is
// the same for any number of workers.
type shardedSet struct {
	s [visitedShards]*visitedSet
}

const visitedShards = 64

func shardOf(fp uint64) int { return int(fp & (visitedShards - 1)) }

func newShardedSet() *shardedSet {
	t := &shardedSet{}
	for i := range t.s {
		t.s[i] = newVisitedSet(0)
	}
	return t
}

func (t *shardedSet) has(fp uint64) bool { return t.s[shardOf(fp)].has(fp) }
func (t *shardedSet) add(fp uint64) bool { return t.s[shardOf(fp)].add(fp) }

// touch reads fp's home slot and returns it: a prefetch by hand. Loads
// one after the other in a loop that does nothing else have many misses
// of the cache in flight at once, so that the lookups after them (has)
// find their slots in the cache.
func (t *shardedSet) touch(fp uint64) uint64 {
	v := t.s[shardOf(fp)]
	return v.slots[v.home(fp)]
}

// all yields the fingerprints kept, in no order (shard by shard).
func (t *shardedSet) all() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for _, s := range t.s {
			for fp := range s.all() {
				if !yield(fp) {
					return
				}
			}
		}
	}
}

func (t *shardedSet) len() int {
	n := 0
	for _, s := range t.s {
		n += s.len()
	}
	return n
}

func (t *shardedSet) bytes() int64 {
	var n int64
	for _, s := range t.s {
		n += s.bytes()
	}
	return n
}

// minVisitedSlots is the size of a new table: small, so that the many
// short searches the checker runs (tests from one state) do not each pay
// for a large one.
const minVisitedSlots = 64

// newVisitedSet returns a table that holds hint fingerprints without
// growing.
func newVisitedSet(hint int) *visitedSet {
	t := &visitedSet{}
	t.alloc(slotsFor(hint))
	return t
}

// slotsFor is the size of a table that holds n fingerprints without
// growing: a power of two, at least minVisitedSlots.
func slotsFor(n int) int {
	size := minVisitedSlots
	for size/4*3 < n {
		size *= 2
	}
	return size
}

func (t *visitedSet) alloc(size int) {
	t.slots = freshTable(size)
	t.shift = 64
	for n := size; n > 1; n >>= 1 {
		t.shift--
	}
	t.grow = size / 4 * 3
}

// freshTable returns a table of n empty slots, each page of it written
// once. The runtime does not zero the memory the kernel gives it, so the
// first touch of such a page is the table's; a read there (a probe)
// maps the kernel's page of zeros, and the first write after it faults
// again to replace it, and interrupts every other core that runs the
// process to flush the old mapping from its TLB. With two workers
// doubling their visited shards at once (dedupe), that took four times
// the time of one worker's doubling, and the merges as long as on one
// (kvstore at depth 15 unreduced, 2026-11-29: the doublings 139 ms of
// CPU against 30 ms, the level's dedupe 139 ms against 135 ms; written
// first, 25 ms and 75 to 83 ms). Writing a page first faults once.
func freshTable(n int) []uint64 {
	s := make([]uint64, n)
	for i := 0; i < len(s); i += pageWords {
		s[i] = 0
	}
	return s
}

// pageWords is the 64-bit words in a page of 4 KB, the smallest.
const pageWords = 512

// home is the slot where probing for fp starts. Fingerprints are xxhash
// values already, but a multiplication by 2^64/φ (Fibonacci hashing) and
// taking the top bits costs next to nothing and keeps the table well
// spread even for fingerprints whose low bits are not.
func (t *visitedSet) home(fp uint64) uint64 {
	return (fp * 0x9e3779b97f4a7c15) >> t.shift
}

// has says whether fp is in the table.
func (t *visitedSet) has(fp uint64) bool {
	if fp == 0 {
		return t.hasZero
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(fp); ; i = (i + 1) & mask {
		switch t.slots[i] {
		case fp:
			return true
		case 0:
			return false
		}
	}
}

// add adds fp and says whether it was new.
func (t *visitedSet) add(fp uint64) bool {
	if fp == 0 {
		if t.hasZero {
			return false
		}
		t.hasZero = true
		return true
	}
	mask := uint64(len(t.slots) - 1)
	i := (fp * 0x9e3779b97f4a7c15) >> t.shift
	for ; ; i = (i + 1) & mask {
		switch t.slots[i] {
		case fp:
			return false
		case 0:
		default:
			continue
		}
		break
	}
	if t.n >= t.grow {
		t.double()
		mask = uint64(len(t.slots) - 1)
		i = t.home(fp)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
	}
	t.n++
	t.slots[i] = fp
	return true
}

// double moves every fingerprint into a table twice the size.
func (t *visitedSet) double() {
	old := t.slots
	t.alloc(2 * len(old))
	mask := uint64(len(t.slots) - 1)
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i := (fp * 0x9e3779b97f4a7c15) >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = fp
	}
}

// all yields the fingerprints kept, in no order.
func (t *visitedSet) all() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		if t.hasZero && !yield(0) {
			return
		}
		for _, fp := range t.slots {
			if fp != 0 && !yield(fp) {
				return
			}
		}
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
func (t *visitedSet) bytes() int64 {
	return int64(len(t.slots)) * 8
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

// fpIndex maps fingerprints to small numbers (a candidate's place in its
// chunk, a node's in its level): open addressing like visitedSet, with the
// values beside the keys, and cleared for reuse rather than made anew.
type fpIndex struct {
	keys    []uint64
	vals    []int32
	shift   uint8
	n, grow int
	zero    int32 // the value of fingerprint 0, or -1
	// A worker writes its index (worker.local) at every candidate: 128
	// bytes, a size class whose objects start on cache lines of their
	// own, so that the workers' indices, made one after the other, do not
	// share one.
	_ [48]byte
}

func newFPIndex() *fpIndex { return newFPIndexFor(0) }

// newFPIndexFor returns an index with room for n fingerprints.
func newFPIndexFor(n int) *fpIndex {
	t := &fpIndex{zero: -1}
	t.alloc(slotsFor(n))
	return t
}

func (t *fpIndex) alloc(size int) {
	t.keys, t.vals = freshTable(size), make([]int32, size)
	t.shift = 64
	for n := size; n > 1; n >>= 1 {
		t.shift--
	}
	t.grow = size / 4 * 3
}

// reset empties the table, keeping its room.
func (t *fpIndex) reset() {
	clear(t.keys)
	t.n, t.zero = 0, -1
}

// get returns fp's value, or -1.
func (t *fpIndex) get(fp uint64) int32 {
	if fp == 0 {
		return t.zero
	}
	if i := t.slot(fp); t.keys[i] == fp {
		return t.vals[i]
	}
	return -1
}

// put sets fp's value to v unless fp has one: it returns the value fp
// has after the call.
func (t *fpIndex) put(fp uint64, v int32) int32 {
	if fp == 0 {
		if t.zero < 0 {
			t.zero = v
		}
		return t.zero
	}
	if t.n >= t.grow {
		keys, vals := t.keys, t.vals
		t.alloc(2 * len(keys))
		t.n = 0
		for j, k := range keys {
			if k != 0 {
				t.insert(k, vals[j])
			}
		}
	}
	i := t.slot(fp)
	if t.keys[i] == fp {
		return t.vals[i]
	}
	t.keys[i], t.vals[i] = fp, v
	t.n++
	return v
}

// slot returns where fp is, or the empty slot where it would go.
func (t *fpIndex) slot(fp uint64) uint64 {
	mask := uint64(len(t.keys) - 1)
	i := (fp * 0x9e3779b97f4a7c15) >> t.shift
	for t.keys[i] != fp && t.keys[i] != 0 {
		i = (i + 1) & mask
	}
	return i
}

func (t *fpIndex) insert(fp uint64, v int32) {
	i := t.slot(fp)
	t.keys[i], t.vals[i] = fp, v
	t.n++
}
