// Package walk runs biased random walks through a simulated world: from a
// state, take one enabled event after another, drawn with probability
// proportional to its kind's weight, with every Choose answered by the same
// seeded generator. A walk records its path, so it replays exactly.
//
// Long walks tell states that merely have not recovered yet from dead ones:
// over many steps every enabled event gets its turn, so a walk that never
// reaches a live state is a suspect for the critical-transition search.
//
// # Usage
//
//	wk := walk.New(world, live, walk.DefaultWeights, seed)
//	res, err := wk.Walk(state, 10000, true)
//	if res.LiveAt < 0 { ... suspect: res.Path never became live }
package walk

import (
	"math/rand/v2"

	"github.com/livecheck/livecheck/internal/lines"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// Weights gives each event kind its weight (sim.Weights: a system
// declares its own in its Model, which the node's side of a real run
// links without the walks).
type Weights = sim.Weights

// DefaultWeights favour application calls over deliveries over timers,
// and failures least (sim.DefaultWeights).
var DefaultWeights = sim.DefaultWeights

// ParseWeights reads "app=8,deliver=4,timer=1,reset=0" on top of base
// (sim.ParseWeights).
func ParseWeights(s string, base Weights) (Weights, error) { return sim.ParseWeights(s, base) }

// A Chooser picks the next event among the enabled ones. Weights by event
// kind are one chooser; others can favour particular nodes or messages.
type Chooser interface {
	Choose(enabled []sim.Event, r *rand.Rand) int
}

// A Walker runs walks in one world. It is used by one goroutine at a time.
type Walker struct {
	w       *sim.World
	live    func(*sim.State) bool
	chooser Chooser
	rng     *rand.Rand // over pcg, made once: Reseed seeds pcg again
	pcg     rand.PCG
	choose  func(n int) int // the world's Chooser: rng's IntN
	seed    uint64
	fresh   bool // no walk since the last Reseed
	buf     []sim.Event
	// Steps counts the simulator steps of every walk so far.
	Steps int64
	// Safety, when set, is checked on every state a walk reaches; it
	// returns the violated property's name and what it said, or "".
	Safety func(*sim.State) (property, message string)
	// Visit, when set, is called after each step a walk takes, with the
	// state it reached and what the step did: for coverage counts and
	// reachability properties. The state is the walk's own, changed by
	// the next step: Visit reads it and keeps nothing of it.
	Visit func(s *sim.State, info *sim.StepInfo)
	// Settle is how many steps in a row the state must stay live before a
	// walk told to stop at a live state stops (default 0: at the first).
	Settle int
	// AfterLive, when set, bounds a walk that does not stop at a live
	// state: once it is first live, after liveAt steps, it takes at most
	// AfterLive(liveAt) more (and never more than dmax in all), checking
	// safety on each. Unset, it goes on to dmax.
	AfterLive func(liveAt int) int
	// Trail, when set, always holds the walk's path so far (when it
	// records) and the event it is applying, so that a watchdog can say
	// where a handler that never returns was called.
	Trail *Trail
	// Reuse makes each walk record into the memory of the one before: a
	// result's Path is then valid until the next walk. Many long walks
	// that are mostly thrown away (the dead test's) are cheaper so.
	Reuse bool
	path  sim.Path
}

// A Trail says where a walk is: Base is the path to the walk's start (set
// by the caller), Path the walk's steps so far, Event the one under way.
// A walk that does not record leaves Path empty; Start, Seed and Steps
// then say how to walk the same way again, when Seeded says the walk
// began right after a Reseed.
type Trail struct {
	// Init names the initial state Base starts from (the choices of the
	// first Init calls; the walker does not read it).
	Init  []int
	Base  sim.Path
	Path  sim.Path
	Event sim.Event

	Start   *sim.State
	Seed    uint64
	Seeded  bool
	Chooser Chooser // the walker's: the same seed walks the same way with it
	Steps   int     // steps done before Event
}

// New returns a walker. live says whether a state is live; chooser picks
// events (a *Weights, typically); seed seeds the walker's generator.
//
// The walker is written at every step, its generator too: it has cache
// lines of its own (lines.New), so that walkers made one after the other
// and walking on two cores do not slow each other.
func New(w *sim.World, live func(*sim.State) bool, chooser Chooser, seed uint64) *Walker {
	wk := lines.New[Walker]()
	wk.w, wk.live, wk.chooser = w, live, chooser
	wk.rng = rand.New(&wk.pcg)
	rng := wk.rng
	wk.choose = func(n int) int { return rng.IntN(n) }
	wk.Reseed(seed)
	return wk
}

// Reseed restarts the walker's generator from seed.
func (wk *Walker) Reseed(seed uint64) {
	wk.pcg.Seed(seed, 0x9e3779b97f4a7c15)
	wk.seed, wk.fresh = seed, true
	wk.w.Chooser = wk.choose
}

// Result is what one walk did.
type Result struct {
	// Path holds the steps taken, when the walk was asked to record them.
	Path sim.Path
	// Steps is how many steps were taken.
	Steps int
	// LiveAt is the number of steps after which the state was first live
	// (0: the start state was live), or -1 if it never was.
	LiveAt int
	// End is the last state reached.
	End *sim.State
	// Stuck says the walk ended early because no event was enabled.
	Stuck bool
	// Violated is the safety property that failed at the walk's last step,
	// and Message what it said (Safety set only).
	Violated, Message string
}

// Walk walks from s for up to dmax steps. With stopAtLive it stops at the
// first live state (once it has stayed live Settle steps); otherwise it
// goes on to dmax, or as far as AfterLive allows, checking safety only
// (LiveAt is the first live step).
// With record it keeps the path. s is not changed.
//
// The error is a handler that panicked (*sim.HandlerPanic, with the path
// so far in the result), a property that panicked (*properties.Error, the
// same), or a state that cannot be hashed.
func (wk *Walker) Walk(s *sim.State, dmax int, stopAtLive, record bool) (out *Result, err error) {
	res := &Result{LiveAt: -1, End: s}
	if record && wk.Reuse {
		res.Path = wk.path[:0]
		defer func() { wk.path = res.Path }()
	}
	if t := wk.Trail; t != nil {
		t.Start, t.Seed, t.Seeded, t.Chooser, t.Steps, t.Path = s, wk.seed, wk.fresh, wk.chooser, 0, nil
	}
	wk.fresh = false
	// A property that panics ends the walk: the error, with the path so
	// far (the state it was evaluated on is its end).
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*properties.Error)
			if !ok {
				panic(r)
			}
			res.End = nil
			out, err = res, pe
		}
	}()
	held := -1 // steps the state has been live in a row
	limit := dmax
	if wk.live(s) {
		res.LiveAt, held = 0, 0
		if stopAtLive && held >= wk.Settle {
			return res, nil
		}
		if !stopAtLive {
			limit = wk.after(0, dmax)
		}
	}
	w := wk.w
	// The walk changes its own copy of the state in place: it never goes
	// back, so a copy per step would be wasted.
	cur := w.Own(s)
	defer func() {
		if res.End == cur {
			w.Seal(cur)
		}
	}()
	for res.Steps < limit {
		wk.buf = w.Enabled(cur, wk.buf[:0])
		if len(wk.buf) == 0 {
			res.Stuck = true
			break
		}
		ev := wk.buf[wk.chooser.Choose(wk.buf, wk.rng)]
		if t := wk.Trail; t != nil {
			t.Path, t.Event, t.Steps = res.Path, ev, res.Steps
		}
		err := w.Step(cur, ev, nil)
		wk.Steps++
		if record {
			if wk.Reuse && len(res.Path) < cap(res.Path) {
				// The step's slot keeps its choices' memory for reuse.
				res.Path = res.Path[:len(res.Path)+1]
				st := &res.Path[len(res.Path)-1]
				st.Event, st.Choices = ev, append(st.Choices[:0], w.Last().Choices...)
			} else {
				res.Path = append(res.Path, sim.Step{Event: ev, Choices: cloneInts(w.Last().Choices)})
			}
		}
		if err != nil {
			res.End = nil // cur is half changed
			return res, err
		}
		res.Steps++
		res.End = cur
		if wk.Visit != nil {
			wk.Visit(cur, w.Last())
		}
		if wk.Safety != nil {
			if prop, msg := wk.Safety(cur); prop != "" {
				res.Violated, res.Message = prop, msg
				break
			}
		}
		if !stopAtLive && res.LiveAt >= 0 {
			continue // recovered: only safety is left to check
		}
		if !wk.live(cur) {
			held = -1
			continue
		}
		held++
		if res.LiveAt < 0 {
			res.LiveAt = res.Steps
			if !stopAtLive {
				limit = wk.after(res.Steps, dmax)
			}
		}
		if stopAtLive && held >= wk.Settle {
			break
		}
	}
	return res, nil
}

// after is how far a walk that does not stop at a live state goes, in
// all, when it was first live after liveAt steps.
func (wk *Walker) after(liveAt, dmax int) int {
	if wk.AfterLive == nil {
		return dmax
	}
	return liveAt + min(dmax-liveAt, max(0, wk.AfterLive(liveAt)))
}

func cloneInts(v []int) []int {
	if len(v) == 0 {
		return nil
	}
	return append([]int(nil), v...)
}

// Seed derives a seed from a seed and some numbers (a walk's index, a
// step), so that each walk of a run has its own stable seed, whatever
// order the walks run in.
func Seed(seed uint64, parts ...uint64) uint64 {
	z := seed
	for _, p := range parts {
		z = z*0x9e3779b97f4a7c15 ^ (p+1)*0xbf58476d1ce4e5b9
		z ^= z >> 30
		z *= 0xbf58476d1ce4e5b9
		z ^= z >> 27
		z *= 0x94d049bb133111eb
		z ^= z >> 31
	}
	return z
}
