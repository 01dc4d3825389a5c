package check

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// A Slip is the step of a dead path that took away what would have let
// the path recover: the critical step is the point of no return, but the
// code often went wrong earlier (a timer that fired and was not set
// again, an ack that cancelled the retry before a drop). The search puts
// back, in the state after the critical step, each timer that an earlier
// step took away and each message that one lost (dropped, lost to a
// failure, or delivered to a node that did nothing with it), the last
// taken first; the first whose return makes that state recover (a search,
// then walks, find a live state from it, or it is a state of the path
// that the critical search saw recover) names the slip.
//
// The state with the timer or message put back need not be reachable:
// the claim is only that the dead state lacks it, that the slip is the
// step that took it away (nothing set it again up to the critical step),
// and that with it the system would still recover.
type Slip struct {
	// Found says a slip was found. Otherwise none of the Tried timers and
	// messages made the state after the critical step recover when put
	// back (Tried 0: the path lost none).
	Found bool
	Tried int
	// Step is the slip's step (1-based, from the initial state, as the
	// trace counts), Event it, EventText it in words. Critical says it is
	// the critical step itself.
	Step      int
	Event     sim.Event
	EventText string
	Critical  bool
	// What the step took away: a timer (Timer, at Node) or a message in
	// flight (Message, "Msg from->to"; Node is its receiver), and How:
	// "fired" (and the handler did not set it again), "cancelled",
	// "reset" (the node's reset lost it); "ignored" (delivered, and the
	// receiver changed nothing and sent nothing), "dropped", "lost" (to a
	// partition, a socket error or a reset).
	Timer   string
	Message string
	Node    sim.NodeID
	How     string
	// State is the node's state before the step (sim.DumpNode), Changes
	// what the step changed in it.
	State   string
	Changes []reports.Change
	// Failure says the critical step is a failure (a drop, a reset, a
	// socket error, a partition, a duplicate) that the protocol did not
	// tolerate: what the slip took away would have tolerated it.
	Failure bool
	// Recovery is how the state after the critical step, with what the
	// slip took away put back, recovers.
	Recovery *critical.Evidence
	// Steps counts the simulator steps the search took.
	Steps int64
}

// Bounds of the slip search: how many timers and messages it puts back,
// and the test each gets (a search of critical.ProbeStates states, then
// SlipWalks walks as long as the dead test's, but no longer than
// SlipWalkDepth, whatever --walk-depth the check had).
const (
	SlipCandidates = 32
	SlipWalks      = 8
	SlipWalkDepth  = DeadWalkDepth
)

// A loss is a timer or a message a step took away.
type loss struct {
	step  int // 1-based
	timer string
	env   sim.Envelope
	node  sim.NodeID
	how   string
}

// Odds are the recovery odds along a dead path: from the state after
// each of the steps before its critical step (the last OddsSteps, and the
// critical step itself), Walks walks of WalkDepth steps, seeded; the
// share that reaches a live state is what a few random continuations
// think of the state. A sharp fall (Suspect) is where the path became
// fragile, which may point at the slip where the slip search found none.
type Odds struct {
	Walks, WalkDepth int
	// From is the first step tested; Recovered[i] counts the walks from
	// the state after step From+i that reached a live state.
	From      int
	Recovered []int
	// Suspect is the step before the critical one after which the share
	// fell most, by at least half the walks (0: none did).
	Suspect int
	// Steps counts the simulator steps the walks took.
	Steps int64
}

// Bounds of the recovery odds: the steps before the critical one tested,
// the walks from each, and the most steps of each walk (the dead test's
// walk depth, if shorter).
const (
	OddsSteps     = 30
	OddsWalks     = 20
	OddsWalkDepth = DeadWalkDepth
)

