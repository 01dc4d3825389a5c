package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/sim"
)

// Bad input to run, cluster, trace and call is one line on stderr, exit 2.
func TestHostCommandsUsage(t *testing.T) {
	peers := "--peers=127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"
	dir := t.TempDir()
	empty, junk := filepath.Join(dir, "empty.log"), filepath.Join(dir, "junk.log")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(junk, []byte("{\"bad"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "name the system"},
		{[]string{"run", "nosuch"}, `unknown system "nosuch"`},
		{[]string{"run", "ring", peers}, "--id I is required"},
		{[]string{"run", "ring", "--id", "0"}, "--peers ADDR,ADDR,... is required"},
		{[]string{"run", "ring", "--id", "5", peers}, "node 5 is not a node of ring with 3 nodes"},
		{[]string{"run", "ring", "--id", "0", "--nodes", "4", peers}, "ring with 4 nodes needs 4 addresses"},
		{[]string{"run", "ring", "--id", "0", "--peers", "nowhere,127.0.0.1:2,127.0.0.1:3"}, `node 0's address "nowhere"`},
		{[]string{"run", "ring", "--id", "0", "--bug", "nosuch", peers}, `ring has no bug "nosuch"`},
		{[]string{"cluster"}, "name the system"},
		{[]string{"cluster", "ring", "--for", "-1s"}, "--for cannot be negative"},
		{[]string{"cluster", "ring", "--nodes", "99"}, "ring needs"},
		{[]string{"trace"}, "name the run logs"},
		{[]string{"call"}, "name the system"},
		{[]string{"call", "ring", "--key", "k"}, "--to ADDR is required"},
		{[]string{"call", "ring", "--to", "127.0.0.1:1"}, "--key FILE is required"},
		{[]string{"call", "ring", "--to", "127.0.0.1:1", "--key", "/nonexistent/key"}, "--key: open /nonexistent/key"},
		{[]string{"trace", "/nonexistent/node-0.log"}, "no such file"},
		{[]string{"trace", empty}, "empty.log: empty: not a run log"},
		{[]string{"trace", junk}, "junk.log: no header line: not a run log"},
		{[]string{"cluster", "ring", "--check-time", "1s"}, "--check-time needs --check-every"},
		{[]string{"cluster", "ring", "--check-every", "-1s"}, "--check-every and --check-time cannot be negative"},
		{[]string{"cluster", "ring", "--nemesis", "drop:0:1"}, "which lose and copy nothing"},
		{[]string{"cluster", "ring", "--nemesis", "partition:1,restart:0,heal"}, "heal first"},
		{[]string{"cluster", "transport", "--nemesis", "break:0:1"}, "which have no connections to break"},
		{[]string{"cluster", "ring"}, "is a test binary that runs its tests, not the command"},
		{[]string{"cluster", "transport", "--nemesis", "drop:0:0"}, `--nemesis: fault "drop:0:0"`},
		{[]string{"cluster", "transport", "--nemesis", "heal", "--nemesis-random", "2"}, "give --nemesis or --nemesis-random, not both"},
		{[]string{"cluster", "transport", "--nemesis-every", "0s"}, "--nemesis-every must be positive"},
		{[]string{"cluster", "kvstore", "--nemesis", "partition:0,call:3"}, "unless --hold-calls holds them for the nemesis's call:NODE"},
		{[]string{"cluster", "kvstore", "--hold-calls", "--nemesis", "call:4"}, `--nemesis: fault "call:4": "4" is no node: nodes are 0 to 3`},
		{[]string{"cluster", "kvstore", "--hold-calls", "--nemesis", "call"}, "break:A:B or call:NODE"},
		{[]string{"snapshot"}, "--data DIR is required"},
		{[]string{"snapshot", "--data", "/nonexistent"}, "--key: open /nonexistent/cluster.key"},
		{[]string{"snapshot", "--data", "/tmp", "--wait", "0s"}, "--wait must be positive"},
		{[]string{"snapshot", "extra"}, `unexpected argument "extra"`},
	} {
		r := lc(t, "", c.args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) || r.panicked != "" {
			t.Errorf("%q: exit %d, stderr %q, want exit 2 and one line with %q%s", c.args, r.code, r.stderr, c.want, r.panicked)
		}
	}
}

// run refuses a state file its run log does not confirm (here: deleted)
// in one line, exit 2, and --fresh starts the node afresh, its log
// recording the fresh boot. trace names an entry deleted from a log,
// and refuses the logs of two runs of different bugs, each in one line,
// exit 2.
func TestRunConfirmsStateAndTraceRefuses(t *testing.T) {
	peers, err := host.FreeLoopback(4, sim.Datagram)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	state, log := filepath.Join(dir, "node-0.state"), filepath.Join(dir, "node-0.log")
	node := func(id int, log string, extra ...string) run {
		return lc(t, "", append([]string{"run", "kvstore", "--id", strconv.Itoa(id), "--peers", strings.Join(peers, ","),
			"--data", dir, "--log", log, "--watch-stdin", "--quiet"}, extra...)...)
	}
	if r := node(0, log); r.code != 0 {
		t.Fatalf("run: exit %d\n%s%s%s", r.code, r.stdout, r.stderr, r.panicked)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	r := node(0, log)
	want := "livecheck run: node 0 refuses to start: its state file " + state + " is missing, but its run log " + log + " says it wrote generation 1 (entry 1): deleted or lost; start it afresh (run --fresh, Options.Fresh) to begin again without what it kept\n"
	if r.code != 2 || r.stderr != want {
		t.Fatalf("run without its state file: exit %d, stderr %q\nwant exit 2 and %q", r.code, r.stderr, want)
	}
	if r := node(0, log, "--fresh"); r.code != 0 {
		t.Fatalf("run --fresh: exit %d\n%s%s%s", r.code, r.stdout, r.stderr, r.panicked)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	// The header, the first Init and its write, the fresh Init and its
	// write.
	if len(lines) != 6 || !strings.Contains(lines[3], `"boot":1,"clock":2,"kind":"init"`) || !strings.Contains(lines[3], `"fresh":true`) {
		t.Fatalf("the log after --fresh:\n%s", b)
	}

	// A log with an entry deleted.
	cut := filepath.Join(t.TempDir(), "node-0.log")
	os.WriteFile(cut, []byte(lines[0]+lines[2]), 0o644)
	r = lc(t, "", "trace", cut)
	want = "livecheck trace: node 0's run log " + cut + ": entry 1 is missing: deleted (entry 2 follows entry 0)\n"
	if r.code != 2 || r.stderr != want {
		t.Errorf("trace of a log with an entry deleted: exit %d, stderr %q\nwant exit 2 and %q", r.code, r.stderr, want)
	}

	// Node 1 of the same cluster, with a bug.
	log1 := filepath.Join(dir, "node-1.log")
	if r := node(1, log1, "--bug", "early-ack"); r.code != 0 {
		t.Fatalf("run --bug: exit %d\n%s%s%s", r.code, r.stdout, r.stderr, r.panicked)
	}
	r = lc(t, "", "trace", log, log1)
	want = "livecheck trace: " + log + " and " + log1 + " are not logs of one run: " + log1 + " is of bugs [early-ack], not []; trace merges the logs of one run, written by one executable\n"
	if r.code != 2 || r.stderr != want {
		t.Errorf("trace of logs of other bugs: exit %d, stderr %q\nwant exit 2 and %q", r.code, r.stderr, want)
	}
}
