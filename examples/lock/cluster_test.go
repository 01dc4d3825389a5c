package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// TestMain lets a test run this command as processes of their own: the
// test binary started with asCommand set is the command, main, so that
// 'cluster' can start its nodes and a test can kill one.
func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

const asCommand = "LIVECHECK_TEST_AS_COMMAND"

// deadline bounds the waits: far more than an idle machine needs (well
// under a second), so that a busy one does not fail the test.
const deadline = time.Minute

// The README's command: the lock service as 3 processes on loopback,
// until every client has had the lock.
func TestClusterCommand(t *testing.T) {
	t.Setenv(asCommand, "1") // for the node processes cluster starts
	dir := t.TempDir()
	var o, e bytes.Buffer
	code := livecheck.Run([]string{"cluster", "lock", "--nodes", "3", "--until-live", "--for", deadline.String(), "--data", dir}, &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), "all-served (liveness) holds") ||
		!strings.Contains(o.String(), "every liveness property holds") || violatedForReal(o.String()) {
		t.Errorf("cluster lock: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
	if !strings.Contains(o.String(), "one-holder (safety) holds") {
		t.Errorf("cluster lock does not show the safety property:\n%s", o.String())
	}

	// The nodes' run logs merge into a trace of the run, which replays.
	logs, _ := filepath.Glob(filepath.Join(dir, "node-*.log"))
	file := filepath.Join(dir, "run.json")
	o.Reset()
	e.Reset()
	code = livecheck.Run(append(append([]string{"trace"}, logs...), "--out", file), &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), "lock: 3 logs merged") ||
		!strings.Contains(o.String(), "every node's state equals the simulator's after every step") {
		t.Fatalf("trace %v: exit %d, stdout:\n%s\nstderr:\n%s", logs, code, o.String(), e.String())
	}
	o.Reset()
	e.Reset()
	code = livecheck.Run([]string{"replay", file}, &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), "reproduced: the trace reaches a live state") {
		t.Errorf("replay of the run's trace: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}

	// The run, ended live, is a prefix: a check starts where it ended,
	// with a reset the real run did not have.
	prefix := filepath.Join(dir, "prefix.json")
	o.Reset()
	e.Reset()
	if code = livecheck.Run(append(append([]string{"trace"}, logs...), "--prefix", "--out", prefix), &o, &e, &lock.System); code != livecheck.ExitOK {
		t.Fatalf("trace --prefix: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
	o.Reset()
	e.Reset()
	code = livecheck.Run([]string{"check", "lock", "--from", prefix, "--depth", "6", "--resets", "1", "-q"}, &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), "resets ") {
		t.Errorf("check --from the run: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
}

// A node process and the reports it writes.
type nodeProc struct {
	cmd     *exec.Cmd
	reports chan host.StateReport
	stderr  bytes.Buffer
}

func startNode(t *testing.T, args ...string) *nodeProc {
	t.Helper()
	p := &nodeProc{cmd: exec.Command(os.Args[0], args...), reports: make(chan host.StateReport, 10000)}
	p.cmd.Env = append(os.Environ(), asCommand+"=1")
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.reports)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r host.StateReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				p.reports <- r
			}
		}
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return p
}

// await reads p's reports until one's dump contains want.
func (p *nodeProc) await(t *testing.T, want string) host.StateReport {
	t.Helper()
	return p.awaitFunc(t, want, func(dump string) bool { return strings.Contains(dump, want) })
}

// awaitFunc reads p's reports until one's dump satisfies ok.
func (p *nodeProc) awaitFunc(t *testing.T, want string, match func(string) bool) host.StateReport {
	t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case r, ok := <-p.reports:
			if !ok {
				t.Fatalf("the node ended before a state with %q; stderr:\n%s", want, p.stderr.String())
			}
			if match(r.Dump) {
				return r
			}
		case <-timeout:
			t.Fatalf("no state with %q within %v", want, deadline)
		}
	}
}

// A node's process killed with SIGKILL and started again comes back with
// its durable fields (the server's lease count and who holds the lock),
// and the system recovers: every client gets its turn. A state file cut
// short makes the node refuse to start, in one line, exit 2.
func TestRunKillRestart(t *testing.T) {
	peers, err := host.FreeLoopback(3, sim.Datagram)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := func(id string) []string {
		return []string{"run", "lock", "--id", id, "--peers", strings.Join(peers, ","), "--data", dir, "--report", "--quiet"}
	}
	server := startNode(t, args("0")...)
	server.await(t, "Lease:0") // up and listening
	c1, c2 := startNode(t, args("1")...), startNode(t, args("2")...)
	// Both clients' requests have come: the lock is granted to one, the
	// other waits. (A request sent while the server is down is lost, and
	// a client asks once: the protocol's own limit, which the check
	// shows with --drops 1.)
	before := server.awaitFunc(t, "a grant and a waiting client", func(d string) bool {
		return strings.Contains(d, "Lease:1") && (strings.Contains(d, "Waiting:[1]") || strings.Contains(d, "Waiting:[2]"))
	})
	if err := server.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.cmd.Wait()
	server = startNode(t, args("0")...)
	after := server.await(t, "Server{")
	if !strings.Contains(after.Event, "Init") || !strings.Contains(after.Dump, "Lease:1") && !strings.Contains(after.Dump, "Lease:2") {
		t.Errorf("the server restarted as %s (after %s), want its lease count back (it was %s)", after.Dump, after.Event, before.Dump)
	}
	c1.await(t, "Served:true")
	c2.await(t, "Served:true")

	server.cmd.Process.Signal(syscall.SIGKILL)
	server.cmd.Wait()
	name := filepath.Join(dir, "node-0.state")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	code := livecheck.Run(args("0"), &o, &e, &lock.System)
	if code != livecheck.ExitUsage || strings.Count(e.String(), "\n") != 1 || !strings.Contains(e.String(), "node 0 refuses to start: its state file") {
		t.Errorf("run from a damaged state file: exit %d, stderr:\n%s", code, e.String())
	}
}

