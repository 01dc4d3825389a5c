package livecheck

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// A DeadTest is the test that showed the last state of a liveness
// violation dead (critical.Recovers): a breadth-first search of States
// states, then Walks walks of WalkDepth steps. A trace records it, and
// replay runs it again from the trace's last state.
type DeadTest struct {
	States, Walks, WalkDepth int
	Seed                     uint64
	// Weights are the walks' (nil: the system's, or walk.DefaultWeights).
	Weights *walk.Weights
}

// deadSeed tags the seed of the dead test of a check's last state: it
// comes from the check's seed alone, not from which suspect it was.
const deadSeed = 0xdead

// endTest is the dead test of the end of a dead path, for a check whose
// walks are depth steps long.
func (c *checker) endTest(depth int) DeadTest {
	wt := *c.weights
	return DeadTest{States: critical.DeadStates, Walks: critical.DeadWalks, WalkDepth: depth,
		Seed: walk.Seed(uint64(c.opts.Seed), deadSeed), Weights: &wt}
}

// test is d as critical runs it; weights stand in for d's when it has none.
func (d DeadTest) test(weights *walk.Weights) critical.Test {
	if d.Weights != nil {
		weights = d.Weights
	}
	wt := walk.DefaultWeights
	if weights != nil {
		wt = *weights
	}
	return critical.Test{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Chooser: &wt, Seed: d.Seed}
}

// DeadTestOf returns the dead test a trace records, or for a trace that
// records none, the one a check with the trace's seed and the default walk
// depth runs.
func DeadTestOf(t *reports.Trace) (DeadTest, error) {
	if d := t.DeadTest; d != nil {
		if d.States < 0 || d.Walks < 1 || d.WalkDepth < 1 {
			return DeadTest{}, fmt.Errorf("dead_test: walks and walk_depth must be at least 1 and search_states at least 0")
		}
		dt := DeadTest{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Seed: d.Seed}
		if d.Weights != "" {
			wt, err := walk.ParseWeights(d.Weights, walk.DefaultWeights)
			if err != nil {
				return DeadTest{}, fmt.Errorf("dead_test: %v", err)
			}
			dt.Weights = &wt
		}
		return dt, nil
	}
	return DeadTest{States: critical.DeadStates, Walks: critical.DeadWalks, WalkDepth: DefaultWalkDepth,
		Seed: walk.Seed(uint64(t.Seed), deadSeed)}, nil
}

func (d DeadTest) trace() *reports.TraceDeadTest {
	td := &reports.TraceDeadTest{States: d.States, Walks: d.Walks, WalkDepth: d.WalkDepth, Seed: d.Seed}
	if d.Weights != nil {
		td.Weights = d.Weights.String()
	}
	return td
}

// CheckProperty says whether a trace of verdict can record property for
// this system; the error names the ones it can.
func (rep *Replayed) CheckProperty(verdict Verdict, property string) error {
	var valid []string
	switch verdict {
	case SafetyViolation:
		valid = append(valid, search.PanicProperty)
		for _, p := range rep.m.Properties {
			if p.Kind == properties.Safety {
				valid = append(valid, p.Name)
			}
		}
	case LivenessViolation:
		valid = append(valid, search.QuiescentProperty, DivergenceProperty)
		if names := liveNames(rep.m); names != "" {
			valid = append(valid, names)
		}
	case Live, PrefixResult:
		// A live trace may name the liveness property it reaches.
		if property == "" || property == liveNames(rep.m) {
			return nil
		}
		return fmt.Errorf("a %s trace records no property or %q, not %q", verdict, liveNames(rep.m), property)
	default:
		return fmt.Errorf("unknown result %q (valid: %s, %s, %s, %s)", verdict, SafetyViolation, LivenessViolation, Live, PrefixResult)
	}
	for _, v := range valid {
		if v == property {
			return nil
		}
	}
	sort.Strings(valid)
	return fmt.Errorf("%q is not a %s property of this system (valid: %s)", property, strings.TrimSuffix(string(verdict), "-violation"), strings.Join(valid, ", "))
}

// TestEnd runs dead test d from the replay's final state, as the check
// did from the end of the path it reported; rep.End holds what it saw,
// and Reproduces needs it to find no way back to a live state. A safety
// violation or handler panic met on the way is a *critical.Finding, its
// path counted from the final state.
func (rep *Replayed) TestEnd(d DeadTest) error {
	if rep.w == nil || rep.Final == nil {
		return errors.New("nothing was replayed")
	}
	live := func(s *sim.State) bool {
		for i := range rep.m.Properties {
			if p := &rep.m.Properties[i]; p.Kind == properties.Liveness && !p.IsLive(s) {
				return false
			}
		}
		return true
	}
	safety := func(s *sim.State) (string, string) {
		for i := range rep.m.Properties {
			if p := &rep.m.Properties[i]; p.Kind == properties.Safety {
				if err := p.CheckSafety(s); err != nil {
					var pe *properties.Error
					if errors.As(err, &pe) {
						panic(pe) // Recovers makes it a Finding
					}
					return p.Name, err.Error()
				}
			}
		}
		return "", ""
	}
	t := d.test(rep.m.Weights)
	t.Safety = safety
	// The dead test walks from the final state: it is not the recorded
	// path, which Replay ran twice step by step to find a handler that is
	// not deterministic, and it runs as the check ran it, once.
	rep.w.Record, rep.w.Recheck = false, 0
	var ev *critical.Evidence
	h, err := guarded(rep.w, rep.timeout, func() hang { return hang{} }, func() error {
		var err error
		ev, err = critical.Recovers(rep.w, rep.Final, live, t)
		return err
	})
	if h != nil {
		return fmt.Errorf("a handler did not return within %v on a walk from the final state", rep.timeout)
	}
	if err != nil {
		return err
	}
	rep.End = ev
	return nil
}

// Confirm checks a replay against the trace it replayed: the trace's
// property must be one the system has for its result (the error names
// the valid ones), and a liveness violation that ends where events can
// still happen must end in a state the trace's dead test finds no way
// back from (TestEnd; rep.End then says what it saw). It returns whether
// the replay reproduces what the trace records.
func (rep *Replayed) Confirm(t *reports.Trace) (bool, error) {
	v := Verdict(t.Result)
	if err := rep.CheckProperty(v, t.Property); err != nil {
		return false, err
	}
	d, err := DeadTestOf(t) // a bad one is a bad file, whether it is needed or not
	if err != nil {
		return false, err
	}
	if v == LivenessViolation && t.Property != search.QuiescentProperty && t.Property != DivergenceProperty &&
		rep.Verdict == OK && !rep.Live {
		if err := rep.TestEnd(d); err != nil {
			var f *critical.Finding
			if errors.As(err, &f) {
				if f.PropertyError != nil {
					return false, fmt.Errorf("the dead test from the final state met a property error after %d steps: %s", len(f.Path), f.Message)
				}
				return false, fmt.Errorf("a walk from the final state ran into a violation of %s after %d steps: %s", orElse(f.Property, search.PanicProperty), len(f.Path), f.Message)
			}
			return false, err
		}
	}
	return rep.Reproduces(v, t.Property), nil
}

func orElse(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
