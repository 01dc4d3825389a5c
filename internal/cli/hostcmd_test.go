package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
