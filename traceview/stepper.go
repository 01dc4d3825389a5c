package traceview

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/livecheck/livecheck/reports"
)

// A Frame is one state of a path as the stepper shows it: the step that
// led to it (Step 0, with no event, for the initial state) and what every
// node and the network hold after it.
type Frame struct {
	reports.Step
	// Nodes are the node states with their timers (sim.DumpNode), node i
	// at i; Net the messages in flight, "Msg from->to", sorted.
	Nodes []string
	Net   []string
}

// A Stepper steps through a replayed path: `livecheck debug`. Each
// command is one line; what it prints ends with a newline and holds no
// empty line, so that a script and its expected output read as blocks.
type Stepper struct {
	// Dead is the path's frames, Dead[i] the state after step i; Live
	// the frames of a live path to compare with (nil: none).
	Dead, Live []Frame
	// Critical is the trace's critical transition (nil: none recorded);
	// LiveFile the live path's trace file.
	Critical *reports.TraceCritical
	LiveFile string
	// NoLive says why there is no live path, where one was looked for.
	NoLive string
	// Title says what is debugged: the trace, its configuration and
	// what it records.
	Title string
	// Prompt is written before each command Run reads (empty: none, as
	// when the commands come from a script).
	Prompt string

	cur int
}

// debugCommands are the commands, with their arguments, as help lists them.
var debugCommands = []struct{ name, args, doc string }{
	{"step", "N", "go to the state after step N (0: the initial state)"},
	{"next", "", "one step forward (also n)"},
	{"prev", "", "one step back (also p)"},
	{"run", "node N | msg TYPE", "forward to the next event of node N, or the next delivery of a TYPE message"},
	{"state", "[N]", "node N's state and timers, or every node's"},
	{"net", "", "the messages in flight"},
	{"diff", "[A B]", "what differs between the states after steps A and B (default: the step before and this one)"},
	{"vs", "", "what differs between this state and the live path's after the same step"},
	{"logs", "PATTERN", "the log lines up to this step that match the regular expression PATTERN"},
	{"graph", "[A B]", "the event graph of steps A to B (default: around this step)"},
	{"where", "", "this step, the critical step and where the live path parts"},
	{"help", "", "this list"},
	{"quit", "", "end the session (also q, or the end of the input)"},
}

