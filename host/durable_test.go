package host

import (
	"encoding/binary"
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
