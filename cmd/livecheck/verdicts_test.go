package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// Replay decides how strong its proof is: whatever dead test a trace
// records, it runs at least the floor of every dead test, and refuses
// sizes no check writes. A trace of the correct RandTree with no steps
// and a dead test of one walk of one step "reproduced" (exit 1); one
// that asks for 10^9 walks after a search of 10^12 states ran for ever
// where its end is dead (here it recovers, so that the code before the
// fix ends too, with the wrong answer).
func TestReplayDeadTestFloorAndCaps(t *testing.T) {
	dir := t.TempDir()
	trace := func(name, deadTest string) string {
		p := filepath.Join(dir, name+".json")
		body := `{"format": "livecheck-trace", "version": 1, "system": "randtree", "nodes": 4,
			"budget": {"resets": 0, "drops": 0, "errors": 0}, "seed": 1,
			"result": "liveness-violation", "property": "single-tree", "dead_test": ` + deadTest + `, "steps": []}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, deadTest, want string
	}{
		{"weak", `{"walks": 1, "walk_depth": 1}`,
			" does not replay: it records liveness-violation of single-tree, but replaying it gives a final state that recovers: single-tree holds 11 steps from it (the nearest, by breadth-first search); " +
				"not reproduced: the violation holds only under the trace's dead test (a search of 0 states, then 1 walk of 1 step), weaker than the least replay runs (a search of 20,000 states, then 300 walks of 5,000 steps)"},
		{"huge", `{"walks": 1000000000, "walk_depth": 5000, "search_states": 1000000000000}`,
			": dead_test: search_states 1,000,000,000,000 is more than any check runs (at most 20,000): the file is damaged"},
		{"long walks", `{"walks": 300, "walk_depth": 1000000000, "search_states": 20000}`,
			": dead_test: walk_depth 1,000,000,000 is more than any check runs (at most 10,000,000): the file is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := trace(tc.name, tc.deadTest)
			code, out, errs := runCLI(t, "replay", file)
			if want := "livecheck replay: " + file + tc.want + "\n"; errs != want {
				t.Fatalf("exit %d, stderr:\n%s\nwant one line:\n%s", code, errs, want)
			}
			if code != exitUsage || strings.Contains(out, "reproduced:") {
				t.Fatalf("exit %d, want %d; stdout:\n%s", code, exitUsage, out)
			}
		})
	}
}

// The correct version of every bundled system with a liveness property
// is never reported dead, whatever the flags that shape the exploration
// walks: --walk-depth from 1 to 100, and weights that never deliver or
// never fire a timer. Such walks are weak, but the dead test has a
// strength of its own; a check may end inconclusive (3), never with a
// violation (1). (RandTree was "dead" at --walk-depth 1 to 20 and with
// deliver=0 or timer=0: the dead test searched only as deep as the
// walks, and walked with their weights; also --walk-depth 1
// --escalations 100.) -short runs that and a sample of the grid: every
// system once, RandTree, where the walks mattered, over the walk depths
// and the weights.
func TestCorrectSystemsNeverDead(t *testing.T) {
	type sys struct {
		name  string
		extra []string
	}
	systems := []sys{{"randtree", nil}, {"ring", nil}, {"lcr", nil}, {"overcast", nil}, {"transport", nil}, {"paxos", nil},
		{"onepaxos", []string{"--depth", "10"}}}
	depths := []string{"1", "2", "5", "10", "20", "50", "100"}
	weights := []string{"", "deliver=0", "timer=0"}
	// The issue's own case first: one-step walks, escalated 100 times.
	cells := [][]string{{"randtree", "--walk-depth", "1", "--escalations", "100"}}
	for i, s := range systems {
		for d, wd := range depths {
			for w, wt := range weights {
				// The sample: RandTree at every walk depth, each weight
				// at two or three of them; every other system at one
				// cell, another for each.
				if testing.Short() && !(s.name == "randtree" && (d+w)%3 == 0 || d == i%len(depths) && w == i%len(weights)) {
					continue
				}
				cell := append([]string{s.name, "--walk-depth", wd}, s.extra...)
				if wt != "" {
					cell = append(cell, "--weights", wt)
				}
				cells = append(cells, cell)
			}
		}
	}
	for _, cell := range cells {
		args := append([]string{"check"}, cell...)
		code, out, errs := runCLI(t, append(args, "--json", "--out", t.TempDir())...)
		if code != exitOK && code != exitInconclusive {
			var r struct{ Result, Property, Message string }
			json.Unmarshal([]byte(out), &r)
			t.Fatalf("%s: exit %d, want 0 or 3: %s of %s: %s %s", strings.Join(args, " "), code, r.Result, r.Property, r.Message, errs)
		}
	}
}

// A system stuck for ever is described once: the check's evidence for
// the end of the path, its result without walks, and the replay of its
// trace name the same property and say the same words. (The check said
// "elected holds in none of the 1 state reachable from it (all
// searched)"; the replay "liveness-violation of quiescent: no event can
// happen any more ...".)
func TestStuckSystemOneDescription(t *testing.T) {
	dir := t.TempDir()
	args := []string{"check", "lcr", "--nodes", "2", "--bug", "ignore-early", "--out", dir}
	var c struct {
		Property, Trace string
		Critical        struct {
			End struct {
				Step  int
				Stuck bool
			}
		}
	}
	code, out, errs := runCLI(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &c); err != nil || code != exitViolation {
		t.Fatalf("check: exit %d %v\n%s\n%s", code, err, out, errs)
	}
	var r struct{ Result, Property, Message string }
	code, out, errs = runCLI(t, "replay", "--json", c.Trace)
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitViolation {
		t.Fatalf("replay: exit %d %v\n%s\n%s", code, err, out, errs)
	}
	const words = "no event can happen any more and elected does not hold: the system is stuck for ever"
	if r.Result != "liveness-violation" || r.Property != c.Property || r.Message != words {
		t.Fatalf("replay: %s of %s: %q; the check: %s, want %q", r.Result, r.Property, r.Message, c.Property, words)
	}
	if !c.Critical.End.Stuck {
		t.Fatalf("the check's evidence for the end of the path does not say it is stuck: %s", out)
	}
	_, text, _ := runCLI(t, args...)
	if want := fmt.Sprintf("after the last step, %d: %s.\n", c.Critical.End.Step, r.Message); !strings.Contains(text, want) {
		t.Fatalf("the check's text lacks %q:\n%s", want, text)
	}
	// Without walks the check reports the stuck state itself, as replay.
	var n struct{ Result, Property, Message string }
	code, out, errs = runCLI(t, append(args, "--json", "--no-walks")...)
	if err := json.Unmarshal([]byte(out), &n); err != nil || code != exitViolation || n != r {
		t.Fatalf("--no-walks: exit %d %v: %+v, want %+v\n%s", code, err, n, r, errs)
	}
}