func validCommands() string {
	names := make([]string, len(debugCommands))
	for i, c := range debugCommands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// Run reads commands from in, a line each, and writes what they print to
// out, until quit or the end of in. A command that cannot run says why
// in one line and the session goes on.
func (d *Stepper) Run(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for {
		io.WriteString(out, d.Prompt)
		if !sc.Scan() {
			if d.Prompt != "" {
				io.WriteString(out, "\n")
			}
			return sc.Err()
		}
		if d.Do(out, sc.Text()) {
			return nil
		}
	}
}

// Intro says what is being debugged and where the session starts.
func (d *Stepper) Intro(w io.Writer) {
	if d.Title != "" {
		fmt.Fprintln(w, d.Title)
	}
	fmt.Fprintf(w, "%s of the path; type help for the commands.\n", reports.Count(d.last(), "step"))
	d.where(w)
}

// Do runs one command line and reports whether it ends the session. An
// empty line or one starting with # does nothing.
func (d *Stepper) Do(w io.Writer, line string) (quit bool) {
	args := strings.Fields(line)
	if len(args) == 0 || strings.HasPrefix(args[0], "#") {
		return false
	}
	cmd, args := args[0], args[1:]
	if err := d.do(w, cmd, args); err != nil {
		if err == errQuit {
			return true
		}
		fmt.Fprintf(w, "%s: %v\n", cmd, err)
	}
	return false
}

var errQuit = fmt.Errorf("quit")

func (d *Stepper) do(w io.Writer, cmd string, args []string) error {
	nargs := func(ns ...int) error {
		if slices.Contains(ns, len(args)) {
			return nil
		}
		for _, c := range debugCommands {
			if c.name == cmd || c.name[:1] == cmd {
				return fmt.Errorf("usage: %s %s", c.name, c.args)
			}
		}
		return fmt.Errorf("takes no arguments")
	}
	switch cmd {
	case "step":
		if err := nargs(1); err != nil {
			return err
		}
		n, err := d.stepArg(args[0])
		if err != nil {
			return err
		}
		return d.move(w, n)
	case "next", "n", "prev", "p":
		if err := nargs(0); err != nil {
			return err
		}
		if cmd[0] == 'n' {
			if d.cur == d.last() {
				return fmt.Errorf("at the last step, %s", reports.Thousands(d.cur))
			}
			return d.move(w, d.cur+1)
		}
		if d.cur == 0 {
			return fmt.Errorf("at the initial state")
		}
		return d.move(w, d.cur-1)
	case "run":
		if err := nargs(2); err != nil {
			return err
		}
		return d.run(w, args[0], args[1])
	case "state":
		if err := nargs(0, 1); err != nil {
			return err
		}
		return d.state(w, args)
	case "net":
		if err := nargs(0); err != nil {
			return err
		}
		net := d.Dead[d.cur].Net
		if len(net) == 0 {
			fmt.Fprintf(w, "no message in flight after step %s\n", reports.Thousands(d.cur))
		}
		for _, m := range net {
			fmt.Fprintf(w, "  %s\n", m)
		}
	case "diff":
		if err := nargs(0, 2); err != nil {
			return err
		}
		return d.diff(w, args)
	case "vs":
		if err := nargs(0); err != nil {
			return err
		}
		return d.vs(w)
	case "logs":
		if len(args) == 0 {
			return nargs(1)
		}
		return d.logs(w, strings.Join(args, " "))
	case "graph":
		if err := nargs(0, 2); err != nil {
			return err
		}
		return d.graph(w, args)
	case "where":
		if err := nargs(0); err != nil {
			return err
		}
		d.where(w)
	case "help":
		for _, c := range debugCommands {
			fmt.Fprintf(w, "  %-26s %s\n", strings.TrimSpace(c.name+" "+c.args), c.doc)
		}
	case "quit", "q", "exit":
		return errQuit
	default:
		fmt.Fprintf(w, "unknown command %q (valid: %s)\n", cmd, validCommands())
	}
	return nil
}

// last is the number of the path's last step.
func (d *Stepper) last() int { return len(d.Dead) - 1 }

// stepArg reads a step number: 0 to the last step.
func (d *Stepper) stepArg(s string) (int, error) {
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil || n < 0 || n > d.last() {
		return 0, fmt.Errorf("%q is not a step of this path (0 to %s)", s, reports.Thousands(d.last()))
	}
	return n, nil
}

// move goes to step n and says where it is, with what the step did.
func (d *Stepper) move(w io.Writer, n int) error {
	d.cur = n
	fmt.Fprintln(w, d.position(n))
	st := d.Dead[n].Step
	if len(st.Sent) > 0 {
		fmt.Fprintf(w, "  sends %s\n", strings.Join(st.Sent, ", "))
	}
	for _, l := range st.Logs {
		fmt.Fprintf(w, "  log %s\n", l)
	}
	if st.Violation != "" {
		fmt.Fprintf(w, "  !! %s\n", st.Violation)
	}
	return nil
}

// position says a step in one line: "step 3 of 5 (critical): timer
// recovery at 1".
func (d *Stepper) position(n int) string {
	mark := ""
	if cx := d.Critical; cx != nil && cx.Step == n {
		mark = " (critical)"
	}
	what := d.Dead[n].Event
	if n == 0 {
		what = "the initial state"
	}
	return fmt.Sprintf("step %s of %s%s: %s", reports.Thousands(n), reports.Thousands(d.last()), mark, what)
}

func (d *Stepper) where(w io.Writer) {
	fmt.Fprintln(w, d.position(d.cur))
	if cx := d.Critical; cx != nil {
		fmt.Fprintf(w, "critical step %s: %s\n", reports.Thousands(cx.Step), cx.Event)
		if sl := cx.Slip; sl != nil && sl.Found {
			same := ""
			if sl.CriticalStep {
				same = " (the critical step itself)"
			}
			fmt.Fprintf(w, "slip: step %s, %s%s\n", reports.Thousands(sl.Step), sl.Event, same)
		}
	} else {
		fmt.Fprintln(w, "the trace records no critical step")
	}
	if d.Live == nil {
		fmt.Fprintln(w, d.noLive())
		return
	}
	k := d.parts()
	if k >= len(d.Live)-1 || k >= d.last() {
		fmt.Fprintf(w, "live path %s: %s, the first %s shared\n", filepath.Base(d.LiveFile), reports.Count(len(d.Live)-1, "step"), reports.Count(k, "step"))
		return
	}
	fmt.Fprintf(w, "live path %s: %s; it shares the first %s, then takes %s\n", filepath.Base(d.LiveFile), reports.Count(len(d.Live)-1, "step"), reports.Count(k, "step"), d.Live[k+1].Event)
}

// noLive says there is no live path to compare with, and why.
func (d *Stepper) noLive() string {
	if d.NoLive != "" {
		return d.NoLive + " (give one with --vs LIVE_TRACE)"
	}
	return "no live path to compare with (give one with --vs LIVE_TRACE)"
}

// parts is how many steps the dead and the live path share.
func (d *Stepper) parts() int {
	k := 0
	for k+1 < len(d.Dead) && k+1 < len(d.Live) && d.Dead[k+1].Event == d.Live[k+1].Event && d.Dead[k+1].State == d.Live[k+1].State {
		k++
	}
	return k
}

// run goes forward to the next event of a node, or the next delivery of
// a type of message.
func (d *Stepper) run(w io.Writer, what, arg string) error {
	var match func(st reports.Step) bool
	var words string
	switch what {
	case "node":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || n >= len(d.Dead[0].Nodes) {
			return fmt.Errorf("%q is not a node (0 to %d)", arg, len(d.Dead[0].Nodes)-1)
		}
		match = func(st reports.Step) bool { return st.Node == n || st.Kind == "socket-error" && st.Peer == n }
		words = "event of node " + arg
	case "msg":
		match = func(st reports.Step) bool { return st.Kind == "deliver" && reports.MsgType(st) == arg }
		words = "delivery of " + arg
	default:
		return fmt.Errorf("usage: run node N | run msg TYPE")
	}
	for n := d.cur + 1; n <= d.last(); n++ {
		if match(d.Dead[n].Step) {
			return d.move(w, n)
		}
	}
	if what == "msg" {
		return fmt.Errorf("no %s after step %s (delivered on this path: %s)", words, reports.Thousands(d.cur), d.typesDelivered())
	}
	return fmt.Errorf("no %s after step %s", words, reports.Thousands(d.cur))
}

// typesDelivered lists the types of message the path delivers, sorted.
func (d *Stepper) typesDelivered() string {
	var types []string
	for _, f := range d.Dead[1:] {
		if t := reports.MsgType(f.Step); f.Kind == "deliver" && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return "none"
	}
	slices.Sort(types)
	return strings.Join(types, ", ")
}

func (d *Stepper) state(w io.Writer, args []string) error {
	nodes := d.Dead[d.cur].Nodes
	if len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 || n >= len(nodes) {
			return fmt.Errorf("%q is not a node (0 to %d)", args[0], len(nodes)-1)
		}
		fmt.Fprintf(w, "node %d: %s\n", n, nodes[n])
		return nil
	}
	for i, s := range nodes {
		fmt.Fprintf(w, "node %d: %s\n", i, s)
	}
	return nil
}

