package host

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A restarted node comes back with its durable fields as it left them
// and the others as New builds them, then runs Init: the simulator's
// reset. A state file cut short makes the node refuse to start, in one
// line that says what to do.
func TestDurableRestart(t *testing.T) {
	dir := t.TempDir()
	c, _ := startPingers(t, ClusterOptions{Data: dir})
	n := c.Nodes[1]
	waitFor(t, "node 1 gets pings", func() bool { return got(n) >= 3 })
	n.Call("mark")
	waitFor(t, "node 1 marked", func() bool { return n.State().(*pinger).Mark == 1 })
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	n = c.Nodes[1]
	p := n.State().(*pinger)
	if p.Boots != 2 {
		t.Errorf("after a restart node 1 has booted %d times, want 2 (Boots is durable)", p.Boots)
	}
	if p.Mark != 0 {
		t.Errorf("after a restart node 1's Mark is %d, want 0: it is not durable", p.Mark)
	}
	waitFor(t, "node 1 gets pings again", func() bool { return got(n) >= 1 })

	// Damage node 2's state file while it is down.
	c.Nodes[2].Stop()
	name := stateFileName(dir, 2)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Restart(2)
	if err == nil {
		t.Fatal("node 2 started from a damaged state file")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "node 2 refuses to start: its state file") || !strings.Contains(msg, "damaged") {
		t.Errorf("the refusal is not one clear line: %q", msg)
	}
	if err := c.Nodes[0].Err(); err != nil {
		t.Fatal(err)
	}
}

