package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/shard"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/traceview"
	"github.com/spf13/pflag"
)

// merge is `livecheck merge FILES...`: the shard files of a split check
// as one report, with the exit status a check would have.
func (c *command) merge(args []string) int {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text (check's, with a merge key)")
	htmlFile := fs.String("html", "", "also write the report as a web page to this file, as check --html does")
	out := fs.String("out", "livecheck-out", "directory for the trace files of the violation shown")
	timeout := fs.Duration("handler-timeout", check.DefaultHandlerTimeout, "how long one handler may run when a trace is replayed")
	synopsis := c.cmd + " merge SHARD_FILES... [--json] [--html FILE]: combine the result files of a check split\n" +
		"with 'check --shard I/N --out FILE' into one report: the shortest violation of each property, the\n" +
		"counts of all the shards. A shard missing or given twice, or shards of another check or build,\n" +
		"make the result inconclusive (exit 3)."
	if code, stop := c.parse(fs, args, synopsis); stop {
		return code
	}
	if fs.NArg() == 0 {
		return c.usageErr("merge", "give the shard files to merge (written by '%s check SYSTEM --shard I/N --out FILE')", c.cmd)
	}
	files := fs.Args()
	var shards []*shard.File
	for _, f := range files {
		sh, err := shard.ReadFile(f)
		if err != nil {
			return c.usageErr("merge", "%v", err)
		}
		shards = append(shards, sh)
	}
	m, err := shard.Merge(files, shards)
	if err != nil {
		return c.usageErr("merge", "%v", err)
	}
	rep := m.Report
	sys, lerr := c.lookup(shards[0].Config.System)
	if m.Problem != "" {
		fmt.Fprintf(c.stderr, "%s merge: inconclusive: %s\n", c.name, m.Problem)
	} else if v := m.Violation; v != nil {
		if lerr != nil {
			return c.usageErr("merge", "%s: %v", files[0], lerr)
		}
		// The traces replay as they record, or none is written; then
		// the trace files, as the check would have written them (all or
		// none), and the steps replayed for the text.
		rp, err := m.Replay(sys, *timeout)
		if err != nil {
			return c.usageErr("merge", "%v", err)
		}
		rep.Steps = check.StepsReport(rp.Steps)
		trace := filepath.Join(*out, v.TraceName)
		paths, writes := []string{trace}, []func(io.Writer) error{v.Trace.Write}
		live := ""
		if v.LiveTrace != nil {
			live = filepath.Join(*out, v.LiveTraceName)
			paths, writes = append(paths, live), append(writes, v.LiveTrace.Write)
		}
		vtraces := make([]string, len(rep.Merge.Violations)) // the first is trace
		for i := range rep.Merge.Violations {
			vtraces[i] = filepath.Join(*out, rep.Merge.Violations[i].Trace)
			if i > 0 {
				paths, writes = append(paths, vtraces[i]), append(writes, m.Violations[i].Trace.Write)
			}
		}
		if err := reports.WriteFilesAtomic(paths, writes); err != nil {
			// The verdict matters more than its files: report it anyway.
			fmt.Fprintf(c.stderr, "%s merge: warning: --out %s: the traces were not written, the report below has none: %v\n", c.name, *out, err)
			for i := range rep.Merge.Violations {
				rep.Merge.Violations[i].Trace = ""
			}
		} else {
			rep.Trace, rep.ReplayCommand = trace, c.cmd+" replay "+trace
			if live != "" {
				if rep.Critical != nil {
					rep.Critical.LiveTrace = live
				}
				rep.LiveReplayCommand = c.cmd + " replay " + live
			}
			for i := range rep.Merge.Violations {
				rep.Merge.Violations[i].Trace = vtraces[i]
			}
		}
	}
	if *asJSON {
		reports.WriteJSON(c.stdout, rep)
	} else {
		reports.WriteMerge(c.stdout, rep)
	}
	if *htmlFile != "" && lerr == nil {
		// The page is an extra: the verdict stands.
		var g *reports.Graph
		if v := m.Violation; v != nil {
			g, err = traceview.GraphOfTrace(sys, v.Trace, v.LiveTrace, *timeout)
			if err == nil {
				g.Trace = rep.Trace
			}
		} else {
			g, err = traceview.GraphOf(sys, check.ConfigOf(&reports.Trace{Nodes: rep.Nodes, Bugs: rep.Bugs, Params: rep.Params, Budget: reports.Budget(rep.Budget)}), nil, sim.Path{}, nil, 0, *timeout)
			if err == nil {
				g.Title = fmt.Sprintf("%s: %s (%s merged)", rep.System, rep.Result, reports.Count(rep.Merge.Shards, "shard"))
				g.Result, g.Message = rep.Result, rep.Message
			}
		}
		if err == nil {
			err = writeGraph(*htmlFile, g)
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "%s merge: warning: --html %s: the page was not written: %v\n", c.name, *htmlFile, err)
		}
	}
	if m.Problem != "" {
		return ExitInconclusive
	}
	return exitCode(check.Verdict(rep.Result))
}