func (d *Stepper) diff(w io.Writer, args []string) error {
	a, b := d.cur-1, d.cur
	if len(args) == 2 {
		var err error
		if a, err = d.stepArg(args[0]); err != nil {
			return err
		}
		if b, err = d.stepArg(args[1]); err != nil {
			return err
		}
	} else if d.cur == 0 {
		return fmt.Errorf("at the initial state: give two steps, diff A B")
	}
	fa, fb := d.Dead[a], d.Dead[b]
	fmt.Fprintf(w, "after step %s -> after step %s:\n", reports.Thousands(a), reports.Thousands(b))
	changes, net := reports.DiffNodes(fa.Nodes, fb.Nodes), reports.DiffNet(fa.Net, fb.Net)
	for _, nd := range changes {
		fmt.Fprintf(w, "  node %d: %s\n", nd.Node, nd)
	}
	reports.WriteNet(w, "in flight only after step "+reports.Thousands(a), net.Only1)
	reports.WriteNet(w, "in flight only after step "+reports.Thousands(b), net.Only2)
	if len(changes) == 0 && net.Empty() {
		fmt.Fprintln(w, "  the same node states, timers and messages in flight")
	}
	return nil
}

// vs compares the state after this step on the dead path with the live
// path's after its step of the same number.
func (d *Stepper) vs(w io.Writer) error {
	if d.Live == nil {
		return fmt.Errorf("%s", d.noLive())
	}
	if d.cur >= len(d.Live) {
		return fmt.Errorf("the live path has only %s", reports.Count(len(d.Live)-1, "step"))
	}
	dead, live := d.Dead[d.cur], d.Live[d.cur]
	k := d.parts()
	if d.cur <= k {
		fmt.Fprintf(w, "after step %s the paths are the same: they share the first %s\n", reports.Thousands(d.cur), reports.Count(k, "step"))
		return nil
	}
	fmt.Fprintf(w, "after step %s, dead path (%s) vs live path (%s):\n", reports.Thousands(d.cur), dead.Event, live.Event)
	changes, net := reports.DiffNodes(dead.Nodes, live.Nodes), reports.DiffNet(dead.Net, live.Net)
	for _, nd := range changes {
		fmt.Fprintf(w, "  node %d: %s\n", nd.Node, nd.Versus())
	}
	reports.WriteNet(w, "in flight on the dead path only", net.Only1)
	reports.WriteNet(w, "in flight on the live path only", net.Only2)
	if len(changes) == 0 && net.Empty() {
		fmt.Fprintln(w, "  the same node states, timers and messages in flight")
	}
	return nil
}

