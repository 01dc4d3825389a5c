package search_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/livecheck/livecheck/internal/oracle"
	"github.com/livecheck/livecheck/internal/randproto"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// obscheckSeeds is how many random programs TestObserversCrossCheck runs.
const obscheckSeeds = 150

// Observer postponement (search.Options.Observers) against the plain
// breadth-first search of the whole space (internal/oracle), on random
// programs whose last node is an observer (randproto.WithObserver): each
// safety property, checked on its own to the end of the reduced space,
// is violated exactly when the oracle finds it violated or a handler
// panic reachable, on a path that replays to the violation; and with
// none, the search says it saw every state of the reduced space, no
// more states than the oracle, the same on 1 and 2 workers.
func TestObserversCrossCheck(t *testing.T) {
	var programs, postponed, violated, held, reruns int
	for seed := uint64(1); seed <= obscheckSeeds; seed++ {
		p := randproto.WithObserver(seed)
		w, err := sim.NewWorld(p.Spec())
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p)
		}
		orc, err := oracle.Explore(w, p.Properties(), xcheckMaxStates)
		if errors.Is(err, oracle.ErrTooBig) {
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: oracle: %v\n%s", seed, err, p)
		}
		programs++
		anyPostponed := false
		for _, pr := range p.Properties() {
			_, bad := orc.Violated[pr.Name]
			_, panics := orc.Violated[oracle.PanicProperty]
			var first *search.Result
			for _, workers := range []int{1, 2} {
				opts := search.Options{Depth: orc.States + 1, Properties: []properties.Property{pr}, Reduce: true, Observers: true}
				for range workers - 1 {
					ow, err := sim.NewWorld(p.Spec())
					if err != nil {
						t.Fatal(err)
					}
					opts.Workers = append(opts.Workers, search.Worker{World: ow})
				}
				res, err := search.Global(w, opts)
				if err != nil {
					t.Fatalf("seed %d, %s, %d workers: %v\n%s", seed, pr.Name, workers, err, p)
				}
				where := fmt.Sprintf("seed %d, %s, %d workers", seed, pr.Name, workers)
				if first == nil {
					first = res
				} else if res.Stats.States != first.Stats.States || res.Stats.Transitions != first.Stats.Transitions || (res.Violation == nil) != (first.Violation == nil) {
					t.Errorf("%s: %d states, %d transitions, violation %v; on 1 worker %d, %d, %v",
						where, res.Stats.States, res.Stats.Transitions, res.Violation != nil, first.Stats.States, first.Stats.Transitions, first.Violation != nil)
				}
				anyPostponed = anyPostponed || res.Stats.Postponed > 0
				if res.Stats.ProvisoRerun && workers == 1 {
					reruns++
				}
				if res.Stats.States > int64(orc.States) {
					t.Errorf("%s: %d states, more than the oracle's %d", where, res.Stats.States, orc.States)
				}
				v := res.Violation
				switch {
				case v == nil && (bad || panics):
					t.Errorf("%s: no violation, but the oracle finds %s violated %v, a panic reachable %v\n%s", where, pr.Name, bad, panics, p)
				case v == nil && (!res.Complete || !res.Exhausted):
					t.Errorf("%s: no violation but complete %v, exhausted %v", where, res.Complete, res.Exhausted)
				case v != nil && v.Property == search.PanicProperty:
					if !panics {
						t.Errorf("%s: a panic the oracle never reaches: %s", where, v.Message)
					}
					if _, err := w.Run(mustInitial(t, w), v.Path, nil); err == nil {
						t.Errorf("%s: the panic's path replays without a panic", where)
					}
				case v != nil:
					if !bad {
						t.Errorf("%s: violation %q the oracle never reaches", where, v.Message)
					}
					end, err := w.Run(mustInitial(t, w), v.Path, nil)
					if err != nil || pr.CheckSafety(end) == nil {
						t.Errorf("%s: the violation's path does not replay to it (%v)", where, err)
					}
				}
				if workers == 1 {
					if v != nil {
						violated++
					} else {
						held++
					}
				}
			}
		}
		if anyPostponed {
			postponed++
		}
	}
	t.Logf("%d programs within %d states: observer events postponed in %d; %d properties violated, %d held; %d searches found a cycle of postponing states and ran again", programs, xcheckMaxStates, postponed, violated, held, reruns)
	// Worth something only if it checks: most programs in reach, the
	// reduction at work in many, and properties both ways.
	// Some searches must meet a cycle of postponing states, so that the
	// search run again under the proviso of levels is checked too.
	if programs < obscheckSeeds*3/4 || postponed < programs/3 || violated < 10 || held < 10 || reruns < 10 {
		t.Errorf("%d programs, %d with events postponed, %d violated, %d held, %d run again: tune the generator", programs, postponed, violated, held, reruns)
	}
}

func mustInitial(t *testing.T, w *sim.World) *sim.State {
	t.Helper()
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
