package properties

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// CheckAfter checks the History as a whole, after the fact, with
// porcupine (Wing & Gong's search with memoization, by key): the check
// of a finished history, a real run's or a trace's, which gives a
// verdict where the incremental one gave up on a history too wide for
// it (Err says so; its operations are still recorded). An operation
// that never returned may have taken effect with any output the spec
// allows, or not at all. decided is false when timeout (0: none) ran
// out first, or the History has no spec or a wrong use.
func (x History) CheckAfter(timeout time.Duration) (linearizable, decided bool) {
	h := x.h
	switch {
	case h == nil:
		return true, true // nothing recorded
	case h.m == nil || h.err != "" && !h.wide:
		return false, false
	}
	var ops []porcupine.Operation
	keys := map[string]int{}
	var byKey [][]porcupine.Operation
	for _, o := range x.Ops() {
		op := porcupine.Operation{ClientId: o.Client, Input: o.Input, Call: int64(o.Call), Output: o.Output, Return: int64(o.Return)}
		if o.Return == 0 {
			op.Output, op.Return = unknownOut{}, math.MaxInt64
		}
		k, ok := keys[o.Key]
		if !ok {
			k = len(byKey)
			keys[o.Key] = k
			byKey = append(byKey, nil)
		}
		byKey[k] = append(byKey[k], op)
		ops = append(ops, op)
	}
	m := h.m
	s0, e := guarded(m.init)
	if e != "" {
		return false, false
	}
	var panicked atomic.Bool // a spec that panics: no verdict
	nm := porcupine.NondeterministicModel{
		Partition: func([]porcupine.Operation) [][]porcupine.Operation { return byKey },
		Init:      func() []any { return []any{s0} },
		Step: func(state, in, out any) []any {
			os, e := guardedStep(m, state, in)
			if e != "" {
				panicked.Store(true)
			}
			var next []any
			for _, o := range os {
				if _, any := out.(unknownOut); any || o.out == out {
					next = append(next, o.next)
				}
			}
			return next
		},
	}
	res := porcupine.CheckOperationsTimeout(nm.ToModel(), ops, timeout)
	switch {
	case panicked.Load():
		return false, false
	case res == porcupine.Ok:
		return true, true
	case res == porcupine.Illegal:
		return false, true
	}
	return false, false
}

// unknownOut is the output porcupine is given for an operation that
// never returned: any output the spec allows.
type unknownOut struct{}
