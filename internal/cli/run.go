package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

// run runs one node of a system for real (package host), until Ctrl-C
// or SIGTERM, or until it stops on its own (a handler panicked: exit 1).
func (c *command) runNode(args []string) int {
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("run", "%v", err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	rf := addRunFlags(fs)
	// After run's own flags: a parameter named as one of them is
	// --param-NAME.
	conf := addConfigFlags(fs, sys, "inject the named bug (repeatable): every node of the cluster must be given the same")
	synopsis := c.cmd + " run SYSTEM --id I --peers ADDR,ADDR,... [--data DIR] [flags]: run node I of SYSTEM for real,\n" +
		"over UDP (datagram systems) or TCP (stream systems), until Ctrl-C. Killed and started again with the\n" +
		"same --data, it comes back with its durable fields: the checker's reset.\n" +
		"Systems: " + c.names()
	if code, stop := c.parseSystem(fs, args, synopsis, sys); stop {
		return code
	}
	addrs := strings.Split(*rf.peers, ",")
	switch {
	case sys == nil && fs.NArg() == 0:
		return c.usageErr("run", "name the system (valid: %s)", c.names())
	case sys == nil:
		return c.usageErr("run", "the system must come first: %s run SYSTEM --id I --peers ADDR,...", c.name)
	case fs.NArg() > 0:
		return c.usageErr("run", "unexpected argument %q", fs.Arg(0))
	case !fs.Changed("id") || *rf.id < 0:
		return c.usageErr("run", "--id I is required: the node to run, from 0")
	case *rf.peers == "":
		return c.usageErr("run", "--peers ADDR,ADDR,... is required: every node's address, by id")
	case *rf.maxMessage < 64 || *rf.maxMessage > 1<<24:
		return c.usageErr("run", "--max-message must be from 64 to %d bytes, not %d", 1<<24, *rf.maxMessage)
	}
	cfg, err := conf.config(fs, sys)
	if err != nil {
		return c.usageErr("run", "%v", err)
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = len(addrs)
	}
	if *rf.data != "" {
		if err := os.MkdirAll(*rf.data, 0o755); err != nil {
			return c.usageErr("run", "--data: %v", err)
		}
	}
	var key []byte
	if *rf.key != "" {
		if key, err = os.ReadFile(*rf.key); err != nil {
			return c.usageErr("run", "--key: %v", err)
		}
	}
	opts := host.Options{Key: key, HoldCalls: *rf.holdCalls, System: sys, Config: cfg, ID: sim.NodeID(*rf.id), Peers: addrs, Data: *rf.data, Seed: *rf.seed, MaxMessage: *rf.maxMessage, RunLog: *rf.runLog, SuspectFor: *rf.suspectFor, Fresh: *rf.fresh}
	if !*rf.quiet {
		opts.Log = c.stderr
	}
	if *rf.report {
		opts.OnStep = reporter(c.stdout, c.stderr)
	}
	// Signals first: a node that has started is stopped by them.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	n, err := host.Start(opts)
	if err != nil {
		return c.usageErr("run", "%v", err)
	}
	if key == nil && *rf.quiet {
		// Not quiet, the node's log says it, on stderr.
		fmt.Fprintf(c.stderr, "%s run: no --key: the node's frames are not authenticated (it runs only because every peer is on loopback)\n", c.name)
	}
	var stdinClosed chan struct{}
	if *rf.watchStdin {
		stdinClosed = make(chan struct{})
		go func() {
			io.Copy(io.Discard, c.stdin)
			close(stdinClosed)
		}()
	}
	select {
	case <-sigs:
		return c.stopNode(n)
	case <-stdinClosed:
		return c.stopNode(n)
	case <-n.Done():
		fmt.Fprintf(c.stderr, "%s run: %v\n", c.name, n.Err())
		return ExitViolation
	}
}

// stopNode stops n, or gives up after a few seconds if a handler does
// not return (the node's log has said so): exit 1 then.
func (c *command) stopNode(n *host.Node) int {
	stopped := make(chan struct{})
	go func() {
		n.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		return ExitOK
	case <-time.After(5 * time.Second):
		fmt.Fprintf(c.stderr, "%s run: node %d does not stop: a handler has not returned\n", c.name, n.ID())
		return ExitViolation
	}
}

// reporter writes a host.StateReport on w, a line of JSON, after each
// handler that changed the node's state. A state that cannot be encoded
// (a field of a func type) goes as its dump alone, said once on errs.
func reporter(w, errs io.Writer) func(host.Step) {
	last := ""
	enc := json.NewEncoder(w)
	warned := false
	return func(st host.Step) {
		dump := sim.Dump(st.State)
		if dump == last {
			return
		}
		last = dump
		r := host.StateReport{Node: st.Node, Event: st.Event, Dump: dump}
		var err error
		if r.State, err = host.EncodeState(st.State); err != nil && !warned {
			warned = true
			fmt.Fprintf(errs, "node %d's state cannot go in its reports (cluster shows its dump only): %v\n", st.Node, err)
		}
		enc.Encode(r)
	}
}

// runFlags are run's own flags.
type runFlags struct {
	id, maxMessage      *int
	peers, data, runLog *string
	key                 *string
	seed                *uint64
	report, quiet       *bool
	fresh               *bool
	holdCalls           *bool
	suspectFor          *time.Duration
	watchStdin          *bool
}

// addRunFlags adds run's own flags to fs: run declares them, and cluster
// asks which of a system's parameters they rename (runParamFlags).
func addRunFlags(fs *pflag.FlagSet) *runFlags {
	rf := &runFlags{}
	rf.id = fs.Int("id", -1, "the node to run, 0 to the number of nodes less one (required)")
	rf.peers = fs.String("peers", "", "every node's address, by id, comma-separated (required): the node listens on its own and accepts messages only from the others")
	rf.data = fs.String("data", "", "the directory of the node's state file, which keeps its durable fields (default: none, they are kept in memory only)")
	rf.seed = fs.Uint64("seed", 1, "the seed of the node's Choose (with its id)")
	rf.maxMessage = fs.Int("max-message", host.DefaultMaxMessage, "the largest message sent or accepted, in bytes")
	rf.runLog = fs.String("log", "", "append a line for each handler the node runs to this file: 'trace' merges the nodes' logs into a trace. With --data, the log and the state file confirm each other: a state file missing, rolled back or of another run is refused")
	rf.fresh = fs.Bool("fresh", false, "start afresh: do not load the node's state file (its durable fields start as the system makes them), write it again, and record a fresh boot in its --log")
	rf.report = fs.Bool("report", false, "write a line of JSON on stdout each time the node's state changes (what 'cluster' reads)")
	rf.quiet = fs.Bool("quiet", false, "write no log on stderr")
	rf.watchStdin = fs.Bool("watch-stdin", false, "stop when standard input closes: what 'cluster' gives its nodes, so that none outlives it")
	rf.suspectFor = fs.Duration("suspect-for", host.DefaultSuspectFor, "streams: how long the node waits for a peer whose connection broke (its process died) to start again, sending it nothing, before its node is told (Error); a peer back in time tells the node at its restart, as the checker's reset does")
	rf.holdCalls = fs.Bool("hold-calls", false, "make the driver's calls to the node only when 'call' asks, one at a time (default: all, after its first Init)")
	rf.key = fs.String("key", "", "the cluster key's file: every frame carries an HMAC under it of the frame and its channel (sender, receiver, nonces, sequence number), and a frame without a valid one, or replayed, or for another node, is dropped (every node must have the same key, of at least 16 bytes; make one with head -c 32 /dev/urandom > cluster.key). Without it the node runs only with every peer on loopback")
	return rf
}
