package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// fickle is a protocol whose node 1 counts the pings it gets, one node
// pinging once: in "shared" mode the count lives in a variable all runs
// share, as a handler that keeps state outside its node would.
type fickle struct {
	Got  int
	mode string `livecheck:"-"`
}

type ping struct{}

var sharedGot atomic.Int64

func (f *fickle) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.Send(1, ping{})
	}
}
func (f *fickle) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	f.Got++
	if f.mode == "shared" {
		f.Got = int(sharedGot.Add(1))
	}
}
func (f *fickle) Timer(sim.Context, string)     {}
func (f *fickle) App(sim.Context, sim.AppCall)  {}
func (f *fickle) Error(sim.Context, sim.NodeID) {}

func fickleSystem(mode string) *livecheck.System {
	return &livecheck.System{
		Name: "fickle", Doc: "a test system", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &fickle{mode: mode} }},
				Properties: []properties.Property{
					properties.Always("at-most-one", "node 1 gets at most one ping", func(s *sim.State) error {
						if n := properties.Node[*fickle](s, 1).Got; n > 1 {
							return fmt.Errorf("got %d", n)
						}
						return nil
					}),
				},
			}, nil
		},
	}
}

// A handler that is not deterministic is a finding (the built-in safety
// property deterministic): the step it did something else in, the first
// field that differed, and a trace whose replay runs the step again and
// finds the same.
func TestNondeterministicHandlerIsNamed(t *testing.T) {
	saved := lookup
	defer func() { lookup = saved }()
	lookup = func() []*livecheck.System { return append(saved(), fickleSystem("shared")) }
	sharedGot.Store(0)
	dir := t.TempDir()
	code, out, errs := runCLI(t, "check", "fickle", "--out", dir)
	want := "safety-violation of deterministic: the handler is not deterministic (map iteration, time, rand, goroutines, shared memory?): node 1's Receive, on deliver ping{} 0->1, left its node in another state when run again (Got: 1 vs 2, first run vs second)"
	if code != exitViolation || !strings.Contains(out, want) || strings.Contains(errs, "internal error") {
		t.Fatalf("exit %d, stderr:\n%s\nstdout:\n%s\nwant exit %d and %q", code, errs, out, exitViolation, want)
	}
	traces, err := filepath.Glob(filepath.Join(dir, "fickle-deterministic-*.json"))
	if err != nil || len(traces) != 1 {
		t.Fatalf("traces %v (%v), want one of property deterministic", traces, err)
	}
	code, out, errs = runCLI(t, "replay", traces[0])
	if code != exitViolation || !strings.Contains(out, "deterministic") || !strings.Contains(out, "left its node in another state when run again (Got: ") {
		t.Fatalf("replay: exit %d, stderr:\n%s\nstdout:\n%s\nwant the violation again", code, errs, out)
	}
}
