package protocol

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// A System is a protocol livecheck can check: how to build its world for a
// configuration, its properties and its injectable bugs.
//
// The smallest complete System is a Name and a Build that returns a
// model with a node constructor (Spec.New) and properties; every other
// field is optional. The defaults are the same for Check, Test and the
// command (Main): the options and flags left out take them. A bad
// definition is an error naming the field (see Validate), never a panic.
type System struct {
	Name string // flag-safe identifier: "lcr", "randtree"
	Doc  string // one line

	// DefaultNodes, MinNodes and MaxNodes bound the number of nodes; all
	// are optional. MinNodes 0 means 1 and MaxNodes 0 no upper bound;
	// DefaultNodes 0 means 3, raised to MinNodes and lowered to MaxNodes.
	DefaultNodes, MinNodes, MaxNodes int
	// DefaultDepth is the search depth when none is given (0: 20).
	DefaultDepth int
	// PrefixDepth is the search depth from a live prefix when none is
	// given (0: DefaultDepth). From a live state no path ends early (it
	// has not left the live states yet), so the space grows much faster
	// with depth than from the initial state.
	PrefixDepth int
	// DefaultBudget is the failure budget when none is given: a budget
	// field a Config leaves 0 takes the bugs' needs, then this.
	DefaultBudget sim.Budget
	// Bugs are the slips that can be injected by name; none is the default.
	Bugs []Bug
	// Params are the system's own settings (the CLI makes each a flag).
	Params []Param
	// Properties lists the properties' names and docs, for `livecheck
	// list`. Leave it empty, and the list is that of the model Build
	// returns for the default configuration, so the properties are
	// written once, in Build; set it when some configurations have
	// properties that the default one lacks.
	Properties []PropertyDoc

	// Build returns the model for a configuration that has been checked
	// against Bugs, Params and the node bounds (required). Its budget
	// counts failures (0: none; Build never sees None). It leaves
	// Spec.Nodes and Spec.Budget zero, or sets them to the configuration's
	// Nodes and Budget: livecheck sets them, and refuses other values.
	Build func(cfg Config) (*Model, error)
}

// A Bug is a named, injectable slip in a system's code. A bug with an Arg
// takes a value, given as NAME=VALUE ("quorum=1").
type Bug struct {
	Name string
	Doc  string
	// Arg names the bug's value in docs ("K"); empty for a bug without one.
	Arg string
	// Needs is the smallest configuration that shows the bug: a check with
	// the bug takes it for every setting the user did not give, before the
	// system's defaults.
	Needs Needs
	// NeedsArg, when set, gives the needs of a bug with an Arg for the
	// value given (Needs when the value is not valid), and NeedsDoc says
	// them in words for `livecheck list` ("--nodes 2K --proposers 2").
	NeedsArg func(arg string) Needs
	NeedsDoc string
	// Example is, for a bug with an Arg, a value that shows it ("1" for
	// quorum=K): the one the finding-power table (bench/findings) checks.
	Example string
}

// Needs is a configuration a bug needs to show: nodes, parameters and
// failures, never how hard to search. A zero field needs nothing.
type Needs struct {
	// Nodes is the fewest nodes that show the bug.
	Nodes int
	// Params are parameter values: a number is the least value that shows
	// the bug, anything else the one value that does.
	Params map[string]string
	// Budget is the fewest failures of each kind that show the bug.
	Budget sim.Budget
}

