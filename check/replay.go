package check

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/livecheck/livecheck/critical"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// ConfigOf returns the configuration a trace was made with. A trace
// counts failures; a failure it allows none of is None in the Config, so
// that no default replaces it.
func ConfigOf(t *reports.Trace) protocol.Config {
	return protocol.Config{
		Nodes:  t.Nodes,
		Bugs:   t.Bugs,
		Params: t.Params,
		Budget: protocol.Explicit(sim.Budget(t.Budget)),
	}
}

// A ReplayStep is one step of a replayed path, in words.
type ReplayStep struct {
	// Step numbers the step from 1: step i applies the i-th event of the
	// path, and the state after step 0 is the initial state (as
	// Critical.Step and every report count).
	Step  int
	Event sim.Event
	Text  string   // the event, with the message it carries
	Sent  []string // messages sent, "msg from->to"
	Logs  []string
	// Violation is set on the step where a safety property first fails.
	Violation string
	// State is the fingerprint of the state after the step.
	State uint64
}

// Replayed is the outcome of replaying a path.
type Replayed struct {
	Steps []ReplayStep
	// Verdict, Property and Message describe the violation the replay
	// Reached (Verdict OK if none).
	Verdict  Verdict
	Property string
	Message  string
	Final    *sim.State
	// Live says every liveness property holds in the final state, and
	// Stuck that no event can happen there while they do not: a liveness
	// violation of them, for certain.
	Live, Stuck bool
	// End is what the dead test saw from the final state (TestEnd).
	End *critical.Evidence
	// Waiting lists the leads-to properties (properties.LeadsTo) that
	// wait in the final state, in the system's order.
	Waiting []Waiting
	// History, for a violation of Linearizable, is the client history
	// that shows it, on the steps of the path.
	History *reports.History

	w       *sim.World
	m       *protocol.Model
	timeout time.Duration
	each    func(step int, s *sim.State, info *sim.StepInfo)
	// cutShort says the path's last step (with no steps, the initial
	// state's Init calls) is one the check's run was held in: its choices
	// are those it had made, and run again it may go on to make more.
	cutShort bool
}

// Reproduces says whether the replay shows what a trace records: the same
// safety violation; for a liveness violation, a path that replays exactly,
// breaks no safety property and ends where nothing can happen, or in a
// state that is not live and that the dead test found no way back from,
// a test at least as strong as the floor of every dead test
// (DeadWalkDepth); for a live trace, a path that ends in a live state.
// The dead test is the one TestEnd ran (Confirm runs the trace's own);
// where none ran, Reproduces runs the default one (DeadTestOf a trace
// that records none, of seed 1), and a violation it meets on the way
// counts as not reproduced.
func (rep *Replayed) Reproduces(verdict Verdict, property string) bool {
	switch verdict {
	case SafetyViolation, PropertyError:
		return rep.Verdict == verdict && rep.Property == property
	case LivenessViolation:
		if property == DivergenceProperty {
			return rep.Verdict == LivenessViolation && rep.Property == property
		}
		if rep.Stuck {
			// Whatever liveness property the trace names: none of them
			// can ever hold (quiescent, in traces the check once wrote).
			return true
		}
		if property == search.QuiescentProperty {
			return false
		}
		if rep.Verdict == OK && !rep.Live && rep.End == nil {
			d, _ := DeadTestOf(&reports.Trace{Seed: 1}, rep.m.Weights)
			if rep.TestEnd(d) != nil {
				return false
			}
		}
		return rep.Verdict == OK && !rep.Live && atFloor(rep.End)
	case Live, PrefixResult:
		return rep.Verdict == OK && rep.Live
	case RunResult:
		// Its end is not live; the replay may show more (nothing can
		// happen there: a liveness violation), never less.
		return (rep.Verdict == OK || rep.Verdict == LivenessViolation) && !rep.Live
	}
	return false
}

// ErrNoReplay says a trace does not replay: a step is not enabled where the
// trace puts it, or its choices do not fit.
var ErrNoReplay = errors.New("the trace does not replay")

