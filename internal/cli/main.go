package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/protocol"
	"github.com/spf13/pflag"
)

// The exit status of Main and Run.
const (
	ExitOK           = 0 // nothing found
	ExitViolation    = 1 // a violation found, or a trace replays to it
	ExitUsage        = 2 // a usage or input error, or a broken property
	ExitInconclusive = 3 // the check was cut short before it could tell
)

// Main is livecheck.Main; its doc says what it does.
func Main(systems ...*protocol.System) {
	// The collector's pace: see tuneGC; a GOGC in the environment is
	// the user's choice, and stays.
	if os.Getenv("GOGC") == "" {
		check.AdaptiveGC()
	}
	name := filepath.Base(os.Args[0])
	if name == "" || name == "." || strings.HasPrefix(name, "__debug_bin") {
		name = "livecheck"
	}
	bi, _ := debug.ReadBuildInfo()
	c := &command{name: name, cmd: CommandName(os.Args[0], bi), build: bi, systems: systems, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(c.run(os.Args[1:]))
}

// Run is livecheck.Run; its doc says what it does.
func Run(args []string, stdout, stderr io.Writer, systems ...*protocol.System) int {
	bi, _ := debug.ReadBuildInfo()
	c := &command{name: "livecheck", cmd: "livecheck", build: bi, systems: systems, stdin: os.Stdin, stdout: stdout, stderr: stderr}
	return c.run(args)
}

// cli is one run of the command: its name in messages, the command line
// that runs it again (CommandName) in the commands it suggests, its build
// and the systems it knows.
type command struct {
	name, cmd      string
	build          *debug.BuildInfo
	systems        []*protocol.System
	stdin          io.Reader // debug's commands
	stdout, stderr io.Writer
}

func (c *command) run(args []string) int {
	stderr, stdout, name := c.stderr, c.stdout, c.name
	if err := protocol.ValidSystems(c.systems); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, c.usage())
		return ExitUsage
	}
	switch args[0] {
	case "list":
		return c.list(args[1:])
	case "check":
		return c.check(args[1:])
	case "replay":
		return c.replay(args[1:])
	case "prefix":
		return c.prefix(args[1:])
	case "report":
		return c.report(args[1:])
	case "debug":
		return c.debug(args[1:])
	case "merge":
		return c.merge(args[1:])
	case "run":
		return c.runNode(args[1:])
	case "cluster":
		return c.cluster(args[1:])
	case "trace":
		return c.trace(args[1:])
	case "call":
		return c.call(args[1:])
	case "snapshot":
		return c.snapshot(args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, c.usage())
		return ExitOK
	case "version", "--version":
		fmt.Fprintln(stdout, Version(name, c.build))
		return ExitOK
	}
	fmt.Fprintf(stderr, "%s: unknown command %q (valid: list, check, merge, prefix, replay, report, debug, run, cluster, trace, call, snapshot)\n", name, args[0])
	return ExitUsage
}

func (c *command) usage() string {
	n := c.cmd
	return fmt.Sprintf(`%s finds safety and liveness bugs in distributed protocols.

Usage:
  %s list [--json]            the systems, their bugs and properties
  %s check SYSTEM [flags]     search SYSTEM's behaviours for a violation
  %s merge SHARD_FILES...     combine the results of a check split with --shard
  %s prefix SYSTEM [flags]    make live prefixes to start checks from (check --from)
  %s replay TRACE [--json]    re-execute a trace file step by step
  %s report TRACE --html FILE the event graph of a trace file as a web page
  %s debug TRACE [--vs LIVE]  step through a trace: commands on stdin ('help' lists them)
  %s run SYSTEM --id I --peers ADDR,... [--data DIR]  run one node for real (UDP or TCP)
  %s cluster SYSTEM [--nodes N]  run every node on loopback, one process each, and watch the properties
  %s trace LOGS... [--out FILE]  merge a real run's node logs into a trace, replaying it on the way
  %s call SYSTEM --to ADDR --key FILE  ask a running node (run --hold-calls) for its next driver call
  %s snapshot --data DIR      a consistent snapshot of a running cluster, as a prefix for check --from
  %s --version                the module version and VCS revision of this build

Run '%s COMMAND --help' for a command's flags.

Exit status: 0 nothing found, 1 violation found, 2 usage or input error,
3 inconclusive (the check was cut short before it could tell).
`, c.name, n, n, n, n, n, n, n, n, n, n, n, n, n, n)
}