// findSlip looks for the slip of res, a liveness violation with a
// critical step, and works out the recovery odds along its path. Each
// is nil where it could not be finished, and noSlip or noOdds then says
// why (stopped: why()). Both are bounded in steps (SlipCandidates
// tests, OddsSteps x OddsWalks walks), so the check runs them to the end
// whatever its time budget: stop is the user's or the memory budget's.
//
// Both run on workers worlds: the slip's candidates one after another,
// each one's walks at once (critical.Pool), and the odds' states at once;
// the result is that of one.
func findSlip(sys *protocol.System, cfg protocol.Config, res *Result, timeout time.Duration, workers int, stop func() bool, why func() string) (sl *Slip, od *Odds, noSlip, noOdds string) {
	cx := res.Critical
	if cx == nil || cx.Step < 1 || cx.Step > len(res.Path) {
		return nil, nil, "", ""
	}
	both := func(reason string) (*Slip, *Odds, string, string) { return nil, nil, reason, reason }
	_, m, err := sys.Model(cfg)
	if err != nil {
		return both(err.Error())
	}
	m.Spec.HandlerTimeout = timeout
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return both(err.Error())
	}
	w.Stop = stop
	var pool *critical.Pool
	for range workers - 1 {
		if pool == nil {
			pool = &critical.Pool{}
		}
		pw, err := sim.NewWorld(m.Spec)
		if err != nil {
			return both(err.Error())
		}
		pw.Stop = stop
		pool.Worlds = append(pool.Worlds, pw)
	}
	live := func(s *sim.State) bool {
		for i := range m.Properties {
			if p := &m.Properties[i]; p.Kind == properties.Liveness && !p.IsLive(s) {
				return false
			}
		}
		return true
	}
	var replayed bool
	h, _ := guarded(w, timeout, func() hang { return hang{} }, func() error {
		states, changed := pathStates(w, res)
		if replayed = states != nil; !replayed {
			return nil
		}
		if sl = slipOf(w, pool, m, res, live, states, changed); stop() {
			return nil // stopped: what it found is not the slip
		}
		od = oddsOf(w, pool, m, res, live, states)
		return nil
	}, poolWorlds(pool)...)
	switch {
	case h != nil:
		// The goroutine left in the handler may still write sl and od.
		return both(fmt.Sprintf("a handler ran past the time limit (--handler-timeout %s) in it", timeout))
	case !replayed:
		return both("the path did not replay to its critical step")
	case stop() && sl == nil:
		return both(why()) // stopped in the slip search: the odds never ran
	case stop() && od == nil:
		return sl, nil, "", why() // stopped in the odds
	}
	if sl == nil {
		noSlip = "a property panicked on a state the search for it put together"
	}
	if od == nil {
		noOdds = "a walk from the path's states ran into a handler's panic or a property's"
	}
	return sl, od, noSlip, noOdds
}

// pathStates replays res's path to its critical step: the states, from
// the initial one, and whether each step changed the node it ran at or
// sent (nil: it does not replay).
func pathStates(w *sim.World, res *Result) (states []*sim.State, changed []bool) {
	cx := res.Critical
	s, err := w.InitialFrom(res.Init)
	if err != nil {
		return nil, nil
	}
	states = []*sim.State{s}
	changed = []bool{false}
	for _, st := range res.Path[:cx.Step] {
		n, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			return nil, nil
		}
		info := w.Last()
		ev := st.Event
		changed = append(changed, len(info.Sent) > 0 || ev.Node >= 0 && int(ev.Node) < n.N() && n.NodeFingerprint(ev.Node) != s.NodeFingerprint(ev.Node))
		states = append(states, n)
		s = n
	}
	return states, changed
}

