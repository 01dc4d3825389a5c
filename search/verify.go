package search

import (
	"errors"
	"slices"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// seqStep is one step of a node's event sequence, as soundness
// verification needs it.
type seqStep struct {
	step    sim.Step
	consume int32
	sent    []int32
	at      int32 // the node's state before the step
}

// sequences returns the event sequences that lead from node id's initial
// state to state si through the predecessor links, without revisiting a
// state, at most limit of them.
func (ls *localSearch) sequences(id sim.NodeID, si int32, limit int) [][]seqStep {
	var out [][]seqStep
	var rev []seqStep
	onPath := map[int32]bool{}
	var walk func(i int32)
	walk = func(i int32) {
		if len(out) >= limit {
			return
		}
		if i == 0 {
			seq := make([]seqStep, len(rev))
			for k := range rev {
				seq[k] = rev[len(rev)-1-k]
			}
			out = append(out, seq)
			return
		}
		onPath[i] = true
		for _, p := range ls.states[id][i].preds {
			if onPath[p.from] {
				continue
			}
			rev = append(rev, seqStep{step: p.step, consume: p.consume, sent: p.sent, at: p.from})
			walk(p.from)
			rev = rev[:len(rev)-1]
		}
		delete(onPath, i)
	}
	walk(si)
	return out
}

// verify looks for a real run that reaches the system state made of each
// node's picked state: a combination of their event sequences that can be
// interleaved so that every message is delivered after it was sent and
// not yet consumed, and that the global simulator replays. If extra is
// set, node extraNode then takes that step too (a handler that panicked).
func (ls *localSearch) verify(p *properties.Property, pick []int32) (bool, error) {
	path, ok, err := ls.findRun(pick, nil, 0)
	if ls.res.Violation != nil {
		return true, nil // a panic on the way
	}
	if err != nil || !ok {
		if err == nil {
			ls.res.Stats.Unsound++
		}
		return false, err
	}
	// The run must show the violation in the global simulator too.
	end, err := ls.w.Run(ls.init, path, nil)
	if err != nil {
		return false, err
	}
	perr := p.CheckSafety(end)
	if perr == nil {
		ls.res.Stats.Unsound++
		return false, nil
	}
	ls.res.Violation = &Violation{Property: p.Name, Kind: p.Kind, Message: perr.Error(), Path: path}
	return true, nil
}

// verifyPanic reports a handler panic found on node id's state si if a
// real run reaches that state (with any stored states of the others).
func (ls *localSearch) verifyPanic(id sim.NodeID, si int32, st sim.Step, hp *sim.HandlerPanic) error {
	pick := make([]int32, ls.n)
	var rec func(i int) (bool, error)
	rec = func(i int) (bool, error) {
		if i == ls.n {
			ls.res.Stats.Preliminary++
			extra := &seqStep{step: st, consume: -1}
			if st.Event.Kind == sim.Deliver {
				extra.consume = ls.msgIndex[msgKey{st.Event.Peer, st.Event.Node, st.Event.Msg}]
			}
			path, ok, err := ls.findRun(pick, extra, id)
			if ls.res.Violation != nil {
				return true, nil
			}
			if err != nil || !ok {
				if err == nil {
					ls.res.Stats.Unsound++
				}
				return false, err
			}
			ls.res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Path: path, Panic: hp}
			return true, nil
		}
		if sim.NodeID(i) == id {
			pick[i] = si
			return rec(i + 1)
		}
		for k := range ls.states[i] {
			pick[i] = int32(k)
			if found, err := rec(i + 1); found || err != nil {
				return found, err
			}
		}
		return false, nil
	}
	_, err := rec(0)
	return err
}

// findRun tries the combinations of the picked states' event sequences
// and returns the global path of the first one that interleaves into a
// real run.
func (ls *localSearch) findRun(pick []int32, extra *seqStep, extraNode sim.NodeID) (sim.Path, bool, error) {
	t0 := time.Now()
	defer func() { ls.res.Stats.Verify += time.Since(t0) }()
	ls.res.Stats.Verifications++
	seqs := make([][][]seqStep, ls.n)
	for k := range ls.n {
		seqs[k] = ls.sequences(sim.NodeID(k), pick[k], ls.opts.MaxSequences)
		if extra != nil && sim.NodeID(k) == extraNode {
			for j := range seqs[k] {
				seqs[k][j] = append(slices.Clone(seqs[k][j]), *extra)
			}
		}
	}
	combo := make([][]seqStep, ls.n)
	tried := 0
	var rec func(i int) (sim.Path, bool, error)
	rec = func(i int) (sim.Path, bool, error) {
		if i == ls.n {
			if tried >= ls.opts.MaxSequences {
				return nil, false, nil
			}
			tried++
			ls.res.Stats.Sequences++
			if !ls.feasible(combo, pick) {
				return nil, false, nil
			}
			return ls.interleave(combo, pick, extra != nil)
		}
		for _, sq := range seqs[i] {
			combo[i] = sq
			if p, ok, err := rec(i + 1); ok || err != nil {
				return p, ok, err
			}
		}
		return nil, false, nil
	}
	return rec(0)
}

