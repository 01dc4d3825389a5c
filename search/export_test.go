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
