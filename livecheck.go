// Package livecheck checks implementations of distributed systems for
// safety and liveness bugs. A protocol's nodes are plain Go state machines
// (see package sim); livecheck runs them in a deterministic simulated world,
// explores the orderings of messages, timers and failures, and reports each
// violation with a trace that replays.
//
// # Usage
//
// Describe the protocol as a [System] and call [Check]:
//
//	res, err := livecheck.Check(&mySystem, livecheck.Options{Depth: 12})
//	if err != nil { ... }           // bad configuration or a failure of the tool
//	if res.Verdict != livecheck.OK { // a violation, with res.Path
//	}
//
// The CLI in cmd/livecheck is a thin layer over Check and [Replay].
package livecheck

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// Verdict is the outcome of a check.
type Verdict string

const (
	OK                Verdict = "ok"
	SafetyViolation   Verdict = "safety-violation"
	LivenessViolation Verdict = "liveness-violation"
	Inconclusive      Verdict = "inconclusive"
)

// DivergenceProperty names the built-in liveness property "every handler
// returns": a handler that runs past the time limit is stuck for ever.
const DivergenceProperty = "handlers-return"

// Options say what to check and how hard. Zero values take the defaults.
type Options struct {
	Config Config
	// Depth bounds the exhaustive search (default 20).
	Depth int
	// MaxStates stops the search after this many distinct states (0: no
	// limit); the result is then not complete.
	MaxStates int
	// Seed seeds every random choice livecheck makes (default 1).
	Seed int64
	// HandlerTimeout is how long one handler may run before it counts as
	// diverged (default 2s).
	HandlerTimeout time.Duration
	// Progress, when set, is called now and then during long work.
	Progress func(Progress)
	// Interrupted, when set and true, stops the work early: the result
	// keeps what was found and is inconclusive if nothing was.
	Interrupted func() bool
}

// Progress is a snapshot of a running check.
type Progress struct {
	Phase string
	Stats search.Stats
}

func (o *Options) fill() {
	if o.Depth <= 0 {
		o.Depth = 20
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = 2 * time.Second
	}
}

// Result is the outcome of a check.
type Result struct {
	Verdict Verdict
	System  string
	Config  Config // with defaults filled in
	Seed    int64
	Depth   int

	// Property is the violated property, Message what it said, Path the
	// steps from the initial state that show it.
	Property string
	Message  string
	Path     sim.Path
	// Complete says the bounded search ran to its end.
	Complete bool
	// Exhausted says the search saw every reachable state: no path was cut
	// off by the depth bound.
	Exhausted bool
	Stats     search.Stats
	// Interrupted says the check was stopped before its end.
	Interrupted bool
	// Steps is the violation's path replayed, in words.
	Steps []ReplayStep
}

// Check runs the exhaustive search on a system and reports the first
// violation. The error is for bad configurations and failures of the tool,
// never for a violation.
func Check(sys *System, opts Options) (*Result, error) {
	opts.fill()
	cfg, m, err := sys.Model(opts.Config)
	if err != nil {
		return nil, err
	}
	m.Spec.HandlerTimeout = opts.HandlerTimeout
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return nil, err
	}
	res := &Result{Verdict: OK, System: sys.Name, Config: cfg, Seed: opts.Seed, Depth: opts.Depth}
	trail := &search.Trail{}
	sopts := search.Options{
		Depth:      opts.Depth,
		MaxStates:  opts.MaxStates,
		Properties: m.Properties,
		Trail:      trail,
		Stop:       opts.Interrupted,
	}
	if opts.Progress != nil {
		sopts.Progress = func(s search.Stats) { opts.Progress(Progress{Phase: "search", Stats: s}) }
	}
	var sr *search.Result
	stuck, err := guarded(w, opts.HandlerTimeout, func() error {
		var err error
		sr, err = search.Global(w, sopts)
		return err
	})
	if stuck {
		// The search goroutine is blocked in the handler for good, so the
		// trail no longer changes.
		res.Verdict = LivenessViolation
		res.Property = DivergenceProperty
		res.Message = fmt.Sprintf("a handler did not return within %v on %v", opts.HandlerTimeout, trail.Event)
		res.Path = append(trail.Path.Clone(), sim.Step{Event: trail.Event, Choices: append([]int(nil), trail.Tape...)})
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	res.Stats = sr.Stats
	res.Complete = sr.Complete
	res.Exhausted = sr.Exhausted
	v := sr.Violation
	if v == nil {
		if !sr.Complete {
			res.Verdict = Inconclusive
			res.Interrupted = opts.Interrupted != nil && opts.Interrupted()
		}
		return res, nil
	}
	res.Verdict = SafetyViolation
	if v.Kind == properties.Liveness {
		res.Verdict = LivenessViolation
	}
	res.Property, res.Message, res.Path = v.Property, v.Message, v.Path
	// Every reported trace replays: run it again from scratch, as a trace
	// file would be, before reporting it.
	rep, err := Replay(sys, cfg, res.Path, opts.HandlerTimeout)
	if err != nil {
		return nil, fmt.Errorf("internal error: the %s violation found by the search does not replay: %w", res.Property, err)
	}
	if rep.Property != res.Property {
		return nil, fmt.Errorf("internal error: the %s violation found by the search replays to %q instead", res.Property, rep.Property)
	}
	res.Steps = rep.Steps
	return res, nil
}

