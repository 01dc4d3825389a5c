package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

func (c *command) replay(args []string) int {
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	tf := addTraceFlags(fs, "")
	synopsis := c.cmd + " replay TRACE [--json]: re-execute a trace file, print each step (event, node,\n" +
		"messages sent) and the violation it reaches. Exit 1 if the recorded violation reproduces,\n" +
		"2 if the file is malformed or does not replay to it, or (as check) if it reproduces a\n" +
		"property that panicked."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	file, t, sys, code, ok := c.traceArg("replay", fs)
	if !ok {
		return code
	}
	// Ctrl-C or SIGTERM ends a long replay, or the dead test of its
	// final state, with a line and exit 3: it showed nothing either way.
	interrupted, stopSignals := onInterrupt()
	defer stopSignals()
	var progress io.Writer = c.stderr
	if *asJSON && !isTerminal(c.stdout) {
		progress = nil
	}
	stop := working(progress, "replay: replaying "+file, interrupted)
	rep, err := check.ReplayTraceStopping(sys, t, *tf.timeout, nil, stop)
	if errors.Is(err, sim.ErrStopped) {
		return c.interruptedLine("replay", file+" was neither confirmed nor refuted")
	}
	// Replay shows what a trace that does not reproduce replays to; the
	// other readers only refuse it.
	var nr *check.NotReproducedError
	if errors.As(err, &nr) {
		if *asJSON {
			reports.WriteJSON(c.stdout, rep.Report(file, t, false))
		} else {
			reports.WriteReplay(c.stdout, rep.Report(file, t, false))
		}
	}
	if err != nil {
		return c.usageErr("replay", "%v", check.TraceError(file, err))
	}
	return c.replayed(file, t, rep, *asJSON)
}

// replayed reports a trace that reproduces and returns its exit status.
func (c *command) replayed(file string, t *reports.Trace, rep *check.Replayed, asJSON bool) int {
	if asJSON {
		reports.WriteJSON(c.stdout, rep.Report(file, t, true))
	} else {
		reports.WriteReplay(c.stdout, rep.Report(file, t, true))
	}
	if v := check.Verdict(t.Result); v == check.Live || v == check.PrefixResult {
		if !asJSON {
			fmt.Fprintln(c.stdout, "reproduced: the trace reaches a live state")
		}
		return ExitOK
	}
	if v := check.Verdict(t.Result); v == check.RunResult {
		if rep.Verdict == check.LivenessViolation {
			if !asJSON {
				fmt.Fprintf(c.stdout, "reproduced: the run ends where %s does not hold, and the replay shows it never can again (%s)\n", t.Property, rep.Property)
			}
			return ExitViolation
		}
		if !asJSON {
			fmt.Fprintf(c.stdout, "reproduced: the run ends where %s does not hold; a run cut short shows no liveness violation (check --from a snapshot of it looks for one)\n", t.Property)
		}
		return ExitOK
	}
	if v := check.Verdict(t.Result); v == check.PropertyError {
		// As the check: the property is broken, not the protocol.
		if !asJSON {
			fmt.Fprintln(c.stdout, "reproduced: the trace replays to the property error it records")
		}
		return exitCode(v)
	}
	if !asJSON {
		fmt.Fprintln(c.stdout, "reproduced: the trace replays to the violation it records")
	}
	return ExitViolation
}
