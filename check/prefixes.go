package check

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/prefix"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// PrefixOptions say what prefixes to make. Zero values take the defaults.
type PrefixOptions struct {
	Config   protocol.Config // its failure budget is ignored: prefixes have no failures
	Count    int             // distinct prefixes (default 1)
	Settle   int             // steps the liveness property must keep holding (default 0)
	MaxSteps int             // bound on each walk (default 100,000)
	Seed     int64           // default 1
	// Weights are the walks' event weights when WeightsSet; otherwise the
	// system's, or walk.DefaultWeights.
	Weights    walk.Weights
	WeightsSet bool
	// Interrupted, when set and true, ends the walks early: Prefixes
	// returns the prefixes made so far, and an error wrapping
	// sim.ErrStopped.
	Interrupted func() bool
}

// A LivePrefix is a path from the initial state to a state where the
// liveness property holds, and has held for the settle steps.
type LivePrefix struct {
	Path      sim.Path
	Init      []int // the initial state it starts from (see Result.Init)
	FirstLive int   // steps to the first live state
}

// Prefixes makes live prefixes of a system by biased random walks with
// every failure (resets, drops, socket errors, duplications) disabled.
func Prefixes(sys *protocol.System, opts PrefixOptions) (protocol.Config, []LivePrefix, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	cfg := opts.Config
	cfg.Budget = protocol.NoFailures
	cfg, m, err := sys.Model(cfg)
	if err != nil {
		return cfg, nil, err
	}
	c := &checker{m: m}
	for i := range m.Properties {
		if p := &m.Properties[i]; p.Kind == properties.Liveness {
			c.live = append(c.live, p)
		}
	}
	if len(c.live) == 0 {
		return cfg, nil, fmt.Errorf("%s has no liveness property: a prefix ends where it holds", sys.Name)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		return cfg, nil, err
	}
	// A system whose nodes choose in their first Init has several
	// initial states: the seed draws one, as a walk draws its choices.
	rng := rand.New(rand.NewPCG(uint64(opts.Seed), initSeed))
	w.Chooser = func(n int) int { return rng.IntN(n) }
	s0, err := w.InitialFrom(nil)
	w.Chooser = nil
	if err != nil {
		return cfg, nil, err
	}
	init := slices.Clone(w.Last().Choices)
	wt := walk.DefaultWeights
	if m.Weights != nil {
		wt = *m.Weights
	}
	if opts.WeightsSet {
		wt = opts.Weights
	}
	w.Stop = opts.Interrupted
	ps, err := prefix.Generate(w, s0, c.isLive, &wt, prefix.Options{
		Count: opts.Count, Settle: opts.Settle, MaxSteps: opts.MaxSteps, Seed: uint64(opts.Seed),
	})
	out := make([]LivePrefix, len(ps))
	for i, p := range ps {
		out[i] = LivePrefix{Path: p.Path, Init: init, FirstLive: p.FirstLive}
	}
	return cfg, out, err
}

// WritePrefix writes a prefix as a trace file in dir, atomically, and
// returns its path.
func WritePrefix(dir string, sys *protocol.System, cfg protocol.Config, seed int64, settle int, p LivePrefix) (string, error) {
	names := []string{}
	for _, d := range sys.PropertyDocs() {
		if d.Kind == properties.Liveness {
			names = append(names, d.Name)
		}
	}
	t := &reports.Trace{
		System: sys.Name, Nodes: cfg.Nodes, Bugs: cfg.Bugs, Params: cfg.Params,
		Seed: seed, Result: string(PrefixResult),
		Message: fmt.Sprintf("live after step %d, and still live %d steps later", p.FirstLive, settle),
		Init:    p.Init,
		Steps:   reports.FromPath(p.Path, nil),
	}
	if len(names) > 0 {
		t.Property = names[0]
	}
	path := filepath.Join(dir, reports.TraceName(sys.Name, "prefix", p.Init, p.Path))
	return path, reports.WriteFileAtomic(path, t.Write)
}

// initSeed is the second word of the generator that draws a prefix's
// initial state from the seed.
const initSeed = 0x1f0c5e7d2b9a4e63

// PrefixResult marks a trace file that holds a live prefix.
const PrefixResult Verdict = "prefix"

// RunResult marks a trace file of a real run (livecheck trace, snapshot)
// that ends neither live nor at a violation: a path that shows no
// violation, whose property names the liveness properties that do not
// hold at its end. A replay reproduces it when its end is not live.
const RunResult Verdict = "run"

