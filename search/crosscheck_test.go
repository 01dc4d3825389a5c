package search_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/internal/oracle"
	"github.com/livecheck/livecheck/internal/randproto"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
)

// The randomized cross-check (issue 10, item 5): small random protocols,
// each safety property checked on its own by global mode, by global mode
// with a liveness property beside it (net-empty, even-in-flight), and by
// local mode, against a plain breadth-first search of the full space
// (internal/oracle), with and without reduction (sleep sets); and the
// global check with liveness on 1 and on 4 workers, its liveness claims
// held to the oracle too. It asserts
// agreement with the oracle, never pinned counts, so a new search,
// reductions or workers must keep it green unchanged.

const (
	// xcheckSeeds is how many seeds go test runs; FuzzCrossCheck runs more.
	xcheckSeeds = 200
	// xcheckMaxStates caps the oracle: a program with a larger space is
	// set aside (the generator is tuned so that few are).
	xcheckMaxStates = 3000
)

func TestCrossCheck(t *testing.T) {
	var tooBig, props, violated, panics int
	for seed := uint64(1); seed <= xcheckSeeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			orc := crossCheck(t, randproto.Generate(seed))
			if orc == nil {
				tooBig++
				return
			}
			props += len(randproto.Generate(seed).Props)
			for name := range orc.Violated {
				if name == oracle.PanicProperty {
					panics++
				} else {
					violated++
				}
			}
		})
	}
	t.Logf("%d programs larger than %d states; %d properties checked, %d of them violated; a handler panic reachable in %d programs",
		tooBig, xcheckMaxStates, props, violated, panics)
	// The cross-check is only worth something if it checks: the generator
	// must keep most spaces under the oracle's cap, and give properties
	// that hold and properties that do not, and some handler panics.
	if tooBig > xcheckSeeds/10 {
		t.Errorf("%d of %d generated programs were larger than %d states: tune the generator", tooBig, xcheckSeeds, xcheckMaxStates)
	}
	if violated < props/4 || violated > props*3/4 || panics < xcheckSeeds/50 || panics > xcheckSeeds/5 {
		t.Errorf("%d of %d properties violated, a panic in %d of %d programs: tune the generator", violated, props, panics, xcheckSeeds)
	}
}

// xcheckFaultSeeds is how many seeds TestCrossCheckFaults runs (a tenth
// with -short); FuzzCrossCheckFaults runs more.
const xcheckFaultSeeds = 100

// The cross-check of the failures added later (duplicated datagrams,
// partitions), on
// the random programs with those failures in their budget
// (randproto.GenerateFaults): global mode, with and without sleep sets,
// against the oracle, as TestCrossCheck does. Local mode does not inject
// failures.
func TestCrossCheckFaults(t *testing.T) {
	seeds := uint64(xcheckFaultSeeds)
	if testing.Short() {
		seeds /= 10
	}
	var tooBig, checked int
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := randproto.GenerateFaults(seed)
			checked++
			if crossCheck(t, p) == nil {
				tooBig++
			}
		})
	}
	t.Logf("%d programs with the new failures, %d of them larger than %d states", checked, tooBig, xcheckMaxStates)
	if tooBig > checked/5 {
		t.Errorf("%d programs with the new failures, %d too large: tune the generator", checked, tooBig)
	}
}

// The cross-check of crashes (a node down until its restart) on the
// random programs with one crash in their budget, and by the seed a
// reset, a drop or a socket error beside it (randproto.GenerateCrashes):
// global mode with and without sleep sets against the oracle, as
// TestCrossCheck does; local mode refuses them.
func TestCrossCheckCrashes(t *testing.T) {
	seeds := uint64(xcheckFaultSeeds)
	if testing.Short() {
		seeds /= 5
	}
	var tooBig, checked, streams int
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := randproto.GenerateCrashes(seed)
			checked++
			if p.Transport == sim.Stream {
				streams++
			}
			if crossCheck(t, p) == nil {
				tooBig++
			}
		})
	}
	t.Logf("%d programs with a crash (%d on streams), %d of them larger than %d states", checked, streams, tooBig, xcheckMaxStates)
	if tooBig > checked/3 || streams == 0 {
		t.Errorf("%d programs with a crash, %d too large, %d on streams: tune the generator", checked, tooBig, streams)
	}
	p := randproto.GenerateCrashes(1)
	_, err := livecheck.Check(p.System(), livecheck.Options{Config: livecheck.Config{Nodes: p.Nodes, Budget: p.Budget, Params: map[string]string{"property": p.Props[0].Name}},
		Mode: "local", HandlerTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "crashes") {
		t.Errorf("local mode with crashes: %v; want refused", err)
	}
}

