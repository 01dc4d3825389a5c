package cli

import (
	"fmt"
	"os"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

// call asks a running node ('run --hold-calls') to make its next driver
// call, under the cluster key.
func (c *command) call(args []string) int {
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("call", "%v", err)
	}
	fs := pflag.NewFlagSet("call", pflag.ContinueOnError)
	to := fs.String("to", "", "the node's address (required)")
	keyFile := fs.String("key", "", "the cluster key's file (required: the node takes a call only under it; 'cluster' writes DIR/cluster.key)")
	conf := addConfigFlags(fs, sys, "the node's bugs, as it was started with them (they do not change the call)")
	synopsis := c.cmd + " call SYSTEM --to ADDR --key FILE: ask the node at ADDR, started with 'run --hold-calls',\n" +
		"to make its next driver call (the system's Spec.Calls to it, in order, each once), as the checker's\n" +
		"driver does. Nothing answers: the node's log and state say what it did.\n" +
		"Systems: " + c.names()
	if code, stop := c.parseSystem(fs, args, synopsis, sys); stop {
		return code
	}
	switch {
	case sys == nil && fs.NArg() == 0:
		return c.usageErr("call", "name the system (valid: %s)", c.names())
	case sys == nil:
		return c.usageErr("call", "the system must come first: %s call SYSTEM --to ADDR --key FILE", c.name)
	case fs.NArg() > 0:
		return c.usageErr("call", "unexpected argument %q", fs.Arg(0))
	case *to == "":
		return c.usageErr("call", "--to ADDR is required: the node's address")
	case *keyFile == "":
		return c.usageErr("call", "--key FILE is required: a node takes a call only under the cluster key")
	}
	cfg, err := conf.config(fs, sys)
	if err != nil {
		return c.usageErr("call", "%v", err)
	}
	_, m, err := sys.Model(cfg)
	if err != nil {
		return c.usageErr("call", "%v", err)
	}
	key, err := os.ReadFile(*keyFile)
	if err != nil {
		return c.usageErr("call", "--key: %v", err)
	}
	if err := host.SendControl(*to, m.Spec.Transport == sim.Stream, key, "next-call"); err != nil {
		return c.usageErr("call", "%v", err)
	}
	fmt.Fprintf(c.stdout, "asked %s for its next driver call\n", *to)
	return ExitOK
}
