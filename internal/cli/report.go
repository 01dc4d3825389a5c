package cli

import (
	"fmt"

	"github.com/livecheck/livecheck/reports"
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
	liveFile := *tf.vs
	if liveFile == "" {
		liveFile = traceview.LiveTraceOf(file, t)
	}
	var live *reports.Trace
	if liveFile != "" {
		var err error
		if live, err = reports.ReadTraceFile(liveFile); err != nil {
			if *tf.vs != "" {
				return c.usageErr("report", "--vs: %v", err)
			}
			// The page is worth having without the live path.
			fmt.Fprintf(c.stderr, "%s report: warning: the nearest live path the trace names cannot be read, the page has none: %v\n", c.name, err)
		}
	}
	g, err := traceview.GraphOfTrace(sys, t, live, *tf.timeout)
	if err != nil {
		return c.usageErr("report", "%s: %v", file, err)
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