// PrefixStart reads the prefix file a check starts from (`check --from`)
// and merges its configuration into cfg. The file records the nodes,
// parameters and bugs of the path it holds (for a snapshot, those of the
// code that ran): those cfg leaves unset (0 nodes, a parameter not in
// Params, nil Bugs) are the file's, and those it gives must be the
// file's, or the error says which contradicts it. The prefix must be one
// that replay accepts (ReplayTrace: a path that replays to a live state,
// with the file's configuration and property). The failures its path
// took (resets, drops, crashes: a snapshot taken under a nemesis, nodes
// down at its end) are spent before the check begins: cfg's budget (0
// fields: the defaults) is what the check may add, and the returned
// configuration's budget is the two together. The prefix must then
// replay to a live state under that configuration, with handlers given
// timeout each. It returns the merged configuration and the prefix's
// initial state (as Options.PrefixInit) and path.
func PrefixStart(sys *protocol.System, file string, cfg protocol.Config, timeout time.Duration) (protocol.Config, []int, sim.Path, error) {
	t, err := reports.ReadTraceFile(file)
	if err != nil {
		return cfg, nil, nil, err
	}
	if Verdict(t.Result) != PrefixResult {
		return cfg, nil, nil, fmt.Errorf("%s is not a prefix file (it records %q; make prefixes with 'livecheck prefix')", file, t.Result)
	}
	var diff []string
	if t.System != sys.Name {
		diff = append(diff, fmt.Sprintf("system %s, not %s", t.System, sys.Name))
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = t.Nodes
	} else if t.Nodes != cfg.Nodes {
		diff = append(diff, fmt.Sprintf("%d nodes, not %d", t.Nodes, cfg.Nodes))
	}
	params := maps.Clone(cfg.Params)
	if params == nil {
		params = map[string]string{}
	}
	for _, p := range sys.Params {
		pv := t.Params[p.Name]
		cv, set := cfg.Params[p.Name]
		switch {
		case set && pv != cv:
			if pv == "" {
				pv = "(default)"
			}
			diff = append(diff, fmt.Sprintf("%s=%s, not %s", p.Name, pv, cv))
		case !set && pv != "":
			params[p.Name] = pv
		}
	}
	cfg.Params = params
	if cfg.Bugs == nil {
		cfg.Bugs = slices.Clone(t.Bugs)
	} else if !sameBugs(cfg.Bugs, t.Bugs) {
		diff = append(diff, fmt.Sprintf("bugs %s, not %s (leave --bug out: the file's are taken)", bugList(t.Bugs), bugList(cfg.Bugs)))
	}
	if len(diff) > 0 {
		return cfg, nil, nil, fmt.Errorf("%s was made for another configuration: %s", file, strings.Join(diff, "; "))
	}
	rep0, err := ReplayTrace(sys, t, timeout, nil)
	if err != nil {
		return cfg, nil, nil, TraceError(file, err)
	}
	p, err := reports.Path(t.Steps)
	if err != nil {
		return cfg, nil, nil, fmt.Errorf("%s: %v", file, err)
	}
	if rep0 == nil || rep0.Final == nil {
		return cfg, nil, nil, fmt.Errorf("%s: its replay reached no final state", file)
	}
	// What the prefix spent comes first; the check's budget is on top.
	norm, err := sys.Normalize(cfg)
	if err != nil {
		return cfg, nil, nil, err
	}
	cfg.Budget = protocol.Explicit(AddBudget(protocol.Counts(norm.Budget), rep0.Final.Used()))
	// The check starts where the prefix ends under its own bugs: the
	// system must be live there too.
	rep, err := ReplayFrom(sys, cfg, t.Init, p, timeout)
	switch {
	case err != nil:
		return cfg, nil, nil, fmt.Errorf("%s does not replay under the check's configuration: %v", file, err)
	case rep.Verdict != OK:
		return cfg, nil, nil, fmt.Errorf("%s does not replay under the check's configuration: it reaches %s of %s at step %d", file, rep.Verdict, rep.Property, len(rep.Steps))
	case !rep.Live:
		return cfg, nil, nil, fmt.Errorf("%s does not end in a live state under the check's configuration (%s)", file, DescribeConfig(sys.Name, cfg))
	}
	return cfg, t.Init, p, nil
}

// AddBudget is the budget a and b together, field by field.
func AddBudget(a, b sim.Budget) sim.Budget {
	return sim.Budget{Resets: a.Resets + b.Resets, Drops: a.Drops + b.Drops, Errors: a.Errors + b.Errors,
		Dups: a.Dups + b.Dups, Partitions: a.Partitions + b.Partitions, Crashes: a.Crashes + b.Crashes}
}

// sameBugs says whether a and b name the same bugs, in any order.
func sameBugs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// bugList is bugs in words: "none", or "[a b]".
func bugList(bugs []string) string {
	if len(bugs) == 0 {
		return "none"
	}
	return "[" + strings.Join(bugs, " ") + "]"
}
