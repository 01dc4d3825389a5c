package host_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A node that writes its state file in every handler, killed at a crash
// point (every boundary between a handler's writes, in turn: before its
// log lines, half its first line written, lines written and not the
// state file, the state file's temporary file written and not renamed,
// the state file written and nothing sent, one of two messages sent,
// all sent) of its K-th handler to reach it, 200 times, node, K and the
// point drawn from a seed: each time it starts again from what the kill
// left, and the run's logs merge and replay whole, with every node's
// state equal to the simulator's after every step, nothing left out,
// one reset (none where it died before its first Init reached its
// state file). Where it died between its log and its state file, its
// log voids that step, and only there.
func TestCrashAtEveryWriteBoundary(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 2 * len(host.CrashPoints)
	}
	const seed = 37
	voided := map[string]int{}
	start := time.Now()
	for i := range runs {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		victim := sim.NodeID(rng.IntN(3))
		point := host.CrashPoints[i%len(host.CrashPoints)]
		k := int32(1 + rng.IntN(8))
		var hits atomic.Int32
		dir := t.TempDir()
		co := host.ClusterOptions{Data: dir, LogDir: dir}
		host.SetCrash(&co, func(id sim.NodeID, p string) bool {
			return id == victim && p == point && hits.Add(1) == k
		})
		co.Log = newLog(t)
		c, err := host.StartCluster(host.TallySystem, protocol.Config{Nodes: 3}, co)
		// Killed in Start (its first Init, most often): the cluster's
		// start fails and stops the nodes started before it, and starts
		// again, each of those a reset.
		inStart := err != nil
		if inStart {
			if !strings.Contains(err.Error(), "crash point") {
				t.Fatalf("run %d: %v", i, err)
			}
			if c, err = host.StartCluster(host.TallySystem, protocol.Config{Nodes: 3}, co); err != nil {
				t.Fatalf("run %d (node %d, %s #%d): started again: %v", i, victim, point, k, err)
			}
		}
		t.Cleanup(c.Stop)
		if !inStart {
			select {
			case <-c.Nodes[victim].Done():
			case <-time.After(deadline):
				t.Fatalf("run %d: node %d did not reach crash point %s %d times", i, victim, point, k)
			}
			if err := c.Nodes[victim].Err(); err == nil || !strings.Contains(err.Error(), "crash point") {
				t.Fatalf("run %d: node %d stopped: %v", i, victim, err)
			}
			if err := c.Revive(victim); err != nil {
				t.Fatalf("run %d (node %d, %s #%d): started again: %v", i, victim, point, k, err)
			}
		}
		base := make([]int, 3)
		for j, n := range c.Nodes {
			base[j] = n.State().(*host.Tally).Count
		}
		waitQuiet(t, "every node counts 5 more", func() bool {
			for j, n := range c.Nodes {
				if n.State().(*host.Tally).Count < base[j]+5 {
					return false
				}
			}
			return true
		})
		c.Stop()
		if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(tmps) > 0 {
			t.Fatalf("run %d: temporary files left after the restart: %v", i, tmps)
		}
		rr, err := replayDir(t, dir, host.TallySystem)
		if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 || rr.LeftOutSteps != 0 {
			t.Fatalf("run %d (node %d killed at %s #%d): the replay: %v, divergence %v, violation %q, left out %q",
				i, victim, point, k, err, rr.Divergence, rr.Violation, rr.LeftOut)
		}
		resets := 0
		for _, st := range rr.Path {
			if st.Event.Kind == sim.Reset {
				resets++
			}
		}
		wantResets := 1
		if k == 1 && slices.Contains(host.CrashesBeforeState, point) {
			wantResets = 0 // died in its first Init, before its state file: it never started
		}
		if inStart {
			wantResets += int(victim)
		}
		if resets != wantResets {
			t.Fatalf("run %d (node %d killed at %s #%d): %d resets in the merged run, want %d", i, victim, point, k, resets, wantResets)
		}
		b, err := os.ReadFile(host.RunLogName(dir, victim))
		if err != nil {
			t.Fatal(err)
		}
		void := strings.Count(string(b), `"void":`)
		wantVoid := 0
		if slices.Contains(host.CrashesVoided, point) {
			wantVoid = 1
		}
		if void != wantVoid {
			t.Fatalf("run %d (node %d killed at %s #%d): %d void lines in its log, want %d", i, victim, point, k, void, wantVoid)
		}
		voided[point] += void
	}
	t.Logf("%d runs in %v; steps voided by the restart, by crash point: %v", runs, time.Since(start).Round(time.Millisecond), voided)
}

