package livecheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// chooser picks its value in its first Init and sends it to the other
// node; with the bug "mute", a node that picked 1 sends nothing.
type chooser struct {
	sim.BaseNode
	V, Got int
	mute   bool
}

func (c *chooser) Init(ctx sim.Context) {
	c.V, c.Got = ctx.Choose(3), -1
	if !(c.mute && c.V == 1) {
		ctx.Send(1-ctx.Self(), c.V)
	}
}

func (c *chooser) Receive(_ sim.Context, _ sim.NodeID, msg sim.Message) { c.Got = msg.(int) }

// chooserSystem has 9 initial states. Its safety property fails only
// from [2 2] (both chose 2, one got the other's value); with mute, both
// nodes' choosing 1 leaves nothing to happen and no value ever got.
func chooserSystem() *livecheck.System {
	return &livecheck.System{
		Name: "chooser", Doc: "nodes choose their values in Init", DefaultNodes: 2, MinNodes: 2, MaxNodes: 2,
		Bugs: []livecheck.Bug{{Name: "mute", Doc: "a node that picked 1 sends nothing"}},
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			mute := slices.Contains(cfg.Bugs, "mute")
			props := []properties.Property{
				properties.Eventually("all-got", "every node gets a value", func(s *sim.State) bool {
					for _, c := range properties.Nodes[*chooser](s) {
						if c.Got < 0 {
							return false
						}
					}
					return true
				}),
			}
			if !mute {
				props = append(props, properties.Always("not-two-twos", "not both 2 with a value got", func(s *sim.State) error {
					a, b := properties.Node[*chooser](s, 0), properties.Node[*chooser](s, 1)
					if a.V == 2 && b.V == 2 && (a.Got >= 0 || b.Got >= 0) {
						return errors.New("both chose 2 and one got it")
					}
					return nil
				}))
			}
			return &livecheck.Model{
				Spec:       sim.Spec{New: func(sim.NodeID) sim.Node { return &chooser{mute: mute} }},
				Properties: props,
			}, nil
		},
	}
}

