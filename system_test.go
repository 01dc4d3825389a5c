package livecheck_test

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// needsSystem only has bugs with needs: Normalize and BugSettings never
// build it.
var needsSystem = &livecheck.System{
	Name: "toy", DefaultNodes: 3, MinNodes: 2, MaxNodes: 9, DefaultBudget: sim.Budget{Errors: 1},
	Params: []livecheck.Param{{Name: "proposers", Default: "1"}, {Name: "peers", Default: "zero"}},
	Bugs: []livecheck.Bug{
		{Name: "a", Needs: livecheck.Needs{Nodes: 4, Params: map[string]string{"proposers": "2"}}},
		{Name: "b", Needs: livecheck.Needs{Nodes: 2, Params: map[string]string{"peers": "all"}, Budget: sim.Budget{Resets: 1}}},
		{Name: "c", Needs: livecheck.Needs{Params: map[string]string{"peers": "ring"}}},
		{Name: "q", Arg: "K", Needs: livecheck.Needs{Params: map[string]string{"proposers": "2"}},
			NeedsArg: func(k string) livecheck.Needs {
				v, _ := strconv.Atoi(k)
				return livecheck.Needs{Nodes: 2 * v, Params: map[string]string{"proposers": "2"}}
			}},
	},
}

// A bug's needs fill in every setting the configuration leaves unset, the
// result says which, and a setting given that cannot show a bug (or two
// bugs that need different values) gives a warning.
func TestBugNeeds(t *testing.T) {
	unset := sim.Budget{} // the defaults: the bugs' needs, then the system's
	type set = livecheck.Setting
	for _, tc := range []struct {
		name     string
		cfg      livecheck.Config
		nodes    int
		params   map[string]string
		budget   sim.Budget
		from     []set
		warnings []string
	}{
		{"all from the bug", livecheck.Config{Bugs: []string{"a"}, Budget: unset},
			4, map[string]string{"proposers": "2", "peers": "zero"}, sim.Budget{Errors: 1},
			[]set{{Bug: "a", Name: "nodes", Value: "4"}, {Bug: "a", Name: "proposers", Value: "2"}}, nil},
		{"the user's settings win, with a warning", livecheck.Config{Nodes: 3, Bugs: []string{"a"}, Params: map[string]string{"proposers": "1"}, Budget: unset},
			3, map[string]string{"proposers": "1", "peers": "zero"}, sim.Budget{Errors: 1},
			nil, []string{"a needs at least 4 nodes; you gave 3", "a needs at least 2 proposers; you gave 1"}},
		{"more than needed is no warning", livecheck.Config{Nodes: 5, Bugs: []string{"a"}, Params: map[string]string{"proposers": "3"}, Budget: unset},
			5, map[string]string{"proposers": "3", "peers": "zero"}, sim.Budget{Errors: 1},
			nil, nil},
		{"two bugs: the larger number, each bug's own settings", livecheck.Config{Bugs: []string{"b", "a"}, Budget: unset},
			4, map[string]string{"proposers": "2", "peers": "all"}, sim.Budget{Resets: 1, Errors: 1},
			[]set{{Bug: "a", Name: "nodes", Value: "4"}, {Bug: "a", Name: "proposers", Value: "2"}, {Bug: "b", Name: "peers", Value: "all"}, {Bug: "b", Name: "resets", Value: "1"}}, nil},
		{"a failure budget given", livecheck.Config{Bugs: []string{"b"}, Params: map[string]string{"peers": "zero"}, Budget: sim.Budget{Resets: livecheck.None}},
			2, map[string]string{"proposers": "1", "peers": "zero"}, sim.Budget{Errors: 1},
			[]set{{Bug: "b", Name: "nodes", Value: "2"}}, []string{"b needs peers=all; you gave zero", "b needs at least 1 reset; you gave 0"}},
		{"two bugs that need different values", livecheck.Config{Bugs: []string{"c", "b"}, Budget: unset},
			2, map[string]string{"proposers": "1", "peers": "all"}, sim.Budget{Resets: 1, Errors: 1},
			[]set{{Bug: "b", Name: "nodes", Value: "2"}, {Bug: "b", Name: "peers", Value: "all"}, {Bug: "b", Name: "resets", Value: "1"}}, []string{"c needs peers=ring; the check uses all"}},
		{"needs that depend on the bug's value", livecheck.Config{Bugs: []string{"q=3"}, Budget: unset},
			6, map[string]string{"proposers": "2", "peers": "zero"}, sim.Budget{Errors: 1},
			[]set{{Bug: "q=3", Name: "nodes", Value: "6"}, {Bug: "q=3", Name: "proposers", Value: "2"}}, nil},
		{"no bugs: the system's defaults", livecheck.Config{Budget: unset},
			3, map[string]string{"proposers": "1", "peers": "zero"}, sim.Budget{Errors: 1},
			nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := needsSystem.Normalize(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Nodes != tc.nodes || !reflect.DeepEqual(cfg.Params, tc.params) || livecheck.Counts(cfg.Budget) != tc.budget {
				t.Errorf("normalized to %d nodes, %v, %+v; want %d, %v, %+v", cfg.Nodes, cfg.Params, cfg.Budget, tc.nodes, tc.params, tc.budget)
			}
			// A normalized budget says None for none: normalized
			// again, it is the same.
			for _, v := range []int{cfg.Budget.Resets, cfg.Budget.Drops, cfg.Budget.Errors} {
				if v == 0 {
					t.Errorf("normalized budget %+v: 0 would take the default again", cfg.Budget)
				}
			}
			if again, err := needsSystem.Normalize(cfg); err != nil || !reflect.DeepEqual(again, cfg) {
				t.Errorf("normalized again: %+v, %v; was %+v", again, err, cfg)
			}
			from, warnings := needsSystem.BugSettings(tc.cfg)
			if !reflect.DeepEqual(from, tc.from) || !reflect.DeepEqual(warnings, tc.warnings) {
				t.Errorf("from the bugs %v, warnings %q; want %v, %q", from, warnings, tc.from, tc.warnings)
			}
		})
	}
	_, err := needsSystem.Normalize(livecheck.Config{Budget: sim.Budget{Drops: -2}})
	if want := "drop budget -2: a count of failures, 0 for the default, or None (-1) for none"; err == nil || err.Error() != want {
		t.Errorf("a negative budget: %v; want %s", err, want)
	}
}