// The check with liveness reports the same on 1 and 4 workers with
// crashes too (TestCrossCheckWorkers' check on GenerateCrashes), and its
// liveness claims hold (walks restart the nodes down).
func TestCrossCheckWorkersCrashes(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() {
		seeds = 10
	}
	var walked int
	for seed := uint64(1); seed <= seeds; seed++ {
		w, _ := workersCheckProgram(t, randproto.GenerateCrashes(seed))
		walked += w
	}
	if walked < int(seeds)/3 {
		t.Errorf("walks ran in %d checks of %d: tune the depth or the generator", walked, seeds)
	}
}

// FuzzCrossCheckFaults runs TestCrossCheckFaults' check on any seed:
//
//	go test -run '^$' -fuzz FuzzCrossCheckFaults -fuzztime 5m
func FuzzCrossCheckFaults(f *testing.F) {
	for _, s := range []uint64{1, 2, 3} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		crossCheck(t, randproto.GenerateFaults(seed))
	})
}

// FuzzCrossCheck runs the cross-check on any seed:
//
//	go test -run '^$' -fuzz FuzzCrossCheck -fuzztime 5m
func FuzzCrossCheck(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 1000, 123456789} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		if crossCheck(t, randproto.Generate(seed)) == nil {
			t.Skipf("seed %d: the space is larger than %d states", seed, xcheckMaxStates)
		}
	})
}

// xcheckWorkerSeeds is how many seeds TestCrossCheckWorkers runs;
// FuzzCrossCheckWorkers runs more.
const xcheckWorkerSeeds = 60

// The global check with a liveness property reports the same on 1 and on
// 4 walk workers: verdict, property, path, critical step and every
// statistic but time. The depth bound is set to half the space's depth so
// that walks start from a periphery; the program's own liveness
// properties make some of them dead, so the critical search runs too,
// and its claims are held to the oracle (liveEvidence).
func TestCrossCheckWorkers(t *testing.T) {
	var walked, dead int
	for seed := uint64(1); seed <= xcheckWorkerSeeds; seed++ {
		w, d := workersCheck(t, seed)
		walked += w
		dead += d
	}
	t.Logf("walks in %d checks, a critical search in %d", walked, dead)
	// The comparison is only worth something where walks ran, and the
	// critical search on some of them.
	if walked < xcheckWorkerSeeds/2 || dead < 5 {
		t.Errorf("walks ran in %d checks, a critical search in %d: tune the depth or the generator", walked, dead)
	}
}

// The random programs' levels are small: a search keeps nearly all their
// states as it finds them (maxKept), and makes few again. With at most 2
// kept a level (and so at most 4 parents a chunk), the workers make most
// states again, on their chains or from a kept parent, and the checks
// must still agree with the oracle, and 4 workers with 1.
func TestCrossCheckReplays(t *testing.T) {
	defer search.SetMaxKept(search.SetMaxKept(2))
	for seed := uint64(1); seed <= xcheckSeeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { crossCheck(t, randproto.Generate(seed)) })
	}
	seeds := uint64(xcheckWorkerSeeds / 3)
	if testing.Short() {
		seeds = 5
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		workersCheck(t, seed)
	}
}

// FuzzCrossCheckWorkers runs TestCrossCheckWorkers' check on any seed:
//
//	go test -run '^$' -fuzz FuzzCrossCheckWorkers -fuzztime 5m
func FuzzCrossCheckWorkers(f *testing.F) {
	for _, s := range []uint64{1, 5, 1000} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { workersCheck(t, seed) })
}

// workersCheck runs the global check of seed's program with net-empty,
// and with the program's first liveness property the initial state can
// reach, on 1 and on 4 workers. It returns how many of these checks
// walked, and how many ran a critical search.
func workersCheck(t *testing.T, seed uint64) (walked, dead int) {
	return workersCheckProgram(t, randproto.Generate(seed))
}

