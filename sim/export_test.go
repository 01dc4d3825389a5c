package sim

// RenamedKey is the fingerprint of s with node i renamed perm[i], as a
// state's Key is computed for the renaming its sort picks: tests check
// keys against every renaming.
func (w *World) RenamedKey(s *State, perm []NodeID) uint64 {
	y := w.sym
	for i, p := range perm {
		y.perm[i], y.inv[p] = p, NodeID(i)
	}
	return y.renamed(s, w.spec.Transport == Stream)
}
