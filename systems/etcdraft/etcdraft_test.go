package etcdraft_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// want fails the test unless the cluster's nodes dump as lines (node 0
// first).
func (c *cluster) want(lines ...string) {
	c.t.Helper()
	var w strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&w, "\n\tnode %d: %s", i, l)
	}
	if got := c.dump(); got != w.String() {
		c.t.Fatalf("nodes:%s\nwant:%s", got, w.String())
	}
}

// wantHealthy fails the test unless every safety property holds and the
// liveness properties are as given.
func (c *cluster) wantHealthy(leaderKnown, ackedApplied bool) {
	c.t.Helper()
	if v := c.violations(); len(v) != 0 {
		c.t.Fatalf("violations %v in%s", v, c.dump())
	}
	if got := c.live("leader-known"); got != leaderKnown {
		c.t.Fatalf("leader-known is %v, want %v, in%s", got, leaderKnown, c.dump())
	}
	if got := c.live("acked-applied"); got != ackedApplied {
		c.t.Fatalf("acked-applied is %v, want %v, in%s", got, ackedApplied, c.dump())
	}
}

// A cluster without failures, in each setting of PreVote and CheckQuorum:
// the proposal made before any leader is refused, tried again once node 1
// knows the leader, committed, applied everywhere and acknowledged by
// node 1 alone. A restarted follower rebuilds what it applied from its
// disk at once; when the leader restarts, node 1 (the next to time out,
// ticks being in id order) leads term 2, and its no-op entry is applied
// after the others.
func TestHealthy(t *testing.T) {
	for _, tc := range []struct{ prevote, checkquorum string }{
		{"on", "on"}, {"off", "off"}, {"on", "off"}, {"off", "on"},
	} {
		t.Run("prevote="+tc.prevote+",checkquorum="+tc.checkquorum, func(t *testing.T) {
			c := newCluster(t, protocol.Config{Params: map[string]string{"prevote": tc.prevote, "checkquorum": tc.checkquorum}})
			c.propose(1, 1)
			c.want("StateFollower t0 lead=none applied=[]",
				"StateFollower t0 lead=none applied=[] refused=[1]",
				"StateFollower t0 lead=none applied=[]")
			c.wantHealthy(false, true)

			c.settle(12)
			c.want("StateLeader t1 lead=0 applied=[noop@1/t1 p1@2/t1] led=[1]",
				"StateFollower t1 lead=0 applied=[noop@1/t1 p1@2/t1] acked=[1]",
				"StateFollower t1 lead=0 applied=[noop@1/t1 p1@2/t1]")
			c.wantHealthy(true, true)
			if got, want := strings.Join(c.log, "; "), "1: acknowledged proposal 1"; got != want {
				t.Fatalf("log %q, want %q", got, want)
			}

			c.reset(2)
			c.want("StateLeader t1 lead=0 applied=[noop@1/t1 p1@2/t1] led=[1]",
				"StateFollower t1 lead=0 applied=[noop@1/t1 p1@2/t1] acked=[1]",
				"StateFollower t1 lead=none applied=[noop@1/t1 p1@2/t1]")
			c.wantHealthy(false, true)

			c.reset(0)
			c.settle(12)
			c.want("StateFollower t2 lead=1 applied=[noop@1/t1 p1@2/t1 noop@3/t2] led=[1]",
				"StateLeader t2 lead=1 applied=[noop@1/t1 p1@2/t1 noop@3/t2] acked=[1] led=[2]",
				"StateFollower t2 lead=1 applied=[noop@1/t1 p1@2/t1 noop@3/t2]")
			c.wantHealthy(true, true)
		})
	}
}

