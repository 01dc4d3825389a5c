package livecheck_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/internal/tbrec"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// A ping node: node 0 pings every other node once, each answers with a
// pong, and node 0 counts the pongs.
type pinger struct {
	sim.BaseNode // App and Error do nothing
	Pongs        int
	Sent         bool
}

type ping struct{}
type pong struct{}

func (p *pinger) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		ctx.SetTimer("start")
	}
}

func (p *pinger) Timer(ctx sim.Context, name string) {
	for i := 1; i < ctx.Nodes(); i++ {
		ctx.Send(sim.NodeID(i), ping{})
	}
	p.Sent = true
}

func (p *pinger) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	switch msg.(type) {
	case ping:
		ctx.Send(from, pong{})
	case pong:
		p.Pongs++
	}
}

// Write each node as a state machine, describe the system with its
// properties, and check it.
func Example() {
	sys := &livecheck.System{
		Name: "ping", Doc: "one round of pings", DefaultNodes: 3, MinNodes: 2, MaxNodes: 8,
		Build: func(cfg livecheck.Config) (*livecheck.Model, error) {
			return &livecheck.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return &pinger{} }},
				Properties: []properties.Property{
					properties.Always("pongs-bounded", "no more pongs than nodes pinged", func(s *sim.State) error {
						if n := properties.Node[*pinger](s, 0).Pongs; n > s.N()-1 {
							return fmt.Errorf("node 0 counted %d pongs from %d nodes", n, s.N()-1)
						}
						return nil
					}),
					properties.Eventually("all-answered", "node 0 heard every pong", func(s *sim.State) bool {
						return properties.Node[*pinger](s, 0).Pongs == s.N()-1
					}),
				},
			}, nil
		},
	}
	res, err := livecheck.Check(sys, livecheck.Options{Depth: 10})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict, res.Stats.States, "states, exhausted:", res.Exhausted)

	// With one datagram lost, the last pong may never come.
	res, _ = livecheck.Check(sys, livecheck.Options{Depth: 10, Config: livecheck.Config{Budget: sim.Budget{Drops: 1}}})
	fmt.Println(res.Verdict, res.Property, "critical step:", res.Critical.EventText)
	// Output:
	// ok 10 states, exhausted: true
	// liveness-violation all-answered critical step: drop ping{} 0->2
}

// In a test file, Test is one line: livecheck.Test(t, &lock.System). A
// violation fails the test with this report, and the trace is saved for
// every later run to replay first. Here recordTB stands in for the t of
// a test with the lock service's early-release slip, to show the report.
func ExampleTest() {
	dir, err := os.MkdirTemp("", "livecheck-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	t := &tbrec.Recorder{Test: "TestEarlyRelease"}
	livecheck.Test(t, &lock.System, livecheck.WithTraceDir(dir),
		// The depth is the default one, given so that go test -short,
		// which halves a depth left out, prints the same.
		livecheck.WithOptions(livecheck.Options{Config: livecheck.Config{Bugs: []string{"early-release"}}, Depth: 20}))
	fmt.Println(strings.ReplaceAll(strings.Join(t.Fatals, "\n"), dir, "DIR"))
	// Output:
	// lock, 3 nodes, bugs early-release, failures: 0 resets, 0 drops, 0 socket errors; depth 20, seed 1
	// settings from bug early-release: --nodes 3
	//
	// safety-violation of one-holder: nodes 1 and 2 at once
	//
	// path of 5 steps:
	//     1. deliver acquire{} 1->0  => sends grant{Lease:1} 0->1
	//     2. deliver acquire{} 2->0
	//     3. deliver grant{Lease:1} 0->1
	//     4. timer lease at 0  => sends grant{Lease:2} 0->2
	//     5. deliver grant{Lease:2} 0->2
	//          !! nodes 1 and 2 at once
	//
	// sometimes lock-held: reached at step 2
	// coverage (search, 33 transitions): Init 3, Receive 17 (acquire 8, grant 7, release 2), Timer 16 (lease 10, work 6); never ran: App, Error
	//
	// trace: DIR/TestEarlyRelease-958ade6b.json
	// replay it: go test -run '^TestEarlyRelease$' -livecheck.replay 'DIR/TestEarlyRelease-958ade6b.json'
}

// A program whose main calls Main is the livecheck command for its own
// systems, with every subcommand: examples/lock is this program, and
// `go run ./examples/lock check lock --bug early-release` checks the lock
// service with its slip.
func ExampleMain() {
	livecheck.Main(&lock.System)
}

// Run is Main without the exit, for tests: it returns the exit status.
func ExampleRun() {
	code := livecheck.Run([]string{"list"}, os.Stdout, os.Stderr, &lock.System)
	fmt.Println("exit", code)

	out, err := os.MkdirTemp("", "livecheck-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	var report strings.Builder
	code = livecheck.Run([]string{"check", "lock", "--bug", "early-release", "--quiet", "--out", out}, &report, os.Stderr, &lock.System)
	fmt.Println("exit", code, strings.Split(report.String(), "\n")[3])
	// Output:
	// lock: a lease-based lock service: one server, clients that each take the lock once; bugs: early-release (--nodes 3), no-retry (--nodes 3); properties: one-holder,all-served,lock-held
	//     one-holder (safety: at most one client believes it holds the lock)
	//     all-served (liveness: every client eventually holds the lock)
	//     lock-held (reachability: some client holds the lock)
	// exit 0
	// exit 1 safety-violation of one-holder: nodes 1 and 2 at once
}
