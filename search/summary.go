package search

// Message summaries of node states, to refute most preliminary violations
// without a search. In a real run where node a is in state x and node b in
// state y, every message a consumed from b was sent by b on its way to y.
// So if some message a consumed from b on every path to x (must-consume)
// is sent by b on no path to y (may-send, Init's sends included), no run
// has both.

type bits []uint64

func (b bits) has(i int32) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bits) set(i int32)      { b[i>>6] |= 1 << (uint(i) & 63) }

type summaries struct {
	maySend  [][]bits // per node, per state
	mustCons [][]bits
	from     []bits // messages sent by each node
}

// summarize returns nil when Stop ends it.
func (ls *localSearch) summarize() *summaries {
	words := (len(ls.msgs) + 63) / 64
	sm := &summaries{maySend: make([][]bits, ls.n), mustCons: make([][]bits, ls.n), from: make([]bits, ls.n)}
	for k := range ls.n {
		sm.from[k] = make(bits, words)
	}
	for i, m := range ls.msgs {
		sm.from[m.from].set(int32(i))
	}
	for k := range ls.n {
		states := ls.states[k]
		may := make([]bits, len(states))
		must := make([]bits, len(states))
		for i := range states {
			may[i] = make(bits, words)
			must[i] = make(bits, words)
			if i > 0 {
				for w := range must[i] {
					must[i][w] = ^uint64(0)
				}
			}
		}
		// What the node sent in Init is sent on its way to every state.
		for _, e := range ls.init.InFlight() {
			if int(e.From) == k {
				may[0].set(ls.msgIndex[msgKey{e.From, e.To, e.FP}])
			}
		}
		tmp := make(bits, words)
		for changed := true; changed; {
			changed = false
			for i, s := range states {
				if ls.poll() {
					return nil
				}
				for _, l := range s.loops {
					for _, m := range l.sent {
						if !may[i].has(m) {
							may[i].set(m)
							changed = true
						}
					}
				}
				if i == 0 {
					continue
				}
				for _, p := range s.preds {
					for w := range may[i] {
						if v := may[i][w] | may[p.from][w]; v != may[i][w] {
							may[i][w], changed = v, true
						}
					}
					for _, m := range p.sent {
						if !may[i].has(m) {
							may[i].set(m)
							changed = true
						}
					}
				}
				// must: the intersection over the preds of what the pred
				// state must have consumed, plus the pred's own message.
				for w := range tmp {
					tmp[w] = ^uint64(0)
				}
				for _, p := range s.preds {
					for w := range tmp {
						x := must[p.from][w]
						if p.consume >= 0 && int(p.consume>>6) == w {
							x |= 1 << (uint(p.consume) & 63)
						}
						tmp[w] &= x
					}
				}
				for w := range tmp {
					if v := must[i][w] & tmp[w]; v != must[i][w] {
						must[i][w], changed = v, true
					}
				}
			}
		}
		sm.maySend[k], sm.mustCons[k] = may, must
	}
	return sm
}

// plausible says whether node a in state x and node b in state y can be in
// one real run, as far as the summaries tell.
func (sm *summaries) plausible(a int, x int32, b int, y int32) bool {
	return covered(sm.mustCons[a][x], sm.from[b], sm.maySend[b][y]) && covered(sm.mustCons[b][y], sm.from[a], sm.maySend[a][x])
}

// covered: every message in need that came from the sender is in sent.
func covered(need, sender, sent bits) bool {
	for w := range need {
		if need[w]&sender[w]&^sent[w] != 0 {
			return false
		}
	}
	return true
}
