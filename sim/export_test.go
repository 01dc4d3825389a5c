package sim

// NetSumOK says whether s's network sum is that of its messages in
// flight, as the steps must keep it.
func NetSumOK(s *State) bool { return s.netSum == netSumOf(s) }

// BlindOK says whether the blind fingerprints of s's nodes are what
// hashing them again with every group member anonymous gives (true
// without symmetry).
func BlindOK(w *World, s *State) bool {
	if w.sym == nil {
		return true
	}
	for i := range s.nodes {
		if s.nodes[i].blind != w.sym.blindHash(s, NodeID(i)) {
			return false
		}
	}
	return true
}
