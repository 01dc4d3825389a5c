package cli

import (
	"errors"
	"fmt"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/reports"
	"github.com/spf13/pflag"
)

func (c *command) replay(args []string) int {
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	tf := addTraceFlags(fs, "")
	synopsis := c.cmd + " replay TRACE [--json]: re-execute a trace file, print each step (event, node,\n" +
		"messages sent) and the violation it reaches. Exit 1 if the recorded violation reproduces,\n" +
		"2 if the file is malformed or does not replay to it."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	file, t, sys, code, ok := c.traceArg("replay", fs)
	if !ok {
		return code
	}
	// Replay shows what a trace that does not reproduce replays to; the
	// other readers only refuse it.
	rep, err := check.ReplayTrace(sys, t, *tf.timeout, nil)
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
	if *asJSON {
		reports.WriteJSON(c.stdout, rep.Report(file, t, true))
	} else {
		reports.WriteReplay(c.stdout, rep.Report(file, t, true))
	}
	if v := check.Verdict(t.Result); v == check.Live || v == check.PrefixResult {
		if !*asJSON {
			fmt.Fprintln(c.stdout, "reproduced: the trace reaches a live state")
		}
		return ExitOK
	}
	if !*asJSON {
		fmt.Fprintln(c.stdout, "reproduced: the trace replays to the violation it records")
	}
	return ExitViolation
}