// killChildEnv tells the test binary it is TestKill9's node process:
// "ID ADDR,ADDR,ADDR DIR".
const killChildEnv = "LIVECHECK_HOST_KILL_CHILD"

// TestKill9Child is the node process TestKill9 starts (the test binary
// again, running only this test): it runs a tally node until killed.
func TestKill9Child(t *testing.T) {
	spec := os.Getenv(killChildEnv)
	if spec == "" {
		t.Skip("TestKill9's node process, run by it")
	}
	var id int
	var peers, dir string
	if _, err := fmt.Sscan(spec, &id, &peers, &dir); err != nil {
		t.Fatal(err)
	}
	_, err := host.Start(host.Options{System: host.TallySystem, Config: protocol.Config{Nodes: 3}, ID: sim.NodeID(id),
		Peers: strings.Split(peers, ","), Data: dir, RunLog: host.RunLogName(dir, sim.NodeID(id)), Seed: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	select {} // until killed
}

// A real kill -9: node 2 of a tally cluster, a process of its own that
// writes its state file in every handler, is killed with SIGKILL 13
// times, each once its log has grown by a number of lines drawn from a
// seed (wherever its writes are then), and started again on what the
// kill left 12 times (the last kill ends its run); the two other nodes
// run on in this process. The run's logs merge and replay whole, one
// reset for each restart.
func TestKill9(t *testing.T) {
	peers, err := host.FreeLoopback(3, sim.Datagram)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := newLog(t)
	var nodes []*host.Node
	for id := range 2 {
		n, err := host.Start(host.Options{System: host.TallySystem, Config: protocol.Config{Nodes: 3}, ID: sim.NodeID(id),
			Peers: peers, Data: dir, RunLog: host.RunLogName(dir, sim.NodeID(id)), Seed: 1, Log: l})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Stop)
		nodes = append(nodes, n)
	}
	lines := func() int {
		b, _ := os.ReadFile(host.RunLogName(dir, 2))
		return bytes.Count(b, []byte("\n"))
	}
	rng := rand.New(rand.NewPCG(37, 9))
	const restarts = 12
	for k := 0; k <= restarts; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=2 %s %s", killChildEnv, strings.Join(peers, ","), dir))
		var errs bytes.Buffer
		cmd.Stderr = &errs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ended := make(chan error, 1)
		go func() { ended <- cmd.Wait() }()
		target := lines() + 4 + rng.IntN(40)
		waitQuiet(t, "node 2's log grows", func() bool {
			select {
			case err := <-ended:
				t.Fatalf("start %d: node 2's process ended on its own: %v\n%s", k, err, errs.String())
			default:
			}
			return lines() >= target
		})
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-ended
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("start %d: node 2's process ended on its own\n%s", k, errs.String())
		}
	}
	for _, n := range nodes {
		n.Stop()
	}
	rr, err := replayDir(t, dir, host.TallySystem)
	if err != nil || rr.Divergence != nil || rr.Violation != "" || len(rr.LeftOut) != 0 {
		t.Fatalf("the replay: %v, divergence %v, violation %q, left out %q", err, rr.Divergence, rr.Violation, rr.LeftOut)
	}
	resets := 0
	for _, st := range rr.Path {
		if st.Event.Kind == sim.Reset {
			resets++
		}
	}
	b, _ := os.ReadFile(host.RunLogName(dir, 2))
	if resets != restarts {
		t.Fatalf("%d resets in the merged run, want %d", resets, restarts)
	}
	t.Logf("%d kills: %d steps replayed, %d resets; node 2's log voids %d steps", restarts+1, len(rr.Path), resets, bytes.Count(b, []byte(`"void":`)))
}