// Replay re-executes a path from the initial state on a system's
// configuration, checking every property on the way, and says what
// violation it reaches. It stops at the first safety violation or handler
// panic. A path whose steps cannot be applied exactly is an error wrapping
// ErrNoReplay. For a system whose nodes choose in their first Init, use
// ReplayFrom.
func Replay(sys *protocol.System, cfg protocol.Config, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return ReplayFrom(sys, cfg, nil, p, timeout)
}

// ReplayFrom is Replay from the initial state that init names: the values
// the nodes' first Init calls' Choose calls return, node 0's first
// (Result.Init, a trace's init). Choices that do not fit those calls
// exactly (out of range, too few, too many) are an error wrapping
// ErrNoReplay, at step 0.
func ReplayFrom(sys *protocol.System, cfg protocol.Config, init []int, p sim.Path, timeout time.Duration) (*Replayed, error) {
	return ReplayEach(sys, cfg, init, p, timeout, nil)
}

// ReplayEach is ReplayFrom that shows each state of the path to each, if
// not nil, as it is reached: the initial state as step 0 (info nil), then
// the state after each step with what the step did.
func ReplayEach(sys *protocol.System, cfg protocol.Config, init []int, p sim.Path, timeout time.Duration, each func(step int, s *sim.State, info *sim.StepInfo)) (*Replayed, error) {
	return replayEach(sys, cfg, init, p, timeout, each, nil, false)
}

// ReplayStopping is ReplayFrom that asks stop, every few milliseconds of
// the replay and of its dead test (TestEnd, Confirm), whether to end: a
// replay it ends is an error wrapping sim.ErrStopped.
func ReplayStopping(sys *protocol.System, cfg protocol.Config, init []int, p sim.Path, timeout time.Duration, stop func() bool) (*Replayed, error) {
	return replayEach(sys, cfg, init, p, timeout, nil, stop, false)
}

// replayEach is ReplayEach that asks stop whether to end; with cutShort,
// p's last step is one a run was held in (Replayed.cutShort).
func replayEach(sys *protocol.System, cfg protocol.Config, init []int, p sim.Path, timeout time.Duration, each func(step int, s *sim.State, info *sim.StepInfo), stop func() bool, cutShort bool) (*Replayed, error) {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	_, m, err := sys.Model(cfg)
	if err != nil {
		return nil, err
	}
	m.Spec.HandlerTimeout = timeout
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return nil, err
	}
	w.Record = true
	// Every step runs twice: a handler that is not deterministic is named
	// where it first does something else, not steps later where the path
	// stops replaying.
	w.Recheck = 1
	w.Stop = stop
	rep := &Replayed{Verdict: OK, w: w, m: m, timeout: timeout, each: each, cutShort: cutShort}
	cur := ReplayStep{} // the step under way (0: Init)
	where := func() hang {
		// The replay is held in a handler: what it wrote is stable.
		h := hang{steps: slices.Clone(rep.Steps)}
		if cur.Step > 0 {
			h.steps = append(h.steps, cur)
		}
		return h
	}
	h, err := guarded(w, timeout, where, func() error { return replay(w, m, init, p, rep, &cur) })
	if h != nil {
		// rep belongs to the goroutine left in the handler.
		rep = &Replayed{Verdict: LivenessViolation, Property: DivergenceProperty, Steps: h.steps}
		on := "in Init"
		if n := len(h.steps); n > 0 {
			on = "on " + h.steps[n-1].Text
		}
		rep.Message = fmt.Sprintf("a handler did not return within %v %s", timeout, on)
		return rep, nil
	}
	return rep, err
}

// A NoReplayError is a path that does not replay: its step Step (1-based)
// is not enabled, or does not fit its recorded choices.
type NoReplayError struct {
	Step  int
	Event sim.Event
	Err   error
}

