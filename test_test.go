package livecheck_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/internal/gotest"
	"github.com/livecheck/livecheck/internal/tbrec"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// recordTB is a testing.TB that records what livecheck.Test says instead
// of failing: Fatalf returns, and Test returns after it.
// echo is a tiny protocol: node 0 pings the others once, each answers
// with a pong, node 0 counts them. With the bug double-pong a node
// answers twice, unless Fixed (the code after the fix).
type echo struct {
	sim.BaseNode
	Double bool
	Pongs  int
}

type echoPing struct{}
type echoPong struct{}

func (e *echo) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		for i := 1; i < ctx.Nodes(); i++ {
			ctx.Send(sim.NodeID(i), echoPing{})
		}
	}
}

func (e *echo) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(type) {
	case echoPing:
		ctx.Send(from, echoPong{})
		if e.Double {
			ctx.Send(from, echoPong{})
		}
	case echoPong:
		e.Pongs++
	}
}

func echoSystem(fixed bool) *livecheck.System {
	return &livecheck.System{
		Name: "echo", Doc: "one round of pings", DefaultNodes: 3, MinNodes: 2, MaxNodes: 4,
		Bugs: []livecheck.Bug{{Name: "double-pong", Doc: "a node answers a ping twice"}},
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			double := cfg.HasBug("double-pong") && !fixed
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &echo{Double: double} }},
				Properties: []properties.Property{
					properties.Always("pongs-bounded", "no more pongs than nodes pinged", func(s *sim.State) error {
						if n := properties.Node[*echo](s, 0).Pongs; n > s.N()-1 {
							return fmt.Errorf("node 0 counted %d pongs from %d nodes", n, s.N()-1)
						}
						return nil
					}),
					properties.Eventually("all-answered", "node 0 heard every pong", func(s *sim.State) bool {
						return properties.Node[*echo](s, 0).Pongs == s.N()-1
					}),
				},
			}, nil
		},
	}
}

func traceFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	slices.Sort(m)
	return m
}

func TestLivecheckTestPasses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "traces")
	r := &tbrec.Recorder{TB: t, Test: "TestEcho"}
	livecheck.Test(r, echoSystem(false), livecheck.WithTraceDir(dir))
	if len(r.Fatals) != 0 || len(r.Errs) != 0 {
		t.Fatalf("a correct system failed: %q %q", r.Fatals, r.Errs)
	}
	want := "livecheck: echo: ok: no violation in every reachable state (9 states); 0 walks from the depth bound\n" +
		"coverage (search, 9 transitions): Init 3, Receive 9 (echoPing 4, echoPong 5); never ran: Timer, App, Error"
	if len(r.Logs) != 1 || r.Logs[0] != want {
		t.Errorf("logs = %q, want [%q]", r.Logs, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a passing check made the trace directory (%v)", err)
	}

	// A check its budget cut short passes to the depth it completed.
	r = &tbrec.Recorder{TB: t, Test: "TestEcho"}
	livecheck.Test(r, echoSystem(false), livecheck.WithTraceDir(dir), livecheck.WithOptions(livecheck.Options{MaxStates: 3}))
	want = "livecheck: echo: ok: no violation to depth 1, complete to depth 1: every state within 1 step explored (3 states); walks from all 2 states at depth 1 that are not live reached a live state; not to the depth bound " + testDepth() + ": depth 2 would pass the limit of 3 states (--max-states) (--min-depth K fails a check that cannot complete depth K)\n" +
		"coverage (search, 5 transitions): Init 3, Receive 5 (echoPing 3, echoPong 2); never ran: Timer, App, Error\n" +
		"coverage (walks, 6 steps): Receive 6 (echoPing 2, echoPong 4); never ran: Timer, App, Error"
	if len(r.Fatals) != 0 || len(r.Logs) != 1 || r.Logs[0] != want {
		t.Errorf("cut short: fatals %q, logs %q, want [%q]", r.Fatals, r.Logs, want)
	}

	// One that could not complete the depth asked for fails, unless allowed.
	stopped := livecheck.WithOptions(livecheck.Options{MaxStates: 3, MinDepth: 2})
	r = &tbrec.Recorder{TB: t, Test: "TestEcho"}
	livecheck.Test(r, echoSystem(false), livecheck.WithTraceDir(dir), stopped)
	want = "livecheck: echo: inconclusive: depth 2 would pass the limit of 3 states (--max-states): every state within 1 step explored (3 states), no violation; depth 2 partly explored; walks from all 2 states at depth 1 that are not live reached a live state; the check must complete depth 2 (--min-depth 2): give it more time (--time) or states (--max-states), or ask for less (--min-depth) (AllowInconclusive lets this pass)"
	if len(r.Fatals) != 1 || r.Fatals[0] != want {
		t.Errorf("fatals = %q, want [%q]", r.Fatals, want)
	}
	r = &tbrec.Recorder{TB: t, Test: "TestEcho"}
	livecheck.Test(r, echoSystem(false), livecheck.WithTraceDir(dir), stopped, livecheck.AllowInconclusive())
	want = "livecheck: echo: inconclusive: depth 2 would pass the limit of 3 states (--max-states): every state within 1 step explored (3 states), no violation; depth 2 partly explored; walks from all 2 states at depth 1 that are not live reached a live state; the check must complete depth 2 (--min-depth 2): give it more time (--time) or states (--max-states), or ask for less (--min-depth)\n" +
		"coverage (search, 5 transitions): Init 3, Receive 5 (echoPing 3, echoPong 2); never ran: Timer, App, Error\n" +
		"coverage (walks, 6 steps): Receive 6 (echoPing 2, echoPong 4); never ran: Timer, App, Error"
	if len(r.Fatals) != 0 || len(r.Logs) != 1 || r.Logs[0] != want {
		t.Errorf("allowed: fatals %q, logs %q, want [%q]", r.Fatals, r.Logs, want)
	}
}

