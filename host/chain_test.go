package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/protocol"
)

// runPingers runs 3 pingers with run logs in a new directory until
// every node got 6 pings, and returns the directory.
func runPingers(t *testing.T, sys *protocol.System, cfg protocol.Config) string {
	t.Helper()
	dir := t.TempDir()
	cfg.Nodes = 3
	c, err := StartCluster(sys, cfg, ClusterOptions{LogDir: dir, Log: newLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	waitQuiet(t, "6 pings each", func() bool {
		for _, n := range c.Nodes {
			if got(n) < 6 {
				return false
			}
		}
		return true
	})
	c.Stop()
	return dir
}

// logLines reads a log's lines, newlines included.
func logLines(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

// Every entry of a run log is sealed to the one before it: an entry
// deleted, edited, moved later or earlier, or copied is named by its
// index, with the node and the file, in one line (a log whose tail was
// cut is named by the merge: runlog's TestRunLogCutShort). A log of
// format 1 (no chain) is refused, saying so.
func TestRunLogTampered(t *testing.T) {
	dir := runPingers(t, &pingers, protocol.Config{})
	name := RunLogName(dir, 1)
	lines := logLines(t, name)
	if len(lines) < 12 {
		t.Fatalf("node 1's log has %d lines", len(lines))
	}
	last := len(lines) - 1
	edit := func(b []byte) []byte {
		out := bytes.Clone(b)
		i := bytes.Index(out, []byte(`"fp":"`)) + len(`"fp":"`)
		out[i] ^= 1 // 0 <-> 1, a <-> `, ...: another digit or not, the line reads
		return out
	}
	join := func(parts ...[][]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, bytes.Join(p, nil)...)
		}
		return out
	}
	one := func(b []byte) [][]byte { return [][]byte{b} }
	l := lines
	for _, tc := range []struct {
		what string
		log  []byte
		want string
	}{
		{"deleted", join(l[:5], l[6:]), "entry 5 is missing: deleted (entry 6 follows entry 4)"},
		{"three deleted", join(l[:5], l[8:]), "entry 5 is missing, to entry 7: deleted (entry 8 follows entry 4)"},
		{"edited", join(l[:5], one(edit(l[5])), l[6:]), "entry 5 was edited: its sum does not match it"},
		{"the last edited", join(l[:last], one(edit(l[last]))), fmt.Sprintf("entry %d was edited: its sum does not match it", last)},
		{"moved later", join(l[:5], l[6:9], one(l[5]), l[9:]), "entry 5 is out of its place: it comes after entry 8 (moved)"},
		{"moved earlier", join(l[:5], one(l[8]), l[5:8], l[9:]), "entry 8 is out of its place: it comes before entry 5 (moved)"},
		{"swapped", join(l[:5], one(l[6]), one(l[5]), l[7:]), "entry 6 is out of its place: it comes before entry 5 (moved)"},
		{"copied", join(l[:7], one(l[5]), l[7:]), "entry 5 comes twice: a copy of it follows entry 6"},
	} {
		bad := filepath.Join(t.TempDir(), "node-1.log")
		if err := os.WriteFile(bad, tc.log, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadRunLogFile(bad)
		want := fmt.Sprintf("node 1's run log %s: %s", bad, tc.want)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.what, err, want)
		}
	}

	// Format 1: no sums.
	old := filepath.Join(t.TempDir(), "node-1.log")
	os.WriteFile(old, []byte(`{"header":{"system":"pingers","node":1,"config":{"nodes":3,"bugs":[],"budget":{}}}}`+"\n"), 0o644)
	if _, err := ReadRunLogFile(old); err == nil || !strings.Contains(err.Error(), old+" is written by an earlier livecheck (run log format 1") {
		t.Errorf("a log of format 1: %v", err)
	}
}
