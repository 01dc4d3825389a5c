package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

// trace merges the run logs of a real run's nodes ('run --log') into a
// trace file, replaying it in the simulator on the way: a node whose
// state there differs from the one it logged is a finding (exit 1), as
// a safety property violated in the run is.
func (c *command) trace(args []string) int {
	fs := pflag.NewFlagSet("trace", pflag.ContinueOnError)
	out := fs.String("out", "", "the trace file to write (default: livecheck-out/SYSTEM-run-HASH.json)")
	prefix := fs.Bool("prefix", false, "write the run as a live prefix: 'check SYSTEM --from FILE' then searches from where the real run ended (it must end live)")
	synopsis := c.cmd + " trace LOGS... [--out FILE]: merge the run logs of a real run's nodes ('" + c.cmd + " run --log',\n" +
		"one per node) into a trace file, in causal order, replaying it in the simulator: a node whose state\n" +
		"there is not the one it logged (a handler that depends on something outside its state) or a safety\n" +
		"property violated in the run is a finding, exit 1. 'replay', 'debug' and 'report' read the file."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageErr("trace", "name the run logs, one per node ('run --log FILE' writes them)")
	}
	var logs []*host.RunLogFile
	for _, name := range fs.Args() {
		l, err := host.ReadRunLogFile(name)
		if err != nil {
			return c.usageErr("trace", "%v", err)
		}
		logs = append(logs, l)
	}
	sys, err := c.lookup(logs[0].Header.System)
	if err != nil {
		return c.usageErr("trace", "%v", err)
	}
	m, err := runlog.Merge(logs)
	if err != nil {
		return c.usageErr("trace", "%v", err)
	}
	rr, err := runlog.Replay(m, sys)
	if rr != nil && rr.Divergence != nil {
		fmt.Fprintf(c.stdout, "nondeterminism: %v\n", rr.Divergence)
		return ExitViolation
	}
	if err != nil {
		fmt.Fprintf(c.stdout, "the merged run does not replay in the simulator: %v\n", err)
		return ExitViolation
	}
	fmt.Fprintf(c.stdout, "%s: %s merged, %s (%s); every node's state equals the simulator's after every step\n",
		sys.Name, reports.Count(len(logs), "log"), reports.Count(len(rr.Path), "step"), failureCounts(rr.Path))
	for _, h := range rr.Histories {
		fmt.Fprintf(c.stdout, "%v\n", h)
	}
	if rr.LeftOutSteps > 0 {
		fmt.Fprintf(c.stdout, "left out, %s: from %s on, which the simulator does not model step for step (yet)\n",
			reports.Count(rr.LeftOutSteps, "step"), strings.Join(rr.LeftOut, "; from "))
	}
	kind := "run"
	if *prefix {
		if !rr.Live || rr.Violation != "" {
			return c.usageErr("trace", "the run does not end live, so it is no prefix to start a check from")
		}
		kind, rr.Trace.Result = "run-prefix", string(check.PrefixResult)
	}
	name := *out
	if name == "" {
		name = filepath.Join("livecheck-out", reports.TraceName(sys.Name, kind, m.Init, rr.Path))
	}
	if dir := filepath.Dir(name); dir != "" {
		os.MkdirAll(dir, 0o755)
	}
	if err := reports.WriteFileAtomic(name, rr.Trace.Write); err != nil {
		return c.usageErr("trace", "writing the trace: %v", err)
	}
	code := ExitOK
	switch {
	case rr.Violation != "":
		fmt.Fprintf(c.stdout, "%s of %s at step %d: %s\n", check.SafetyViolation, rr.Violation, rr.ViolationStep, rr.Message)
		code = ExitViolation
	case rr.Live:
		fmt.Fprintf(c.stdout, "the run ends live: every liveness property holds\n")
	default:
		fmt.Fprintf(c.stdout, "the run ends with a liveness property not holding (a real run cut short proves nothing dead)\n")
	}
	if *prefix {
		fmt.Fprintf(c.stdout, "prefix: %s\ncheck from it: %s check %s --from %s\n", name, c.cmd, sys.Name, name)
		return code
	}
	fmt.Fprintf(c.stdout, "trace: %s\nreplay it: %s replay %s\n", name, c.cmd, name)
	return code
}

// failureCounts says what failures a run's path holds, each kind the
// nemesis or a killed process can make: "1 reset, 2 drops"; resets are
// always named, "0 resets" where there is none of anything.
func failureCounts(p sim.Path) string {
	kinds := []struct {
		kind      sim.Kind
		one, many string
	}{{sim.Reset, "reset", "resets"}, {sim.Crash, "crash", "crashes"}, {sim.Drop, "drop", "drops"}, {sim.Duplicate, "duplicate", "duplicates"},
		{sim.Partition, "partition", "partitions"}, {sim.Heal, "heal", "heals"}, {sim.SocketError, "socket error", "socket errors"}}
	n := map[sim.Kind]int{}
	for _, st := range p {
		n[st.Event.Kind]++
	}
	parts := []string{reports.Count(n[sim.Reset], "reset")}
	for _, k := range kinds[1:] {
		if n[k.kind] > 0 {
			parts = append(parts, reports.Count(n[k.kind], k.one, k.many))
		}
	}
	return strings.Join(parts, ", ")
}
