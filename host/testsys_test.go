package host

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// pinger is a node for the host's own tests: it pings the next node
// every tick, counts the pings it gets, and counts its boots on disk.
type pinger struct {
	sim.BaseNode
	Boots int `livecheck:"durable"`
	Got   int
	Sent  int
	Errs  int // Error calls (streams)
	Mark  int // set by the driver call "mark": not durable
}

func (p *pinger) Error(ctx sim.Context, peer sim.NodeID) { p.Errs++ }

// Ping is the message; Big one too large for the wire.
type (
	Ping struct{ N int }
	Big  struct{ Data []byte }
)

func (p *pinger) Init(ctx sim.Context) {
	p.Boots++
	ctx.SetPeriodic("tick")
}

func (p *pinger) Timer(ctx sim.Context, name string) {
	p.Sent++
	ctx.Send((ctx.Self()+1)%sim.NodeID(ctx.Nodes()), Ping{p.Sent})
}

func (p *pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if _, ok := msg.(Ping); ok {
		p.Got++
	}
}

func (p *pinger) App(ctx sim.Context, call sim.AppCall) {
	switch call {
	case "panic":
		panic("told to")
	case "mark":
		p.Mark = 1
	case "hang":
		<-release // until the test lets it go
	case "big":
		ctx.Send(0, Big{make([]byte, 2*DefaultMaxMessage)})
	}
}

var pingers = protocol.System{Name: "pingers", Build: buildPingers(sim.Datagram)}

// streamPingers are pingers over streams.
var streamPingers = protocol.System{Name: "stream-pingers", Build: buildPingers(sim.Stream)}

func buildPingers(t sim.Transport) func(cfg protocol.Config) (*protocol.Model, error) {
	return func(cfg protocol.Config) (*protocol.Model, error) {
		return &protocol.Model{
			Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &pinger{} }, Transport: t,
				HandlerTimeout: 100 * time.Millisecond},
			Timers: map[string]protocol.Timing{"tick": {After: 5 * time.Millisecond, Jitter: time.Millisecond}},
			Properties: []properties.Property{properties.EventuallyEach("pinged", "every node got 3 pings",
				func(p *pinger) bool { return p.Got >= 3 })},
		}, nil
	}
}

// deadline is how long a test waits for a cluster to do what it must: far
// more than it takes on an idle machine (well under a second), so that a
// busy one does not fail it. Tests poll; none sleeps to assert.
const deadline = 60 * time.Second

// waitFor polls cond until it holds, or fails the test at the deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > deadline {
			t.Fatalf("%s: not within %v", what, deadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%s within %v", what, time.Since(start).Round(time.Millisecond))
}

// logBuf collects the nodes' logs, and shows them if the test fails.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newLog is a logBuf whose last 20,000 bytes the test shows if it fails.
func newLog(t *testing.T) *logBuf {
	l := &logBuf{}
	t.Cleanup(func() {
		if t.Failed() {
			s := l.String()
			if len(s) > 20000 {
				s = "...\n" + s[len(s)-20000:]
			}
			t.Logf("the nodes' log:\n%s", s)
		}
	})
	return l
}

// replayDir merges the run logs in dir and replays them on sys; it fails
// the test where the logs cannot be read or merged.
func replayDir(t *testing.T, dir string, sys *protocol.System) (*RunReplay, error) {
	t.Helper()
	return mergeRuns(t, dir).Replay(sys)
}

// mergeRuns merges the run logs in dir; it fails the test where they
// cannot be read or merged.
func mergeRuns(t *testing.T, dir string) *Merged {
	t.Helper()
	logs, err := ReadRunLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(logs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// morePings waits until every pinger of c has got k more pings than now.
func morePings(t *testing.T, c *Cluster, k int, what string) {
	t.Helper()
	base := make([]int, len(c.Nodes))
	for i, n := range c.Nodes {
		base[i] = got(n)
	}
	waitFor(t, what, func() bool {
		for i, n := range c.Nodes {
			if got(n) < base[i]+k {
				return false
			}
		}
		return true
	})
}

func startPingers(t *testing.T, co ClusterOptions) (*Cluster, *logBuf) {
	t.Helper()
	return startSystem(t, &pingers, co)
}

func startSystem(t *testing.T, sys *protocol.System, co ClusterOptions) (*Cluster, *logBuf) {
	t.Helper()
	l := newLog(t)
	co.Log = l
	c, err := StartCluster(sys, protocol.Config{Nodes: 3}, co)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c, l
}

func got(n *Node) int { return n.State().(*pinger).Got }

func timeAfter() <-chan time.Time { return time.After(deadline) }

// release lets a handler stuck in App("hang") return.
var release = make(chan struct{})