// encodeFor is node n's state file for h's node, system and
// configuration.
func encodeFor(t *testing.T, h *LogHeader, calls int, n sim.Node) []byte {
	t.Helper()
	fields, _, err := durableFields(n, calls)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeState(&stateFile{System: h.System, Node: h.Node, Nodes: h.Config.Nodes, Bugs: h.Config.Bugs,
		Params: h.Config.Params, Gen: 1, Calls: calls, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeFor reads state file b into n for h's node, and returns its
// calls.
func decodeFor(b []byte, h *LogHeader, n sim.Node) (int, error) {
	f, err := decodeState(b, h)
	if err != nil {
		return 0, err
	}
	return f.Calls, f.load(n)
}

// What is written reads back, field by field, in a stack's layers too;
// a node of another system, id or configuration is refused, and so is a
// state file of an earlier version, saying so.
func TestStateFile(t *testing.T) {
	h := &LogHeader{System: "pingers", Node: 1, Config: protocol.Config{Nodes: 3, Bugs: []string{}}}
	p := &pinger{Boots: 4, Got: 9}
	b := encodeFor(t, h, 2, p)
	q := &pinger{}
	calls, err := decodeFor(b, h, q)
	if err != nil || calls != 2 || q.Boots != 4 || q.Got != 0 {
		t.Fatalf("read back %+v calls %d err %v, want Boots 4 Got 0 calls 2", q, calls, err)
	}
	for name, other := range map[string]*LogHeader{
		"node 2":  {System: "pingers", Node: 2, Config: h.Config},
		"another": {System: "other", Node: 1, Config: h.Config},
		"a bug":   {System: "pingers", Node: 1, Config: protocol.Config{Nodes: 3, Bugs: []string{"slip"}}},
		"4 nodes": {System: "pingers", Node: 1, Config: protocol.Config{Nodes: 4}},
	} {
		if _, err := decodeFor(b, other, &pinger{}); err == nil {
			t.Errorf("%s loaded node 1's file of pingers with 3 nodes", name)
		}
	}
	old := append([]byte("livecheck-durable 2\n"), b[len(durableMagic):len(b)-4]...)
	old = binary.BigEndian.AppendUint32(old, crc32.Checksum(old, castagnoli))
	if _, err := decodeFor(old, h, &pinger{}); err == nil || !strings.Contains(err.Error(), "of version 2, written by an earlier livecheck") {
		t.Errorf("a state file of version 2: %v", err)
	}
	b[len(b)/2] ^= 1
	if _, err := decodeFor(b, h, &pinger{}); err == nil {
		t.Error("a flipped bit went unnoticed")
	}
	st := sim.Stack(sim.Layer{Name: "low", Node: &carrier{pinger{Boots: 1}}}, sim.Layer{Name: "high", Node: &pinger{Boots: 2}})
	hx := &LogHeader{System: "x", Node: 0}
	b = encodeFor(t, hx, 0, st)
	fresh := sim.Stack(sim.Layer{Name: "low", Node: &carrier{}}, sim.Layer{Name: "high", Node: &pinger{}})
	if _, err := decodeFor(b, hx, fresh); err != nil {
		t.Fatal(err)
	}
	_, lo := fresh.Layer(0)
	_, hi := fresh.Layer(1)
	if lo.(*carrier).Boots != 1 || hi.(*pinger).Boots != 2 {
		t.Errorf("the layers read back %s", sim.Dump(fresh))
	}
}

// carrier is a pinger that can be a layer below another.
type carrier struct{ pinger }

func (c *carrier) Down(ctx sim.Context, to sim.NodeID, msg sim.Message) { ctx.Send(to, msg) }

// startTally starts 3 tally nodes writing state files and run logs in
// dir, with nodes nodes; the test stops them.
func startTally(t *testing.T, dir string, nodes int) *Cluster {
	t.Helper()
	c, err := StartCluster(&tallySystem, protocol.Config{Nodes: nodes}, ClusterOptions{Data: dir, LogDir: dir, Log: newLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// moreCounts waits until every node of c has counted k more.
func moreCounts(t *testing.T, c *Cluster, k int) {
	t.Helper()
	base := make([]int, len(c.Nodes))
	for i, n := range c.Nodes {
		base[i] = count(n)
	}
	waitQuiet(t, "more counts", func() bool {
		for i, n := range c.Nodes {
			if count(n) < base[i]+k {
				return false
			}
		}
		return true
	})
}

// The state file and the run log confirm each other: node 1's state
// file rolled back (an older copy), deleted, of another run, of another
// node, of another configuration, or ahead of a log cut short makes it
// refuse to start, each in its one line; a state file one step ahead of
// its log (the log lost its last step) writes that step back into the
// log from its record, byte for byte; Fresh starts the node afresh,
// and its log records the fresh boot (what the merge makes of it, and
// of the log that follows: runlog's TestFreshStartLeftOut).
func TestStateFileConfirmedByLog(t *testing.T) {
	dir := t.TempDir()
	c := startTally(t, dir, 3)
	moreCounts(t, c, 3)
	stName := stateFileName(dir, 1)
	logName := RunLogName(dir, 1)
	old, err := os.ReadFile(stName)
	if err != nil {
		t.Fatal(err)
	}
	moreCounts(t, c, 3)
	c.Kill(1)
	cur, err := os.ReadFile(stName)
	if err != nil {
		t.Fatal(err)
	}
	// Files of other runs, nodes and configurations.
	other, wide := t.TempDir(), t.TempDir()
	o := startTally(t, other, 3)
	w := startTally(t, wide, 4)
	moreCounts(t, o, 1)
	moreCounts(t, w, 1)
	o.Stop()
	w.Stop()
	read := func(name string) []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		state []byte // nil: none
		want  string
	}{
		{"rolled back", old, "node 1 refuses to start: its state file " + stName + " is of generation "},
		{"deleted", nil, "node 1 refuses to start: its state file " + stName + " is missing, but its run log " + logName + " says it wrote generation "},
		{"another run", read(stateFileName(other, 1)), "node 1 refuses to start: its state file " + stName + " is of another run ("},
		{"another node", read(stateFileName(dir, 2)), "node 1 refuses to start: its state file " + stName + " is node 2's of system tally, not node 1's of tally"},
		{"another configuration", read(stateFileName(wide, 1)), "node 1 refuses to start: its state file " + stName + " is of another configuration: it is of 4 nodes, not 3"},
	} {
		os.Remove(stName)
		if tc.state != nil {
			if err := os.WriteFile(stName, tc.state, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err := c.Revive(1)
		if err == nil {
			t.Fatalf("%s: node 1 started", tc.name)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, tc.want) || !strings.HasSuffix(msg, afresh) {
			t.Errorf("%s: the refusal is not its one line:\n%s\nwant it to begin %q", tc.name, msg, tc.want)
		}
		if tc.name == "rolled back" && !strings.Contains(msg, ": rolled back;") {
			t.Errorf("rolled back: %s", msg)
		}
		t.Logf("%s: %s", tc.name, msg)
	}

	// The log lost its last step, which the state file records: it is
	// written back from the record; and a log cut shorter is refused.
	if err := os.WriteFile(stName, cur, 0o644); err != nil {
		t.Fatal(err)
	}
	whole := read(logName)
	f, err := decodeState(cur, &LogHeader{System: "tally", Node: 1, Config: protocol.Config{Nodes: 3}})
	if err != nil {
		t.Fatal(err)
	}
	// The log ends with the step's lines and the line that confirms
	// its write.
	cutAt := bytes.LastIndex(whole, joinLines(f.Record))
	if cutAt < 0 || !strings.Contains(string(whole[cutAt+len(joinLines(f.Record)):]), `"wrote":`) ||
		strings.Count(string(whole[cutAt+len(joinLines(f.Record)):]), "\n") != 1 {
		t.Fatalf("the state file's record and its confirmation are not the end of its log:\n%s", whole[max(0, cutAt):])
	}
	lastLine := strings.LastIndexByte(string(whole[:cutAt-1]), '\n') + 1
	if err := os.WriteFile(logName, whole[:lastLine], 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Revive(1)
	if err == nil || !strings.Contains(err.Error(), "is of generation "+fmt.Sprint(f.Gen)+", ahead of its run log") {
		t.Fatalf("a state file two steps ahead of its log: %v", err)
	}
	if err := os.WriteFile(logName, whole[:cutAt], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Revive(1); err != nil {
		t.Fatalf("a state file one step ahead of its log: %v", err)
	}
	if got := read(logName); !bytes.HasPrefix(got, whole) {
		t.Fatal("the log written back from the state file is not the log as it was")
	}
	moreCounts(t, c, 3)

	// Fresh: started afresh on a rolled-back file, its Init logged as
	// fresh, its state file written again at the next generation.
	c.Kill(1)
	before, err := readChain(read(logName), logName)
	if err != nil {
		t.Fatal(err)
	}
	gen, _, _ := before.lastGen()
	if err := os.WriteFile(stName, old, 0o644); err != nil {
		t.Fatal(err)
	}
	fo := c.opts[1]
	fo.Fresh, fo.restarted = true, true
	n, err := Start(fo)
	if err != nil {
		t.Fatalf("started afresh: %v", err)
	}
	c.Nodes[1] = n
	after, err := readChain(read(logName), logName)
	if err != nil {
		t.Fatal(err)
	}
	init := after.lines[len(before.lines)]
	boots := 0
	for _, l := range before.lines {
		if l.Kind != "" {
			boots = max(boots, l.Boot+1)
		}
	}
	if init.Kind != "init" || !init.Fresh || init.Gen != gen+1 || init.Boot != boots {
		t.Errorf("the fresh start's entry: %s", init.raw)
	}
	moreCounts(t, c, 3)
}

func joinLines(raws [][]byte) []byte { return bytes.Join(raws, nil) }
