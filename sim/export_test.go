package sim

// NetSumOK says whether s's network sum is that of its messages in
// flight, as the steps must keep it.
func NetSumOK(s *State) bool { return s.netSum == netSumOf(s) }
