package etcdkv_test

import (
	"regexp"
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
	"github.com/livecheck/livecheck/systems/etcdkv"
)

// script drives a world of cfg by hand: each step is a regular
// expression over the events' descriptions (World.Describe, as a trace
// shows them), and the first enabled event that matches is taken; a
// step written "*re" takes matching events until none is left (none at
// all too).
func script(t *testing.T, cfg protocol.Config, steps []string) (*sim.World, *sim.State) {
	t.Helper()
	_, m, err := etcdkv.System.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.NewWorld(m.Spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Initial()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range steps {
		all := step[0] == '*'
		if all {
			step = step[1:]
		}
		re := regexp.MustCompile(step)
		for taken := 0; ; taken++ {
			ev, ok := find(w, s, re)
			if !ok {
				if taken == 0 && !all {
					t.Fatalf("no enabled event matches %q; enabled: %q", step, describeAll(w, s))
				}
				break
			}
			if s, err = w.Apply(s, ev, nil); err != nil {
				t.Fatalf("%s: %v", w.Describe(s, ev), err)
			}
			if !all {
				break
			}
		}
	}
	return w, s
}

// find returns the first enabled event of s that re matches.
func find(w *sim.World, s *sim.State, re *regexp.Regexp) (sim.Event, bool) {
	for _, ev := range w.Enabled(s, nil) {
		if re.MatchString(w.Describe(s, ev)) {
			return ev, true
		}
	}
	return sim.Event{}, false
}

func describeAll(w *sim.World, s *sim.State) []string {
	var out []string
	for _, ev := range w.Enabled(s, nil) {
		out = append(out, w.Describe(s, ev))
	}
	return out
}

// The stale read raft's documentation warns of, step by step, with one
// client's put(x,1) (to replica 0) and another's get(x) (to replica 1):
// node 1 leads term 1; a partition cuts it off; nodes 0 and 2 elect node
// 0 in term 2, which commits the put and acknowledges it; the partition
// heals, and the get reaches node 1 before anything of term 2 does. With
// lease-read, node 1, still leader of term 1 as far as it knows (no
// CheckQuorum to make it step down), answers 0: not linearizable. The
// correct store asks raft for a read index instead, which node 1 cannot
// get confirmed by a quorum: the get does not return, and once node 1
// hears of term 2 it never will (it stays pending, which is allowed).
func TestStaleReadOfOldLeader(t *testing.T) {
	steps := []string{
		`^timer tick at 1$`, `^timer tick at 1$`, // node 1 campaigns in term 1
		`^deliver MsgVote t1 1->0$`, `^deliver MsgVoteResp t1 0->1$`, // and leads it
		`^partition \{1\} \| \{0,2,3\}$`,
		`^timer tick at 0$`, `^timer tick at 0$`, // node 0 campaigns in term 2
		`^deliver MsgVote t2 0->2$`, `^deliver MsgVoteResp t2 2->0$`, // and leads it
		`^app Invoke\{Client:0 ID:1 Op:put\(x,1\)\} at 3$`,
		`*^deliver .* (0->2|2->0|3->0|0->3)$`, // the put is committed, applied, acknowledged
		`^heal`,
		`^app Invoke\{Client:1 ID:2 Op:get\(x\)\} at 3$`,
		`^deliver c1:get\(x\) 3->1$`,
	}
	lin := properties.Linearizable(etcdkv.Spec)
	base := protocol.Config{Params: map[string]string{"ops": "1", "prevote": "off", "checkquorum": "off"}, Budget: sim.Budget{Partitions: 1}}

	bug := base
	bug.Bugs = []string{"lease-read"}
	_, s := script(t, bug, append(steps, `^deliver Resp\{Client:1 Seq:1 Val:0\} 1->3$`))
	const msg = "not linearizable (kv on key x): client 1's get(x) returned 0, which no order of the operations allows; " +
		"the operation: client 1: get(x) -> 0 (3-4); completed before it: client 0: put(x,1) -> 0 (1-2); the spec's state before it can be: 1"
	if err := lin.CheckSafety(s); err == nil || err.Error() != "node 3: "+msg {
		t.Errorf("lease-read: %v\nwant node 3: %s", err, msg)
	}

	w, s := script(t, base, steps)
	if ev, ok := find(w, s, regexp.MustCompile(`^deliver Resp.* 1->3$`)); ok {
		t.Fatalf("the correct store answers the old leader's get: %s", w.Describe(s, ev))
	}
	// Node 0 heartbeats, and everything in flight arrives: node 1 hears
	// of term 2 and steps down.
	_, s = script(t, base, append(steps, `^timer tick at 0$`, `*^deliver `))
	if err := lin.CheckSafety(s); err != nil {
		t.Errorf("correct: %v", err)
	}
	if r := properties.Node[*etcdkv.Replica](s, 1); r.Term != 2 {
		t.Errorf("correct: node 1 did not hear of term 2: %s", r.DumpState())
	}
	if c := properties.Node[*etcdkv.Clients](s, etcdkv.Replicas); !c.Sessions[1].Waiting {
		t.Errorf("correct: client 1's get returned: %s", c.DumpState())
	}
}