func slipOf(w *sim.World, pool *critical.Pool, m *protocol.Model, res *Result, live func(*sim.State) bool, states []*sim.State, changed []bool) (sl *Slip) {
	defer func() {
		if r := recover(); r != nil { // a property that panics on a state put together
			sl = nil
		}
	}()
	cx := res.Critical
	dead := states[cx.Step]
	failure := isFailure(cx.Event.Kind)
	var losses []loss
	timerSeen := map[[2]string]bool{}
	msgSeen := map[[3]uint64]bool{}
	for j := cx.Step; j >= 1 && len(losses) < SlipCandidates; j-- {
		if failure && j == cx.Step {
			continue // what the failure itself took is the failure
		}
		before, after, ev := states[j-1], states[j], res.Path[j-1].Event
		for i := range before.N() {
			id := sim.NodeID(i)
			for _, t := range before.Timers(id) {
				key := [2]string{fmt.Sprint(i), t}
				if after.HasTimer(id, t) || dead.HasTimer(id, t) || timerSeen[key] {
					continue
				}
				timerSeen[key] = true
				how := "cancelled"
				switch {
				case ev.Kind == sim.Timer && ev.Node == id && ev.Timer == t:
					how = "fired"
				case ev.Kind == sim.Reset && ev.Node == id:
					how = "reset"
				case ev.Kind == sim.Crash && ev.Node == id:
					how = "crash"
				}
				losses = append(losses, loss{step: j, timer: t, node: id, how: how})
			}
		}
		for _, e := range lost(before, after) {
			key := [3]uint64{uint64(e.From), uint64(e.To), e.FP}
			if msgSeen[key] || inFlight(dead, e) {
				continue
			}
			msgSeen[key] = true
			how := "lost"
			switch {
			case ev.Kind == sim.Deliver && ev.Peer == e.From && ev.Node == e.To && ev.Msg == e.FP:
				if changed[j] {
					continue // consumed, as messages are
				}
				how = "ignored"
			case ev.Kind == sim.Drop && ev.Peer == e.From && ev.Node == e.To && ev.Msg == e.FP:
				how = "dropped"
			}
			losses = append(losses, loss{step: j, env: e, node: e.To, how: how})
		}
	}
	sl = &Slip{Failure: failure}
	// States of the path the critical search saw recover: a state put
	// together that is one of them (the state before an ignored message
	// or a timer that did nothing but go) recovers as it did, however
	// rarely, which the cheap test below might miss.
	known := map[uint64]*critical.Evidence{}
	for _, ts := range cx.Tested {
		if ts.Ev != nil && ts.Ev.Live && ts.Step >= 0 && ts.Step < len(states) {
			known[states[ts.Step].Fingerprint()] = ts.Ev
		}
	}
	if cx.Alive != nil && cx.Alive.Live && cx.LiveStep >= 0 && cx.LiveStep < len(states) {
		known[states[cx.LiveStep].Fingerprint()] = cx.Alive
	}
	t := cx.EndTest.test(m.Weights)
	t.States, t.Walks, t.WalkDepth = critical.ProbeStates, SlipWalks, min(t.WalkDepth, SlipWalkDepth)
	t.Pool = pool
	for _, l := range losses[:min(len(losses), SlipCandidates)] {
		var back *sim.State
		var err error
		if l.timer != "" {
			back, err = w.WithTimer(dead, l.node, l.timer)
		} else {
			back, err = w.WithMessage(dead, l.env)
		}
		if err != nil {
			continue
		}
		sl.Tried++
		ev, ok := known[back.Fingerprint()]
		if !ok {
			t.Seed = walk.Seed(cx.EndTest.Seed, 0x5119, uint64(l.step))
			ev, err = critical.Recovers(w, back, live, t)
			if ev != nil {
				sl.Steps += ev.Steps
			}
			if errors.Is(err, sim.ErrStopped) {
				return nil // stopped: the candidates left are untried
			}
			if err != nil || !ev.Live {
				continue
			}
		}
		before := states[l.step-1]
		sl.Found, sl.Step, sl.Event, sl.Critical = true, l.step, res.Path[l.step-1].Event, l.step == cx.Step
		sl.EventText = w.Describe(before, sl.Event)
		sl.Node, sl.How, sl.Timer, sl.Recovery = l.node, l.how, l.timer, ev
		if l.timer == "" {
			sl.Message = fmt.Sprintf("%s %d->%d", sim.Dump(l.env.Msg), l.env.From, l.env.To)
		}
		sl.State = sim.DumpNode(before, l.node)
		sl.Changes = reports.DiffFields(sl.State, sim.DumpNode(states[l.step], l.node))
		if sl.State == sim.DumpNode(states[l.step], l.node) {
			sl.Changes = nil
		}
		return sl
	}
	return sl
}