func (d *Stepper) logs(w io.Writer, pattern string) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("%q is not a regular expression: %v", pattern, err)
	}
	found := false
	for _, f := range d.Dead[1 : d.cur+1] {
		for _, l := range f.Logs {
			if re.MatchString(l) {
				found = true
				fmt.Fprintf(w, "  %s. %s\n", reports.Thousands(f.Step.Step), l)
			}
		}
	}
	if !found {
		fmt.Fprintf(w, "no log line up to step %s matches %q\n", reports.Thousands(d.cur), pattern)
	}
	return nil
}

// graphBefore and graphAfter bound the steps graph draws around this one.
const (
	graphBefore = 8
	graphAfter  = 3
)

func (d *Stepper) graph(w io.Writer, args []string) error {
	from, to := max(1, d.cur-graphBefore), min(d.last(), d.cur+graphAfter)
	if len(args) == 2 {
		var err error
		if from, err = d.stepArg(args[0]); err != nil {
			return err
		}
		if to, err = d.stepArg(args[1]); err != nil {
			return err
		}
		from = max(from, 1)
	}
	if from > to || d.last() == 0 {
		return fmt.Errorf("no step from %s to %s", reports.Thousands(from), reports.Thousands(to))
	}
	steps := make([]reports.Step, 0, to-from+1)
	for _, f := range d.Dead[from : to+1] {
		steps = append(steps, f.Step)
	}
	mark := 0
	if d.Critical != nil {
		mark = d.Critical.Step
	}
	reports.WriteGraph(w, len(d.Dead[0].Nodes), steps, mark)
	return nil
}