func (e *NoReplayError) Error() string {
	if e.Step == 0 {
		return fmt.Sprintf("%v: the initial state: %v", ErrNoReplay, e.Err)
	}
	return fmt.Sprintf("%v: step %d (%s): %v", ErrNoReplay, e.Step, e.Event, e.Err)
}

func (e *NoReplayError) Unwrap() error { return ErrNoReplay }

func replay(w *sim.World, m *protocol.Model, init []int, p sim.Path, rep *Replayed, cur *ReplayStep) (err error) {
	// A property that panics is a property error where it happens.
	propErr := func(pe *properties.Error) {
		rep.Verdict, rep.Property, rep.Message = PropertyError, pe.Property, pe.Error()
	}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*properties.Error)
			if !ok {
				panic(r)
			}
			propErr(pe)
			err = nil
		}
	}()
	check := func(s *sim.State) (string, string) {
		for i := range m.Properties {
			pr := &m.Properties[i]
			if pr.Kind != properties.Safety {
				continue
			}
			if err := pr.CheckSafety(s); err != nil {
				var pe *properties.Error
				if errors.As(err, &pe) {
					panic(pe)
				}
				return pr.Name, err.Error()
			}
		}
		return "", ""
	}
	// A handler that panics is a finding; so is a leads-to property's P
	// or Q that panics in a step.
	panicked := func(err error) bool {
		var hp *sim.HandlerPanic
		var pe *properties.Error
		var nd *sim.NondeterminismError
		switch {
		case errors.As(err, &hp):
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, search.PanicProperty, hp.Error()
		case errors.As(err, &nd) && nd.Step == 0:
			// The step did something else when run again: the
			// finding the check reports as such (search's
			// DeterministicProperty), here at the same step.
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, search.DeterministicProperty, nd.Error()
		case errors.As(err, &pe):
			propErr(pe)
		default:
			return false
		}
		return true
	}
	// since[j] is the step from which leads-to property leads[j] waits
	// (-1: it does not).
	var leads []*properties.Property
	for i := range m.Properties {
		if pr := &m.Properties[i]; pr.IsLeadsTo() {
			leads = append(leads, pr)
		}
	}
	since := make([]int, len(leads))
	waits := func(step int, s *sim.State) {
		for j, pr := range leads {
			switch {
			case pr.IsLive(s):
				since[j] = -1
			case step == 0 || since[j] < 0:
				since[j] = step
			}
		}
	}
	// An initial state a run was held in the making of names it by the
	// choices made so far: its Init calls may go on to make more.
	partInit := rep.cutShort && len(p) == 0
	w.Strict = !partInit
	s, err := w.InitialFrom(init)
	if err == nil && partInit && len(w.Last().Choices) < len(init) {
		err = fmt.Errorf("%w: the first Init calls made %d choices but the trace records %d", sim.ErrNotEnabled, len(w.Last().Choices), len(init))
	}
	if err != nil {
		if panicked(err) {
			return nil
		}
		if errors.Is(err, sim.ErrNotEnabled) {
			return &NoReplayError{Err: err}
		}
		return err
	}
	rep.Final = s
	if rep.each != nil {
		rep.each(0, s, nil)
	}
	var hist historySteps
	hist.observe(0, s)
	if name, msg := check(s); name != "" {
		rep.Verdict, rep.Property, rep.Message = SafetyViolation, name, msg
		rep.History = hist.report(s, msg)
		return nil
	}
	waits(0, s)
	for i, st := range p {
		text := w.Describe(s, st.Event)
		*cur = ReplayStep{Step: i + 1, Event: st.Event, Text: text}
		// The last step of a diverged trace may be cut short: its choices
		// are what the search had handed out, so it runs without Strict.
		w.Strict = i < len(p)-1
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			if panicked(err) {
				rep.Steps = append(rep.Steps, ReplayStep{Step: i + 1, Event: st.Event, Text: text, Violation: rep.Message})
				return nil
			}
			var nd *sim.NondeterminismError
			if errors.As(err, &nd) {
				nd.Step = i + 1
				return nd
			}
			if errors.Is(err, sim.ErrNotEnabled) {
				return &NoReplayError{Step: i + 1, Event: st.Event, Err: err}
			}
			return err
		}
		if n := len(w.Last().Choices); !w.Strict && (n < len(st.Choices) || n > len(st.Choices) && !rep.cutShort) {
			return &NoReplayError{Step: i + 1, Event: st.Event,
				Err: fmt.Errorf("it made %d choices but the trace records %d", len(w.Last().Choices), len(st.Choices))}
		}
		info := w.Last()
		rs := ReplayStep{Step: i + 1, Event: st.Event, Text: text, Logs: append([]string(nil), info.Logs...)}
		for _, e := range info.Sent {
			rs.Sent = append(rs.Sent, fmt.Sprintf("%s %d->%d", sim.Dump(e.Msg), e.From, e.To))
		}
		s = next
		rep.Final = s
		rs.State = s.Fingerprint()
		if rep.each != nil {
			rep.each(i+1, s, info)
		}
		waits(i+1, s)
		hist.observe(i+1, s)
		if name, msg := check(s); name != "" {
			rs.Violation = msg
			rep.Steps = append(rep.Steps, rs)
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, name, msg
			rep.History = hist.report(s, msg)
			return nil
		}
		rep.Steps = append(rep.Steps, rs)
	}
	// The search evaluates a reachability property on a state only until
	// it is reached anywhere, so only the path's last state, where one
	// that panicked would end its path, is sure to have had it.
	for i := range m.Properties {
		if pr := &m.Properties[i]; pr.Kind == properties.Reachability {
			pr.IsReached(s)
		}
	}
	for j, pr := range leads {
		if since[j] >= 0 {
			rep.Waiting = append(rep.Waiting, Waiting{Property: pr.Name, Doc: pr.Doc, Step: since[j]})
		}
	}
	// A path that ends where nothing can happen and the system is not live
	// shows a liveness violation.
	rep.Live = true
	var notLive []string
	for i := range m.Properties {
		if pr := &m.Properties[i]; pr.Kind == properties.Liveness && !pr.IsLive(s) {
			rep.Live = false
			notLive = append(notLive, pr.Name)
		}
	}
	if len(notLive) > 0 && len(w.Enabled(s, nil)) == 0 {
		// Named and said as the check names and says it.
		rep.Verdict, rep.Property, rep.Stuck = LivenessViolation, liveNames(m), true
		rep.Message = reports.StuckWords(rep.Property)
	}
	return nil
}