// A safety bug reachable from one initial state only: the check finds
// it, with that state's choices, on 1 and 2 workers alike, and its trace
// replays to it through the API and from the file through the command;
// a choice out of range in the file is one clear line, exit 2.
func TestInitChoicesSafety(t *testing.T) {
	sys := chooserSystem()
	var first *livecheck.Result
	for _, workers := range []int{1, 2} {
		res, err := livecheck.Check(sys, livecheck.Options{Depth: 6, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.SafetyViolation || res.Property != "not-two-twos" || !slices.Equal(res.Init, []int{2, 2}) || len(res.Path) != 1 {
			t.Fatalf("%d workers: %s %s from %v in %d steps; want not-two-twos from [2 2] in 1", workers, res.Verdict, res.Property, res.Init, len(res.Path))
		}
		// Level 0 holds the 9 initial states; level 1 the 2 deliveries
		// out of each, up to the first out of [2 2], the last: the
		// violation ends the search there.
		if res.Stats.States != 9+8*2+1 {
			t.Errorf("%d workers: %d states, want %d", workers, res.Stats.States, 9+8*2+1)
		}
		if first == nil {
			first = res
		} else if first.Stats.States != res.Stats.States || first.Path.Hash() != res.Path.Hash() {
			t.Errorf("1 and 2 workers differ: %+v / %+v", first.Stats, res.Stats)
		}
	}
	rep, err := livecheck.ReplayFrom(sys, first.Config, first.Init, first.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "not-two-twos") {
		t.Fatalf("ReplayFrom: %v, %+v", err, rep)
	}
	// Without the choices, the replay from the first initial state fails
	// at step 0: the trace does not account for Init's choices.
	if _, err := livecheck.Replay(sys, first.Config, first.Path, 0); !errors.Is(err, livecheck.ErrNoReplay) {
		t.Errorf("Replay without init: %v; want ErrNoReplay", err)
	}

	dir := t.TempDir()
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"check", "chooser", "--depth", "6", "-q", "--out", dir}, &out, &errs, sys); code != livecheck.ExitViolation {
		t.Fatalf("check: exit %d\n%s", code, errs.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	tr, err := reports.ReadTraceFile(files[0])
	if err != nil || tr.Version != 2 || !slices.Equal(tr.Init, []int{2, 2}) {
		t.Fatalf("the trace: %v, version %d, init %v; want version 2, init [2 2]", err, tr.Version, tr.Init)
	}
	out.Reset()
	errs.Reset()
	if code := livecheck.Run([]string{"replay", files[0]}, &out, &errs, sys); code != livecheck.ExitViolation ||
		!strings.HasSuffix(out.String(), "reproduced: the trace replays to the violation it records\n") {
		t.Fatalf("replay: exit %d\n%s%s", code, out.String(), errs.String())
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ init, stderr string }{
		{"[2, 7]", "livecheck replay: %s: the trace does not replay: the initial state: event not enabled: choice 1 is 7, outside [0, 3)\n"},
		{"[2]", "livecheck replay: %s: the trace does not replay: the initial state: event not enabled: the step makes more choices than the trace records\n"},
		{"[2, -1]", "livecheck replay: %s: the trace's init choice 1 is -1: choices are not negative\n"},
	} {
		bad := filepath.Join(dir, "bad.json")
		edited := strings.Replace(string(data), "\"init\": [\n    2,\n    2\n  ]", `"init": `+tc.init, 1)
		if edited == string(data) {
			t.Fatalf("no init list in the file:\n%s", data)
		}
		if err := os.WriteFile(bad, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		errs.Reset()
		if code, want := livecheck.Run([]string{"replay", bad}, &out, &errs, sys), fmt.Sprintf(tc.stderr, bad); code != livecheck.ExitUsage || errs.String() != want {
			t.Errorf("init %s: exit %d, stderr %q; want 2, %q", tc.init, code, errs.String(), want)
		}
	}
}

// A liveness bug from some initial states: with mute, [1 1] is stuck
// from the start. The check reports it from that state, dead from the
// start, and the report replays from it.
func TestInitChoicesLiveness(t *testing.T) {
	sys := chooserSystem()
	res, err := livecheck.Check(sys, livecheck.Options{Config: livecheck.Config{Bugs: []string{"mute"}}, Depth: 6, WalkDepth: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.LivenessViolation || !slices.Equal(res.Init, []int{1, 1}) || len(res.Path) != 0 {
		t.Fatalf("%s %s from %v in %d steps (%s); want a liveness violation from [1 1] in 0", res.Verdict, res.Property, res.Init, len(res.Path), res.Message)
	}
	rep, err := livecheck.ReplayFrom(sys, res.Config, res.Init, res.Path, 0)
	if err != nil || !rep.Reproduces(res.Verdict, res.Property) {
		t.Fatalf("ReplayFrom: %v, %+v", err, rep)
	}
}

// Local mode searches every initial state and finds the same violation,
// from the same one.
func TestInitChoicesLocal(t *testing.T) {
	sys := chooserSystem()
	res, err := livecheck.Check(sys, livecheck.Options{Mode: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != livecheck.SafetyViolation || res.Property != "not-two-twos" || !slices.Equal(res.Init, []int{2, 2}) || len(res.Path) != 1 {
		t.Fatalf("%s %s from %v in %d steps; want not-two-twos from [2 2] in 1", res.Verdict, res.Property, res.Init, len(res.Path))
	}
	rep, err := livecheck.ReplayFrom(sys, res.Config, res.Init, res.Path, 0)
	if err != nil || !rep.Reproduces(livecheck.SafetyViolation, "not-two-twos") {
		t.Fatalf("ReplayFrom: %v, %+v", err, rep)
	}
	// Without the bug's initial state, every one is searched, and the
	// check is complete.
	res, err = livecheck.Check(sys, livecheck.Options{Mode: "local", Config: livecheck.Config{Bugs: []string{"mute"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Per initial state, a node has its first state, and one more when
	// its peer sends (did not pick 1): 9*2 + 6 + 6, over the searches.
	if res.Verdict != livecheck.OK || !res.Complete || res.Local.TotalNodeStates != 30 {
		t.Fatalf("mute: %s, complete %v, %d node states; want OK, complete, 30", res.Verdict, res.Complete, res.Local.TotalNodeStates)
	}
}

// The text report says which initial state the path starts from.
func TestInitChoicesReport(t *testing.T) {
	var out, errs bytes.Buffer
	if code := livecheck.Run([]string{"check", "chooser", "--depth", "6", "-q", "--out", t.TempDir()}, &out, &errs, chooserSystem()); code != livecheck.ExitViolation {
		t.Fatalf("check: exit %d\n%s", code, errs.String())
	}
	if !strings.Contains(out.String(), "path of 1 step, from the initial state of Init choices [2 2]:\n") {
		t.Errorf("the report does not name the initial state:\n%s", out.String())
	}
}
