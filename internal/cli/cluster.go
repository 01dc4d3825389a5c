package cli

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
	"github.com/spf13/pflag"
)

// cluster runs every node of a system on loopback, each a process of
// its own ('run --report'), and shows each node's state as it changes
// and whether each property holds now.
func (c *command) cluster(args []string) int {
	sys, args, err := c.systemFirst(args)
	if err != nil {
		return c.usageErr("cluster", "%v", err)
	}
	fs := pflag.NewFlagSet("cluster", pflag.ContinueOnError)
	conf := addConfigFlags(fs, sys, "inject the named bug in every node (repeatable)")
	data := fs.String("data", "", "the directory of the nodes' state files and run logs (default: a temporary one, removed at the end)")
	seed := fs.Uint64("seed", 1, "the seed of the nodes' Choose")
	forTime := fs.Duration("for", 0, "stop after this long (default: at Ctrl-C)")
	untilLive := fs.Bool("until-live", false, "stop once every liveness property holds (with --nemesis, once it is done): exit 0 then, 3 if --for ran out first")
	fresh := fs.Bool("fresh", false, "start every node afresh, without the state file in --data (each node's 'run --fresh'); a node started again later keeps its own")
	restart := fs.Bool("restart", true, "start a node whose process was killed again, with its state file: the checker's reset")
	states := fs.Bool("states", true, "print each node's state as it changes")
	logs := fs.Bool("logs", false, "pass the nodes' logs through on stderr")
	holdCalls := fs.Bool("hold-calls", false, "the nodes make the driver's calls only when 'call' asks (run --hold-calls)")
	checkEvery := fs.Duration("check-every", 0, "every D, take a snapshot of the cluster and check from it in the background (a live check): a violation the cluster can reach from where it is is reported with its trace, exit 1")
	checkTime := fs.Duration("check-time", 0, "the time box of each live check (default: --check-every, at most 30s)")
	checkOut := fs.String("check-out", "", "the directory of the live checks' snapshots and traces (default: DATA/live-checks)")
	nemesis := fs.String("nemesis", "", "failures to apply for real, one every --nemesis-every, in order: drop:FROM:TO[:COUNT], duplicate:FROM:TO[:COUNT], partition:A+B+..., heal, restart:NODE (datagram systems), or break:A:B, partition:A+B+..., heal, restart:NODE (stream systems), separated by commas; with --hold-calls, call:NODE has the node make its next driver call, so that an operation comes while a failure is in force")
	nemesisRandom := fs.Int("nemesis-random", 0, "failures to apply for real, drawn from --nemesis-seed (datagram systems)")
	nemesisSeed := fs.Uint64("nemesis-seed", 1, "the seed of --nemesis-random")
	nemesisEvery := fs.Duration("nemesis-every", 500*time.Millisecond, "the time between two failures of the nemesis; the first comes after it too")
	synopsis := c.cmd + " cluster SYSTEM [--nodes N] [flags]: run every node of SYSTEM on loopback, one process each\n" +
		"('" + c.cmd + " run'), and show each node's state as it changes and whether each property holds now.\n" +
		"Ctrl-C stops them. Killing one node's process starts it again with its durable fields (a reset).\n" +
		"With --check-every D it takes a snapshot every D and checks from it (see '" + c.cmd + " snapshot').\n" +
		"Exit status: 0 no safety property was violated (with --until-live: the liveness properties held),\n" +
		"1 one was, or a live check found a violation, 2 usage error, 3 --for ran out before the liveness properties held (--until-live).\n" +
		"Systems: " + c.names()
	if code, stop := c.parseSystem(fs, args, synopsis, sys); stop {
		return code
	}
	switch {
	case sys == nil && fs.NArg() == 0:
		return c.usageErr("cluster", "name the system (valid: %s)", c.names())
	case sys == nil:
		return c.usageErr("cluster", "the system must come first: %s cluster SYSTEM [--nodes N]", c.name)
	case fs.NArg() > 0:
		return c.usageErr("cluster", "unexpected argument %q", fs.Arg(0))
	case *forTime < 0:
		return c.usageErr("cluster", "--for cannot be negative")
	case *checkEvery < 0 || *checkTime < 0:
		return c.usageErr("cluster", "--check-every and --check-time cannot be negative")
	case *checkTime > 0 && *checkEvery == 0:
		return c.usageErr("cluster", "--check-time needs --check-every")
	case *nemesisRandom < 0:
		return c.usageErr("cluster", "--nemesis-random cannot be negative")
	case *nemesisEvery <= 0:
		return c.usageErr("cluster", "--nemesis-every must be positive")
	case *nemesis != "" && *nemesisRandom > 0:
		return c.usageErr("cluster", "give --nemesis or --nemesis-random, not both")
	}
	cfg, err := conf.config(fs, sys)
	if err != nil {
		return c.usageErr("cluster", "%v", err)
	}
	w, err := host.NewWatcher(sys, cfg)
	if err != nil {
		return c.usageErr("cluster", "%v", err)
	}
	cfg, _ = sys.Normalize(cfg)
	m := w.Model
	var faults []host.Fault
	if *nemesis != "" || *nemesisRandom > 0 {
		stream := m.Spec.Transport == sim.Stream
		if *nemesis != "" {
			if faults, err = host.ParseFaults(*nemesis, m.Spec.Nodes); err != nil {
				return c.usageErr("cluster", "--nemesis: %v", err)
			}
		} else if stream {
			faults = host.RandomFaults(*nemesisSeed, *nemesisRandom, m.Spec.Nodes, host.StreamFaultKinds)
		} else {
			faults = host.RandomFaults(*nemesisSeed, *nemesisRandom, m.Spec.Nodes, nil)
		}
		cut := false
		for _, f := range faults {
			switch f.Kind {
			case "partition":
				cut = true
			case "heal":
				cut = false
			}
			switch {
			case stream && cut && f.Kind == "restart":
				return c.usageErr("cluster", "--nemesis: %v: a partition of %s is in force, and a process started again would come back outside it: heal first", f, sys.Name)
			case stream && (f.Kind == "drop" || f.Kind == "duplicate"):
				return c.usageErr("cluster", "--nemesis: %v: %s runs over streams, which lose and copy nothing: the nemesis breaks (break:A:B), partitions (partition:A+B, heal) and restarts (restart:N) them", f, sys.Name)
			case f.Kind == "call" && !*holdCalls:
				return c.usageErr("cluster", "--nemesis: %v: a node makes its driver's calls at its start unless --hold-calls holds them for the nemesis's call:NODE", f)
			case !stream && f.Kind == "break":
				return c.usageErr("cluster", "--nemesis: %v: %s runs over datagrams, which have no connections to break", f, sys.Name)
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return c.usageErr("cluster", "cannot find this program to start its nodes: %v", err)
	}
	// The nodes are processes of this program: one that is itself a
	// cluster's node, or a test binary that does not run as the command,
	// would start clusters of clusters.
	switch {
	case os.Getenv(nodeEnv) == "1":
		return c.usageErr("cluster", "this process is a node of a cluster (%s=1): it starts no cluster of its own", nodeEnv)
	case strings.HasSuffix(exe, ".test") && os.Getenv(testAsCommandEnv) != "1":
		return c.usageErr("cluster", "%s is a test binary that runs its tests, not the command: its nodes would too (set %s=1 for the processes it starts, in its TestMain)", filepath.Base(exe), testAsCommandEnv)
	}
	dir := *data
	if dir == "" {
		if dir, err = os.MkdirTemp("", "livecheck-cluster-"); err != nil {
			return c.usageErr("cluster", "%v", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return c.usageErr("cluster", "--data: %v", err)
	}
	keyFile, err := clusterKey(dir)
	if err != nil {
		return c.usageErr("cluster", "writing the cluster key: %v", err)
	}
	peers, err := host.FreeLoopback(m.Spec.Nodes, m.Spec.Transport)
	if err != nil {
		return c.usageErr("cluster", "%v", err)
	}
	cl := &procs{c: c, exe: exe, sys: sys, cfg: cfg, peers: peers, dir: dir, seed: *seed, key: keyFile, holdCalls: *holdCalls, fresh: *fresh,
		events: make(chan procEvent, 64), procs: make([]*exec.Cmd, len(peers)), runFlags: runParamFlags(sys)}
	if *logs {
		cl.stderr = &lockedWriter{w: c.stderr}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	cw := &clusterWatch{c: c, procs: cl, w: w, start: time.Now(), states: *states, untilLive: *untilLive, restart: *restart,
		stream: m.Spec.Transport == sim.Stream}
	if *data != "" {
		cw.logs = filepath.Join(dir, "node-*.log")
	}
	if len(faults) > 0 {
		key, err := os.ReadFile(keyFile)
		if err != nil {
			return c.usageErr("cluster", "%v", err)
		}
		cw.nemesis = &nemesisRun{faults: faults, every: *nemesisEvery, key: key}
	}
	if *checkEvery > 0 {
		key, err := os.ReadFile(keyFile)
		if err != nil {
			return c.usageErr("cluster", "%v", err)
		}
		out := *checkOut
		if out == "" {
			out = filepath.Join(dir, "live-checks")
		}
		box := *checkTime
		if box == 0 {
			box = min(*checkEvery, 30*time.Second)
		}
		cw.live = &liveChecks{every: *checkEvery, key: key, dir: dir,
			opts: runlog.LiveCheckOptions{Config: cfg, Time: box, Out: out}, done: make(chan liveDone, 1)}
	}
	fmt.Fprintf(c.stdout, "%s: %d nodes on %s (state files in %s)\n", sys.Name, len(peers), strings.Join(peers, ", "), dir)
	if err := cw.startAll(); err != nil {
		cl.stopAll()
		return c.usageErr("cluster", "%v", err)
	}
	var timeout <-chan time.Time
	if *forTime > 0 {
		timeout = time.After(*forTime)
	}
	return cw.watch(sigs, timeout, *forTime)
}

// clusterKey makes the cluster key's file in dir, unless it is there
// already, and returns its name: every cluster's frames are
// authenticated.
func clusterKey(dir string) (string, error) {
	name := filepath.Join(dir, "cluster.key")
	if _, err := os.Stat(name); err == nil {
		return name, nil
	}
	key := make([]byte, 32)
	rand.Read(key)
	return name, os.WriteFile(name, key, 0o600)
}

// A clusterWatch is a cluster's run as the command watches it: its
// nodes' processes, the watcher of their states, and what to show.
type clusterWatch struct {
	c                          *command
	procs                      *procs
	w                          *host.Watcher
	start                      time.Time
	states, untilLive, restart bool
	logs                       string // the run logs' pattern, to show at the end ("" for a temporary directory)
	violated                   bool   // a safety property was violated at some point
	// seen says the watcher saw a safety property violated, in the states
	// as they arrived (confirm judges it at the end); found, that a live
	// check found one, on a consistent cut or from it, which stands.
	seen, found bool
	live        *liveChecks
	nemesis     *nemesisRun
	stream      bool // the system runs over streams
	// back are the nodes the nemesis restarted that are not back yet:
	// nil until the process ends and starts again, then closed once it
	// reports its first state. The next failure waits for them.
	back map[sim.NodeID]chan struct{}
	// liveNow says every liveness property held at the last report:
	// --until-live with a nemesis stops once it is done and they hold.
	liveNow bool
}

// startAll starts the nodes in id order, each once the one before has
// reported its first state, so that it is listening: a datagram sent to
// a node not listening yet is lost, and a node that sends one only in
// Init (a lock client's request) would wait for ever.
func (cw *clusterWatch) startAll() error {
	for i, addr := range cw.procs.peers {
		ready, pid, err := cw.procs.start(sim.NodeID(i))
		if err != nil {
			return err
		}
		fmt.Fprintf(cw.c.stdout, "node %d: %s, pid %d\n", i, addr, pid)
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
		}
	}
	return nil
}

// show prints the properties whose status changed, and says whether
// every liveness property holds.
func (cw *clusterWatch) show(now time.Time) (live bool) {
	live = true
	for _, st := range cw.w.Status(now) {
		if st.Kind == properties.Liveness && !st.Holds {
			live = false
		}
		if st.Kind == properties.Safety && !st.Holds {
			cw.violated, cw.seen = true, true
		}
		if st.Changed {
			fmt.Fprintf(cw.c.stdout, "%8.3fs  %s\n", now.Sub(cw.start).Seconds(), statusLine(st))
		}
	}
	return live
}

// stop stops the nodes, and says where each property stands, since
// when, and where the run logs are.
func (cw *clusterWatch) stop() {
	if cw.live != nil && cw.live.running {
		cw.liveDone(<-cw.live.done) // it reads the logs: before the nodes stop
	}
	cw.procs.stopAll()
	for _, st := range cw.w.Status(time.Now()) {
		fmt.Fprintf(cw.c.stdout, "at the end: %s, since %.3fs\n", statusLine(st), st.Since.Sub(cw.start).Seconds())
	}
	if cw.seen {
		cw.confirm()
	}
	if l := cw.live; l != nil {
		fmt.Fprintf(cw.c.stdout, "live checks: %d taken: %d checked from the snapshot, %d not live (no check from it), %d with a safety violation on the way, %d failed (no snapshot or no check)\n",
			l.checked+l.notLive+l.violated+l.failed, l.checked, l.notLive, l.violated, l.failed)
	}
	if cw.logs != "" {
		fmt.Fprintf(cw.c.stdout, "run logs: %s ('%s trace %s' merges them into a trace)\n", cw.logs, cw.c.cmd, cw.logs)
	}
}

// watch shows the nodes' states and the properties as they change,
// starts a killed node again, and stops at a signal, at the timeout, or
// (until-live) once every liveness property holds; it returns the exit
// status.
func (cw *clusterWatch) watch(sigs <-chan os.Signal, timeout <-chan time.Time, forTime time.Duration) int {
	out, start := cw.c.stdout, cw.start
	cw.show(start)
	var tick <-chan time.Time
	if cw.live != nil {
		t := time.NewTicker(cw.live.every)
		defer t.Stop()
		tick = t.C
	}
	var nemesisTick <-chan time.Time
	if cw.nemesis != nil {
		t := time.NewTicker(cw.nemesis.every)
		defer t.Stop()
		nemesisTick = t.C
	}
	for {
		select {
		case <-nemesisTick:
			if !cw.applyFault() {
				nemesisTick = nil
				if cw.liveNow && cw.untilLive && !cw.violated {
					cw.stop()
					fmt.Fprintf(out, "every liveness property holds, after %.3fs\n", time.Since(start).Seconds())
					return clusterExit(cw.violated)
				}
			}
		case <-tick:
			if !cw.live.running {
				cw.live.start(cw.procs.sys)
			}
		case d := <-cw.liveChan():
			cw.liveDone(d)
			if cw.violated && cw.untilLive {
				cw.stop()
				return ExitViolation
			}
		case <-sigs:
			cw.stop()
			fmt.Fprintf(out, "stopped after %.1fs\n", time.Since(start).Seconds())
			return clusterExit(cw.violated)
		case <-timeout:
			cw.stop()
			fmt.Fprintf(out, "stopped after --for %v\n", forTime)
			if cw.untilLive && !cw.violated {
				fmt.Fprintf(out, "the liveness properties did not all hold within %v\n", forTime)
				return ExitInconclusive
			}
			return clusterExit(cw.violated)
		case ev := <-cw.procs.events:
			at := ev.at.Sub(start).Seconds()
			if ev.report == nil {
				cw.ended(ev, at)
				continue
			}
			if err := cw.w.Update(*ev.report); err != nil {
				fmt.Fprintf(cw.c.stderr, "%s cluster: %v\n", cw.c.name, err)
			}
			if cw.states {
				fmt.Fprintf(out, "%8.3fs  node %d: %s  (after %s)\n", at, ev.node, ev.report.Dump, ev.report.Event)
			}
			live := cw.show(ev.at)
			cw.liveNow = live
			switch {
			case cw.violated && cw.untilLive:
				cw.stop()
				return ExitViolation
			case live && cw.untilLive && nemesisTick == nil:
				// With a nemesis, once it is done: its failures are
				// what the run is for.
				cw.stop()
				fmt.Fprintf(out, "every liveness property holds, after %.3fs\n", at)
				return clusterExit(cw.violated)
			}
		}
	}
}

// ended says a node's process ended, and starts a killed one again
// from its state file: a reset.
func (cw *clusterWatch) ended(ev procEvent, at float64) {
	fmt.Fprintf(cw.c.stdout, "%8.3fs  node %d's process ended: %s\n", at, ev.node, ev.exit)
	if !cw.restart || !ev.killed {
		return
	}
	cw.w.Reset(ev.node)
	if ready, pid, err := cw.procs.start(ev.node); err != nil {
		fmt.Fprintf(cw.c.stdout, "node %d cannot start again: %v\n", ev.node, err)
		delete(cw.back, ev.node)
	} else {
		if _, ok := cw.back[ev.node]; ok {
			cw.back[ev.node] = ready
		}
		fmt.Fprintf(cw.c.stdout, "%8.3fs  node %d starts again from its state file (a reset), pid %d\n", at, ev.node, pid)
	}
}

// nemesisRun is the schedule of 'cluster --nemesis': failures applied
// for real, one at a time.
type nemesisRun struct {
	faults []host.Fault
	next   int
	every  time.Duration
	key    []byte
	cut    bool // a partition is up
}

// applyFault applies the nemesis's next failure: a drop, a duplicate or
// a side of a partition in a control frame to the node, a restart by
// killing its process (which the cluster starts again: a reset). False
// once the schedule is done (and a partition left up healed).
func (cw *clusterWatch) applyFault() bool {
	nm, p := cw.nemesis, cw.procs
	for id, ready := range cw.back {
		if ready == nil {
			return true // not started again yet: the next failure waits
		}
		select {
		case <-ready:
			delete(cw.back, id)
		default:
			return true
		}
	}
	at := time.Since(cw.start).Seconds()
	if nm.next >= len(nm.faults) {
		if nm.cut {
			cw.sendFault(host.Fault{Kind: "heal"})
			nm.cut = false
		}
		fmt.Fprintf(cw.c.stdout, "%8.3fs  nemesis: done, %s applied\n", at, reports.Count(len(nm.faults), "failure"))
		return false
	}
	f := nm.faults[nm.next]
	nm.next++
	fmt.Fprintf(cw.c.stdout, "%8.3fs  nemesis: %v\n", at, f)
	switch f.Kind {
	case "restart":
		p.mu.Lock()
		cmd := p.procs[f.Node]
		p.mu.Unlock()
		if cmd != nil && cmd.Process != nil && cw.restart {
			if cw.back == nil {
				cw.back = map[sim.NodeID]chan struct{}{}
			}
			cw.back[f.Node] = nil
		}
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Kill()
		}
	case "break":
		if broke, err := host.BreakRemote(p.peers, nm.key, f.Node, f.Peer); err != nil {
			fmt.Fprintf(cw.c.stdout, "          nemesis: %v\n", err)
		} else if !broke {
			fmt.Fprintf(cw.c.stdout, "          nemesis: nodes %d and %d have no connection to break\n", f.Node, f.Peer)
		}
	case "call":
		if err := host.SendControl(p.peers[f.Node], cw.stream, nm.key, "next-call"); err != nil {
			fmt.Fprintf(cw.c.stdout, "          nemesis: %v\n", err)
		}
	case "drop", "duplicate":
		if err := host.SendFault(p.peers[f.Node], nm.key, f.Node, len(p.peers), f); err != nil {
			fmt.Fprintf(cw.c.stdout, "          nemesis: %v\n", err)
		}
	default:
		nm.cut = f.Kind == "partition"
		cw.sendFault(f)
	}
	return true
}

// sendFault sends every node its side of a partition, or its heal; on
// streams it holds every node at one barrier for it (host.PartitionRemote).
func (cw *clusterWatch) sendFault(f host.Fault) {
	p := cw.procs
	if cw.stream {
		var err error
		if f.Kind == "heal" {
			err = host.HealRemote(p.peers, cw.nemesis.key)
		} else {
			err = host.PartitionRemote(p.peers, cw.nemesis.key, f.Group)
		}
		if err != nil {
			fmt.Fprintf(cw.c.stdout, "          nemesis: %v\n", err)
		}
		return
	}
	for i, addr := range p.peers {
		if err := host.SendFault(addr, cw.nemesis.key, sim.NodeID(i), len(p.peers), f); err != nil {
			fmt.Fprintf(cw.c.stdout, "          nemesis: node %d: %v\n", i, err)
		}
	}
}

// liveChecks are the live checks of 'cluster --check-every': one at a
// time, in the background.
type liveChecks struct {
	every   time.Duration
	key     []byte
	dir     string
	opts    runlog.LiveCheckOptions
	running bool
	n       int
	done    chan liveDone
	// What the checks done came to: a check ran from the snapshot
	// (checked), the snapshot was not live (no check from it), a safety
	// property failed on the way to it or in it (violated), or no
	// snapshot or no check could be made (failed).
	checked, notLive, violated, failed int
}

type liveDone struct {
	n   int
	lc  *runlog.LiveCheck
	err error
}

func (l *liveChecks) start(sys *protocol.System) {
	l.running = true
	l.n++
	n := l.n
	go func() {
		lc, err := runlog.CheckLive(sys, l.dir, l.key, l.opts)
		l.done <- liveDone{n, lc, err}
	}()
}

// liveChan is the channel the live check under way reports on; nil
// (never ready) when there is none.
func (cw *clusterWatch) liveChan() <-chan liveDone {
	if cw.live == nil || !cw.live.running {
		return nil
	}
	return cw.live.done
}

// liveDone says what a live check found.
func (cw *clusterWatch) liveDone(d liveDone) {
	cw.live.running = false
	out := cw.c.stdout
	at := time.Since(cw.start).Seconds()
	if d.err != nil {
		cw.live.failed++
		fmt.Fprintf(out, "%8.3fs  live check %d: no check: %v\n", at, d.n, d.err)
		return
	}
	lc := d.lc
	snap := lc.Snapshot
	what := fmt.Sprintf("snapshot %d (%s down, %s in flight, %s)", snap.Epoch, reports.Count(len(snap.Down()), "node"),
		reports.Count(len(snap.InFlight), "message"), lc.File)
	switch {
	case lc.Violation != "":
		cw.violated, cw.found = true, true
		cw.live.violated++
		fmt.Fprintf(out, "%8.3fs  live check %d: %s: safety-violation of %s on the way to it or in it: %s\n", at, d.n, what, lc.Violation, lc.Message)
	case lc.Result == nil:
		cw.live.notLive++
		fmt.Fprintf(out, "%8.3fs  live check %d: %s: not live, no check from it\n", at, d.n, what)
	default:
		cw.live.checked++
		r := lc.Result
		fmt.Fprintf(out, "%8.3fs  live check %d: %s: %s", at, d.n, what, r.Verdict)
		if r.Property != "" {
			fmt.Fprintf(out, " of %s", r.Property)
		}
		fmt.Fprintf(out, " (%s searched)\n", reports.Count(int(r.Stats.States), "state"))
		if lc.Trace != "" {
			cw.violated, cw.found = true, true
			fmt.Fprintf(out, "          reachable from where the cluster is: %s\n          trace: %s\n          replay it: %s replay %s\n", r.Message, lc.Trace, cw.c.cmd, lc.Trace)
		}
	}
}

// confirm judges a safety violation the watcher saw on a consistent
// view of the run. The watcher puts together each node's last state as
// its report arrives, which may pair states of different moments: two
// lock clients seen holding at once, each report true when sent. The run
// logs, merged in causal order, are a run the nodes could have had, and
// the simulator replays it: a violation is confirmed only where that
// replay reaches one. Where it replays without one, the violation seen
// is withdrawn (violated is cleared); where it cannot be merged or
// replayed, the watcher's verdict stands.
func (cw *clusterWatch) confirm() {
	out := cw.c.stdout
	logs, err := runlog.ReadDir(cw.procs.dir)
	if err != nil {
		fmt.Fprintf(out, "the safety violation seen stands: the run logs cannot be read to confirm it (%v)\n", err)
		return
	}
	m, err := runlog.Merge(logs)
	if err != nil {
		fmt.Fprintf(out, "the safety violation seen stands: the run logs do not merge to confirm it (%v)\n", err)
		return
	}
	rr, err := runlog.Replay(m, cw.procs.sys)
	switch {
	case rr != nil && rr.Divergence != nil:
		fmt.Fprintf(out, "the safety violation seen stands: the merged run does not replay (nondeterminism: %v)\n", rr.Divergence)
	case err != nil:
		fmt.Fprintf(out, "the safety violation seen stands: the merged run does not replay (%v)\n", err)
	case rr.Violation != "":
		fmt.Fprintf(out, "confirmed on a consistent view, the run's logs merged in causal order: safety-violation of %s at step %d: %s\n",
			rr.Violation, rr.ViolationStep, rr.Message)
	case rr.LeftOutSteps > 0:
		fmt.Fprintf(out, "the safety violation seen stands: the merged run replays without it, but leaves %s out\n", reports.Count(rr.LeftOutSteps, "step"))
	default:
		fmt.Fprintf(out, "no violation on a consistent view: the run's logs, merged in causal order, replay in %s without one; "+
			"the states as they arrived paired states of different moments\n", reports.Count(len(rr.Path), "step"))
		cw.violated = cw.found
	}
}

// clusterExit is the exit status of a cluster that stopped.
func clusterExit(violated bool) int {
	if violated {
		return ExitViolation
	}
	return ExitOK
}

// statusLine says a property's status in words.
func statusLine(st host.WatchedStatus) string {
	switch {
	case st.Kind == properties.Safety && !st.Holds:
		return fmt.Sprintf("%s (safety) VIOLATED in the states as they arrived (to be confirmed on the run's logs at the end): %s", st.Name, st.Why)
	case st.Why != "":
		return fmt.Sprintf("%s (%s) cannot be evaluated: %s", st.Name, st.Kind, st.Why)
	case st.Holds:
		return fmt.Sprintf("%s (%s) holds", st.Name, st.Kind)
	}
	return fmt.Sprintf("%s (%s) does not hold", st.Name, st.Kind)
}

// procs are a cluster's node processes.
type procs struct {
	c     *command
	exe   string
	sys   *protocol.System
	cfg   protocol.Config
	peers []string
	dir   string
	key   string // the cluster key's file
	// holdCalls: run --hold-calls.
	holdCalls bool
	// fresh: the nodes' first starts are run --fresh (started is who
	// has started once).
	fresh   bool
	started map[sim.NodeID]bool
	seed    uint64
	stderr  io.Writer
	events  chan procEvent
	// runFlags are run's flags for the system's parameters, by name.
	runFlags map[string]string

	mu       sync.Mutex
	procs    []*exec.Cmd
	stopping bool
	wg       sync.WaitGroup
}

// A procEvent is a report from a node's process, or its end.
type procEvent struct {
	node   sim.NodeID
	report *host.StateReport
	exit   string
	killed bool      // by a signal, not by the cluster
	at     time.Time // when it came
}

// args are the command line of node id: 'run' with the cluster's
// configuration.
func (p *procs) args(id sim.NodeID) []string {
	a := []string{"run", p.sys.Name, "--id", strconv.Itoa(int(id)), "--peers", strings.Join(p.peers, ","),
		"--data", p.dir, "--log", host.RunLogName(p.dir, id), "--key", p.key, "--watch-stdin", "--seed", strconv.FormatUint(p.seed, 10), "--report", "--nodes", strconv.Itoa(p.cfg.Nodes)}
	for _, b := range p.cfg.Bugs {
		a = append(a, "--bug", b)
	}
	for _, prm := range p.sys.Params {
		if v, ok := p.cfg.Params[prm.Name]; ok {
			a = append(a, "--"+p.runFlags[prm.Name], v)
		}
	}
	if p.stderr == nil {
		a = append(a, "--quiet")
	}
	if p.holdCalls {
		a = append(a, "--hold-calls")
	}
	p.mu.Lock()
	if p.fresh && !p.started[id] {
		a = append(a, "--fresh")
	}
	p.mu.Unlock()
	return a
}

// nodeEnv marks the processes a cluster starts; testAsCommandEnv is what
// livecheck's own test binaries are told to run as the command by (their
// TestMain).
const (
	nodeEnv          = "LIVECHECK_CLUSTER_NODE"
	testAsCommandEnv = "LIVECHECK_TEST_AS_COMMAND"
)

// start starts node id's process, whose pid it returns; ready is closed
// once it has reported its first state, or ended.
func (p *procs) start(id sim.NodeID) (ready chan struct{}, pid int, err error) {
	cmd := exec.Command(p.exe, p.args(id)...)
	cmd.Env = append(os.Environ(), nodeEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	// The node stops when this pipe closes: when the cluster ends, even
	// killed, none of its nodes outlives it.
	if _, err := cmd.StdinPipe(); err != nil {
		return nil, 0, err
	}
	ready = make(chan struct{})
	var readyOnce sync.Once
	var errBuf tailBuffer
	cmd.Stderr = &errBuf
	if p.stderr != nil {
		cmd.Stderr = io.MultiWriter(&errBuf, p.stderr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return nil, 0, errors.New("the cluster is stopping")
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("node %d: %v", id, err)
	}
	if p.started == nil {
		p.started = map[sim.NodeID]bool{}
	}
	p.started[id] = true
	p.procs[id] = cmd
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r host.StateReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				readyOnce.Do(func() { close(ready) })
				p.send(procEvent{node: id, report: &r})
			}
		}
		readyOnce.Do(func() { close(ready) })
		err := cmd.Wait()
		ev := procEvent{node: id, exit: "exit status 0"}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ev.exit = ee.String()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				ev.killed = true
			}
		} else if err != nil {
			ev.exit = err.Error()
		}
		if last := errBuf.lastLine(); last != "" && !ev.killed {
			ev.exit += ": " + last
		}
		p.send(procEvent{node: ev.node, exit: ev.exit, killed: ev.killed})
	}()
	return ready, cmd.Process.Pid, nil
}

// send hands ev to the cluster's loop, unless it is stopping.
func (p *procs) send(ev procEvent) {
	ev.at = time.Now()
	p.mu.Lock()
	stopping := p.stopping
	p.mu.Unlock()
	if stopping {
		return
	}
	select {
	case p.events <- ev:
	case <-time.After(time.Second):
		// the loop has returned
	}
}

// stopAll stops every node (SIGTERM, then SIGKILL after 5 s) and waits.
func (p *procs) stopAll() {
	p.mu.Lock()
	p.stopping = true
	cmds := append([]*exec.Cmd(nil), p.procs...)
	p.mu.Unlock()
	for _, cmd := range cmds {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		for _, cmd := range cmds {
			if cmd != nil && cmd.Process != nil {
				cmd.Process.Kill()
			}
		}
		<-done
	}
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimRight(string(t.b), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// lockedWriter serializes writes from several processes' copiers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runParamFlags are run's flags for sys's parameters, by name: those
// run's own flags rename.
func runParamFlags(sys *protocol.System) map[string]string {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	addRunFlags(fs)
	out := map[string]string{}
	for _, p := range sys.Params {
		out[p.Name] = paramFlag(fs, p.Name)
	}
	return out
}
