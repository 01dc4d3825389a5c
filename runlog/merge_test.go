package runlog_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/internal/hosttest"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// runPingers runs 3 pingers of sys with run logs in a new directory
// until every node got 6 pings, and returns the directory.
func runPingers(t *testing.T, sys *protocol.System, cfg protocol.Config) string {
	t.Helper()
	dir := t.TempDir()
	cfg.Nodes = 3
	c := start(t, sys, cfg, host.ClusterOptions{LogDir: dir})
	morePings(t, c, 6, "6 pings each")
	c.Stop()
	return dir
}

// A log whose tail was cut is named by the merge, from a peer that
// delivered a message it sent in an entry past its end: node 0's log
// cut before the last entry whose ping node 1 delivered.
func TestRunLogCutShort(t *testing.T) {
	dir := runPingers(t, &pingers, protocol.Config{})
	logs, err := runlog.ReadDir(dir)
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
	name0 := host.RunLogName(dir, 0)
	b, err := os.ReadFile(name0)
	if err != nil {
		t.Fatal(err)
	}
	end := 0 // the end of line sent-1, the header line 0
	for range sent {
		end += bytes.IndexByte(b[end:], '\n') + 1
	}
	if err := os.WriteFile(name0, b[:end], 0o644); err != nil {
		t.Fatal(err)
	}
	if logs, err = runlog.ReadDir(dir); err != nil {
		t.Fatalf("a log cut at a line's end reads as a log: %v", err)
	}
	_, err = runlog.Merge(logs)
	want := fmt.Sprintf("node 0's run log %s is cut short: it ends at entry %d, but node 1's run log %s delivers, in its entry %d, a message node 0 sent in its entry %d",
		name0, sent-1, host.RunLogName(dir, 1), at, sent)
	if err == nil || err.Error() != want {
		t.Errorf("the tail cut: %v\nwant %s", err, want)
	}
}

// buggyPingers are pingers with a bug to inject (that changes nothing)
// and a parameter.
var buggyPingers = protocol.System{Name: "pingers", Build: buildPingers(sim.Datagram),
	Bugs:   []protocol.Bug{{Name: "slip", Doc: "changes nothing"}},
	Params: []protocol.Param{{Name: "rounds", Doc: "changes nothing", Default: "1", Int: true, Min: 1, Max: 9}}}

// Logs of runs with different bugs, parameters or executables are not
// merged: the error names the two logs and what differs.
func TestRunLogsOfOneRun(t *testing.T) {
	plain := runPingers(t, &buggyPingers, protocol.Config{})
	slip := runPingers(t, &buggyPingers, protocol.Config{Bugs: []string{"slip"}})
	rounds := runPingers(t, &buggyPingers, protocol.Config{Params: map[string]string{"rounds": "3"}})
	read := func(name string) *host.RunLogFile {
		l, err := host.ReadRunLogFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if _, err := runlog.Merge([]*host.RunLogFile{read(host.RunLogName(plain, 0)), read(host.RunLogName(plain, 1)), read(host.RunLogName(plain, 2))}); err != nil {
		t.Fatalf("one run's logs: %v", err)
	}
	// Another executable's log, as read.
	other := read(host.RunLogName(plain, 2))
	exe := other.Header.Exe
	other.Header.Exe = "livecheck 0123456789abcdef"
	for _, tc := range []struct {
		what  string
		other *host.RunLogFile
		want  string
	}{
		{"bugs", read(host.RunLogName(slip, 2)), "is of bugs [slip], not []"},
		{"parameters", read(host.RunLogName(rounds, 2)), "is of parameters map[rounds:3], not map[rounds:1]"},
		{"executable", other, "was written by another executable (livecheck 0123456789abcdef, not " + exe + ")"},
	} {
		_, err := runlog.Merge([]*host.RunLogFile{read(host.RunLogName(plain, 0)), read(host.RunLogName(plain, 1)), tc.other})
		want := fmt.Sprintf("%s and %s are not logs of one run: %s %s; trace merges the logs of one run, written by one executable",
			host.RunLogName(plain, 0), tc.other.Name, tc.other.Name, tc.want)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.what, err, want)
		}
	}
}

// A node started afresh (Options.Fresh, `run --fresh`) without the
// durable fields it kept is no step of the simulator: the replay leaves
// its fresh start out, and with it the rest of its log and the
// deliveries of what it sent after (and of what their receivers sent
// after those), saying why.
func TestFreshStartLeftOut(t *testing.T) {
	peers, err := host.FreeLoopback(3, sim.Datagram)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := hosttest.NewLog(t)
	opts := func(id sim.NodeID) host.Options {
		return host.Options{System: &pingers, Config: protocol.Config{Nodes: 3}, ID: id, Peers: peers, Data: dir,
			RunLog: host.RunLogName(dir, id), Seed: 1, Log: l}
	}
	var nodes []*host.Node
	for id := range sim.NodeID(3) {
		n, err := host.Start(opts(id))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Stop)
		nodes = append(nodes, n)
	}
	waitFor(t, "pings", func() bool { return got(nodes[0]) >= 3 && got(nodes[1]) >= 3 && got(nodes[2]) >= 3 })
	nodes[1].Stop()
	fo := opts(1)
	fo.Fresh = true
	n, err := host.Start(fo)
	if err != nil {
		t.Fatalf("started afresh: %v", err)
	}
	t.Cleanup(n.Stop)
	base := got(nodes[2])
	waitFor(t, "node 2 gets pings from the fresh node 1", func() bool { return got(nodes[2]) >= base+3 })
	for _, n := range []*host.Node{nodes[0], n, nodes[2]} {
		n.Stop()
	}
	rr, err := replayDir(t, dir, &pingers)
	if err != nil || rr.Divergence != nil || len(rr.LeftOut) == 0 || !strings.HasPrefix(rr.LeftOut[0], "node 1's fresh start (clock ") {
		t.Fatalf("the run: %v, divergence %v, left out %q", err, rr.Divergence, rr.LeftOut)
	}
	for _, why := range rr.LeftOut[1:] {
		if !strings.Contains(why, "'s delivery of a message node ") || !strings.HasSuffix(why, " sent after its log was left out") {
			t.Errorf("left out: %q", why)
		}
	}
	t.Logf("%d steps replayed, %d left out: from %s", len(rr.Path), rr.LeftOutSteps, rr.LeftOut[0])
}