// A Setting is one setting of a configuration that a bug's needs supplied.
type Setting struct {
	Bug string `json:"bug"`
	// Name is "nodes", a parameter's name, "resets", "drops",
	// "socket-errors", "dups" or "partitions": the CLI's flag for it.
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (s Setting) String() string { return "--" + s.Name + " " + s.Value }

// needs returns the needs of the bug given as NAME or NAME=VALUE.
func (b *Bug) needs(given string) Needs {
	if _, arg, ok := strings.Cut(given, "="); ok && b.NeedsArg != nil {
		return b.NeedsArg(arg)
	}
	return b.Needs
}

// Settings returns a bug's needs as settings, in a fixed order.
func (n Needs) Settings(bug string) []Setting {
	var out []Setting
	if n.Nodes > 0 {
		out = append(out, Setting{Bug: bug, Name: "nodes", Value: strconv.Itoa(n.Nodes)})
	}
	for _, k := range slices.Sorted(maps.Keys(n.Params)) {
		out = append(out, Setting{Bug: bug, Name: k, Value: n.Params[k]})
	}
	for _, f := range budgetFields(&n.Budget) {
		if *f.v > 0 {
			out = append(out, Setting{Bug: bug, Name: f.flag, Value: strconv.Itoa(*f.v)})
		}
	}
	return out
}

type budgetField struct {
	v          *int
	flag, word string // the CLI's flag; the failure in words, singular
}

func budgetFields(b *sim.Budget) []budgetField {
	return []budgetField{{&b.Resets, "resets", "reset"}, {&b.Drops, "drops", "drop"}, {&b.Errors, "socket-errors", "socket error"},
		{&b.Dups, "dups", "duplicate"}, {&b.Partitions, "partitions", "partition"}, {&b.Crashes, "crashes", "crash"}}
}

// neededBy returns the needs of each bug of cfg that the system has, by
// name in sorted order, and their union: the larger of each number, and
// for another parameter value the first bug's.
func (s *System) neededBy(cfg Config) (names []string, each []Needs, union Needs) {
	bugs := slices.Clone(cfg.Bugs)
	sort.Strings(bugs)
	union.Params = map[string]string{}
	for _, b := range slices.Compact(bugs) {
		name, _, _ := strings.Cut(b, "=")
		i := slices.IndexFunc(s.Bugs, func(x Bug) bool { return x.Name == name })
		if i < 0 {
			continue // Normalize says so
		}
		n := s.Bugs[i].needs(b)
		names, each = append(names, b), append(each, n)
		union.Nodes = max(union.Nodes, n.Nodes)
		for k, v := range n.Params {
			old, ok := union.Params[k]
			if ge := atLeast(old, v); !ok || ge != nil && !*ge {
				union.Params[k] = v
			}
		}
		uf, nf := budgetFields(&union.Budget), budgetFields(&n.Budget)
		for j := range uf {
			*uf[j].v = max(*uf[j].v, *nf[j].v)
		}
	}
	return names, each, union
}

// atLeast compares two numeric parameter values: whether got >= want; nil
// when either is not a number.
func atLeast(got, want string) *bool {
	g, err1 := strconv.Atoi(strings.TrimSpace(got))
	w, err2 := strconv.Atoi(strings.TrimSpace(want))
	if err1 != nil || err2 != nil {
		return nil
	}
	ok := g >= w
	return &ok
}

// meets says whether a parameter value got satisfies a need want.
func meets(got, want string) bool {
	if ge := atLeast(got, want); ge != nil {
		return *ge
	}
	return got == want
}

// BugSettings says how cfg (as given, before Normalize) stands with its
// bugs' needs: the settings that the needs supply because cfg leaves them
// unset, and a warning for each need that the configuration checked
// cannot meet, because the user gave another value or two bugs need
// different ones ("last-promise needs at least 2 proposers; you gave 1").
func (s *System) BugSettings(cfg Config) (from []Setting, warnings []string) {
	names, each, _ := s.neededBy(cfg)
	final, err := s.Normalize(cfg)
	if err != nil {
		return nil, nil
	}
	supplied := map[string]bool{}
	for i, n := range each {
		for _, st := range n.Settings(names[i]) {
			if supplied[st.Name] || !unset(cfg, st.Name) || finalValue(final, st.Name) != st.Value {
				continue
			}
			supplied[st.Name] = true
			from = append(from, st)
		}
	}
	for i, n := range each {
		for _, st := range n.Settings(names[i]) {
			got := finalValue(final, st.Name)
			if meets(got, st.Value) {
				continue
			}
			gave := "you gave " + got
			if unset(cfg, st.Name) {
				gave = "the check uses " + got
			}
			warnings = append(warnings, fmt.Sprintf("%s needs %s; %s", st.Bug, needWords(st), gave))
		}
	}
	return from, warnings
}

// BudgetWarnings says which failures cfg (as given, before Normalize)
// asks for that the system's transport cannot have: drops and
// duplicates on streams, socket errors on datagrams. The value is legal
// but has no effect: Model counts none of them.
func (s *System) BudgetWarnings(cfg Config) []string {
	_, m, err := s.Model(cfg)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range budgetFields(&cfg.Budget) {
		if *f.v <= 0 || !cannot(m.Spec.Transport, f.flag) {
			continue
		}
		why := fmt.Sprintf("%s's messages travel on streams, where none is dropped or duplicated on its own (--socket-errors breaks a connection)", s.Name)
		if m.Spec.Transport == sim.Datagram {
			why = fmt.Sprintf("%s's messages are datagrams, with no connection to break (--drops loses one)", s.Name)
		}
		out = append(out, fmt.Sprintf("--%s %d has no effect: %s", f.flag, *f.v, why))
	}
	return out
}

// cannot says whether a world of transport t has no failure of the
// budget field named flag: drops and duplicates are of datagrams, socket
// errors of streams.
func cannot(t sim.Transport, flag string) bool {
	if t == sim.Stream {
		return flag == "drops" || flag == "dups"
	}
	return flag == "socket-errors"
}

// unset says whether cfg leaves the setting named name to the defaults.
func unset(cfg Config, name string) bool {
	switch name {
	case "nodes":
		return cfg.Nodes == 0
	case "resets":
		return cfg.Budget.Resets == 0
	case "drops":
		return cfg.Budget.Drops == 0
	case "socket-errors":
		return cfg.Budget.Errors == 0
	case "dups":
		return cfg.Budget.Dups == 0
	case "partitions":
		return cfg.Budget.Partitions == 0
	case "crashes":
		return cfg.Budget.Crashes == 0
	}
	_, ok := cfg.Params[name]
	return !ok
}

// finalValue is the value of the setting named name in a normalized cfg.
func finalValue(cfg Config, name string) string {
	cfg.Budget = Counts(cfg.Budget)
	switch name {
	case "nodes":
		return strconv.Itoa(cfg.Nodes)
	case "resets":
		return strconv.Itoa(cfg.Budget.Resets)
	case "drops":
		return strconv.Itoa(cfg.Budget.Drops)
	case "socket-errors":
		return strconv.Itoa(cfg.Budget.Errors)
	case "dups":
		return strconv.Itoa(cfg.Budget.Dups)
	case "partitions":
		return strconv.Itoa(cfg.Budget.Partitions)
	case "crashes":
		return strconv.Itoa(cfg.Budget.Crashes)
	}
	return cfg.Params[name]
}

// needWords says a need in words: "at least 2 proposers", "peers=all".
func needWords(st Setting) string {
	for _, f := range budgetFields(&sim.Budget{}) {
		if f.flag == st.Name {
			word := f.word
			switch {
			case st.Value == "1":
			case f.flag == "crashes":
				word += "es"
			default:
				word += "s"
			}
			return "at least " + st.Value + " " + word
		}
	}
	if atLeast(st.Value, st.Value) != nil {
		return "at least " + st.Value + " " + st.Name
	}
	return st.Name + "=" + st.Value
}

// A Param is a system's own setting, given as a string.
type Param struct {
	Name    string
	Doc     string
	Default string // "" means the system picks a default from the node count

	// Int makes the parameter a whole number from Min to Max. Max 0 sets
	// no upper bound, and MaxNodes makes it the number of nodes. Normalize
	// checks the value, in the one wording of WholeNumber, so that Build
	// reads it with Config.IntParam and checks only what a range cannot
	// say (an even number, say).
	Int      bool
	Min, Max int
	MaxNodes bool
}

// WholeNumber parses s as a whole number from lo to hi (hi 0: no upper
// bound). The error names s as what and, where of is given, says what hi
// counts: `--proposers must be a whole number from 1 to 3 (the number of
// nodes), not "9"`.
func WholeNumber(s, what string, lo, hi int, of string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	switch {
	case err == nil && v >= lo && (hi == 0 || v <= hi):
		return v, nil
	case hi == 0:
		return 0, fmt.Errorf("%s must be a whole number of at least %d, not %q", what, lo, s)
	case of != "":
		return 0, fmt.Errorf("%s must be a whole number from %d to %d (the number of %s), not %q", what, lo, hi, of, s)
	}
	return 0, fmt.Errorf("%s must be a whole number from %d to %d, not %q", what, lo, hi, s)
}

// check returns the value of an Int parameter as a whole number in its
// range, for a configuration of nodes nodes.
func (p *Param) check(value string, nodes int) (int, error) {
	if p.MaxNodes {
		return WholeNumber(value, "--"+p.Name, p.Min, nodes, "nodes")
	}
	return WholeNumber(value, "--"+p.Name, p.Min, p.Max, "")
}

// PropertyDoc names and describes one property of a system.
type PropertyDoc struct {
	Name string
	Kind properties.Kind
	Doc  string
}

// Config is one configuration of a system. Its zero value, and each zero
// field, means what the command does with the flag left out: Nodes 0
// takes the bugs' needs, then the system's default; a budget field 0 takes
// the bugs' needs, then the system's DefaultBudget. A budget field of
// None says none of that failure, as the command's --resets 0 does.
//
// A normalized Config (System.Normalize, Result.Config) has no zero
// budget field: each is a count or None, so that it means the same when
// it is given again (to Check, Replay). In its JSON, -1 is None.
type Config struct {
	Nodes  int               `json:"nodes"`
	Bugs   []string          `json:"bugs"`
	Params map[string]string `json:"params,omitempty"`
	Budget sim.Budget        `json:"budget"`
}

// None, in a budget field of a Config, says "none of this failure": the
// command's --resets 0, --drops 0 and so on. It cannot be 0,
// which takes the default as a flag left out does.
const None = -1

// NoFailures is the budget of a Config that allows no failure of any
// kind, whatever the system's DefaultBudget or the bugs' needs.
var NoFailures = sim.Budget{Resets: None, Drops: None, Errors: None, Dups: None, Partitions: None, Crashes: None}

// Counts returns a Config's budget as counts of failures, None as 0: what
// a run may inject, as reports and trace files give it.
func Counts(b sim.Budget) sim.Budget {
	for _, f := range budgetFields(&b) {
		*f.v = max(*f.v, 0)
	}
	return b
}

// Explicit returns counts as a Config's budget: 0 as None.
func Explicit(b sim.Budget) sim.Budget {
	for _, f := range budgetFields(&b) {
		if *f.v == 0 {
			*f.v = None
		}
	}
	return b
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

// IntParam returns the value of an Int parameter, which Normalize has
// checked: 0 when it is not given or not a whole number.
func (c *Config) IntParam(name string) int {
	v, _ := strconv.Atoi(c.Params[name])
	return v
}

// A Model is a system built for one configuration.
type Model struct {
	Spec       sim.Spec
	Properties []properties.Property
	// Weights are the system's walk weights (nil: sim.DefaultWeights).
	Weights *sim.Weights
	// Timers says how long each named timer waits when the nodes run
	// for real (package host); the checker ignores it, as it ignores
	// time. See Timing. Nil: DefaultTiming for every timer.
	Timers map[string]Timing
	// Messages are values of message types that the host must be able
	// to decode before it has seen one (see package host): needed only
	// for a type that a short simulated run of the system never sends.
	Messages []sim.Message
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
	// A bug's needs come first: the smallest configuration that shows it.
	_, _, need := s.neededBy(cfg)
	if cfg.Nodes == 0 {
		cfg.Nodes = need.Nodes
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = s.NodeCount()
	}
	if cfg.Nodes < max(s.MinNodes, 1) || (s.MaxNodes > 0 && cfg.Nodes > s.MaxNodes) {
		if s.MaxNodes == 0 {
			return cfg, fmt.Errorf("%s needs at least %d nodes, not %d", s.Name, max(s.MinNodes, 1), cfg.Nodes)
		}
		return cfg, fmt.Errorf("%s needs %d to %d nodes, not %d", s.Name, max(s.MinNodes, 1), s.MaxNodes, cfg.Nodes)
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
	for k, v := range need.Params {
		if _, given := cfg.Params[k]; !given {
			params[k] = v
		}
	}
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
		if v, ok := params[p.Name]; ok && p.Int {
			n, err := p.check(v, cfg.Nodes)
			if err != nil {
				return cfg, err
			}
			params[p.Name] = strconv.Itoa(n)
		}
	}
	if len(params) == 0 {
		params = nil
	}
	cfg.Params = params
	def, nf := s.DefaultBudget, budgetFields(&need.Budget)
	for i, f := range budgetFields(&cfg.Budget) {
		switch {
		case *f.v > 0 || *f.v == None:
		case *f.v < 0:
			return cfg, fmt.Errorf("%s budget %d: a count of failures, 0 for the default, or None (-1) for none", f.word, *f.v)
		case *nf[i].v > 0:
			*f.v = *nf[i].v
		default:
			*f.v = *budgetFields(&def)[i].v
		}
	}
	cfg.Budget = Explicit(cfg.Budget)
	return cfg, nil
}

// Model checks cfg and builds the system's model for it. A model that is
// not whole (nil, no Spec.New, two properties of one name, a Spec.Nodes
// or Spec.Budget other than the configuration's) is an error naming the
// field. A model with no properties is whole: a check of it checks the
// built-in ones (no handler panics, every handler returns).
func (s *System) Model(cfg Config) (Config, *Model, error) {
	if err := s.Validate(); err != nil {
		return cfg, nil, err
	}
	cfg, err := s.Normalize(cfg)
	if err != nil {
		return cfg, nil, err
	}
	built := cfg
	built.Budget = Counts(cfg.Budget)
	m, err := s.Build(built)
	if err != nil {
		return cfg, nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("system %q: Build: %s", s.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case m == nil:
		return cfg, nil, bad("it returned a nil *Model and no error")
	case m.Spec.New == nil:
		return cfg, nil, bad("Model.Spec.New is nil: it makes each node")
	case m.Spec.Nodes != 0 && m.Spec.Nodes != cfg.Nodes:
		return cfg, nil, bad("Model.Spec.Nodes is %d but the configuration has %d nodes (leave it 0: livecheck sets it)", m.Spec.Nodes, cfg.Nodes)
	case m.Spec.Budget != (sim.Budget{}) && m.Spec.Budget != built.Budget:
		return cfg, nil, bad("Model.Spec.Budget is %+v but the configuration's is %+v (leave it zero and set System.DefaultBudget: livecheck sets it)", m.Spec.Budget, built.Budget)
	}
	// A copy: a Build that hands out one *Model each time must not see
	// it changed, nor get a second set of monitors on the next call.
	mc := *m
	m = &mc
	m.Spec.Nodes = cfg.Nodes
	// A failure the transport cannot have is none, so that reports and
	// traces count only failures that can happen (BudgetWarnings tells
	// the user who asked for one).
	for _, f := range budgetFields(&cfg.Budget) {
		if cannot(m.Spec.Transport, f.flag) {
			*f.v = None
		}
	}
	m.Spec.Budget = Counts(cfg.Budget)
	if m.Spec.Budget.Partitions > 0 && m.Spec.Transport == sim.Stream {
		// sim refuses the two together (see sim.Spec.Validate): the
		// check goes on without symmetry reduction.
		m.Spec.Symmetry = nil
	}
	if err := properties.Validate(m.Properties); err != nil {
		return cfg, nil, bad("Model.Properties: %v", err)
	}
	// Each leads-to property gets its monitor, in this model only.
	m.Spec.Monitors = slices.Clip(m.Spec.Monitors)
	m.Properties = properties.Bind(&m.Spec, m.Properties)
	if err := m.Spec.Validate(); err != nil {
		return cfg, nil, bad("Model.Spec: %v", err)
	}
	return cfg, m, nil
}

// Validate checks the definition of the system, as far as it can without
// building a model (Model checks the rest): a Name that is a flag-safe
// identifier, a Build, node bounds that agree, bugs and parameters
// named once each. The error names the field.
func (s *System) Validate() error {
	if s == nil {
		return fmt.Errorf("the system is nil")
	}
	if !systemName.MatchString(s.Name) {
		return fmt.Errorf("system %q: Name must be lowercase letters, digits and dashes, starting with a letter", s.Name)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("system %q: %s", s.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case s.Build == nil:
		return bad("Build is nil: it builds the model (nodes and properties) for a configuration")
	case s.MinNodes < 0 || s.MaxNodes < 0 || s.DefaultNodes < 0:
		return bad("MinNodes, MaxNodes and DefaultNodes cannot be negative")
	case s.MaxNodes > 0 && s.MinNodes > s.MaxNodes:
		return bad("MinNodes is %d, more than MaxNodes, %d", s.MinNodes, s.MaxNodes)
	case s.DefaultNodes > 0 && (s.DefaultNodes < s.MinNodes || s.MaxNodes > 0 && s.DefaultNodes > s.MaxNodes):
		return bad("DefaultNodes is %d, outside MinNodes to MaxNodes (%d to %d)", s.DefaultNodes, s.MinNodes, s.MaxNodes)
	case s.DefaultBudget.Resets < 0 || s.DefaultBudget.Drops < 0 || s.DefaultBudget.Errors < 0 || s.DefaultBudget.Dups < 0 || s.DefaultBudget.Partitions < 0 || s.DefaultBudget.Crashes < 0:
		return bad("DefaultBudget cannot be negative")
	}
	seen := map[string]bool{}
	for _, b := range s.Bugs {
		if b.Name == "" || seen["bug "+b.Name] {
			return bad("Bugs: a bug's Name must be given, and once: %q", b.Name)
		}
		seen["bug "+b.Name] = true
	}
	for _, p := range s.Params {
		if p.Name == "" || seen["param "+p.Name] {
			return bad("Params: a parameter's Name must be given, and once: %q", p.Name)
		}
		seen["param "+p.Name] = true
		switch {
		case !p.Int && (p.Min != 0 || p.Max != 0 || p.MaxNodes):
			return bad("Params: %s has Min, Max or MaxNodes but not Int, which they bound", p.Name)
		case p.Max < 0 || p.Max > 0 && p.Max < p.Min:
			return bad("Params: %s has Max %d: give at least Min, %d, or 0 for no upper bound", p.Name, p.Max, p.Min)
		case p.MaxNodes && p.Max != 0:
			return bad("Params: %s has both Max and MaxNodes", p.Name)
		}
		if p.Int && p.Default != "" {
			// Against the node count it can only be checked in Normalize.
			if _, err := WholeNumber(p.Default, "--"+p.Name, p.Min, p.Max, ""); err != nil {
				return bad("Params: the Default of %s: %v", p.Name, err)
			}
		}
	}
	return nil
}

var systemName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Docs returns the names, kinds and docs of properties, for System.Properties.
func Docs(props ...properties.Property) []PropertyDoc {
	out := make([]PropertyDoc, len(props))
	for i, p := range props {
		out[i] = PropertyDoc{Name: p.Name, Kind: p.Kind, Doc: p.Doc}
	}
	return out
}

// NodeCount is the number of nodes when the configuration and the bugs
// give none.
func (s *System) NodeCount() int {
	if s.DefaultNodes > 0 {
		return s.DefaultNodes
	}
	n := max(3, s.MinNodes)
	if s.MaxNodes > 0 {
		n = min(n, s.MaxNodes)
	}
	return n
}

// PropertyDocs are the properties' names and docs, for `livecheck list`:
// Properties, or when the system gives none those of its default model.
func (s *System) PropertyDocs() []PropertyDoc {
	if len(s.Properties) > 0 {
		return s.Properties
	}
	if _, m, err := s.Model(Config{}); err == nil {
		return Docs(m.Properties...)
	}
	return nil
}

// ValidSystems checks the systems a command is given.
func ValidSystems(systems []*System) error {
	seen := map[string]bool{}
	for _, s := range systems {
		if err := s.Validate(); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("two systems are named %q", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}