// WriteTrace writes the violation's trace into dir, atomically, and
// returns the file's path.
func (r *Result) WriteTrace(dir string) (string, error) {
	t := r.Trace(func(i int) string {
		if i < len(r.Steps) {
			return r.Steps[i].Text
		}
		return ""
	})
	path := filepath.Join(dir, reports.TraceName(r.System, r.Property, r.Path))
	return path, reports.WriteFileAtomic(path, t.Write)
}

// guarded runs f on its own goroutine with a watchdog on w's handlers. It
// returns stuck when a handler ran longer than timeout; f's goroutine is
// then left behind, blocked in the user's handler.
func guarded(w *sim.World, timeout time.Duration, f func() error) (stuck bool, err error) {
	g := &sim.Guard{}
	w.Guard = g
	done := make(chan error, 1)
	go func() { done <- f() }()
	tick := time.NewTicker(timeout / 4)
	defer tick.Stop()
	var last uint64
	since := time.Now()
	for {
		select {
		case err := <-done:
			w.Guard = nil
			return false, err
		case <-tick.C:
			tok, same := g.Stuck(last)
			if !same {
				last, since = tok, time.Now()
				continue
			}
			if time.Since(since) >= timeout {
				return true, nil
			}
		}
	}
}

// Trace returns the trace of a violation, for a trace file.
func (r *Result) Trace(describe func(i int) string) *reports.Trace {
	return &reports.Trace{
		System:   r.System,
		Nodes:    r.Config.Nodes,
		Bugs:     r.Config.Bugs,
		Params:   r.Config.Params,
		Budget:   reports.Budget{Resets: r.Config.Budget.Resets, Drops: r.Config.Budget.Drops, Errors: r.Config.Budget.Errors},
		Seed:     r.Seed,
		Result:   string(r.Verdict),
		Property: r.Property,
		Message:  r.Message,
		Steps:    reports.FromPath(r.Path, describe),
	}
}

// ConfigOf returns the configuration a trace was made with.
func ConfigOf(t *reports.Trace) Config {
	return Config{
		Nodes:  t.Nodes,
		Bugs:   t.Bugs,
		Params: t.Params,
		Budget: sim.Budget{Resets: t.Budget.Resets, Drops: t.Budget.Drops, Errors: t.Budget.Errors},
	}
}

// A ReplayStep is one step of a replayed path, in words.
type ReplayStep struct {
	Index int
	Event sim.Event
	Text  string   // the event, with the message it carries
	Sent  []string // messages sent, "msg from->to"
	Logs  []string
	// Violation is set on the step where a safety property first fails.
	Violation string
}

// Replayed is the outcome of replaying a path.
type Replayed struct {
	Steps []ReplayStep
	// Verdict, Property and Message describe the violation the replay
	// reached (Verdict OK if none).
	Verdict  Verdict
	Property string
	Message  string
	Final    *sim.State
}

