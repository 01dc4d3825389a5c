package search

// SetOptimisticProviso sets whether searches with observer postponement
// look for cycles in their reduced graph first (optimisticProviso), and
// returns what it was.
func SetOptimisticProviso(on bool) bool {
	was := optimisticProviso
	optimisticProviso = on
	return was
}

// SetMaxDeadEdges sets maxDeadEdges, the most edges the search keeps to
// find closed dead regions, and returns what it was.
func SetMaxDeadEdges(n int) int {
	was := maxDeadEdges
	maxDeadEdges = n
	return was
}

// SetMergeInParallel sets whether a level's new states are merged on
// several goroutines where they may be (mergeNew), and returns what it
// was.
func SetMergeInParallel(on bool) bool {
	was := mergeInParallel
	mergeInParallel = on
	return was
}

// CountBits is countBits.
var CountBits = countBits

// ChunkOf is chunkOf.
var ChunkOf = chunkOf

// SetParentsPer sets parentsPer, how many states each chunk keeps as
// parents of the next level's, in keepPers, and returns what it was.
func SetParentsPer(n int) int {
	was := parentsPer
	parentsPer = n
	return was
}

// SetMaxKept sets maxKept, the most states of a level the search keeps
// as they are found, and returns what it was.
func SetMaxKept(n int) int {
	was := maxKept
	maxKept = n
	return was
}
