package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

// snapshot takes a consistent snapshot of a running cluster ('cluster
// --data DIR', or nodes started with 'run --log' and a key) and writes
// it as a prefix file that 'check --from' takes.
func (c *command) snapshot(args []string) int {
	fs := pflag.NewFlagSet("snapshot", pflag.ContinueOnError)
	data := fs.String("data", "", "the cluster's directory: its nodes' run logs (node-I.log) and, unless --key says otherwise, its key (cluster.key) (required)")
	keyFile := fs.String("key", "", "the cluster key's file (default: DATA/cluster.key): a node records a snapshot only when asked under it")
	out := fs.String("out", "", "the prefix file to write (default: livecheck-out/SYSTEM-snapshot-HASH.json)")
	wait := fs.Duration("wait", 5*time.Second, "how long to wait for the nodes to record it: one that has not by then was down")
	synopsis := c.cmd + " snapshot --data DIR [--out FILE]: take a consistent snapshot of a running cluster (each node's state\n" +
		"and the messages in flight between them, by Chandy and Lamport's markers) and write it as a prefix file:\n" +
		"'" + c.cmd + " check SYSTEM --from FILE' then searches from where the cluster is. The file is the path of the\n" +
		"simulator that reaches the snapshot: the nodes' run logs up to the cut, merged and replayed, each node's\n" +
		"state checked against the one it recorded and each message the channels recorded found in flight.\n" +
		"A node that records nothing within --wait is down: its state is the one it stopped in, and the file\n" +
		"ends with its crash, so that 'check --from' starts with it down (its restart is a reset of it, which\n" +
		"costs no reset; the check's crash budget, left out, covers the file's crashes). A safety\n" +
		"property violated on the way or in the snapshot is a finding, exit 1."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return c.usageErr("snapshot", "unexpected argument %q", fs.Arg(0))
	case *data == "":
		return c.usageErr("snapshot", "--data DIR is required: the cluster's directory, with its nodes' run logs")
	case *wait <= 0:
		return c.usageErr("snapshot", "--wait must be positive, not %v", *wait)
	}
	if *keyFile == "" {
		*keyFile = filepath.Join(*data, "cluster.key")
	}
	key, err := os.ReadFile(*keyFile)
	if err != nil {
		return c.usageErr("snapshot", "--key: %v", err)
	}
	logs, err := runlog.ReadDir(*data)
	if err != nil {
		return c.usageErr("snapshot", "%v", err)
	}
	sys, err := c.lookup(logs[0].Header.System)
	if err != nil {
		return c.usageErr("snapshot", "%v", err)
	}
	snap, err := runlog.TakeSnapshot(sys, *data, key, *wait)
	var div *runlog.Divergence
	if errors.As(err, &div) {
		fmt.Fprintf(c.stdout, "nondeterminism: %v\n", div)
		return ExitViolation
	}
	if err != nil {
		return c.usageErr("snapshot", "%s: %v", sys.Name, err)
	}
	recorded := 0
	for _, m := range snap.InFlight {
		if m.Recorded {
			recorded++
		}
	}
	fmt.Fprintf(c.stdout, "%s: snapshot %d, %s recorded, %s down; %s in flight (%d recorded by the channels so far)\n",
		sys.Name, snap.Epoch, reports.Count(len(snap.Nodes)-len(snap.Down()), "node"), reports.Count(len(snap.Down()), "node"),
		reports.Count(len(snap.InFlight), "message"), recorded)
	for _, n := range snap.Nodes {
		down := ""
		if n.Down {
			down = " (down: the state it stopped in; the prefix crashes it)"
		}
		fmt.Fprintf(c.stdout, "  node %d%s: %s\n", n.ID, down, n.State)
	}
	for _, m := range snap.InFlight {
		fmt.Fprintf(c.stdout, "  in flight %d -> %d: %s\n", m.From, m.To, m.Msg)
	}
	fmt.Fprintf(c.stdout, "the cut replays in the simulator in %s to these states and messages\n", reports.Count(snap.Steps, "step"))
	if spent := failureWords(snap.Spent()); spent != "" {
		fmt.Fprintf(c.stdout, "its path took %s: 'check --from' spends them first, and its budget (--resets, --drops, ...) is on top\n", spent)
	}
	rr := snap.Replay
	name := *out
	if name == "" {
		name = filepath.Join("livecheck-out", reports.TraceName(sys.Name, "snapshot", rr.Trace.Init, rr.Path))
	}
	if dir := filepath.Dir(name); dir != "" {
		os.MkdirAll(dir, 0o755)
	}
	if err := reports.WriteFileAtomic(name, rr.Trace.Write); err != nil {
		return c.usageErr("snapshot", "writing the snapshot: %v", err)
	}
	switch {
	case rr.Violation != "":
		fmt.Fprintf(c.stdout, "safety-violation of %s at step %d: %s\ntrace: %s\n", rr.Violation, rr.ViolationStep, rr.Message, name)
		return ExitViolation
	case rr.Live:
		fmt.Fprintf(c.stdout, "every safety property holds on the way and in the snapshot; it is live\nprefix: %s\ncheck from it: %s check %s --from %s\n",
			name, c.cmd, sys.Name, name)
	default:
		fmt.Fprintf(c.stdout, "every safety property holds on the way and in the snapshot; it is not live (a liveness property does not hold), so 'check --from' does not take it\ntrace: %s\n", name)
	}
	return ExitOK
}

// failureWords says a budget's failures in words ("1 reset, 2 socket
// errors"); "" for none.
func failureWords(b sim.Budget) string {
	var out []string
	for _, f := range []struct {
		n           int
		one, plural string
	}{{b.Resets, "reset", "resets"}, {b.Drops, "drop", "drops"}, {b.Dups, "duplicate", "duplicates"}, {b.Errors, "socket error", "socket errors"},
		{b.Partitions, "partition", "partitions"}, {b.Crashes, "crash", "crashes"}} {
		if f.n > 0 {
			out = append(out, reports.Count(f.n, f.one, f.plural))
		}
	}
	return strings.Join(out, ", ")
}