// workersCheckProgram is workersCheck on program p.
func workersCheckProgram(t *testing.T, p *randproto.Program) (walked, dead int) {
	seed := p.Seed
	w, err := sim.NewWorld(p.Spec())
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, p)
	}
	orc, err := oracle.Explore(w, nil, xcheckMaxStates)
	if errors.Is(err, oracle.ErrTooBig) {
		return 0, 0
	}
	if err != nil {
		t.Fatalf("seed %d: oracle: %v\n%s", seed, err, p)
	}
	sys := p.System()
	lives := []string{randproto.NetEmpty.Name}
	// A property the initial state cannot reach is dead from the start,
	// with no critical step to find.
	for _, lp := range p.Liveness() {
		s0, err := w.Initial()
		if err != nil {
			break
		}
		if ok, err := oracle.Reaches(w, s0, lp.IsLive, xcheckMaxStates); err == nil && ok {
			lives = append(lives, lp.Name)
			break
		}
	}
	for _, live := range lives {
		var res []*livecheck.Result
		for _, workers := range []int{1, 4} {
			opts := livecheck.Options{
				Config:         livecheck.Config{Nodes: p.Nodes, Budget: p.Budget, Params: map[string]string{"live": live}},
				Depth:          max(1, orc.MaxDepth/2),
				WalkDepth:      100,
				Escalations:    -1,
				HandlerTimeout: time.Minute,
				Workers:        workers,
			}
			r, err := livecheck.Check(sys, opts)
			if err != nil {
				t.Fatalf("seed %d, %s, %d workers: %v\n%s", seed, live, workers, err, p)
			}
			// Time is the one thing allowed to differ.
			r.Stats.Elapsed, r.Live.Elapsed, r.Live.Critical, r.Elapsed = 0, 0, 0, 0
			for i := range r.Phases {
				r.Phases[i].Wall, r.Phases[i].CPU, r.Phases[i].Serial = 0, 0, 0
			}
			r.Stats.Workers, r.Stats.Remade = 0, 0 // the things that differ
			res = append(res, r)
		}
		if !reflect.DeepEqual(res[0], res[1]) {
			t.Errorf("seed %d, %s: 1 worker and 4 workers disagree:\n1: %s\n4: %s\n%s", seed, live, summary(res[0]), summary(res[1]), p)
		}
		if msg := liveEvidence(w, sys, res[0]); msg != "" {
			t.Errorf("seed %d, %s: %s\n%s\n%s", seed, live, msg, summary(res[0]), p)
		}
		if res[0].Live.Walks > 0 {
			walked++
		}
		if res[0].Critical != nil {
			dead++
		}
	}
	return walked, dead
}

// liveEvidence holds a liveness violation's claims to the oracle: the
// path ends in a dead state (no live state reachable from it), and, with
// a critical step, the state before it still reaches a live state while
// the state after it does not. It returns what does not hold.
func liveEvidence(w *sim.World, sys *livecheck.System, r *livecheck.Result) string {
	if r.Verdict != livecheck.LivenessViolation {
		return ""
	}
	_, m, err := sys.Model(r.Config)
	if err != nil {
		return err.Error()
	}
	var live *properties.Property
	for i := range m.Properties {
		if m.Properties[i].Name == r.Property || r.Property == search.QuiescentProperty && m.Properties[i].Kind == properties.Liveness {
			live = &m.Properties[i]
		}
	}
	if live == nil {
		return fmt.Sprintf("liveness violation of %s, not the property checked", r.Property)
	}
	// reaches says whether the state after the first n steps of path
	// reaches a live state.
	reaches := func(path sim.Path, n int) (bool, error) {
		s0, err := w.Initial()
		if err != nil {
			return false, err
		}
		s, err := w.Run(s0, path[:n], nil)
		if err != nil {
			return false, err
		}
		return oracle.Reaches(w, s, live.IsLive, xcheckMaxStates)
	}
	if ok, err := reaches(r.Path, len(r.Path)); err != nil || ok {
		return fmt.Sprintf("the violation's path ends in a state from which a live state is reachable (%v)", err)
	}
	if cx := r.Critical; cx != nil {
		if ok, err := reaches(r.Path, cx.Step); err != nil || ok {
			return fmt.Sprintf("the state after critical step %d reaches a live state (%v)", cx.Step, err)
		}
		if ok, err := reaches(r.Path, cx.Step-1); err != nil || !ok {
			return fmt.Sprintf("the state before critical step %d reaches no live state (%v)", cx.Step, err)
		}
	}
	return ""
}

// summary is what TestCrossCheckWorkers compares, in words.
func summary(r *livecheck.Result) string {
	s := fmt.Sprintf("%s %s %q path %v complete=%v exhausted=%v stats %+v live %+v", r.Verdict, r.Property, r.Message, r.Path, r.Complete, r.Exhausted, r.Stats, r.Live)
	if cx := r.Critical; cx != nil {
		s += fmt.Sprintf(" critical step %d (%s) live step %d, live path %v, %d probes, %d probe steps", cx.Step, cx.EventText, cx.LiveStep, cx.LivePath, cx.Probes, cx.ProbeSteps)
	}
	return s
}

