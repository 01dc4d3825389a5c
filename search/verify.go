package search

import (
	"errors"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// errBudget ends a verification that ran out of steps.
var errBudget = errors.New("verification budget spent")

// verify looks for a real run in which each target node reaches its target
// state: a search in the global simulator from the initial state, where a
// target node takes only recorded steps that can still lead to its target
// (and the loops of its current state), and every other node takes any
// recorded step. The world accepts a delivery only of a message that was
// sent and not yet consumed (and, on streams, in order), so the run it
// finds is real; it becomes the violation's trace. With extra set, the
// target node extra.node then takes the step extra.step, which must panic.
func (ls *localSearch) verify(p *properties.Property, ts []target, extra *panicStep) (bool, error) {
	t0 := time.Now()
	defer func() { ls.res.Stats.Verify += time.Since(t0) }()
	ls.res.Stats.Verifications++
	v := &verifier{ls: ls, goal: make([]int32, ls.n), reach: make([][]bool, ls.n), extra: extra,
		seen: map[uint64]bool{}, cur: make([]int32, ls.n)}
	for k := range v.goal {
		v.goal[k] = -1
	}
	for _, t := range ts {
		v.goal[t.node] = t.idx
		v.reach[t.node] = ls.canReach(t.node, t.idx)
	}
	ok, err := v.dfs(ls.init)
	ls.res.Stats.Sequences += int64(v.steps)
	if errors.Is(err, errBudget) {
		ls.res.Stats.GaveUp++
		err, ok = nil, false
	}
	if err != nil {
		return false, err
	}
	if ls.res.Violation != nil {
		return true, nil // a handler panicked on the way: a finding of its own
	}
	if !ok {
		ls.res.Stats.Unsound++
		return false, nil
	}
	if extra != nil {
		ls.res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: extra.panic.Error(), Path: v.path.Clone(), Panic: extra.panic}
		return true, nil
	}
	perr := p.CheckSafety(v.end)
	if perr == nil {
		ls.res.Stats.Unsound++
		return false, nil
	}
	ls.res.Violation = &Violation{Property: p.Name, Kind: p.Kind, Message: perr.Error(), Path: v.path.Clone()}
	return true, nil
}

type panicStep struct {
	node  sim.NodeID
	step  sim.Step
	panic *sim.HandlerPanic
}

// canReach marks the states of node id from which the target state can be
// reached through recorded steps.
func (ls *localSearch) canReach(id sim.NodeID, target int32) []bool {
	r := make([]bool, len(ls.states[id]))
	r[target] = true
	queue := []int32{target}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, p := range ls.states[id][i].preds {
			if !r[p.from] {
				r[p.from] = true
				queue = append(queue, p.from)
			}
		}
	}
	return r
}

type verifier struct {
	ls    *localSearch
	goal  []int32  // target state per node, -1 for a free node
	reach [][]bool // per target node: states that can reach the target
	cur   []int32  // each node's current state
	extra *panicStep
	seen  map[uint64]bool
	path  sim.Path
	end   *sim.State
	steps int
}

func (v *verifier) done() bool {
	for k, g := range v.goal {
		if g >= 0 && v.cur[k] != g {
			return false
		}
	}
	return true
}

func (v *verifier) dfs(s *sim.State) (bool, error) {
	ls := v.ls
	if v.done() {
		if v.extra == nil {
			v.end = s
			return true, nil
		}
		// The step that panicked must be possible here.
		ok, err := v.try(s, v.extra.step, -1, -1, true)
		if ok || err != nil {
			return ok, err
		}
	}
	if v.seen[s.Fingerprint()] {
		return false, nil
	}
	v.seen[s.Fingerprint()] = true
	// Target nodes first, each toward its target; then the free nodes.
	for pass := 0; pass < 2; pass++ {
		for k := range ls.n {
			pinned := v.goal[k] >= 0
			if pinned != (pass == 0) {
				continue
			}
			st := ls.states[k][v.cur[k]]
			for _, e := range st.succ {
				if pinned && !v.reach[k][e.to] {
					continue
				}
				if ok, err := v.try(s, e.p.step, k, e.to, false); ok || err != nil {
					return ok, err
				}
			}
			for _, lp := range st.loops {
				if ok, err := v.try(s, lp.step, k, v.cur[k], false); ok || err != nil {
					return ok, err
				}
			}
		}
	}
	return false, nil
}

// try applies one step in the global simulator and goes on from there.
// final marks the step that must panic.
func (v *verifier) try(s *sim.State, st sim.Step, k int, to int32, final bool) (bool, error) {
	ls := v.ls
	if v.steps >= ls.opts.MaxVerify {
		return false, errBudget
	}
	v.steps++
	w := ls.w
	saved := w.Strict
	w.Strict = true
	next, err := w.Apply(s, st.Event, st.Choices)
	w.Strict = saved
	if err != nil {
		if errors.Is(err, sim.ErrNotEnabled) {
			return false, nil
		}
		var hp *sim.HandlerPanic
		if errors.As(err, &hp) {
			v.path = append(v.path, st)
			if final {
				v.extra.panic = hp
				return true, nil
			}
			// A real run reaches a handler that panics: a finding in
			// itself, whatever was being verified.
			ls.res.Violation = &Violation{Property: PanicProperty, Kind: properties.Safety, Message: hp.Error(), Path: v.path.Clone(), Panic: hp}
			return true, nil
		}
		return false, err
	}
	if final {
		return false, nil // it did not panic in the real run
	}
	v.path = append(v.path, st)
	old := v.cur[k]
	v.cur[k] = to
	ok, err := v.dfs(next)
	if ok || err != nil {
		return ok, err
	}
	v.cur[k] = old
	v.path = v.path[:len(v.path)-1]
	return false, nil
}

// verifyPanic reports a handler that panicked on state si of node id if a
// real run reaches that state and then takes the step.
func (ls *localSearch) verifyPanic(id sim.NodeID, si int32, st sim.Step, hp *sim.HandlerPanic) error {
	ls.res.Stats.Preliminary++
	_, err := ls.verify(nil, []target{{id, si}}, &panicStep{node: id, step: st, panic: hp})
	return err
}
