package cli

import (
	"github.com/livecheck/livecheck/traceview"
	"github.com/spf13/pflag"
)

// debug is `livecheck debug TRACE [--vs LIVE_TRACE]`: the stepper, its
// commands read from stdin.
func (c *command) debug(args []string) int {
	fs := pflag.NewFlagSet("debug", pflag.ContinueOnError)
	tf := addTraceFlags(fs, "the live path to compare with (default: the one the trace names, beside it)")
	synopsis := c.cmd + " debug TRACE [--vs LIVE_TRACE]: step through a trace file. Commands, one a line on stdin\n" +
		"(so that a session can be a script): step N, next, prev, run node N, run msg TYPE, state [N], net,\n" +
		"diff [A B], vs, logs PATTERN, graph [A B], where, help, quit."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	file, _, sys, code, ok := c.traceArg("debug", fs)
	if !ok {
		return code
	}
	d, err := traceview.NewStepper(sys, file, *tf.vs, *tf.timeout)
	if err != nil {
		return c.usageErr("debug", "%v", err)
	}
	if isTerminal(c.stdout) && isTerminal(c.stdin) {
		d.Prompt = "(debug) "
	}
	d.Intro(c.stdout)
	if err := d.Run(c.stdin, c.stdout); err != nil {
		return c.usageErr("debug", "reading commands: %v", err)
	}
	return ExitOK
}