// A bad definition is an error that names the field, never a panic.
func TestBadSystemDefinitions(t *testing.T) {
	node := func(sim.NodeID) sim.Node { return &echo{} }
	prop := properties.Always("fine", "always", func(*sim.State) error { return nil })
	build := func(m *livecheck.Model) func(livecheck.Config) (*livecheck.Model, error) {
		return func(livecheck.Config) (*livecheck.Model, error) { return m, nil }
	}
	good := build(&livecheck.Model{Spec: sim.Spec{New: node}, Properties: []properties.Property{prop}})
	for _, tc := range []struct {
		name string
		sys  livecheck.System
		want string
	}{
		{"no build", livecheck.System{Name: "x"},
			`system "x": Build is nil: it builds the model (nodes and properties) for a configuration`},
		{"no name", livecheck.System{Build: good},
			`system "": Name must be lowercase letters, digits and dashes, starting with a letter`},
		{"node bounds", livecheck.System{Name: "x", MinNodes: 4, MaxNodes: 2, Build: good},
			`system "x": MinNodes is 4, more than MaxNodes, 2`},
		{"default outside the bounds", livecheck.System{Name: "x", DefaultNodes: 5, MaxNodes: 4, Build: good},
			`system "x": DefaultNodes is 5, outside MinNodes to MaxNodes (0 to 4)`},
		{"two bugs of one name", livecheck.System{Name: "x", Bugs: []livecheck.Bug{{Name: "b"}, {Name: "b"}}, Build: good},
			`system "x": Bugs: a bug's Name must be given, and once: "b"`},
		{"nil model", livecheck.System{Name: "x", Build: build(nil)},
			`system "x": Build: it returned a nil *Model and no error`},
		{"no nodes", livecheck.System{Name: "x", Build: build(&livecheck.Model{Properties: []properties.Property{prop}})},
			`system "x": Build: Model.Spec.New is nil: it makes each node`},
		{"two properties of one name", livecheck.System{Name: "x", Build: build(&livecheck.Model{Spec: sim.Spec{New: node}, Properties: []properties.Property{prop, prop}})},
			`system "x": Build: Model.Properties: two properties are named "fine"`},
		{"Spec.Nodes set otherwise", livecheck.System{Name: "x", Build: build(&livecheck.Model{Spec: sim.Spec{New: node, Nodes: 5}, Properties: []properties.Property{prop}})},
			`system "x": Build: Model.Spec.Nodes is 5 but the configuration has 3 nodes (leave it 0: livecheck sets it)`},
		{"Spec.Budget set otherwise", livecheck.System{Name: "x", Build: build(&livecheck.Model{Spec: sim.Spec{New: node, Budget: sim.Budget{Drops: 1}}, Properties: []properties.Property{prop}})},
			`system "x": Build: Model.Spec.Budget is {Resets:0 Drops:1 Errors:0 Dups:0 Partitions:0 Crashes:0} but the configuration's is {Resets:0 Drops:0 Errors:0 Dups:0 Partitions:0 Crashes:0} (leave it zero and set System.DefaultBudget: livecheck sets it)`},
	} {
		_, err := livecheck.Check(&tc.sys, livecheck.Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// bare is a node with no properties to keep: it pings its successor
// once, and, as Bad says, panics on the ping or never returns from it.
type bare struct {
	Bad   string `livecheck:"-"`
	Pings int
}

type barePing struct{}

func (b *bare) Init(ctx sim.Context) {
	ctx.Send(sim.NodeID((int(ctx.Self())+1)%ctx.Nodes()), barePing{})
}
func (b *bare) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch b.Bad {
	case "panic":
		panic("a ping")
	case "hang":
		select {}
	}
	b.Pings++
}
func (b *bare) Timer(sim.Context, string)     {}
func (b *bare) App(sim.Context, sim.AppCall)  {}
func (b *bare) Error(sim.Context, sim.NodeID) {}

// A model with no properties of its own is checked for the built-in
// ones: no handler panics, every handler returns.
func TestNoProperties(t *testing.T) {
	sys := func(bad string) *livecheck.System {
		return &livecheck.System{Name: "bare", Build: func(livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &bare{Bad: bad} }}}, nil
		}}
	}
	for _, tc := range []struct {
		bad      string
		verdict  livecheck.Verdict
		property string
	}{{"", livecheck.OK, ""}, {"panic", livecheck.SafetyViolation, "no-panic"}, {"hang", livecheck.LivenessViolation, livecheck.DivergenceProperty}} {
		res, err := livecheck.Check(sys(tc.bad), livecheck.Options{Time: livecheck.NoTimeLimit, HandlerTimeout: 50 * time.Millisecond, ConfirmTimeout: 500 * time.Millisecond})
		if err != nil {
			t.Fatalf("%q: %v", tc.bad, err)
		}
		if res.Verdict != tc.verdict || res.Property != tc.property || (tc.verdict == livecheck.OK && res.Stats.States != 8) {
			t.Errorf("%q: %s of %q (%d states): %s; want %s of %q", tc.bad, res.Verdict, res.Property, res.Stats.States, res.Message, tc.verdict, tc.property)
		}
	}
}

