package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
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
// index, with the node and the file, in one line; a log whose tail was
// cut is named by trace's merge from a peer that delivered a message it
// sent in an entry past its end. A log of format 1 (no chain) is
// refused, saying so.
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

	// The tail cut: node 0's log cut before the last entry whose ping
	// node 1 delivered.
	logs, err := ReadRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	sent, at := 0, 0
	for _, e := range logs[1].Entries {
		if e.Kind == "deliver" && e.Peer == 0 && e.Sent > sent {
			sent, at = e.Sent, e.Line
		}
	}
	if sent == 0 {
		t.Fatal("node 1 delivered no ping of node 0's")
	}
	l0 := logLines(t, RunLogName(dir, 0))
	if err := os.WriteFile(RunLogName(dir, 0), join(l0[:sent]), 0o644); err != nil {
		t.Fatal(err)
	}
	logs, err = ReadRunLogs(dir)
	if err != nil {
		t.Fatalf("a log cut at a line's end reads as a log: %v", err)
	}
	_, err = Merge(logs)
	want := fmt.Sprintf("node 0's run log %s is cut short: it ends at entry %d, but node 1's run log %s delivers, in its entry %d, a message node 0 sent in its entry %d",
		RunLogName(dir, 0), sent-1, RunLogName(dir, 1), at, sent)
	if err == nil || err.Error() != want {
		t.Errorf("the tail cut: %v\nwant %s", err, want)
	}

	// Format 1: no sums.
	old := filepath.Join(t.TempDir(), "node-1.log")
	os.WriteFile(old, []byte(`{"header":{"system":"pingers","node":1,"config":{"nodes":3,"bugs":[],"budget":{}}}}`+"\n"), 0o644)
	if _, err := ReadRunLogFile(old); err == nil || !strings.Contains(err.Error(), old+" is written by an earlier livecheck (run log format 1") {
		t.Errorf("a log of format 1: %v", err)
	}
}

// buggyPingers are pingers with a bug to inject (that changes nothing)
// and a parameter.
var buggyPingers = protocol.System{Name: "pingers", Build: buildPingers(sim.Datagram),
	Bugs:   []protocol.Bug{{Name: "slip", Doc: "changes nothing"}},
	Params: []protocol.Param{{Name: "rounds", Doc: "changes nothing", Default: "1", Int: true, Min: 1, Max: 9}}}

// reseal rewrites run log name with its header changed by f, every line
// sealed again: a log another run or executable wrote, whole.
func reseal(t *testing.T, name string, f func(*LogHeader)) {
	t.Helper()
	c, err := readChain(bytes.Join(logLines(t, name), nil), name)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var sum uint64
	for i, l := range c.lines {
		if i == 0 {
			f(l.Header)
		}
		raw, s, err := sealLine(sum, i, l.LogLine)
		if err != nil {
			t.Fatal(err)
		}
		out, sum = append(out, raw...), s
	}
	if err := os.WriteFile(name, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Logs of runs with different bugs, parameters or executables are not
// merged: trace names the two logs and what differs.
func TestRunLogsOfOneRun(t *testing.T) {
	plain := runPingers(t, &buggyPingers, protocol.Config{})
	slip := runPingers(t, &buggyPingers, protocol.Config{Bugs: []string{"slip"}})
	rounds := runPingers(t, &buggyPingers, protocol.Config{Params: map[string]string{"rounds": "3"}})
	read := func(name string) *RunLogFile {
		l, err := ReadRunLogFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if _, err := Merge([]*RunLogFile{read(RunLogName(plain, 0)), read(RunLogName(plain, 1)), read(RunLogName(plain, 2))}); err != nil {
		t.Fatalf("one run's logs: %v", err)
	}
	other := filepath.Join(t.TempDir(), "node-2.log")
	b, _ := os.ReadFile(RunLogName(plain, 2))
	os.WriteFile(other, b, 0o644)
	reseal(t, other, func(h *LogHeader) { h.Exe = "livecheck 0123456789abcdef" })
	for _, tc := range []struct {
		what  string
		other string
		want  string
	}{
		{"bugs", RunLogName(slip, 2), "is of bugs [slip], not []"},
		{"parameters", RunLogName(rounds, 2), "is of parameters map[rounds:3], not map[rounds:1]"},
		{"executable", other, "was written by another executable (livecheck 0123456789abcdef, not " + exeID() + ")"},
	} {
		_, err := Merge([]*RunLogFile{read(RunLogName(plain, 0)), read(RunLogName(plain, 1)), read(tc.other)})
		want := fmt.Sprintf("%s and %s are not logs of one run: %s %s; trace merges the logs of one run, written by one executable",
			RunLogName(plain, 0), tc.other, tc.other, tc.want)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.what, err, want)
		}
	}
}