// testDepth is the depth livecheck.Test searches by default: the default
// 20, halved under -short.
func testDepth() string {
	if testing.Short() {
		return "10"
	}
	return "20"
}

func TestLivecheckTestSafety(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "traces")
	opt := []livecheck.TestOption{livecheck.WithTraceDir(dir),
		livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Bugs: []string{"double-pong"}}})}
	r := &tbrec.Recorder{TB: t, Test: "TestEcho/double-pong"}
	livecheck.Test(r, echoSystem(false), opt...)
	files := traceFiles(t, dir)
	if len(files) != 1 || !strings.HasPrefix(files[0], "TestEcho_double_pong-") {
		t.Fatalf("trace files %q, want one TestEcho_double_pong-<hash>.json", files)
	}
	file := filepath.Join(dir, files[0])
	if len(r.Fatals) != 1 {
		t.Fatalf("fatals = %q, want one", r.Fatals)
	}
	want := strings.Join([]string{
		"echo, 3 nodes, bugs double-pong, failures: 0 resets, 0 drops, 0 socket errors; depth " + testDepth() + ", seed 1",
		"",
		"safety-violation of pongs-bounded: node 0 counted 3 pongs from 2 nodes",
		"",
		"path of 5 steps:",
		"    1. deliver echoPing{} 0->1  => sends echoPong{} 1->0, echoPong{} 1->0",
		"    2. deliver echoPong{} 1->0",
		"    3. deliver echoPong{} 1->0",
		"    4. deliver echoPing{} 0->2  => sends echoPong{} 2->0, echoPong{} 2->0",
		"    5. deliver echoPong{} 2->0",
		"         !! node 0 counted 3 pongs from 2 nodes",
		"",
		"coverage (search, 14 transitions): Init 3, Receive 14 (echoPing 5, echoPong 9); never ran: Timer, App, Error",
		"",
		"trace: " + file,
		"replay it: go test -run '^TestEcho$/^double-pong$' -livecheck.replay '" + file + "'",
	}, "\n")
	if r.Fatals[0] != want {
		t.Errorf("report:\n%s\nwant:\n%s", r.Fatals[0], want)
	}
	tr, err := reports.ReadTraceFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Result != "safety-violation" || tr.Property != "pongs-bounded" || len(tr.Steps) != 5 || !slices.Equal(tr.Bugs, []string{"double-pong"}) {
		t.Errorf("trace: %s of %s, %d steps, bugs %q", tr.Result, tr.Property, len(tr.Steps), tr.Bugs)
	}

	// The next run replays the saved trace first, and fails with it.
	r = &tbrec.Recorder{TB: t, Test: "TestEcho/double-pong"}
	livecheck.Test(r, echoSystem(false), opt...)
	if len(r.Fatals) != 1 || !strings.HasPrefix(r.Fatals[0], "livecheck: saved trace "+file+" still fails:\nsafety-violation of pongs-bounded: node 0 counted 3 pongs from 2 nodes\npath of 5 steps:\n") {
		t.Errorf("second run: fatals = %q", r.Fatals)
	}
	// Another test's saved traces are not its own.
	r = &tbrec.Recorder{TB: t, Test: "TestEcho/double"}
	livecheck.Test(r, echoSystem(true), opt...)
	if len(r.Fatals) != 0 || len(r.Errs) != 0 || len(r.Logs) != 1 || !strings.HasPrefix(r.Logs[0], "livecheck: echo: ok:") {
		t.Errorf("a test with another name: fatals %q, errors %q, logs %q", r.Fatals, r.Errs, r.Logs)
	}
	// After the fix, the saved trace no longer fails: node 1 sends one
	// pong, so the trace's second delivery of it cannot happen.
	r = &tbrec.Recorder{TB: t, Test: "TestEcho/double-pong"}
	livecheck.Test(r, echoSystem(true), opt...)
	if len(r.Fatals) != 0 || len(r.Errs) != 0 || len(r.Logs) != 2 {
		t.Fatalf("after the fix: fatals %q, errors %q, logs %q", r.Fatals, r.Errs, r.Logs)
	}
	if want := "livecheck: saved trace " + file + " passes now: it no longer replays: the trace does not replay: step 3 (deliver 1->0 #ee14ee08dd33fa59): event not enabled: deliver 1->0 #ee14ee08dd33fa59: no such message in flight"; r.Logs[0] != want {
		t.Errorf("log %q, want %q", r.Logs[0], want)
	}
}

