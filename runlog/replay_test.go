package runlog_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/check"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// A run's logs, merged, replay in the simulator with every node's
// fingerprint equal to the one it logged, a restart (a reset) included.
func TestRunLogReplays(t *testing.T) {
	dir := t.TempDir()
	c, _ := startPingers(t, host.ClusterOptions{Data: dir, LogDir: dir})
	waitFor(t, "pings", func() bool { return got(c.Nodes[1]) >= 3 })
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pings after the restart", func() bool { return got(c.Nodes[1]) >= 3 && got(c.Nodes[2]) >= 3 })
	c.Stop()
	m := mergeDir(t, dir)
	resets := 0
	for _, st := range m.Path {
		if st.Event.Kind == sim.Reset {
			resets++
		}
	}
	if resets != 1 || len(m.Path) < 10 {
		t.Fatalf("merged %d steps with %d resets, want at least 10 and 1", len(m.Path), resets)
	}
	rr, err := runlog.Replay(m, &pingers)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Divergence != nil || rr.Violation != "" || len(rr.Path) != len(m.Path) {
		t.Fatalf("replayed %d of %d steps: divergence %v, violation %q", len(rr.Path), len(m.Path), rr.Divergence, rr.Violation)
	}
	if !rr.Live || rr.Trace.Result != "live" {
		t.Errorf("the run ends live, but the replay says live %v, result %q", rr.Live, rr.Trace.Result)
	}
}

// clocked reads the wall clock in a handler: what the checker cannot
// replay, and what the replay of its run log names.
type clocked struct {
	sim.BaseNode
	Ticks int
	Odd   bool
}

func (c *clocked) Init(ctx sim.Context) { ctx.SetTimer("tick") }

func (c *clocked) Timer(ctx sim.Context, name string) {
	c.Ticks++
	c.Odd = time.Now().UnixNano()/1000%2 == 1 // the slip
	if c.Ticks < 20 {
		ctx.SetTimer("tick")
	}
}

var clockedSystem = protocol.System{Name: "clocked", Build: func(protocol.Config) (*protocol.Model, error) {
	return &protocol.Model{
		Spec:   sim.Spec{New: func(sim.NodeID) sim.Node { return &clocked{} }},
		Timers: map[string]protocol.Timing{"tick": {After: time.Millisecond}},
		Properties: []properties.Property{properties.EventuallyEach("ticked", "every node ticked 20 times",
			func(c *clocked) bool { return c.Ticks >= 20 })},
	}, nil
}}

// A handler that reads the wall clock: the replay of the run names the
// first step where a node's state is not the one it logged.
func TestRunLogNondeterminism(t *testing.T) {
	dir := t.TempDir()
	c, _ := startSystem(t, &clockedSystem, host.ClusterOptions{LogDir: dir})
	waitFor(t, "ticks", func() bool { return c.Holds(c.State()) })
	c.Stop()
	rr, err := runlog.Replay(mergeDir(t, dir), &clockedSystem)
	if err != nil {
		t.Fatal(err)
	}
	d := rr.Divergence
	if d == nil {
		t.Fatal("the replay found no divergence (the wall clock agreed 60 times in a row?)")
	}
	if d.Step < 1 || !strings.Contains(d.Event, "timer tick") || !strings.Contains(d.Error(), "depends on something outside its state") {
		t.Errorf("divergence %v", d)
	}
}

// A safety property that a real run breaks is reported from its logs,
// with the step where it first failed, and the trace ends there.
func TestRunLogSafetyViolation(t *testing.T) {
	few := protocol.System{Name: "few-pings", Build: func(cfg protocol.Config) (*protocol.Model, error) {
		m, err := buildPingers(sim.Datagram)(cfg)
		if err != nil {
			return nil, err
		}
		m.Properties = append(m.Properties, properties.AlwaysEach("few", "no node gets more than 2 pings",
			func(p *pinger) error {
				if p.Got > 2 {
					return fmt.Errorf("%d pings", p.Got)
				}
				return nil
			}))
		return m, nil
	}}
	dir := t.TempDir()
	c, _ := startSystem(t, &few, host.ClusterOptions{LogDir: dir})
	waitFor(t, "pings", func() bool { return c.Holds(c.State()) })
	c.Stop()
	m := mergeDir(t, dir)
	rr, err := runlog.Replay(m, &few)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Violation != "few" || rr.ViolationStep < 3 || rr.Trace.Result != "safety-violation" || len(rr.Trace.Steps) != rr.ViolationStep {
		t.Fatalf("violation %q at step %d, trace %s with %d steps", rr.Violation, rr.ViolationStep, rr.Trace.Result, len(rr.Trace.Steps))
	}
	if _, err := check.ReplayTrace(&few, rr.Trace, 0, nil); err != nil {
		t.Errorf("the violation's trace does not replay: %v", err)
	}
}
