package livecheck_test

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/livecheck/livecheck"
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
	unset := sim.Budget{Resets: -1, Drops: -1, Errors: -1}
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
		{"a failure budget given", livecheck.Config{Bugs: []string{"b"}, Params: map[string]string{"peers": "zero"}, Budget: sim.Budget{Resets: 0, Drops: -1, Errors: -1}},
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
			if cfg.Nodes != tc.nodes || !reflect.DeepEqual(cfg.Params, tc.params) || cfg.Budget != tc.budget {
				t.Errorf("normalized to %d nodes, %v, %+v; want %d, %v, %+v", cfg.Nodes, cfg.Params, cfg.Budget, tc.nodes, tc.params, tc.budget)
			}
			from, warnings := needsSystem.BugSettings(tc.cfg)
			if !reflect.DeepEqual(from, tc.from) || !reflect.DeepEqual(warnings, tc.warnings) {
				t.Errorf("from the bugs %v, warnings %q; want %v, %q", from, warnings, tc.from, tc.warnings)
			}
		})
	}
}