// ErrNoReplay says a trace does not replay: a step is not enabled where the
// trace puts it, or its choices do not fit.
var ErrNoReplay = errors.New("the trace does not replay")

// Replay re-executes a path on a system's configuration, checking every
// property on the way, and says what violation it reaches. It stops at the
// first safety violation or handler panic. A path whose steps cannot be
// applied exactly is an error wrapping ErrNoReplay.
func Replay(sys *System, cfg Config, p sim.Path, timeout time.Duration) (*Replayed, error) {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	cfg, m, err := sys.Model(cfg)
	if err != nil {
		return nil, err
	}
	m.Spec.HandlerTimeout = timeout
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return nil, err
	}
	w.Record = true
	rep := &Replayed{Verdict: OK}
	var cur sim.Event
	stuck, err := guarded(w, timeout, func() error { return replay(w, m, p, rep, &cur) })
	if stuck {
		rep.Verdict, rep.Property = LivenessViolation, DivergenceProperty
		rep.Message = fmt.Sprintf("a handler did not return within %v on %v", timeout, cur)
		return rep, nil
	}
	return rep, err
}

func replay(w *sim.World, m *Model, p sim.Path, rep *Replayed, cur *sim.Event) error {
	check := func(s *sim.State) (string, string) {
		for i := range m.Properties {
			pr := &m.Properties[i]
			if pr.Kind != properties.Safety {
				continue
			}
			if err := pr.CheckSafety(s); err != nil {
				return pr.Name, err.Error()
			}
		}
		return "", ""
	}
	panicked := func(err error) bool {
		var hp *sim.HandlerPanic
		if errors.As(err, &hp) {
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, search.PanicProperty, hp.Error()
			return true
		}
		return false
	}
	s, err := w.Initial()
	if err != nil {
		if panicked(err) {
			return nil
		}
		return err
	}
	rep.Final = s
	if name, msg := check(s); name != "" {
		rep.Verdict, rep.Property, rep.Message = SafetyViolation, name, msg
		return nil
	}
	for i, st := range p {
		*cur = st.Event
		text := w.Describe(s, st.Event)
		// The last step of a diverged trace may be cut short: its choices
		// are what the search had handed out, so it runs without Strict.
		w.Strict = i < len(p)-1
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			if panicked(err) {
				rep.Steps = append(rep.Steps, ReplayStep{Index: i, Event: st.Event, Text: text, Violation: rep.Message})
				return nil
			}
			if errors.Is(err, sim.ErrNotEnabled) {
				return fmt.Errorf("%w: step %d (%s): %v", ErrNoReplay, i+1, st.Event, err)
			}
			return err
		}
		if !w.Strict && len(w.Last().Choices) != len(st.Choices) {
			return fmt.Errorf("%w: step %d (%s) made %d choices but the trace records %d", ErrNoReplay, i+1, st.Event, len(w.Last().Choices), len(st.Choices))
		}
		info := w.Last()
		rs := ReplayStep{Index: i, Event: st.Event, Text: text, Logs: append([]string(nil), info.Logs...)}
		for _, e := range info.Sent {
			rs.Sent = append(rs.Sent, fmt.Sprintf("%s %d->%d", sim.Dump(e.Msg), e.From, e.To))
		}
		s = next
		rep.Final = s
		if name, msg := check(s); name != "" {
			rs.Violation = msg
			rep.Steps = append(rep.Steps, rs)
			rep.Verdict, rep.Property, rep.Message = SafetyViolation, name, msg
			return nil
		}
		rep.Steps = append(rep.Steps, rs)
	}
	// A path that ends where nothing can happen and the system is not live
	// shows a liveness violation.
	var live []*properties.Property
	for i := range m.Properties {
		if m.Properties[i].Kind == properties.Liveness {
			live = append(live, &m.Properties[i])
		}
	}
	if len(live) > 0 && len(w.Enabled(s, nil)) == 0 {
		for _, pr := range live {
			if !pr.IsLive(s) {
				rep.Verdict, rep.Property = LivenessViolation, search.QuiescentProperty
				rep.Message = fmt.Sprintf("no event is enabled and %s does not hold", pr.Name)
				return nil
			}
		}
	}
	return nil
}
