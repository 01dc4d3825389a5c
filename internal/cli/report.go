package cli

import (
	"fmt"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/traceview"
	"github.com/spf13/pflag"
)

func (c *command) report(args []string) int {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	htmlFile := fs.String("html", "", "write the web page to this file (required)")
	tf := addTraceFlags(fs, "the nearest live path's trace, to draw beside the dead one (default: the one the trace names, beside it)")
	synopsis := c.cmd + " report TRACE --html FILE [--vs LIVE_TRACE]: replay a trace file and write its path as a\n" +
		"self-contained web page: one lane per node, each delivered message an arrow, the critical step\n" +
		"highlighted and the nearest live path beside it; click a step for every node's state."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	if fs.NArg() == 1 && *htmlFile == "" {
		return c.usageErr("report", "--html FILE is required: where to write the page")
	}
	file, t, sys, code, ok := c.traceArg("report", fs)
	if !ok {
		return code
	}
	live, liveFile, note, err := traceview.LivePath(sys, file, t, *tf.vs, *tf.timeout)
	if err != nil {
		return c.usageErr("report", "%v", err)
	}
	g, err := traceview.GraphOfTrace(sys, t, live, *tf.timeout)
	if err != nil {
		return c.usageErr("report", "%v", check.TraceError(file, err))
	}
	if note != "" {
		// The page is worth having without the live path.
		fmt.Fprintf(c.stderr, "%s report: warning: %s; the page has none\n", c.name, note)
	}
	g.Trace = file
	if live != nil {
		g.LiveTrace = liveFile
	}
	if err := writeGraph(*htmlFile, g); err != nil {
		return c.usageErr("report", "--html %s: %v", *htmlFile, err)
	}
	fmt.Fprintf(c.stdout, "wrote %s\n", *htmlFile)
	return ExitOK
}
