// Package hosttest holds what the tests of host and of runlog share: a
// small system to run for real (the pingers), and the waits and logs of
// a test that runs a cluster. It imports neither host nor runlog, so
// that host's own tests can use it.
package hosttest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// A Pinger pings the next node every tick, counts the pings it gets,
// and counts its boots on disk.
type Pinger struct {
	sim.BaseNode
	Boots int `livecheck:"durable"`
	Got   int
	Sent  int
	Errs  int // Error calls (streams)
	Mark  int // set by the driver call "mark": not durable
}

func (p *Pinger) Error(ctx sim.Context, peer sim.NodeID) { p.Errs++ }

// Ping is the message; Big one too large for the wire (BigSize bytes,
// more than host.DefaultMaxMessage).
type (
	Ping struct{ N int }
	Big  struct{ Data []byte }
)

// BigSize is the size of the Big message the driver call "big" sends.
const BigSize = 1 << 17

func (p *Pinger) Init(ctx sim.Context) {
	p.Boots++
	ctx.SetPeriodic("tick")
}

func (p *Pinger) Timer(ctx sim.Context, name string) {
	p.Sent++
	ctx.Send((ctx.Self()+1)%sim.NodeID(ctx.Nodes()), Ping{p.Sent})
}

func (p *Pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	if _, ok := msg.(Ping); ok {
		p.Got++
	}
}

// App makes the driver calls the tests make: "panic", "mark", "hang"
// (until Release is closed), "big".
func (p *Pinger) App(ctx sim.Context, call sim.AppCall) {
	switch call {
	case "panic":
		panic("told to")
	case "mark":
		p.Mark = 1
	case "hang":
		<-Release // until the test lets it go
	case "big":
		ctx.Send(0, Big{make([]byte, BigSize)})
	}
}

// Release lets a handler stuck in App("hang") return.
var Release = make(chan struct{})

// Pingers are pingers over datagrams, StreamPingers over streams.
var (
	Pingers       = protocol.System{Name: "pingers", Build: BuildPingers(sim.Datagram)}
	StreamPingers = protocol.System{Name: "stream-pingers", Build: BuildPingers(sim.Stream)}
)

// BuildPingers is the pingers' Build over transport t: its property is
// that every node got 3 pings.
func BuildPingers(t sim.Transport) func(cfg protocol.Config) (*protocol.Model, error) {
	return func(cfg protocol.Config) (*protocol.Model, error) {
		return &protocol.Model{
			Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &Pinger{} }, Transport: t,
				HandlerTimeout: 100 * time.Millisecond},
			Timers: map[string]protocol.Timing{"tick": {After: 5 * time.Millisecond, Jitter: time.Millisecond}},
			Properties: []properties.Property{properties.EventuallyEach("pinged", "every node got 3 pings",
				func(p *Pinger) bool { return p.Got >= 3 })},
		}, nil
	}
}

// Deadline is how long a test waits for a cluster to do what it must: far
// more than it takes on an idle machine (well under a second), so that a
// busy one does not fail it. Tests poll; none sleeps to assert.
const Deadline = 60 * time.Second

// WaitFor polls cond until it holds, or fails the test at the deadline.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	t.Logf("%s within %v", what, poll(t, what, 5*time.Millisecond, cond).Round(time.Millisecond))
}

// WaitQuiet is WaitFor without its log line: for tests that wait
// hundreds of times.
func WaitQuiet(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll(t, what, 2*time.Millisecond, cond)
}

// poll polls cond every so often until it holds, and says how long it
// took; it fails the test at the deadline.
func poll(t testing.TB, what string, every time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > Deadline {
			t.Fatalf("%s: not within %v", what, Deadline)
		}
		time.Sleep(every)
	}
	return time.Since(start)
}

// A LogBuf collects the nodes' logs, and shows them if the test fails.
type LogBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// NewLog is a LogBuf whose last 20,000 bytes the test shows if it fails.
func NewLog(t testing.TB) *LogBuf {
	l := &LogBuf{}
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