func TestLivecheckTestLiveness(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "traces")
	opt := []livecheck.TestOption{livecheck.WithTraceDir(dir),
		livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Budget: sim.Budget{Drops: 1}}, WalkDepth: 50, Workers: 1})}
	r := &tbrec.Recorder{TB: t, Test: "TestEchoDrops"}
	livecheck.Test(r, echoSystem(false), opt...)
	files := traceFiles(t, dir)
	if len(files) != 2 || !strings.HasPrefix(files[0], "TestEchoDrops-") || !strings.HasPrefix(files[1], "TestEchoDrops-live-") {
		t.Fatalf("trace files %q, want TestEchoDrops-<hash>.json and TestEchoDrops-live-<hash>.json", files)
	}
	dead, live := filepath.Join(dir, files[0]), filepath.Join(dir, files[1])
	want := strings.Join([]string{
		"echo, 3 nodes, no bugs, failures: 0 resets, 1 drop, 0 socket errors; depth " + testDepth() + ", seed 1",
		"",
		"liveness-violation of all-answered: it never holds on this path of 3 steps, and can no longer.",
		"all-answered: node 0 heard every pong.",
		"the path: the search's 3 steps to a state where nothing can happen.",
		"",
		"critical transition (case C1, the point of no return): step 3 of 3",
		"    drop echoPing{} 0->2",
		"after step 3: no event can happen any more and all-answered does not hold: the system is stuck for ever;",
		"after step 2: all-answered holds 2 steps from it (the nearest, by breadth-first search).",
		"along the path: after step 2: the last state that can recover; step 3: the critical step (no way back after it).",
		"no slip found: the protocol did not tolerate the failure at step 3 (drop echoPing{} 0->2), and the path lost no timer or message before it that is still missing after step 3",
		"recovery odds: of 20 walks of 5,000 steps from the state after each step, how many reach all-answered (a sample: two figures may differ by chance by up to about 7):",
		"  after step  0  1  2 3*",
		"  recover    20 20 19  0",
		"",
		"steps leading to it (numbers are the trace's, which has every step; * the critical one);",
		"1 of the 2 steps before the critical step dropped, each gap marked: without them the path still recovers before the critical step and is dead after it:",
		"    1. deliver echoPing{} 0->1  => sends echoPong{} 1->0",
		"       (step 2 dropped)",
		" *  3. drop echoPing{} 0->2",
		"",
		"what step 3 changes:",
		"  no node's state",
		"  out of flight: echoPing{} 0->2",
		"",
		"the nearest live path shares the first 2 steps, then takes instead",
		"    deliver echoPing{} 0->2",
		"and reaches a live state after 4 steps. After step 3, dead path vs live path:",
		"  in flight on the live path only: echoPong{} 2->0",
		"",
		"coverage (search, 21 transitions): Init 3, Receive 11 (echoPing 6, echoPong 5), drops 10; never ran: Timer, App, Error",
		"",
		"trace: " + dead,
		"replay it: go test -run '^TestEchoDrops$' -livecheck.replay '" + dead + "'",
		"nearest live path: " + live,
		"replay it: go test -run '^TestEchoDrops$' -livecheck.replay '" + live + "'",
	}, "\n")
	if len(r.Fatals) != 1 || r.Fatals[0] != want {
		t.Fatalf("fatals = %q, want [%q]", r.Fatals, want)
	}
	tr, err := reports.ReadTraceFile(live)
	if err != nil || tr.Result != "live" {
		t.Fatalf("live trace: %v, result %v", err, tr)
	}

	// The next run replays the dead trace, dead test included, and not
	// the live one.
	r = &tbrec.Recorder{TB: t, Test: "TestEchoDrops"}
	livecheck.Test(r, echoSystem(false), opt...)
	want = "livecheck: saved trace " + dead + " still fails:\n" +
		"liveness-violation of all-answered: all-answered never holds on this path, and can no longer after step 3 of 3 (drop echoPing{} 0->2)\n" +
		"critical step 3 of 3: drop echoPing{} 0->2\n" +
		"no slip found: the protocol did not tolerate the failure at step 3 (drop echoPing{} 0->2), and the path lost no timer or message before it that is still missing after step 3\n" +
		"path of 3 steps:\n"
	if len(r.Fatals) != 1 || !strings.HasPrefix(r.Fatals[0], want) || len(r.Logs) != 0 {
		t.Errorf("second run: fatals %q, logs %q; want one that begins %q", r.Fatals, r.Logs, want)
	}
}