// oddsOf works out the recovery odds along res's path, from its states
// up to the critical step (nil: a walk ran into a handler's panic or
// was stopped), on w and pool's worlds at once: each state's walks, on
// one world, with seeds of their own, so the result is that of one.
func oddsOf(w *sim.World, pool *critical.Pool, m *protocol.Model, res *Result, live func(*sim.State) bool, states []*sim.State) *Odds {
	cx := res.Critical
	wt := DeadWeights(m.Weights)
	if cx.EndTest.Weights != nil {
		wt = *cx.EndTest.Weights
	}
	od := &Odds{Walks: OddsWalks, WalkDepth: min(OddsWalkDepth, max(1, cx.EndTest.WalkDepth)), From: max(0, cx.Step-OddsSteps)}
	od.Recovered = make([]int, cx.Step-od.From+1)
	var next, steps atomic.Int64
	var failed atomic.Bool
	run := func(w *sim.World) {
		defer func() {
			if r := recover(); r != nil { // a property that panics
				failed.Store(true)
			}
		}()
		wk := walk.New(w, live, &wt, 0)
		defer func() { steps.Add(wk.Steps) }()
		for k := int(next.Add(1) - 1); k < len(od.Recovered) && !failed.Load(); k = int(next.Add(1) - 1) {
			i := od.From + k
			for j := range od.Walks {
				wk.Reseed(walk.Seed(cx.EndTest.Seed, 0x0dd5, uint64(i), uint64(j)))
				r, err := wk.Walk(states[i], od.WalkDepth, true, false)
				if err != nil {
					failed.Store(true)
					return
				}
				if r.LiveAt >= 0 {
					od.Recovered[k]++
				}
			}
		}
	}
	var wg sync.WaitGroup
	for _, pw := range poolWorlds(pool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(pw)
		}()
	}
	run(w)
	wg.Wait()
	if failed.Load() {
		return nil
	}
	od.Steps = steps.Load()
	od.Suspect = suspect(od.From, od.Recovered, od.Walks)
	return od
}

// poolWorlds returns p's worlds (none for a nil Pool).
func poolWorlds(p *critical.Pool) []*sim.World {
	if p == nil {
		return nil
	}
	return p.Worlds
}

// suspect is the step (from on, the last one the critical step's) after
// which the walks that recover, of walks, fall most before the critical
// step, by at least half of them; 0 if none falls so far.
func suspect(from int, recovered []int, walks int) int {
	at, fall := 0, (walks+1)/2
	for k := 1; k < len(recovered)-1; k++ { // not the critical step's own fall
		if d := recovered[k-1] - recovered[k]; d >= fall {
			at, fall = from+k, d+1
		}
	}
	return at
}

// isFailure says whether an event of kind k is a failure the system
// suffers rather than a step it takes.
func isFailure(k sim.Kind) bool {
	switch k {
	case sim.Drop, sim.Reset, sim.SocketError, sim.Partition, sim.Duplicate, sim.Crash:
		return true
	}
	return false
}

// lost lists the messages in flight before a step and not after it, as
// a multiset (a message sent again by the step is not lost).
func lost(before, after *sim.State) []sim.Envelope {
	count := map[[3]uint64]int{}
	for _, e := range after.InFlight() {
		count[[3]uint64{uint64(e.From), uint64(e.To), e.FP}]++
	}
	var out []sim.Envelope
	for _, e := range before.InFlight() {
		k := [3]uint64{uint64(e.From), uint64(e.To), e.FP}
		if count[k] > 0 {
			count[k]--
			continue
		}
		out = append(out, e)
	}
	return out
}

// inFlight says whether a message like e (same ends, same content) is in
// flight in s.
func inFlight(s *sim.State, e sim.Envelope) bool {
	for _, f := range s.InFlight() {
		if f.From == e.From && f.To == e.To && f.FP == e.FP {
			return true
		}
	}
	return false
}