// A verdict is what one mode said about one property.
type verdict struct {
	mode     string
	violated bool
	property string // the property violated (a handler panic is search.PanicProperty)
	path     sim.Path
}

// crossCheck checks every property of program p in every mode against
// the oracle, and returns what the oracle found. It returns nil when the
// space is too large to check.
func crossCheck(t *testing.T, p *randproto.Program) *oracle.Result {
	seed := p.Seed
	w, err := sim.NewWorld(p.Spec())
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, p)
	}
	orc, err := oracle.Explore(w, p.Properties(), xcheckMaxStates)
	if errors.Is(err, oracle.ErrTooBig) {
		return nil
	}
	if err != nil {
		t.Fatalf("seed %d: oracle: %v\n%s", seed, err, p)
	}
	sys := p.System()
	var fails []string
	report := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }
	for _, pr := range p.Props {
		cfg := livecheck.Config{Nodes: p.Nodes, Budget: p.Budget, Params: map[string]string{"property": pr.Name}}
		agree := func(v verdict, cfg livecheck.Config) { agreeOracle(w, sys, cfg, orc, pr.Name, v, report) }

		// Global mode, through the whole pipeline, with a depth bound that
		// no path of distinct states can reach.
		depth := orc.States + 1
		res, err := livecheck.Check(sys, livecheck.Options{Config: cfg, Depth: depth, HandlerTimeout: time.Minute})
		if err != nil {
			t.Fatalf("seed %d, %s, global: %v\n%s", seed, pr.Name, err, p)
		}
		switch res.Verdict {
		case livecheck.OK:
			if !res.Complete || !res.Exhausted {
				report("global: ok for %s but complete=%v exhausted=%v at depth %d", pr.Name, res.Complete, res.Exhausted, depth)
			}
			// With no liveness property no path ends early: the search
			// sees every reachable state.
			if res.Stats.States != int64(orc.States) {
				report("global: %d distinct states, the oracle %d", res.Stats.States, orc.States)
			}
		case livecheck.SafetyViolation:
		default:
			report("global: verdict %s for %s: %s", res.Verdict, pr.Name, res.Message)
		}
		agree(verdict{mode: "global", violated: res.Verdict == livecheck.SafetyViolation, property: res.Property, path: res.Path}, cfg)

		// The same without reduction (the default prunes with sleep sets):
		// the same verdict and, when ok, the same states.
		nres, err := livecheck.Check(sys, livecheck.Options{Config: cfg, Depth: depth, HandlerTimeout: time.Minute, Reduce: "none"})
		if err != nil {
			t.Fatalf("seed %d, %s, global --reduce none: %v\n%s", seed, pr.Name, err, p)
		}
		if nres.Verdict != res.Verdict || nres.Verdict == livecheck.OK && nres.Stats.States != res.Stats.States {
			report("global --reduce none: %s with %d states, with sleep sets %s with %d", nres.Verdict, nres.Stats.States, res.Verdict, res.Stats.States)
		}
		if res.Verdict == livecheck.OK && res.Stats.Transitions > nres.Stats.Transitions {
			report("global: sleep sets took more transitions (%d) than none (%d)", res.Stats.Transitions, nres.Stats.Transitions)
		}
		agree(verdict{mode: "global --reduce none", violated: nres.Verdict == livecheck.SafetyViolation, property: nres.Property, path: nres.Path}, cfg)

		// Global mode with a liveness property beside the safety one: the
		// safety verdict must not change (item 3), and neither property is
		// ever violated (item 8).
		for _, live := range []*properties.Property{&randproto.NetEmpty, &randproto.EvenInFlight} {
			lcfg := cfg
			lcfg.Params = map[string]string{"property": pr.Name, "live": live.Name}
			_, m, err := sys.Model(lcfg)
			if err != nil {
				t.Fatal(err)
			}
			lw, err := sim.NewWorld(m.Spec)
			if err != nil {
				t.Fatal(err)
			}
			sr, err := search.Global(lw, search.Options{Depth: depth, Properties: m.Properties})
			if err != nil {
				t.Fatalf("seed %d, %s, global with %s: %v\n%s", seed, pr.Name, live.Name, err, p)
			}
			gv := verdict{mode: "global with " + live.Name}
			switch v := sr.Violation; {
			case v == nil:
				if !sr.Complete || !sr.Exhausted {
					report("%s: ok for %s but complete=%v exhausted=%v at depth %d", gv.mode, pr.Name, sr.Complete, sr.Exhausted, depth)
				}
			case v.Kind == properties.Safety:
				gv.violated, gv.property, gv.path = true, v.Property, v.Path
			default:
				report("%s: liveness violation %s: %s\n%s", gv.mode, v.Property, v.Message, describe(w, v.Path))
				continue // the search stopped there: no safety verdict to compare
			}
			agree(gv, lcfg)
		}

		// Local mode does not inject failures.
		if p.Budget != (sim.Budget{}) {
			continue
		}
		res, err = livecheck.Check(sys, livecheck.Options{Config: cfg, Mode: "local", Rounds: 1 << 20, HandlerTimeout: time.Minute})
		if err != nil {
			t.Fatalf("seed %d, %s, local: %v\n%s", seed, pr.Name, err, p)
		}
		switch res.Verdict {
		case livecheck.OK:
			if !res.Complete {
				report("local: ok for %s but not complete", pr.Name)
			}
		case livecheck.SafetyViolation:
		default:
			report("local: verdict %s for %s: %s", res.Verdict, pr.Name, res.Message)
		}
		agree(verdict{mode: "local", violated: res.Verdict == livecheck.SafetyViolation, property: res.Property, path: res.Path}, cfg)
	}
	if len(fails) > 0 {
		t.Fatalf("seed %d: the modes disagree with the oracle (%d states, deepest %d steps):\n%s\n%s",
			seed, orc.States, orc.MaxDepth, strings.Join(fails, "\n"), p)
	}
	return orc
}