// Five nodes and two proposals, to nodes 0 and 1, one of them made while
// a leader is known.
func TestHealthyFiveNodes(t *testing.T) {
	c := newCluster(t, protocol.Config{Nodes: 5, Params: map[string]string{"proposals": "2"}})
	c.settle(12)
	c.propose(0, 1)
	c.propose(1, 2)
	c.settle(2)
	applied := "applied=[noop@1/t1 p1@2/t1 p2@3/t1]"
	c.want("StateLeader t1 lead=0 "+applied+" acked=[1] led=[1]",
		"StateFollower t1 lead=0 "+applied+" acked=[2]",
		"StateFollower t1 lead=0 "+applied,
		"StateFollower t1 lead=0 "+applied,
		"StateFollower t1 lead=0 "+applied)
	c.wantHealthy(true, true)
}

// elect makes node 0 leader of term 1 with node 1's vote alone: node 0
// times out first, node 1 grants its pre-vote and its vote, and every
// message to node 2, and node 0's appends, stay queued.
func elect(c *cluster) {
	c.t.Helper()
	c.tick(0, 10)
	c.deliver(0, 1) // pre-vote
	c.deliver(1, 0)
	c.deliver(0, 1) // vote
	c.deliver(1, 0)
	if got := c.nodes[0].DumpState(); !strings.HasPrefix(got, "StateLeader t1 ") {
		c.t.Fatalf("node 0 is %s, want leader of term 1", got)
	}
}

// Node 1 votes for node 0 in term 1 and restarts; node 2 then campaigns
// for term 1 and asks node 1 alone. A node that persisted its vote before
// sending it refuses; one that forgot it (forget-hardstate), or whose
// write had not landed when it restarted (send-before-persist), votes
// again in term 1, and node 2 leads the term node 0 leads:
// one-leader-per-term.
func TestTwoLeadersOneTerm(t *testing.T) {
	for _, tc := range []struct {
		bug       string
		node2     string
		violation string
	}{
		// Refused, node 2 takes up the term of node 1's answer.
		{"", "StateFollower t1 lead=none applied=[]", ""},
		// Elected, node 2 commits its no-op with node 1.
		{"forget-hardstate", "StateLeader t1 lead=2 applied=[noop@1/t1] led=[1]", "nodes 0 and 2: both led term 1"},
		{"send-before-persist", "StateLeader t1 lead=2 applied=[noop@1/t1] led=[1]", "nodes 0 and 2: both led term 1"},
	} {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			cfg := protocol.Config{}
			if tc.bug != "" {
				cfg.Bugs = []string{tc.bug}
			}
			c := newCluster(t, cfg)
			elect(c)
			c.reset(1)
			c.tick(2, 10)
			c.deliverAmong(1, 2)
			if got := c.nodes[2].DumpState(); got != tc.node2 {
				t.Fatalf("node 2 is %s, want %s", got, tc.node2)
			}
			got := c.violations()
			if tc.violation == "" {
				if len(got) != 0 {
					t.Fatalf("violations %v in%s", got, c.dump())
				}
				return
			}
			if len(got) != 1 || got["one-leader-per-term"] != tc.violation {
				t.Fatalf("violations %v, want one-leader-per-term: %s, in%s", got, tc.violation, c.dump())
			}
		})
	}
}

// isolate makes node 1 leader of term 2 with node 2's vote while node 0,
// leader of term 1 with an entry of its own at index 1 (and any it was
// proposed), hears nothing: node 2 first votes for node 0 in term 1, so
// that it is in term 1 and grants a pre-vote for term 2, then node 1
// times out.
func isolate(c *cluster) {
	c.t.Helper()
	c.deliver(0, 2) // pre-vote
	c.deliver(0, 2) // vote
	c.tick(1, 10)
	c.deliverAmong(1, 2)
	if got := c.nodes[1].DumpState(); !strings.HasPrefix(got, "StateLeader t2 ") {
		c.t.Fatalf("node 1 is %s, want leader of term 2", got)
	}
}