// feasible is the quick test: with a multiset of message counts, greedily
// take any step whose message is available, and any loop of the node's
// current state whose message the rest of its sequence does not need
// (loops only add messages); every sequence must empty. It never rejects
// a combination the world could run.
func (ls *localSearch) feasible(combo [][]seqStep, pick []int32) bool {
	count := map[int32]int{}
	for _, e := range ls.init.InFlight() {
		count[ls.msgIndex[msgKey{e.From, e.To, e.FP}]]++
	}
	need := make([]map[int32]int, len(combo)) // messages each sequence still consumes
	for k, sq := range combo {
		need[k] = map[int32]int{}
		for _, st := range sq {
			if st.consume >= 0 {
				need[k][st.consume]++
			}
		}
	}
	fired := map[[2]int32]bool{} // (node, loop) pairs taken, per state
	pos := make([]int, len(combo))
	left := 0
	for _, sq := range combo {
		left += len(sq)
	}
	for {
		moved := false
		for k, sq := range combo {
			for {
				cur := pick[k]
				if pos[k] < len(sq) {
					cur = sq[pos[k]].at
				}
				for li, lp := range ls.states[k][cur].loops {
					key := [2]int32{int32(k), cur<<16 | int32(li)}
					if fired[key] || (lp.consume >= 0 && (count[lp.consume] == 0 || count[lp.consume] <= need[k][lp.consume])) {
						continue
					}
					fired[key] = true
					if lp.consume >= 0 {
						count[lp.consume]--
					}
					for _, m := range lp.sent {
						count[m]++
					}
					moved = true
				}
				if pos[k] == len(sq) {
					break
				}
				st := sq[pos[k]]
				if st.consume >= 0 {
					if count[st.consume] == 0 {
						break
					}
					count[st.consume]--
					need[k][st.consume]--
				}
				for _, m := range st.sent {
					count[m]++
				}
				pos[k]++
				left--
				moved = true
			}
		}
		if left == 0 {
			return true
		}
		if !moved {
			return false
		}
	}
}

// interleave searches, depth first in the global simulator, for an order
// of the sequences' steps that the world accepts (stream transports also
// keep each connection in order). The last step of the last node may be a
// handler that panics (lastPanics).
func (ls *localSearch) interleave(combo [][]seqStep, pick []int32, lastPanics bool) (sim.Path, bool, error) {
	w := ls.w
	saved := w.Strict
	w.Strict = true
	defer func() { w.Strict = saved }()
	total := 0
	for _, sq := range combo {
		total += len(sq)
	}
	pos := make([]int, len(combo))
	done := 0
	path := make(sim.Path, 0, total)
	seen := map[uint64]bool{}
	var rec func(s *sim.State) (bool, error)
	rec = func(s *sim.State) (bool, error) {
		if done == total {
			return true, nil
		}
		key := s.Fingerprint()
		for _, p := range pos {
			key = key*0x100000001b3 ^ uint64(p)
		}
		if seen[key] {
			return false, nil
		}
		seen[key] = true
		// try takes one step: a step of node k's sequence (main) or one of
		// the loops of its current state.
		try := func(k int, st sim.Step, main bool) (bool, error) {
			next, err := w.Apply(s, st.Event, st.Choices)
			if err != nil {
				if errors.Is(err, sim.ErrNotEnabled) {
					return false, nil
				}
				var hp *sim.HandlerPanic
				if errors.As(err, &hp) {
					// A real run reaches a handler that panics: that is
					// a finding in itself, whatever was being verified.
					path = append(path, st)
					if !lastPanics || !main || done != total-1 {
						ls.res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Path: path.Clone(), Panic: hp}
					}
					return true, nil
				}
				return false, err
			}
			path = append(path, st)
			if main {
				pos[k]++
				done++
			}
			if ok, err := rec(next); ok || err != nil {
				return ok, err
			}
			if main {
				pos[k]--
				done--
			}
			path = path[:len(path)-1]
			return false, nil
		}
		for k, sq := range combo {
			if pos[k] < len(sq) {
				if ok, err := try(k, sq[pos[k]].step, true); ok || err != nil {
					return ok, err
				}
			}
		}
		for k, sq := range combo {
			cur := pick[k]
			if pos[k] < len(sq) {
				cur = sq[pos[k]].at
			}
			for _, lp := range ls.states[k][cur].loops {
				if ok, err := try(k, lp.step, false); ok || err != nil {
					return ok, err
				}
			}
		}
		return false, nil
	}
	ok, err := rec(ls.init)
	if !ok || err != nil {
		return nil, false, err
	}
	return path.Clone(), true, nil
}
