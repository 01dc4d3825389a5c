package cli

import (
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
		"2 if the file is malformed or does not replay to it, or (as check) if it reproduces a\n" +
		"property that panicked."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	file, t, sys, code, ok := c.traceArg("replay", fs)
	if !ok {
		return code
	}
	path, err := reports.Path(t.Steps)
	if err != nil {
		return c.usageErr("replay", "%s: %v", file, err)
	}
	rep, err := check.ReplayFrom(sys, check.ConfigOf(t), t.Init, path, *tf.timeout)
	if err != nil {
		return c.usageErr("replay", "%s: %v", file, err)
	}
	reproduced, err := rep.Confirm(t)
	if err != nil {
		return c.usageErr("replay", "%s: %v", file, err)
	}
	if *asJSON {
		reports.WriteJSON(c.stdout, rep.Report(file, t, reproduced))
	} else {
		reports.WriteReplay(c.stdout, rep.Report(file, t, reproduced))
	}
	if !reproduced {
		return c.usageErr("replay", "%s does not replay: it records %s, but replaying it gives %s", file, check.Recorded(t), rep.Reached(t))
	}
	if v := check.Verdict(t.Result); v == check.Live || v == check.PrefixResult {
		if !*asJSON {
			fmt.Fprintln(c.stdout, "reproduced: the trace reaches a live state")
		}
		return ExitOK
	}
	if v := check.Verdict(t.Result); v == check.PropertyError {
		// As the check: the property is broken, not the protocol.
		if !*asJSON {
			fmt.Fprintln(c.stdout, "reproduced: the trace replays to the property error it records")
		}
		return exitCode(v)
	}
	if !*asJSON {
		fmt.Fprintln(c.stdout, "reproduced: the trace replays to the violation it records")
	}
	return ExitViolation
}