// CheckProperty says whether a trace of verdict can record property for
// this system; the error names the ones it can.
func (rep *Replayed) CheckProperty(verdict Verdict, property string) error {
	var valid []string
	switch verdict {
	case SafetyViolation:
		valid = append(valid, search.PanicProperty, search.DeterministicProperty)
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
	case PropertyError:
		// Any property's own code may panic.
		for _, p := range rep.m.Properties {
			valid = append(valid, p.Name)
		}
	case Live, PrefixResult:
		// A live trace may name the liveness property it reaches.
		if property == "" || property == liveNames(rep.m) {
			return nil
		}
		return fmt.Errorf("a %s trace records no property or %q, not %q", verdict, liveNames(rep.m), property)
	case RunResult:
		// A run's trace may name the liveness properties that do not
		// hold at its end.
		if property == "" {
			return nil
		}
		live := strings.Split(liveNames(rep.m), ",")
		for _, name := range strings.Split(property, ",") {
			if !slices.Contains(live, name) {
				return fmt.Errorf("a %s trace names liveness properties of this system (%s), not %q", verdict, liveNames(rep.m), name)
			}
		}
		return nil
	default:
		return fmt.Errorf("unknown result %q (valid: %s, %s, %s, %s, %s, %s)", verdict, SafetyViolation, LivenessViolation, PropertyError, Live, PrefixResult, RunResult)
	}
	for _, v := range valid {
		if v == property {
			return nil
		}
	}
	sort.Strings(valid)
	kind := strings.TrimSuffix(string(verdict), "-violation") + " property"
	if verdict == PropertyError {
		kind = "property"
	}
	return fmt.Errorf("%q is not a %s of this system (valid: %s)", property, kind, strings.Join(valid, ", "))
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
	// not deterministic, and it runs as the check ran it, once, making
	// what choices it makes (Strict is the replay's, left on by a path
	// with no steps).
	rep.w.Record, rep.w.Recheck, rep.w.Strict = false, 0, false
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
// still happen must end in a state the dead test finds no way back from
// (TestEnd; rep.End then says what it saw): the trace's own, raised to
// the floor of every dead test (DeadTestOf), so that a file cannot make
// the proof weaker than a check's. It returns whether the replay
// reproduces what the trace records.
func (rep *Replayed) Confirm(t *reports.Trace) (bool, error) {
	v := Verdict(t.Result)
	if err := rep.CheckProperty(v, t.Property); err != nil {
		return false, err
	}
	d, err := DeadTestOf(t, rep.m.Weights) // a bad one is a bad file, whether it is needed or not
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
				return false, fmt.Errorf("a walk from the final state ran into a violation of %s after %d steps: %s", cmp.Or(f.Property, search.PanicProperty), len(f.Path), f.Message)
			}
			return false, err
		}
	}
	return rep.Reproduces(v, t.Property), nil
}