// setFlag sets a flag for the rest of the test. The tests that use it are
// not parallel: the parallel ones run after them.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}

func TestLivecheckTestFlags(t *testing.T) {
	gotest.SetReplayOut(t, io.Discard) // what a passing replay says without -v
	dir := filepath.Join(t.TempDir(), "traces")
	opt := []livecheck.TestOption{livecheck.WithTraceDir(dir),
		livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Bugs: []string{"double-pong"}}})}

	// -livecheck.seed is the seed of the check; -short halves the depth.
	setFlag(t, "livecheck.seed", "7")
	setFlag(t, "test.short", "true")
	r := &tbrec.Recorder{TB: t, Test: "TestEchoFlags"}
	livecheck.Test(r, echoSystem(false), opt...)
	want := "echo, 3 nodes, bugs double-pong, failures: 0 resets, 0 drops, 0 socket errors; depth 10, seed 7\n\nsafety-violation of pongs-bounded: node 0 counted 3 pongs from 2 nodes\n"
	if len(r.Fatals) != 1 || !strings.HasPrefix(r.Fatals[0], want) {
		t.Fatalf("fatals %q, want one that begins %q", r.Fatals, want)
	}
	files := traceFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	file := filepath.Join(dir, files[0])

	// -livecheck.replay replays that file alone, in any test, saved
	// traces aside.
	setFlag(t, "livecheck.replay", file)
	r = &tbrec.Recorder{TB: t, Test: "TestOther"}
	livecheck.Test(r, echoSystem(false))
	want = "livecheck: " + file + " still fails:\nsafety-violation of pongs-bounded: node 0 counted 3 pongs from 2 nodes\npath of 5 steps:\n"
	if len(r.Fatals) != 1 || !strings.HasPrefix(r.Fatals[0], want) {
		t.Errorf("replay: fatals %q, want one that begins %q", r.Fatals, want)
	}
	r = &tbrec.Recorder{TB: t, Test: "TestOther"}
	livecheck.Test(r, echoSystem(true))
	want = "livecheck: " + file + " passes now: it no longer replays: the trace does not replay: step 3"
	if len(r.Fatals) != 0 || len(r.Logs) != 1 || !strings.HasPrefix(r.Logs[0], want) {
		t.Errorf("replay after the fix: fatals %q, logs %q, want a log that begins %q", r.Fatals, r.Logs, want)
	}
	other := echoSystem(false)
	other.Name = "other"
	r = &tbrec.Recorder{TB: t, Test: "TestOther"}
	livecheck.Test(r, other)
	if want := "livecheck: " + file + `: it is a trace of system "echo", not "other"`; len(r.Fatals) != 0 || len(r.Skips) != 1 || r.Skips[0] != want {
		t.Errorf("replay of another system's trace: fatals %q, skips %q, want a skip %q", r.Fatals, r.Skips, want)
	}
}

