package transport_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/search"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/transport"
)

// check runs `check transport --bug B` as the CLI does with no other
// flag: the bug's needs fill in the configuration.
func check(t *testing.T, seed int64, bug string) *livecheck.Result {
	t.Helper()
	res, err := livecheck.Check(&transport.System, livecheck.Options{
		Time:   livecheck.NoTimeLimit,
		Config: livecheck.Config{Bugs: []string{bug}, Budget: sim.Budget{}},
		Seed:   seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The two safety bugs are found at their declared configurations with
// the violation the slip makes, at the step that makes it, and the trace
// replays to the same violation.
func TestSafetyBugsFound(t *testing.T) {
	for _, tc := range []struct {
		bug, property, message, last string
		steps                        int
	}{
		// The retransmitted SYN opens the connection again and its
		// message is delivered a second time.
		{"syn-dup", transport.InOrder.Name, "node 1: message 1 from node 0 was received twice",
			"deliver Data{Conn:1 Seq:1 Syn:true Msg:Msg{N:1}} 0->1 [transport]", 4},
		// Connection 1 is closed with its timer set, connection 2 is
		// opened, and connection 1's timer fires.
		{"stale-retransmit", search.PanicProperty,
			"node 0 panicked in Timer of layer transport: assertion failed: retransmission timer of connection 1 to 1 fired, but the connection to 1 is 2 with 1 messages unacknowledged",
			"timer transport/retransmit-1-1 at 0", 5},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			res := check(t, 1, tc.bug)
			if res.Verdict != livecheck.SafetyViolation || res.Property != tc.property || res.Message != tc.message {
				t.Fatalf("got %s of %q (%s), want a safety violation of %s: %s", res.Verdict, res.Property, res.Message, tc.property, tc.message)
			}
			if res.Config.Nodes != 2 || res.Config.Param("messages") != "2" || livecheck.Counts(res.Config.Budget) != (sim.Budget{}) {
				t.Errorf("found at %d nodes, %s messages, budget %+v; want 2 nodes, 2 messages, no failures",
					res.Config.Nodes, res.Config.Param("messages"), res.Config.Budget)
			}
			rep, err := livecheck.Replay(&transport.System, res.Config, res.Path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != res.Verdict || rep.Property != res.Property || rep.Message != res.Message || len(rep.Steps) != tc.steps || len(res.Path) != tc.steps {
				t.Fatalf("the trace of %d steps replays to %s of %q (%s) after %d; want %d steps", len(res.Path), rep.Verdict, rep.Property, rep.Message, len(rep.Steps), tc.steps)
			}
			if last := rep.Steps[len(rep.Steps)-1].Text; last != tc.last {
				t.Errorf("the last step is %q, want %q", last, tc.last)
			}
		})
	}
}

// syn-order is a liveness violation. Its critical step is the driver's
// call that has the restarted sender open a connection under the id it
// used before its restart: until then nothing is owed (the sender's
// application has sent nothing since it started), after it the receiver,
// whose connection from node 0 has that id and expects message 2 of it,
// takes the new connection's first message for a duplicate. The dead
// path replays dead, and ends with the message acknowledged and never
// received.
func TestSynOrderFound(t *testing.T) {
	t.Parallel()
	res := check(t, 1, "syn-order")
	if res.Verdict != livecheck.LivenessViolation || res.Property != transport.AllDelivered.Name {
		t.Fatalf("got %s of %q (%s), want a liveness violation of all-delivered", res.Verdict, res.Property, res.Message)
	}
	if res.Config.Nodes != 2 || res.Config.Budget.Resets != 1 || res.Config.Param("messages") != "2" {
		t.Errorf("found at %d nodes, budget %+v, %s messages; want 2 nodes, one reset, 2 messages", res.Config.Nodes, res.Config.Budget, res.Config.Param("messages"))
	}
	cx := res.Critical
	if cx == nil || cx.Event.Kind != sim.App || cx.Event.Node != 0 || cx.EventText != "app Send{To:1 N:2} at 0 [app]" {
		t.Fatalf("critical transition %+v, want the call that sends message 2", cx)
	}
	// Node 0 restarted before the step (it has opened no connection
	// since), and the receiver is on connection 1, past its message 1.
	if !strings.Contains(cx.Before[0], "Opened:0") || !strings.Contains(cx.Before[1], "In:[{Conn:1 Next:2}") {
		t.Errorf("before the critical step: node 0 %s, node 1 %s", cx.Before[0], cx.Before[1])
	}
	if !strings.Contains(cx.After[0], "Opened:1 Out:[{Conn:0 Acked:0 Queue:[]} {Conn:1 Acked:0 Queue:[Msg{N:2}]}]") {
		t.Errorf("after the critical step, node 0 is %s: want connection 1 open again with message 2", cx.After[0])
	}
	if cx.Dead == nil || cx.Dead.Live || cx.Alive == nil || !cx.Alive.Live {
		t.Errorf("evidence: dead %+v, alive %+v", cx.Dead, cx.Alive)
	}

	rep, err := livecheck.ReplayFrom(&transport.System, res.Config, res.Init, res.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.TestEnd(cx.EndTest); err != nil || !rep.Reproduces(livecheck.LivenessViolation, res.Property) {
		t.Fatalf("the dead path does not replay dead: %v %+v", err, rep.End)
	}
	sender := properties.Node[*transport.App](rep.Final, 0)
	receiver := properties.Node[*transport.App](rep.Final, 1)
	if len(sender.Sent) != 1 || sender.Sent[0] != (transport.Send{To: 1, N: 2}) {
		t.Errorf("the sender's application sent %v since its restart, want message 2", sender.Sent)
	}
	for _, r := range receiver.Got {
		if r.N == 2 {
			t.Errorf("the receiver got message 2 at the end: %v", receiver.Got)
		}
	}
}

// The correct version is silent at each bug's configuration, with a reset
// and a lost datagram, with duplicated datagrams (what its duplicate
// suppression is for), and across a partition that heals, over seeds 1-30
// (1-3 with -short), and delivers (the canary).
func TestCorrectSilentAtBugConfigs(t *testing.T) {
	seeds := int64(30)
	if testing.Short() {
		seeds = 3
	}
	configs := map[string]livecheck.Config{
		"reset-and-drop": {Budget: sim.Budget{Resets: 1, Drops: 1}},
		"dups":           {Budget: sim.Budget{Dups: 2}},
		"dup-reset-drop": {Budget: sim.Budget{Dups: 1, Resets: 1, Drops: 1}},
		"partition":      {Budget: sim.Budget{Partitions: 1, Dups: 1}},
	}
	for _, b := range transport.System.Bugs {
		configs[b.Name] = livecheck.Config{Bugs: []string{b.Name}, Budget: sim.Budget{}}
	}
	for name, given := range configs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := transport.System.Normalize(given)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Bugs = nil
			for seed := int64(1); seed <= seeds; seed++ {
				res, err := livecheck.Check(&transport.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: cfg, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != livecheck.OK || !res.Complete {
					t.Fatalf("seed %d, %d nodes %v %+v: %s of %q: %s", seed, cfg.Nodes, cfg.Params, cfg.Budget, res.Verdict, res.Property, res.Message)
				}
				if len(res.Sometimes) != 1 || !res.Sometimes[0].Reached {
					t.Errorf("seed %d: canary %+v, want delivered reached", seed, res.Sometimes)
				}
			}
		})
	}
}

// The state space of the correct version at its defaults and with a reset
// and a drop, pinned: a change in these numbers changes what the search
// explores and must be explained.
func TestStateCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		budget              sim.Budget
		states, transitions int64
	}{
		{sim.Budget{}, 1532, 2519},
		{sim.Budget{Resets: 1, Drops: 1}, 8607, 29122},
	} {
		res, err := livecheck.Check(&transport.System, livecheck.Options{Time: livecheck.NoTimeLimit, Config: livecheck.Config{Budget: tc.budget}, NoWalks: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != livecheck.OK || res.Stats.States != tc.states || res.Stats.Transitions != tc.transitions {
			t.Errorf("budget %+v: %s, %d states, %d transitions; want ok, %d and %d", tc.budget, res.Verdict, res.Stats.States, res.Stats.Transitions, tc.states, tc.transitions)
		}
	}
}

// A bad --messages is an error naming the flag, not a panic.
func TestBadMessages(t *testing.T) {
	for _, m := range []string{"0", "x", "7"} {
		_, err := livecheck.Check(&transport.System, livecheck.Options{Config: livecheck.Config{Params: map[string]string{"messages": m}}})
		if err == nil || !strings.Contains(err.Error(), "--messages") {
			t.Errorf("messages %q: %v, want an error naming --messages", m, err)
		}
	}
}