// Node 0 leads term 1 and appends its no-op entry, which no other node
// receives; node 1 leads term 2 and commits its own no-op at index 1.
// Applying what is committed, node 0 applied nothing and takes node 1's
// entry once it hears from it; applying what it appends
// (apply-uncommitted), it applied its own no-op, which node 1's
// replaces: applied-agree.
func TestApplyUncommitted(t *testing.T) {
	for _, tc := range []struct {
		bug       string
		node0     string
		violation string
	}{
		{"", "StateLeader t1 lead=0 applied=[] led=[1]", ""},
		{"apply-uncommitted", "StateLeader t1 lead=0 applied=[noop@1/t1] led=[1]", "nodes 0 and 1: applied noop@1/t1 and noop@1/t2"},
	} {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			cfg := protocol.Config{}
			if tc.bug != "" {
				cfg.Bugs = []string{tc.bug}
			}
			c := newCluster(t, cfg)
			elect(c)
			isolate(c)
			if got := c.nodes[0].DumpState(); got != tc.node0 {
				t.Fatalf("node 0 is %s, want %s", got, tc.node0)
			}
			got := c.violations()
			if tc.violation != "" {
				if len(got) != 1 || got["applied-agree"] != tc.violation {
					t.Fatalf("violations %v, want applied-agree: %s, in%s", got, tc.violation, c.dump())
				}
				return
			}
			c.wantHealthy(false, true)
			c.settle(12)
			applied := "applied=[noop@1/t2]"
			c.want("StateFollower t2 lead=1 "+applied+" led=[1]",
				"StateLeader t2 lead=1 "+applied+" led=[2]",
				"StateFollower t2 lead=1 "+applied)
			c.wantHealthy(true, true)
		})
	}
}

// Node 0 leads term 1 and is proposed p1, which it appends and no other
// node receives; node 1 then leads term 2 and node 0's log is replaced by
// node 1's. Acknowledging on apply, node 0 never acknowledges p1, which
// is lost as raft allows; acknowledging on append (ack-before-apply), it
// did, and the acknowledged proposal is applied nowhere, ever:
// acked-applied does not hold once the cluster has settled.
func TestAckBeforeApply(t *testing.T) {
	for _, tc := range []struct {
		bug          string
		node0        string
		ackedApplied bool
	}{
		// Still waiting for p1, which will never come.
		{"", "proposed=[1]", true},
		{"ack-before-apply", "acked=[1]", false},
	} {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			cfg := protocol.Config{}
			if tc.bug != "" {
				cfg.Bugs = []string{tc.bug}
			}
			c := newCluster(t, cfg)
			elect(c)
			c.propose(0, 1)
			isolate(c)
			c.settle(12)
			applied := "applied=[noop@1/t2]"
			c.want("StateFollower t2 lead=1 "+applied+" "+tc.node0+" led=[1]",
				"StateLeader t2 lead=1 "+applied+" led=[2]",
				"StateFollower t2 lead=1 "+applied)
			c.wantHealthy(true, tc.ackedApplied)
		})
	}
}

// The wire form of a message keeps what raft reads: a message that went
// through it and back dumps the same.
func TestWire(t *testing.T) {
	c := newCluster(t, protocol.Config{})
	c.settle(12)
	c.propose(0, 1)
	if len(c.queue) == 0 {
		t.Fatal("the leader sent nothing for a proposal")
	}
	for _, e := range c.queue {
		if e.msg.Type.String() != "MsgApp" || len(e.msg.Entries) != 1 {
			t.Fatalf("queued %s, want appends of one entry", e.msg.DumpState())
		}
		if e.msg.From != 1 || e.msg.To != uint64(e.to)+1 {
			t.Fatalf("a message from node %d to node %d goes from raft id %d to %d", e.from, e.to, e.msg.From, e.msg.To)
		}
		if got, want := sim.Dump(e.msg), "MsgApp t1 log=1/1 commit=1 entries=[p1@2/t1]"; got != want {
			t.Fatalf("dump %q, want %q", got, want)
		}
	}
}
