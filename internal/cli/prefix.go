package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

func (c *command) prefix(args []string) int {
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("prefix", "%v", err)
	}
	fs := pflag.NewFlagSet("prefix", pflag.ContinueOnError)
	conf := addConfigFlags(fs, sys, "inject the named bug while walking (repeatable)")
	count := fs.IntP("count", "n", 1, "how many distinct prefixes to write")
	settle := fs.Int("settle", 0, "steps the liveness property must keep holding after it first holds")
	wf := addWalkFlags(fs, "seed of the walks", "app=8,deliver=4,timer=1")
	maxSteps := fs.Int("max-steps", check.DefaultPrefixSteps, "the longest walk tried for one prefix")
	out := fs.String("out", "", "directory for the prefix files (required)")
	asJSON := fs.Bool("json", false, "print a JSON array of {file, length, first_live}")
	synopsis := c.cmd + " prefix SYSTEM --out DIR [flags]: walk SYSTEM with every failure (resets, drops, socket errors...)\n" +
		"disabled until its liveness property holds (and keeps holding for --settle steps), and write\n" +
		"each path as a prefix file. '" + c.cmd + " check SYSTEM --from FILE' then starts from its end.\n" +
		"Systems: " + c.names()
	if code, stop := c.parseSystem(fs, args, synopsis, sys); stop {
		return code
	}
	switch {
	case sys == nil && fs.NArg() == 0:
		return c.usageErr("prefix", "name the system (valid: %s)", c.names())
	case sys == nil:
		return c.usageErr("prefix", "the system must come first: %s prefix SYSTEM [flags]", c.name)
	case fs.NArg() > 0:
		return c.usageErr("prefix", "unexpected argument %q", fs.Arg(0))
	case *out == "":
		return c.usageErr("prefix", "--out DIR is required: where to write the prefix files")
	case *count < 1 || *count > 10000:
		return c.usageErr("prefix", "-n must be from 1 to 10000, not %d", *count)
	case *settle < 0 || *maxSteps < 1:
		return c.usageErr("prefix", "--settle cannot be negative and --max-steps must be at least 1")
	}
	weights, err := wf.parseWeights()
	if err != nil {
		return c.usageErr("prefix", "--weights: %v", err)
	}
	cfg, err := conf.config(fs, sys)
	if err != nil {
		return c.usageErr("prefix", "%v", err)
	}
	start := time.Now()
	// Ctrl-C or SIGTERM ends the walks: the prefixes made are written,
	// and a line says the rest were not.
	interrupted, stopSignals := onInterrupt()
	defer stopSignals()
	var progress io.Writer = c.stderr
	if *asJSON && !isTerminal(c.stdout) {
		progress = nil
	}
	cfg, ps, err := check.Prefixes(sys, check.PrefixOptions{
		Config: cfg, Count: *count, Settle: *settle, MaxSteps: *maxSteps, Seed: *wf.seed,
		Weights: weights, WeightsSet: fs.Changed("weights"),
		Interrupted: working(progress, "prefix: walking "+sys.Name+" to live states", interrupted),
	})
	stopped := errors.Is(err, sim.ErrStopped)
	if err != nil && len(ps) == 0 && !stopped {
		return c.usageErr("prefix", "%v", err)
	}
	files := []reports.PrefixFile{}
	for _, p := range ps {
		f, werr := check.WritePrefix(*out, sys, cfg, *wf.seed, *settle, p)
		if werr != nil {
			fmt.Fprintf(c.stderr, "%s prefix: writing a prefix: %v\n", c.name, werr)
			return ExitUsage
		}
		files = append(files, reports.PrefixFile{File: f, Length: len(p.Path), FirstLive: p.FirstLive})
	}
	if *asJSON {
		if len(files) == 0 {
			files = nil // as before: null
		}
		reports.WriteJSON(c.stdout, files)
	} else {
		checkFrom := ""
		if len(files) > 0 {
			checkFrom = fmt.Sprintf("%s check %s --from %s --resets 1", c.cmd, sys.Name, files[0].File)
		}
		reports.WritePrefixes(c.stdout, check.DescribeConfig(sys.Name, cfg), files, time.Since(start), checkFrom)
	}
	if stopped {
		return c.interruptedLine("prefix", fmt.Sprintf("%d of the %d prefixes asked for were made", len(files), *count))
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s prefix: %v\n", c.name, err)
		return ExitInconclusive
	}
	return ExitOK
}