// Recorded says what a trace records: "safety-violation of one-leader".
func Recorded(t *reports.Trace) string {
	what := t.Result
	if t.Property != "" {
		what += " of " + t.Property
	}
	return what
}

// Reached says what a replay that does not reproduce trace t reached.
func (rep *Replayed) Reached(t *reports.Trace) string {
	switch {
	case rep.Verdict != OK:
		return fmt.Sprintf("%s of %s", rep.Verdict, rep.Property)
	case rep.Live:
		return "a live state"
	case rep.End != nil && rep.End.Live:
		// The system is not stuck where the trace ends: a trace of the
		// correct system, of another configuration, or cut short; or its
		// dead test was too weak to tell.
		got := "a final state that recovers: " + evidenceWords(rep.End, t.Property)
		if rec := recordedTest(t); t.DeadTest != nil && rec.Weaker() {
			got += fmt.Sprintf("; not reproduced: the violation holds only under the trace's dead test (%s), weaker than the least replay runs (%s)", rec, floorTest)
		}
		return got
	}
	return "no violation"
}

// noReplay explains a path found by the check that does not replay: a
// handler is not deterministic.
func (c *checker) noReplay(err error) error {
	var nd *sim.NondeterminismError
	if errors.As(err, &nd) {
		return nd
	}
	var ne *NoReplayError
	if !errors.As(err, &ne) {
		return fmt.Errorf("the path found does not replay: %w", err)
	}
	// The step is where the replay parted from the check's run; the
	// handler that did something else ran at it or before it.
	nd = &sim.NondeterminismError{Step: ne.Step, Event: ne.Event, Node: ne.Event.Node, Handler: sim.HandlerOf(ne.Event, ne.Event.Node),
		What: fmt.Sprintf("the path found does not replay from here: %v", ne.Err)}
	if ne.Step == 0 {
		// The initial state: an Init call (which node's is not known).
		nd.Handler, nd.Text = "Init", "the initial state"
	}
	return nd
}

// notReproduced explains a path that replays, but to something else than
// the check saw on it.
func notReproduced(what string, rep *Replayed) error {
	got := "no violation"
	switch {
	case rep.Property != "":
		got = fmt.Sprintf("%s of %s", rep.Verdict, rep.Property)
	case rep.Live:
		got = "a live state"
	}
	return fmt.Errorf("%s does not replay: run again from the initial state it gives %s. A handler is not deterministic (map iteration, time, rand, goroutines, shared memory?), or this is a bug in livecheck",
		what, got)
}