// The smallest system is a name and a Build: three nodes, properties
// listed from the model, and Spec.Nodes and Spec.Budget may repeat the
// configuration's.
func TestSmallestSystem(t *testing.T) {
	sys := &livecheck.System{Name: "tiny", Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
		return &livecheck.Model{Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &echo{} }, Nodes: cfg.Nodes, Budget: cfg.Budget},
			Properties: []properties.Property{properties.Eventually("quiet", "nothing to do", func(*sim.State) bool { return true })}}, nil
	}}
	res, err := livecheck.Check(sys, livecheck.Options{})
	if err != nil || res.Verdict != livecheck.OK || res.Config.Nodes != 3 || res.Stats.States != 9 {
		t.Fatalf("%v, %+v", err, res)
	}
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"list"}, &out, &errs, sys); code != 0 || out.String() != "tiny: ; bugs: none; properties: quiet\n    quiet (liveness: nothing to do)\n" {
		t.Errorf("list: exit %d %q %q", code, out.String(), errs.String())
	}
}

// Issue 25, item 12: a failure the transport cannot have (drops and
// duplicates on streams, socket errors on datagrams) is counted as none,
// so that no report says "1 drop" where nothing can be dropped, and
// BudgetWarnings says so to the user who asked for it.
func TestBudgetTheTransportCannotHave(t *testing.T) {
	prop := properties.Always("fine", "always", func(*sim.State) error { return nil })
	const (
		onStreams   = "x's messages travel on streams, where none is dropped or duplicated on its own (--socket-errors breaks a connection)"
		onDatagrams = "x's messages are datagrams, with no connection to break (--drops loses one)"
	)
	for _, tc := range []struct {
		transport      sim.Transport
		given, counted sim.Budget
		warnings       []string
	}{
		{sim.Stream, sim.Budget{Resets: 1, Drops: 1, Dups: 2, Errors: 1, Partitions: 1}, sim.Budget{Resets: 1, Errors: 1, Partitions: 1},
			[]string{"--drops 1 has no effect: " + onStreams, "--dups 2 has no effect: " + onStreams}},
		{sim.Stream, sim.Budget{Drops: livecheck.None, Errors: 2}, sim.Budget{Errors: 2}, nil},
		{sim.Datagram, sim.Budget{Drops: 1, Dups: 1, Errors: 3}, sim.Budget{Drops: 1, Dups: 1},
			[]string{"--socket-errors 3 has no effect: " + onDatagrams}},
	} {
		sys := &livecheck.System{Name: "x", Build: func(livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &echo{} }, Transport: tc.transport}, Properties: []properties.Property{prop}}, nil
		}}
		cfg, m, err := sys.Model(livecheck.Config{Budget: tc.given})
		if err != nil {
			t.Fatal(err)
		}
		if livecheck.Counts(cfg.Budget) != tc.counted || m.Spec.Budget != tc.counted {
			t.Errorf("%v %+v: the configuration counts %+v, the world %+v; want %+v", tc.transport, tc.given, livecheck.Counts(cfg.Budget), m.Spec.Budget, tc.counted)
		}
		if again, _, err := sys.Model(cfg); err != nil || !reflect.DeepEqual(again, cfg) {
			t.Errorf("%v %+v: built again, %+v, %v; was %+v", tc.transport, tc.given, again, err, cfg)
		}
		if got := sys.BudgetWarnings(livecheck.Config{Budget: tc.given}); !reflect.DeepEqual(got, tc.warnings) {
			t.Errorf("%v %+v: warnings %q, want %q", tc.transport, tc.given, got, tc.warnings)
		}
	}
}