// -livecheck.replay of a live path's trace (the nearest live path a
// liveness report names) replays it: it passes while the path still
// reaches a live state, says so even without -v, and fails once the
// path no longer does.
func TestReplayFlagLiveTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "traces")
	opt := []livecheck.TestOption{livecheck.WithTraceDir(dir),
		livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Budget: sim.Budget{Drops: 1}}, WalkDepth: 50, Workers: 1})}
	livecheck.Test(&tbrec.Recorder{TB: t, Test: "TestEchoDrops"}, echoSystem(false), opt...)
	files := traceFiles(t, dir)
	if len(files) != 2 || !strings.HasPrefix(files[1], "TestEchoDrops-live-") {
		t.Fatalf("trace files %q, want a dead and a live one", files)
	}
	live := filepath.Join(dir, files[1])
	var out strings.Builder
	gotest.SetReplayOut(t, &out)
	setFlag(t, "livecheck.replay", live)
	r := &tbrec.Recorder{TB: t, Test: "TestEchoDrops"}
	livecheck.Test(r, echoSystem(false))
	want := "livecheck: " + live + " replays: its path of 4 steps reaches a live state, as it records\npath of 4 steps:\n"
	if len(r.Fatals) != 0 || len(r.Skips) != 0 || len(r.Logs) != 1 || !strings.HasPrefix(r.Logs[0], want) {
		t.Fatalf("fatals %q, skips %q, logs %q; want one log that begins %q", r.Fatals, r.Skips, r.Logs, want)
	}
	if testing.Verbose() == (out.String() != "") || !testing.Verbose() && out.String() != "--- TestEchoDrops: "+r.Logs[0] {
		t.Errorf("without -v, standard output has %q; want the log", out.String())
	}
	// A node 0 that never counts the last pong: the path no longer ends
	// live.
	deaf := echoSystem(false)
	build := deaf.Build
	deaf.Build = func(cfg livecheck.Config) (*livecheck.Model, error) {
		m, err := build(cfg)
		if err == nil {
			m.Properties[1] = properties.Eventually("all-answered", "node 0 heard every pong", func(s *sim.State) bool {
				return properties.Node[*echo](s, 0).Pongs == s.N()
			})
		}
		return m, err
	}
	r = &tbrec.Recorder{TB: t, Test: "TestEchoDrops"}
	livecheck.Test(r, deaf)
	want = "livecheck: " + live + " no longer replays to a live state: "
	if len(r.Fatals) != 1 || !strings.HasPrefix(r.Fatals[0], want) {
		t.Fatalf("fatals %q, logs %q; want one that begins %q", r.Fatals, r.Logs, want)
	}
}
