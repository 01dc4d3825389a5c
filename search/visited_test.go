package search

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestVisitedZero: fingerprint 0 marks an empty slot, so it is kept apart;
// it must still be a fingerprint like any other.
func TestVisitedZero(t *testing.T) {
	vs := newVisitedSet(0)
	if vs.has(0) {
		t.Fatal("has(0) on an empty table")
	}
	if !vs.add(0) {
		t.Fatal("first add(0) says it was there")
	}
	vs.add(5)
	if !vs.has(0) || vs.add(0) {
		t.Fatal("0 lost after another add")
	}
	if vs.len() != 2 {
		t.Fatalf("len = %d, want 2", vs.len())
	}
}

// TestVisitedGrowth fills a table well past its first size with
// fingerprints that differ only in their high bits (the worst case for a
// table indexed by low bits) and checks that it doubled, kept its load
// factor at most 3/4, and kept every fingerprint.
func TestVisitedGrowth(t *testing.T) {
	vs := newVisitedSet(0)
	if len(vs.slots) != minVisitedSlots {
		t.Fatalf("new table has %d slots, want %d", len(vs.slots), minVisitedSlots)
	}
	const n = 5000
	sizes := []int{len(vs.slots)}
	for i := uint64(1); i <= n; i++ {
		if !vs.add(i << 40) {
			t.Fatalf("key %d found before it was added", i)
		}
		if s := len(vs.slots); s != sizes[len(sizes)-1] {
			sizes = append(sizes, s)
		}
		if 4*vs.len() > 3*len(vs.slots) {
			t.Fatalf("after %d keys: %d slots, load over 3/4", i, len(vs.slots))
		}
	}
	// 5000 keys at load 3/4 need 8192 slots: 64 doubled 7 times.
	if want := []int{64, 128, 256, 512, 1024, 2048, 4096, 8192}; !equalInts(sizes, want) {
		t.Fatalf("sizes %v, want %v", sizes, want)
	}
	if vs.len() != n {
		t.Fatalf("len = %d, want %d", vs.len(), n)
	}
	for i := uint64(1); i <= n; i++ {
		if !vs.has(i << 40) {
			t.Fatalf("has(%d<<40) false after growth", i)
		}
	}
	if vs.has(n + 1<<40) {
		t.Fatal("a key never added was found")
	}
	if got := newVisitedSet(5000); len(got.slots) != 8192 {
		t.Fatalf("newVisitedSet(5000) has %d slots, want 8192", len(got.slots))
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestVisitedRandom checks the table against a Go map on many random
// fingerprints, each drawn several times on average, 0 among them.
func TestVisitedRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 20000)
	for i := range keys {
		keys[i] = rng.Uint64()
	}
	keys[0] = 0
	want := map[uint64]bool{}
	vs := newVisitedSet(0)
	for i := range 100000 {
		k := keys[rng.IntN(len(keys))]
		if added := vs.add(k); added == want[k] {
			t.Fatalf("step %d: add(%#x) = %v, the map says it was there: %v", i, k, added, want[k])
		}
		want[k] = true
	}
	if vs.len() != len(want) {
		t.Fatalf("len = %d, the map has %d", vs.len(), len(want))
	}
	for _, k := range keys {
		if vs.has(k) != want[k] {
			t.Fatalf("has(%#x) = %v; the map has %v", k, vs.has(k), want[k])
		}
	}
	for range 1000 {
		k := rng.Uint64()
		if !want[k] && vs.has(k) {
			t.Fatalf("has(%#x): found a key never added", k)
		}
	}
}

func TestCollisionChance(t *testing.T) {
	for _, c := range []struct {
		distinct, transitions int64
		want                  float64
	}{
		{0, 0, 0},
		{1, 0, 0},                 // the start state alone
		{5, 4, 0},                 // a tree: no state generated twice
		{2, 3, 0x1p-62},           // 2 distinct × 2 generated again
		{1 << 32, 3<<31 - 1, 0.5}, // 2^32 × 2^31 / 2^64
	} {
		if got := collisionChance(c.distinct, c.transitions); got != c.want {
			t.Errorf("collisionChance(%d, %d) = %g, want %g", c.distinct, c.transitions, got, c.want)
		}
	}
}

// benchKeys is the workload of the visited-set benchmarks: 1M distinct
// random fingerprints, each reached 3 times in all (about the ratio of
// transitions to states in the bundled systems), in a shuffled order.
func benchKeys() (keys []uint64, distinct int) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	keys = make([]uint64, 0, 3*n)
	for range n {
		k := rng.Uint64()
		keys = append(keys, k, k, k)
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys, n
}

// BenchmarkVisited runs the search's use of the table on benchKeys, from a
// small table, so growing is in the time: one op is one state (3 adds); bytes/state is the table's size at the end.
func BenchmarkVisited(b *testing.B) {
	keys, n := benchKeys()
	b.ResetTimer()
	var vs *visitedSet
	ops := 0
	for b.Loop() {
		vs = newVisitedSet(0)
		for _, k := range keys {
			vs.add(k)
		}
		ops++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops*n), "ns/state")
	b.ReportMetric(float64(vs.bytes())/float64(vs.len()), "bytes/state")
}

// BenchmarkVisitedMap is the same with the Go map the table replaced,
// for comparison; bytes/state is the heap the map holds at the end.
func BenchmarkVisitedMap(b *testing.B) {
	keys, n := benchKeys()
	b.ResetTimer()
	var m map[uint64]bool
	ops := 0
	for b.Loop() {
		m = map[uint64]bool{}
		for _, k := range keys {
			if _, found := m[k]; !found {
				m[k] = true
			}
		}
		ops++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops*n), "ns/state")
	// The heap the last map holds: what is freed when it goes.
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	size := len(m)
	m = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	b.ReportMetric(float64(with.HeapAlloc-without.HeapAlloc)/float64(size), "bytes/state")
}
