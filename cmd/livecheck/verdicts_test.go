package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// brittleSystem is fickle with a safety property whose own code panics
// once node 1 has its ping: a property error, not a violation.
func brittleSystem() *livecheck.System {
	return &livecheck.System{
		Name: "brittle", Doc: "a test system", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &fickle{} }},
				Properties: []properties.Property{
					properties.Always("got-ping", "node 1's count reads", func(s *sim.State) error {
						var counts []int
						_ = counts[properties.Node[*fickle](s, 1).Got] // out of range once it got one
						return nil
					}),
				},
			}, nil
		},
	}
}

// A trace of a property that panicked replays to the same property
// error, with its report, and exits as the check did: 2, the property is
// broken. (Replay refused it: unknown result "property-error".)
func TestReplayPropertyError(t *testing.T) {
	saved := lookup
	defer func() { lookup = saved }()
	lookup = func() []*livecheck.System { return append(saved(), brittleSystem()) }
	code, out, errs := runCLI(t, "check", "brittle", "--json", "--out", t.TempDir())
	var r struct{ Result, Property, Message, Trace string }
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitUsage || r.Result != "property-error" || r.Property != "got-ping" || r.Trace == "" {
		t.Fatalf("check: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	code, out, errs = runCLI(t, "replay", r.Trace)
	if code != exitUsage || errs != "" || !strings.Contains(out, "property-error of got-ping: "+r.Message+"\n") ||
		!strings.HasSuffix(out, "reproduced: the trace replays to the property error it records\n") {
		t.Fatalf("replay: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, out, errs)
	}
	code, out, errs = runCLI(t, "replay", "--json", r.Trace)
	var jr struct {
		Result, Property string
		Reproduced       bool
	}
	if err := json.Unmarshal([]byte(out), &jr); err != nil || code != exitUsage || !jr.Reproduced || jr.Result != "property-error" || jr.Property != "got-ping" {
		t.Fatalf("replay --json: exit %d %+v %v\n%s\n%s", code, jr, err, out, errs)
	}
}
