// Package lines allocates what one goroutine writes at every step on cache
// lines of its own.
//
// Objects that workers make one after the other, on one goroutine, lie
// side by side in memory; when each worker then writes its own at every
// step, two cores take a shared line from each other at every write
// (false sharing). On this project's 2-core machine a walker's counts
// next to another's made a step of two walkers three times as slow as
// one's (coverage's BenchmarkTwoCounters).
package lines

// Size is a cache line, doubled: the hardware's adjacent-line prefetch
// fetches lines in pairs.
const Size = 128

// padded is a T with Size bytes on either side.
type padded[T any] struct {
	_ [Size]byte
	v T
	_ [Size]byte
}

// New returns a new zero T that shares no cache line with any other
// object.
func New[T any]() *T { return &new(padded[T]).v }
