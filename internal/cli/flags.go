package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/walk"
	"github.com/spf13/pflag"
)

// systemFirst takes the system's name off the front of args, so that its
// own parameters can become flags before the rest is parsed.
func (c *command) systemFirst(args []string) (*protocol.System, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil, args, nil
	}
	sys, err := c.lookup(args[0])
	return sys, args[1:], err
}

// configFlags say which configuration of a system to run: check and
// prefix take them. The system's own parameters become flags of their
// own names.
type configFlags struct {
	nodes  *int
	bugs   *[]string
	params map[string]*string
	flags  map[string]string // a parameter's flag, by its name
}

// addConfigFlags adds the configuration's flags to fs. A parameter whose
// name is a flag fs has already (run's --peers, for RandTree's peers) is
// given as --param-NAME instead (paramFlag).
func addConfigFlags(fs *pflag.FlagSet, sys *protocol.System, bugDoc string) *configFlags {
	f := &configFlags{
		nodes:  fs.Int("nodes", 0, "number of nodes (default: the system's)"),
		bugs:   fs.StringArray("bug", nil, bugDoc),
		params: map[string]*string{},
		flags:  map[string]string{},
	}
	if sys != nil {
		for _, p := range sys.Params {
			name := paramFlag(fs, p.Name)
			f.flags[p.Name] = name
			f.params[p.Name] = fs.String(name, p.Default, p.Doc)
		}
	}
	return f
}

// paramFlag is the flag of the system parameter name in fs: its name,
// or param-NAME where fs has a flag of that name already.
func paramFlag(fs *pflag.FlagSet, name string) string {
	if fs.Lookup(name) != nil {
		return "param-" + name
	}
	return name
}

// config is the configuration the flags give: a flag left out is the
// zero value, which takes the default. A parameter given empty is an
// error: "" would pass for the default without saying so.
func (f *configFlags) config(fs *pflag.FlagSet, sys *protocol.System) (protocol.Config, error) {
	cfg := protocol.Config{Nodes: *f.nodes, Bugs: *f.bugs, Params: map[string]string{}}
	for _, p := range sys.Params {
		v := f.params[p.Name]
		if !fs.Changed(f.flags[p.Name]) {
			continue
		}
		if strings.TrimSpace(*v) == "" {
			def := "its default"
			if p.Default != "" {
				def += " (" + p.Default + ")"
			}
			return cfg, fmt.Errorf("--%s is given empty: leave it out for %s, or give %s", p.Name, def, p.Doc)
		}
		cfg.Params[p.Name] = *v
	}
	return cfg, nil
}

// walkFlags say how walks draw their events: check and prefix take them.
type walkFlags struct {
	seed    *int64
	weights *string
}

func addWalkFlags(fs *pflag.FlagSet, seedDoc, weightsExample string) *walkFlags {
	return &walkFlags{
		seed:    fs.Int64("seed", 1, seedDoc),
		weights: fs.String("weights", "", "walk weights by event kind, e.g. "+weightsExample+" (default: the system's)"),
	}
}

// parseWeights reads --weights over the default weights.
func (f *walkFlags) parseWeights() (walk.Weights, error) {
	return walk.ParseWeights(*f.weights, walk.DefaultWeights)
}

// traceFlags are the flags of the commands that replay a trace file
// (replay, report, debug); vs is nil for replay, which shows one path.
type traceFlags struct {
	timeout *time.Duration
	vs      *string
}

func addTraceFlags(fs *pflag.FlagSet, vsDoc string) *traceFlags {
	f := &traceFlags{}
	if vsDoc != "" {
		f.vs = fs.String("vs", "", vsDoc)
	}
	f.timeout = fs.Duration("handler-timeout", check.DefaultHandlerTimeout, handlerTimeoutDoc)
	return f
}

const handlerTimeoutDoc = "how long one handler may run before it counts as stuck"

// traceArg reads the one trace file the command cmd was given and finds
// its system; a problem is cmd's usage error (its exit code, and false).
func (c *command) traceArg(cmd string, fs *pflag.FlagSet) (string, *reports.Trace, *protocol.System, int, bool) {
	if fs.NArg() != 1 {
		return "", nil, nil, c.usageErr(cmd, "give exactly one trace file"), false
	}
	file := fs.Arg(0)
	t, err := reports.ReadTraceFile(file)
	if err != nil {
		return "", nil, nil, c.usageErr(cmd, "%v", err), false
	}
	sys, err := c.lookup(t.System)
	if err != nil {
		return "", nil, nil, c.usageErr(cmd, "%s: %v", file, err), false
	}
	return file, t, sys, 0, true
}

// parseShard reads --shard's I/N: decimal digits, leading zeros read as
// decimal (01/16 is 1/16, as seq -w numbers a batch's jobs), no sign.
func parseShard(s string) (search.Shard, error) {
	bad := fmt.Errorf("takes I/N, the slice I of N in decimal digits with 0 <= I < N (e.g. 2/4), not %q", s)
	is, ns, ok := strings.Cut(s, "/")
	if !ok || !digits(is) || !digits(ns) {
		return search.Shard{}, bad
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return search.Shard{}, bad
	}
	return search.Shard{Index: i, Count: n}, nil
}

// digits says whether s is one or more decimal digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
