package check

import (
	"errors"
	"sync"
	"time"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// Shortened is a dead path with the steps before its critical step that
// do not matter removed: Path is the steps of the reported path at Kept
// (0-based indices, in order), then its critical step, after which it is
// dead by the same evidence as the reported path: the very state the
// reported path reaches there (by fingerprint), or one the check's dead
// test (Critical.EndTest, its seed included) finds no way back from. The
// state before its critical step still reaches a live state.
type Shortened struct {
	Path sim.Path
	Kept []int
	// Steps are Path replayed, in words, each numbered as the step of the
	// reported path it is (the trace file's numbers).
	Steps []ReplayStep
	// Tries counts the shortened prefixes replayed (ShortenBudget bounds
	// them), DeadTests the dead tests run (ShortenDeadTests).
	Tries, DeadTests int
}

// ShortenBudget bounds the replays of shortened prefixes that shortening
// a dead path may spend, and ShortenLive the states of the search that
// shows each accepted prefix still recovers: a report costs milliseconds
// more, not seconds.
// ShortenDeadTests bounds the dead tests, the costly part: a prefix that
// reaches another state at the critical step is dead if a search sees
// every state reachable from it and none is live, or else only if the
// dead test says so, after cheaper probes found no way back. None by
// default: each costs as much as the check's own dead test (seconds: four
// of them doubled the time to report ring's rejoin-self).
var (
	ShortenBudget    = 300
	ShortenLive      = critical.ProbeStates
	ShortenDeadTests = 0
)

// shorten removes the steps before the critical step of res that do not
// matter, by delta debugging: drop a chunk of them, replay, and keep the
// removal when the prefix left still replays, breaks no safety property,
// ends in a state that recovers, and leads by the critical step to the
// very state (by fingerprint) the reported path reaches there, so that
// the dead test's evidence holds for it unchanged. Chunks halve down to
// single steps. It returns nil where nothing could be removed, where the
// shortened path does not replay in full to the reported path's last
// state, or where stop said to end before it was done.
//
// It runs on workers worlds: at each chunk size, the next removals, each
// tried as though those before it fail, are tried at once, one a world,
// and taken in order; the first that holds is kept, as one world trying
// them one after another would keep it, and those after it, tried on a
// path that no longer is, count for nothing. The dead tests, which
// ShortenDeadTests bounds, run in that order too, on every world (a
// critical.Pool). The result is the same whatever the number of workers,
// but for a handler that runs past the time limit in a try that one world
// would not have made (after one that holds): shortening then gives up,
// as it does at any such handler.
func shorten(sys *protocol.System, cfg protocol.Config, res *Result, timeout time.Duration, workers int, stop func() bool) *Shortened {
	cx := res.Critical
	if cx == nil || res.PrefixLen > 0 || cx.Step < 2 || cx.Step > len(res.Path) {
		return nil
	}
	_, m, err := sys.Model(cfg)
	if err != nil {
		return nil
	}
	m.Spec.HandlerTimeout = timeout
	worlds := make([]*sim.World, max(1, workers))
	for i := range worlds {
		w, err := sim.NewWorld(m.Spec)
		if err != nil {
			return nil
		}
		w.Strict = true
		w.Stop = stop
		worlds[i] = w
	}
	w := worlds[0]
	var pool *critical.Pool
	if len(worlds) > 1 {
		pool = &critical.Pool{Worlds: worlds[1:]}
	}
	live := func(s *sim.State) bool {
		for i := range m.Properties {
			if p := &m.Properties[i]; p.Kind == properties.Liveness && !p.IsLive(s) {
				return false
			}
		}
		return true
	}
	safe := func(s *sim.State) bool {
		for i := range m.Properties {
			if p := &m.Properties[i]; p.Kind == properties.Safety && p.CheckSafety(s) != nil {
				return false
			}
		}
		return true
	}
	start, err := w.InitialFrom(res.Init)
	if err != nil {
		return nil
	}
	crit := res.Path[cx.Step-1]
	after, err := stateAt(w, start, res.Path[:cx.Step], safe)
	if err != nil {
		return nil
	}
	target := after.Fingerprint()
	dead := cx.EndTest.test(m.Weights)
	sh := &Shortened{}
	// recovers says whether s reaches a live state, on w: by the nearest
	// live path's own steps from where it parts, where they apply, else
	// by a breadth-first search.
	liveTail := cx.LivePath[min(cx.LiveStep, len(cx.LivePath)):]
	recovers := func(w *sim.World, s *sim.State) bool {
		for t, st := range liveTail {
			if live(s) {
				return true
			}
			n, err := w.Apply(s, st.Event, st.Choices)
			if err != nil {
				break
			}
			if s = n; t == len(liveTail)-1 && live(s) {
				return true
			}
		}
		ev, err := critical.Recovers(w, s, live, critical.Test{States: ShortenLive})
		return err == nil && ev.Live
	}
	// judge says, on w, whether the prefix of the steps at kept still
	// does, as far as it can tell without a dead test; where only one can
	// tell, it says no and returns the state after the critical step for
	// confirm. It reads nothing that the other tries change, so that the
	// tries can run at once.
	judge := func(w *sim.World, kept []int) (good bool, undecided *sim.State) {
		defer func() {
			if recover() != nil { // a property that panics on a new state
				good, undecided = false, nil
			}
		}()
		p := make(sim.Path, len(kept))
		for i, k := range kept {
			p[i] = res.Path[k]
		}
		s, err := stateAt(w, start, p, safe)
		if err != nil {
			return false, nil
		}
		n, err := w.Apply(s, crit.Event, crit.Choices)
		if err != nil || !safe(n) || live(n) {
			return false, nil
		}
		if !recovers(w, s) {
			return false, nil
		}
		if n.Fingerprint() == target {
			return true, nil
		}
		// Another state: dead for certain when a search sees every state
		// it reaches and none is live, which costs no more than the
		// search that shows a prefix recovers.
		probe := dead
		probe.States, probe.Walks = ShortenLive, 0
		if ev, err := critical.Recovers(w, n, live, probe); err != nil || ev.Live {
			return false, nil
		} else if ev.SearchAll {
			return true, nil
		}
		return false, n
	}
	// confirm says whether n, the state after the critical step that a
	// try judge could not decide reaches, is dead, by the dead test, if
	// ShortenDeadTests leaves one: after cheaper probes found no way
	// back. It runs with no try under way, its walks on every world.
	confirm := func(n *sim.State) (good bool) {
		defer func() {
			if recover() != nil { // a property that panics on a new state
				good = false
			}
		}()
		if sh.DeadTests >= ShortenDeadTests {
			return false
		}
		probe := dead
		probe.States, probe.Walks, probe.Pool = ShortenLive, DefaultWalks, pool
		if ev, err := critical.Recovers(w, n, live, probe); err != nil || ev.Live {
			return false
		}
		sh.DeadTests++
		full := dead
		full.Pool = pool
		ev, err := critical.Recovers(w, n, live, full)
		return err == nil && !ev.Live
	}
	kept := make([]int, cx.Step-1)
	for i := range kept {
		kept[i] = i
	}
	type verdict struct {
		good      bool
		undecided *sim.State
	}
	verdicts := make([]verdict, len(worlds))
	h, _ := guarded(w, timeout, func() hang { return hang{} }, func() error {
		for chunk := max(1, len(kept)/2); ; chunk /= 2 {
			for at := 0; at < len(kept) && sh.Tries < ShortenBudget; {
				// The removals one world would try next if each failed,
				// within the budget, one a world.
				var tries [][]int
				for a := at; a < len(kept) && len(tries) < len(worlds) && sh.Tries+len(tries) < ShortenBudget; a += chunk {
					tries = append(tries, append(append([]int(nil), kept[:a]...), kept[min(a+chunk, len(kept)):]...))
				}
				var wg sync.WaitGroup
				for i := 1; i < len(tries); i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						verdicts[i].good, verdicts[i].undecided = judge(worlds[i], tries[i])
					}()
				}
				verdicts[0].good, verdicts[0].undecided = judge(w, tries[0])
				wg.Wait()
				for i, try := range tries {
					sh.Tries++
					v := verdicts[i]
					if v.good || v.undecided != nil && confirm(v.undecided) {
						kept = try
						break
					}
					at += chunk
				}
			}
			if chunk == 1 || sh.Tries >= ShortenBudget {
				return nil
			}
		}
	}, worlds[1:]...)
	if h != nil || len(kept) == cx.Step-1 || stop() {
		return nil
	}
	sh.Kept = kept
	for _, k := range kept {
		sh.Path = append(sh.Path, res.Path[k])
	}
	sh.Path = append(sh.Path, crit)
	// The shortened path must replay, as a trace file would, and break
	// no safety property on the way.
	rep, err := ReplayStopping(sys, cfg, res.Init, sh.Path, timeout, stop)
	if err != nil || rep.Verdict != OK || rep.Live {
		return nil
	}
	sh.Steps = rep.Steps
	for i := range sh.Steps {
		if i < len(kept) {
			sh.Steps[i].Step = kept[i] + 1
		} else {
			sh.Steps[i].Step = cx.Step + i - len(kept)
		}
	}
	return sh
}

// errUnsafe ends a replay of a shortened prefix that breaks a safety
// property: it shows another bug, not this one.
var errUnsafe = errors.New("a safety property fails")

// stateAt runs p from s, every state checked by safe.
func stateAt(w *sim.World, s *sim.State, p sim.Path, safe func(*sim.State) bool) (*sim.State, error) {
	for _, st := range p {
		n, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			return nil, err
		}
		if !safe(n) {
			return nil, errUnsafe
		}
		s = n
	}
	return s, nil
}
