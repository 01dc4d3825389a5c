package cli_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/ring"
	"github.com/livecheck/livecheck/systems/transport"
)

// The ring, a stream system, runs as a cluster on loopback; once it has
// formed, 'snapshot' takes its state, and 'check --from' searches from
// there: with rejoin-self, a reset finds the bug with its critical
// step, and the trace replays; the correct ring's snapshot gives none.
// Under -short, the check with rejoin-self is left out (seconds).
func TestSnapshotRing(t *testing.T) {
	for _, bugs := range [][]string{{"rejoin-self"}, nil} {
		name := "correct"
		if bugs != nil {
			name = bugs[0]
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			startLive(t, &ring.System, protocol.Config{Nodes: 3, Bugs: bugs}, dir)
			file := filepath.Join(dir, "snap.json")
			r := lc(t, "", "snapshot", "--data", dir, "--out", file)
			if r.code != 0 || !strings.Contains(r.stdout, "ring: snapshot 1, 3 nodes recorded, 0 nodes down") ||
				!strings.Contains(r.stdout, "prefix: "+file) {
				t.Fatalf("snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			t.Logf("snapshot:\n%s", r.stdout)
			if bugs != nil && testing.Short() {
				t.Skip("the critical search from the snapshot takes seconds (7 s of CPU): run without -short")
			}
			args := []string{"check", "ring", "--from", file, "--resets", "1", "--socket-errors", "0", "--time", "30s",
				"--walk-depth", "1000", "--escalations", "0", "--walks", "2", "--out", filepath.Join(dir, "out")}
			for _, b := range bugs {
				args = append(args, "--bug", b)
			}
			r = lc(t, "", args...)
			t.Logf("check:\n%s", r.stdout)
			if bugs == nil {
				if r.code != 0 {
					t.Fatalf("check from the correct ring's snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
				}
				return
			}
			if r.code != 1 || !strings.Contains(r.stdout, "liveness-violation of ring-formed") || !strings.Contains(r.stdout, "critical transition") ||
				!strings.Contains(r.stdout, "after the prefix of") {
				t.Fatalf("check from the snapshot with rejoin-self: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			traces, _ := filepath.Glob(filepath.Join(dir, "out", "ring-ring-formed-*.json"))
			if len(traces) != 1 {
				t.Fatalf("check wrote %q, want one trace of ring-formed", traces)
			}
			if r = lc(t, "", "replay", traces[0]); r.code != 1 || !strings.Contains(r.stdout, "reproduced") {
				t.Errorf("replay %s: exit %d\nstdout:\n%s\nstderr:\n%s", traces[0], r.code, r.stdout, r.stderr)
			}
		})
	}
}

// startLive starts sys for cfg on loopback, its run logs and cluster key
// in dir, stopped when the test ends, and waits (a minute at most) until
// its liveness property holds.
func startLive(t *testing.T, sys *protocol.System, cfg protocol.Config, dir string) {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	c, err := host.StartCluster(sys, cfg, host.ClusterOptions{Seed: 1, LogDir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	writeKey(t, filepath.Join(dir, "cluster.key"), key)
	end := time.Now().Add(time.Minute)
	for !c.Holds(c.State()) {
		if time.Now().After(end) {
			t.Fatalf("%s is not live within a minute: %s", sys.Name, c.State().Dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeKey(t *testing.T, name string, key []byte) {
	t.Helper()
	if err := os.WriteFile(name, key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A datagram system: the transport (systems/transport) runs on loopback
// over UDP; once every message is delivered, 'snapshot' takes its state
// (Lai and Yang's piggybacked epochs, the host's channels' sequence
// numbers) and 'check --from' it, with a lost datagram and a reset
// allowed, finds nothing.
func TestSnapshotTransport(t *testing.T) {
	dir := t.TempDir()
	startLive(t, &transport.System, protocol.Config{}, dir)
	file := filepath.Join(dir, "snap.json")
	r := lc(t, "", "snapshot", "--data", dir, "--out", file)
	if r.code != 0 || !strings.Contains(r.stdout, "transport: snapshot 1, 2 nodes recorded, 0 nodes down") ||
		!strings.Contains(r.stdout, "prefix: "+file) {
		t.Fatalf("snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("snapshot:\n%s", r.stdout)
	r = lc(t, "", "check", "transport", "--from", file, "--drops", "1", "--resets", "1", "--time", "60s", "--out", filepath.Join(dir, "out"))
	if r.code != 0 || !strings.Contains(r.stdout, "started after a live prefix of ") {
		t.Fatalf("check from the transport's snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("check:\n%s", r.stdout)
}

// The command 'snapshot' prints checks the code that ran: after the
// ring with rejoin-self has formed on loopback (the second time, node 1
// restarted on the way, a reset the snapshot's path takes),
// 'snapshot' writes the prefix file and prints 'check ring --from
// FILE'; that command, as printed (its trace files sent to a temporary
// directory), takes the bug from the file and the reset as spent, and
// finds rejoin-self. With --bug or --nodes other than the file's it is
// refused in one line, exit 2.
func TestSnapshotPrintedCommand(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "formed"
		if restart {
			name = "after a restart"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			key := make([]byte, 32)
			rand.Read(key)
			c, err := host.StartCluster(&ring.System, protocol.Config{Nodes: 3, Bugs: []string{"rejoin-self"}},
				host.ClusterOptions{Seed: 1, LogDir: dir, Data: dir, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Stop)
			writeKey(t, filepath.Join(dir, "cluster.key"), key)
			formed := func() {
				end := time.Now().Add(time.Minute)
				for !c.Holds(c.State()) {
					if time.Now().After(end) {
						t.Fatalf("the ring is not formed within a minute: %s", c.State().Dump())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			if restart {
				// Before the ring forms: a node of the formed ring
				// restarted with rejoin-self may never rejoin (the bug).
				if err := c.Restart(1); err != nil {
					t.Fatal(err)
				}
			}
			formed()
			file := filepath.Join(dir, "snap.json")
			r := lc(t, "", "snapshot", "--data", dir, "--out", file)
			_, cmd, ok := strings.Cut(r.stdout, "check from it: ")
			cmd, _, _ = strings.Cut(cmd, "\n")
			args := strings.Fields(cmd)
			if r.code != 0 || !ok || len(args) != 5 || args[1] != "check" || args[4] != file {
				t.Fatalf("snapshot: exit %d, printed command %q\nstdout:\n%s\nstderr:\n%s", r.code, cmd, r.stdout, r.stderr)
			}
			if took := strings.Contains(r.stdout, "its path took 1 reset"); took != restart {
				t.Errorf("snapshot says its path took a reset: %v, want %v\n%s", took, restart, r.stdout)
			}
			for _, bad := range []struct{ flag, want string }{
				{"--nodes=4", "was made for another configuration: 3 nodes, not 4"},
				{"--bug=partition-forget", "was made for another configuration: bugs [rejoin-self], not [partition-forget] (leave --bug out: the file's are taken)"},
			} {
				r := lc(t, "", append(slices.Clone(args[1:]), bad.flag)...)
				if r.code != 2 || !strings.Contains(r.stderr, bad.want) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("%s %s: exit %d, stderr %q; want 2 and %q", cmd, bad.flag, r.code, r.stderr, bad.want)
				}
			}
			if testing.Short() {
				t.Skip("the critical search from the snapshot takes seconds: run without -short")
			}
			out := filepath.Join(dir, "out")
			r = lc(t, "", append(args[1:], "--out", out)...)
			if r.code != 1 || !strings.Contains(r.stdout, "liveness-violation of ring-formed") || !strings.Contains(r.stdout, "critical transition") {
				t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", cmd, r.code, r.stdout, r.stderr)
			}
			t.Logf("%s:\n%s", cmd, r.stdout)
		})
	}
}
