package search

// SetOptimisticProviso sets whether searches with observer postponement
// look for cycles in their reduced graph first (optimisticProviso), and
// returns what it was.
func SetOptimisticProviso(on bool) bool {
	return swap(&optimisticProviso, on)
}

// SetMaxDeadEdges sets maxDeadEdges, the most edges the search keeps to
// find closed dead regions, and returns what it was.
func SetMaxDeadEdges(n int) int {
	return swap(&maxDeadEdges, n)
}

// SetMergeInParallel sets whether a level's new states are merged on
// several goroutines where they may be (mergeNew), and returns what it
// was.
func SetMergeInParallel(on bool) bool {
	return swap(&mergeInParallel, on)
}

// CountBits is countBits.
var CountBits = countBits

// ChunkOf is chunkOf.
var ChunkOf = chunkOf

// SetParentsPer sets parentsPer, how many states each chunk keeps as
// parents of the next level's, in keepPers, and returns what it was.
func SetParentsPer(n int) int {
	return swap(&parentsPer, n)
}

// SetMaxKept sets maxKept, the most states of a level the search keeps
// as they are found, and returns what it was.
func SetMaxKept(n int) int {
	return swap(&maxKept, n)
}

// swap sets *p to v and returns what it was.
func swap[T any](p *T, v T) T {
	was := *p
	*p = v
	return was
}

// SetReplaysToKeepMore sets replaysToKeepMore, the steps made again a
// state past which the search keeps more, and returns what it was.
func SetReplaysToKeepMore(n int64) int64 {
	return swap(&replaysToKeepMore, n)
}
