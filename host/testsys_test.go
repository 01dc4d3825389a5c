package host

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck/internal/hosttest"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// The pingers and the helpers host's tests share with runlog's
// (internal/hosttest).
type (
	pinger = hosttest.Pinger
	Ping   = hosttest.Ping
	logBuf = hosttest.LogBuf
)

var (
	pingers       = hosttest.Pingers
	streamPingers = hosttest.StreamPingers
	waitFor       = hosttest.WaitFor
	newLog        = hosttest.NewLog
	waitQuiet     = hosttest.WaitQuiet
)

const deadline = hosttest.Deadline

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

// tally writes its state file in every handler: each counts, durably,
// and a tick tells the two other nodes its count.
type tally struct {
	sim.BaseNode
	Count int `livecheck:"durable"`
	Heard int `livecheck:"durable"`
}

// Count is tally's message.
type Count struct{ N int }

func (t *tally) Init(ctx sim.Context) {
	t.Count++
	ctx.SetPeriodic("tick")
}

func (t *tally) Timer(ctx sim.Context, name string) {
	t.Count++
	for i := range ctx.Nodes() {
		if p := sim.NodeID(i); p != ctx.Self() {
			ctx.Send(p, Count{t.Count})
		}
	}
}

func (t *tally) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	t.Count++
	t.Heard = max(t.Heard, msg.(Count).N)
}

var tallySystem = protocol.System{Name: "tally", Build: func(protocol.Config) (*protocol.Model, error) {
	return &protocol.Model{
		Spec:   sim.Spec{New: func(sim.NodeID) sim.Node { return &tally{} }, HandlerTimeout: time.Second},
		Timers: map[string]protocol.Timing{"tick": {After: 2 * time.Millisecond}},
		Properties: []properties.Property{properties.EventuallyEach("heard", "every node heard a count",
			func(t *tally) bool { return t.Heard > 0 })},
	}, nil
}}

func count(n *Node) int { return n.State().(*tally).Count }
