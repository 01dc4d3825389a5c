package livecheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/walk"
)

// A System is a protocol livecheck can check: how to build its world for a
// configuration, its properties and its injectable bugs.
type System struct {
	Name string // flag-safe identifier: "lcr", "randtree"
	Doc  string // one line

	// DefaultNodes, MinNodes and MaxNodes bound the number of nodes.
	DefaultNodes, MinNodes, MaxNodes int
	// DefaultDepth is the search depth when none is given (0: 20).
	DefaultDepth int
	// PrefixDepth is the search depth from a live prefix when none is
	// given (0: DefaultDepth). From a live state no path ends early (it
	// has not left the live states yet), so the space grows much faster
	// with depth than from the initial state.
	PrefixDepth int
	// DefaultBudget is the failure budget when none is given: a budget
	// field below 0 in a Config takes the system's value.
	DefaultBudget sim.Budget
	// Bugs are the slips that can be injected by name; none is the default.
	Bugs []Bug
	// Params are the system's own settings (the CLI makes each a flag).
	Params []Param
	// Properties lists the properties' names and docs, for `livecheck list`;
	// Build returns the properties themselves.
	Properties []PropertyDoc

	// Build returns the model for a configuration that has been checked
	// against Bugs, Params and the node bounds.
	Build func(cfg Config) (*Model, error)
}

// A Bug is a named, injectable slip in a system's code. A bug with an Arg
// takes a value, given as NAME=VALUE ("quorum=1").
type Bug struct {
	Name string
	Doc  string
	// Arg names the bug's value in docs ("K"); empty for a bug without one.
	Arg string
}

// A Param is a system's own setting, given as a string.
type Param struct {
	Name    string
	Doc     string
	Default string // "" means the system picks a default from the node count
}

// PropertyDoc names and describes one property of a system.
type PropertyDoc struct {
	Name string
	Kind properties.Kind
	Doc  string
}

// Config is one configuration of a system. A budget field below 0 means
// the system's default.
type Config struct {
	Nodes  int               `json:"nodes"`
	Bugs   []string          `json:"bugs"`
	Params map[string]string `json:"params,omitempty"`
	Budget sim.Budget        `json:"budget"`
}

// HasBug says whether bug name is injected (with or without a value).
func (c *Config) HasBug(name string) bool {
	_, ok := c.BugArg(name)
	return ok
}

// BugArg returns the value given to bug name (NAME=VALUE), and whether the
// bug is injected at all.
func (c *Config) BugArg(name string) (string, bool) {
	for _, b := range c.Bugs {
		n, v, _ := strings.Cut(b, "=")
		if n == name {
			return v, true
		}
	}
	return "", false
}

// Param returns the value of a parameter ("" when not given).
func (c *Config) Param(name string) string { return c.Params[name] }

// A Model is a system built for one configuration.
type Model struct {
	Spec       sim.Spec
	Properties []properties.Property
	// Weights are the system's walk weights (nil: walk.DefaultWeights).
	Weights *walk.Weights
}

// BugNames returns the names of the system's bugs, with "=ARG" for those
// that take a value.
func (s *System) BugNames() []string {
	out := make([]string, len(s.Bugs))
	for i, b := range s.Bugs {
		out[i] = b.Name
		if b.Arg != "" {
			out[i] += "=" + b.Arg
		}
	}
	return out
}

// Normalize fills in the defaults of cfg and checks it against the system.
// The error says what is wrong and what is valid.
func (s *System) Normalize(cfg Config) (Config, error) {
	if cfg.Nodes == 0 {
		cfg.Nodes = s.DefaultNodes
	}
	if cfg.Nodes < s.MinNodes || (s.MaxNodes > 0 && cfg.Nodes > s.MaxNodes) {
		return cfg, fmt.Errorf("%s needs %d to %d nodes, not %d", s.Name, s.MinNodes, s.MaxNodes, cfg.Nodes)
	}
	bugs := slices.Clone(cfg.Bugs)
	for _, b := range bugs {
		name, arg, hasArg := strings.Cut(b, "=")
		i := slices.IndexFunc(s.Bugs, func(x Bug) bool { return x.Name == name })
		if i < 0 {
			valid := "none"
			if len(s.Bugs) > 0 {
				valid = strings.Join(s.BugNames(), ", ")
			}
			return cfg, fmt.Errorf("%s has no bug %q (valid: %s)", s.Name, b, valid)
		}
		switch want := s.Bugs[i].Arg; {
		case want != "" && (!hasArg || arg == ""):
			return cfg, fmt.Errorf("bug %s takes a value: %s=%s", name, name, want)
		case want == "" && hasArg:
			return cfg, fmt.Errorf("bug %s takes no value, so %q is not valid", name, b)
		}
		for _, o := range bugs {
			if on, _, _ := strings.Cut(o, "="); on == name && o != b {
				return cfg, fmt.Errorf("bug %s is given twice with different values: %q and %q", name, b, o)
			}
		}
	}
	sort.Strings(bugs)
	cfg.Bugs = slices.Compact(bugs)
	if cfg.Bugs == nil {
		cfg.Bugs = []string{}
	}
	params := map[string]string{}
	for k, v := range cfg.Params {
		if !slices.ContainsFunc(s.Params, func(p Param) bool { return p.Name == k }) {
			var valid []string
			for _, p := range s.Params {
				valid = append(valid, p.Name)
			}
			if len(valid) == 0 {
				valid = []string{"none"}
			}
			return cfg, fmt.Errorf("%s has no parameter %q (valid: %s)", s.Name, k, strings.Join(valid, ", "))
		}
		params[k] = v
	}
	for _, p := range s.Params {
		if _, ok := params[p.Name]; !ok && p.Default != "" {
			params[p.Name] = p.Default
		}
	}
	if len(params) == 0 {
		params = nil
	}
	cfg.Params = params
	for _, b := range []struct {
		v   *int
		def int
	}{
		{&cfg.Budget.Resets, s.DefaultBudget.Resets},
		{&cfg.Budget.Drops, s.DefaultBudget.Drops},
		{&cfg.Budget.Errors, s.DefaultBudget.Errors},
	} {
		if *b.v < 0 {
			*b.v = b.def
		}
	}
	return cfg, nil
}

// Model checks cfg and builds the system's model for it.
func (s *System) Model(cfg Config) (Config, *Model, error) {
	cfg, err := s.Normalize(cfg)
	if err != nil {
		return cfg, nil, err
	}
	m, err := s.Build(cfg)
	if err != nil {
		return cfg, nil, err
	}
	m.Spec.Nodes = cfg.Nodes
	m.Spec.Budget = cfg.Budget
	if err := properties.Validate(m.Properties); err != nil {
		return cfg, nil, fmt.Errorf("system %s: %w", s.Name, err)
	}
	return cfg, m, m.Spec.Validate()
}

// Docs returns the names, kinds and docs of properties, for System.Properties.
func Docs(props ...properties.Property) []PropertyDoc {
	out := make([]PropertyDoc, len(props))
	for i, p := range props {
		out[i] = PropertyDoc{Name: p.Name, Kind: p.Kind, Doc: p.Doc}
	}
	return out
}