// Killing one node's process (SIGKILL) while 'cluster' runs: the
// cluster starts it again from its state file, a reset, and goes on;
// SIGTERM stops it all, exit 0.
func TestClusterKillNode(t *testing.T) {
	cmd := exec.Command(os.Args[0], "cluster", "lock", "--nodes", "3", "--for", deadline.String(), "--states=false")
	cmd.Env = append(os.Environ(), asCommand+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen strings.Builder
	await := func(match func(string) bool, what string) string {
		t.Helper()
		timeout := time.After(deadline)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("cluster ended before %s:\n%s", what, seen.String())
				}
				seen.WriteString(l + "\n")
				if match(l) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %s within %v:\n%s", what, deadline, seen.String())
			}
		}
	}
	line := await(func(l string) bool { return strings.HasPrefix(l, "node 1: ") }, "node 1's pid")
	var pid int
	if _, err := fmt.Sscanf(line[strings.LastIndex(line, "pid "):], "pid %d", &pid); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	await(func(l string) bool { return strings.Contains(l, "all-served (liveness) holds") }, "every client served")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	await(func(l string) bool { return strings.Contains(l, "node 1's process ended: signal: killed") }, "node 1's end")
	await(func(l string) bool { return strings.Contains(l, "node 1 starts again from its state file (a reset)") }, "node 1's restart")
	cmd.Process.Signal(syscall.SIGTERM)
	await(func(l string) bool { return strings.HasPrefix(l, "stopped after") }, "the cluster's stop")
	if err := cmd.Wait(); err != nil {
		t.Errorf("cluster: %v\n%s", err, seen.String())
	}
	if violatedForReal(seen.String()) {
		t.Errorf("a safety property was violated:\n%s", seen.String())
	}
}

// The nemesis from the command line: a drop, a partition and its heal,
// and a restart (the node's process killed, started again from its
// state file) applied to the lock service for real; the run's logs
// merge and replay in the simulator, the restart a reset.
func TestClusterNemesis(t *testing.T) {
	t.Setenv(asCommand, "1")
	dir := t.TempDir()
	var o, e bytes.Buffer
	code := livecheck.Run([]string{"cluster", "lock", "--nodes", "3", "--for", "2s", "--data", dir, "--states=false",
		"--nemesis", "drop:0:1,partition:0,heal,restart:2", "--nemesis-every", "200ms"}, &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), "nemesis: restart 2") || !strings.Contains(o.String(), "node 2 starts again from its state file") ||
		!strings.Contains(o.String(), "nemesis: done, 4 failures applied") {
		t.Fatalf("cluster --nemesis: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "node-*.log"))
	o.Reset()
	e.Reset()
	code = livecheck.Run(append(append([]string{"trace"}, logs...), "--out", filepath.Join(dir, "run.json")), &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), "(1 reset); every node's state equals the simulator's after every step") {
		t.Errorf("trace of the run: exit %d, stdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
	}
}

// Check from where the lock service is: its nodes run in this process
// (host.Cluster) until every client has had the lock, a snapshot is
// taken, and 'check --from' it, a reset allowed, finds nothing: the
// service stays correct from where it is.
func TestSnapshotLock(t *testing.T) {
	dir := t.TempDir()
	cl, err := host.StartCluster(&lock.System, livecheck.Config{Nodes: 3}, host.ClusterOptions{Seed: 1, LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	end := time.Now().Add(deadline)
	for !cl.Holds(cl.State()) {
		if time.Now().After(end) {
			t.Fatalf("not every client served within %v", deadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
	snap, err := runlog.SnapshotCluster(cl, deadline)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Down()) != 0 || snap.Replay.Trace.Result != "prefix" {
		t.Fatalf("snapshot with %v down, result %q: want none down, a prefix", snap.Down(), snap.Replay.Trace.Result)
	}
	file := filepath.Join(dir, "snap.json")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Replay.Trace.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := []string{"check", "lock", "--from", file, "--resets", "1", "--out", filepath.Join(dir, "out")}
	var o, e bytes.Buffer
	code := livecheck.Run(args, &o, &e, &lock.System)
	if code != livecheck.ExitOK || !strings.Contains(o.String(), fmt.Sprintf("started after a live prefix of %d steps", snap.Steps)) {
		t.Errorf("%v: exit %d, want 0 from the snapshot's %d steps:\n%s%s", args, code, snap.Steps, o.String(), e.String())
	}
	t.Logf("%v:\n%s", args, o.String())
}

// violatedForReal says whether a cluster's output shows a safety
// violation that stands: one seen in the states as they arrived is
// withdrawn at the end where the run's logs, merged in causal order,
// replay without it.
func violatedForReal(out string) bool {
	return strings.Contains(out, "VIOLATED") && !strings.Contains(out, "no violation on a consistent view")
}