// names returns the systems' names.
func (c *command) names() string {
	var out []string
	for _, s := range c.systems {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// lookup finds a system by name; the error lists the valid names.
func (c *command) lookup(name string) (*protocol.System, error) {
	for _, s := range c.systems {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown system %q (valid: %s)", name, c.names())
}

// parse parses a command's flags; it returns the exit status to use when
// the command should stop (help shown, or a usage error).
func (c *command) parse(fs *pflag.FlagSet, args []string, synopsis string) (int, bool) {
	return c.parseFlags(fs, args, synopsis, false, nil)
}

// parseSystem is parse for a command that takes a system's flags (check,
// prefix): sys is the system given first, or nil.
func (c *command) parseSystem(fs *pflag.FlagSet, args []string, synopsis string, sys *protocol.System) (int, bool) {
	return c.parseFlags(fs, args, synopsis, true, sys)
}

func (c *command) parseFlags(fs *pflag.FlagSet, args []string, synopsis string, system bool, sys *protocol.System) (int, bool) {
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(c.stdout, "%s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
		return ExitOK, true
	}
	if err != nil {
		msg := err.Error()
		var unknown *pflag.NotExistError
		if errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() == "" {
			msg = c.unknownFlag(fs, unknown.GetSpecifiedName(), system, sys)
		}
		help := c.cmd + " " + fs.Name()
		if sys != nil {
			help += " " + sys.Name
		}
		fmt.Fprintf(c.stderr, "%s %s: %s (see '%s --help')\n", c.name, fs.Name(), msg, help)
		return ExitUsage, true
	}
	return 0, false
}

func (c *command) usageErr(cmd string, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "%s %s: %s\n", c.name, cmd, fmt.Sprintf(format, args...))
	return ExitUsage
}

// interruptedLine says on stderr that cmd was interrupted, and what of
// its work is left undone, and returns the exit status of work cut short.
func (c *command) interruptedLine(cmd, undone string) int {
	fmt.Fprintf(c.stderr, "%s %s: interrupted: %s\n", c.name, cmd, undone)
	return ExitInconclusive
}

// exitCode is the exit status for a verdict.
func exitCode(v check.Verdict) int {
	switch v {
	case check.OK:
		return ExitOK
	case check.Inconclusive:
		return ExitInconclusive
	case check.PropertyError:
		return ExitUsage // the user's property is broken, not the protocol
	}
	return ExitViolation
}

// onInterrupt watches for Ctrl-C (SIGINT) and SIGTERM, the signal a
// shell's kill, a CI runner or a container stop sends: either ends a check
// early with its partial report. interrupted says whether one came; stop
// gives the signals back.
func onInterrupt() (interrupted func() bool, stop func()) {
	var got atomic.Bool
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; ok {
			got.Store(true)
		}
	}()
	return got.Load, func() {
		signal.Stop(sigs)
		close(sigs)
	}
}

// CommandName is the command line that runs this program again, for the
// commands a report suggests (replay a trace, check from a prefix): the
// program as invoked (arg0: "livecheck" found on PATH, "./bin/livecheck"),
// or, for a binary that `go run` built into a directory of its own
// (temporary, or its cache's), `go run` of its main package, from its
// module's root ("go run ./cmd/livecheck"; "go run ." for a main package
// at the root).
func CommandName(arg0 string, bi *debug.BuildInfo) string {
	base := filepath.Base(arg0)
	if arg0 == "" || strings.HasPrefix(base, "__debug_bin") {
		return "livecheck"
	}
	if !goRunBinary(arg0) {
		return arg0
	}
	if bi == nil || bi.Path == "" {
		return "go run ."
	}
	rel, ok := strings.CutPrefix(bi.Path, bi.Main.Path)
	switch {
	case !ok || bi.Main.Path == "" || (rel != "" && !strings.HasPrefix(rel, "/")):
		return "go run " + bi.Path
	case rel == "":
		return "go run ."
	}
	return "go run ." + rel
}

// goRunBinary says whether path is where `go run` puts the binary it
// builds: $TMPDIR/go-buildNNN/b001/exe/NAME, or since Go 1.24, which
// caches them, GOCACHE/XX/HASH-d/NAME (a directory named by a hex hash
// and "-d").
func goRunBinary(path string) bool {
	dir := filepath.Dir(path)
	if d := filepath.Base(dir); strings.HasSuffix(d, "-d") && len(d) > 40 && strings.Trim(d[:len(d)-2], "0123456789abcdef") == "" {
		return true
	}
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// Version says which build of the program runs: its module's version and
// the VCS revision it was built from, where the build recorded them.
func Version(name string, bi *debug.BuildInfo) string {
	if bi == nil {
		return name + " (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := fmt.Sprintf("%s %s %s", name, bi.Main.Path, v)
	var rev, at string
	modified := false
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.time":
			at = st.Value
		case "vcs.modified":
			modified = st.Value == "true"
		}
	}
	if rev == "" {
		return s + ", no VCS revision recorded (built by go run or with -buildvcs=false)"
	}
	s += ", revision " + rev
	if at != "" {
		s += " of " + at
	}
	if modified {
		s += " with uncommitted changes"
	}
	return s + ", " + bi.GoVersion
}