// oracleVerdict is what the oracle says of property name: its shortest
// violation, or a handler panic's where that comes first (a panic ends
// every mode's search).
func oracleVerdict(orc *oracle.Result, name string) (*oracle.Found, bool) {
	want, violated := orc.Violated[name]
	if f, ok := orc.Violated[oracle.PanicProperty]; ok && (!violated || f.Depth < want.Depth) {
		want, violated = f, true
	}
	return want, violated
}

// agreeOracle compares one mode's verdict v on property name, checked
// alone with cfg, with the oracle's, and replays a violation's path to
// the same violation; it reports what does not hold.
func agreeOracle(w *sim.World, sys *livecheck.System, cfg livecheck.Config, orc *oracle.Result, name string, v verdict, report func(string, ...any)) {
	want, wantViolated := oracleVerdict(orc, name)
	switch {
	case v.violated && !wantViolated:
		report("%s: %s violated, the oracle found no reachable state that violates it (in %d states)\n%s",
			v.mode, v.property, orc.States, describe(w, v.path))
	case !v.violated && wantViolated:
		report("%s: ok for %s, the oracle reaches a violation in %d steps: %s\n%s",
			v.mode, name, want.Depth, want.Message, describe(w, want.Path))
	case v.violated:
		if v.property != name && v.property != search.PanicProperty {
			report("%s: checking %s alone reported a violation of %s", v.mode, name, v.property)
		}
		if len(v.path) < want.Depth {
			report("%s: a %d-step path to a violation of %s, shorter than the oracle's shortest (%d)\n%s",
				v.mode, len(v.path), v.property, want.Depth, describe(w, v.path))
		}
		rep, err := livecheck.Replay(sys, cfg, v.path, time.Minute)
		if err != nil || !rep.Reproduces(livecheck.SafetyViolation, v.property) {
			report("%s: the path to %s does not replay to it (%v)\n%s", v.mode, v.property, err, describe(w, v.path))
		}
	}
}

// describe replays path from w's initial state, one line per step.
func describe(w *sim.World, path sim.Path) string {
	var b strings.Builder
	s, err := w.Initial()
	if err != nil {
		return fmt.Sprintf("  (the initial state fails: %v)", err)
	}
	fmt.Fprintf(&b, "  initial state:\n%s", indent(s.Dump()))
	for i, st := range path {
		fmt.Fprintf(&b, "  %d. %s", i+1, w.Describe(s, st.Event))
		if len(st.Choices) > 0 {
			fmt.Fprintf(&b, " choices %v", st.Choices)
		}
		b.WriteByte('\n')
		next, err := w.Apply(s, st.Event, st.Choices)
		if err != nil {
			fmt.Fprintf(&b, "     (fails: %v)\n", err)
			return b.String()
		}
		s = next
	}
	fmt.Fprintf(&b, "  final state:\n%s", indent(s.Dump()))
	return b.String()
}

func indent(s string) string {
	return "     " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n     ") + "\n"
}
