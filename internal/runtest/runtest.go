// Package runtest holds what host's external tests and runlog's tests
// share to run a system for real and look at the run afterwards: a
// cluster the test stops, its run logs merged and replayed. host's own
// (internal) tests cannot import it, since it imports host; what they
// share with it is in package hosttest.
package runtest

import (
	"testing"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/internal/hosttest"
	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/runlog"
	"github.com/livecheck/livecheck/sim"
)

// Start starts a cluster that the test stops, its log shown if the test
// fails (co.Log, if not set).
func Start(t testing.TB, sys *protocol.System, cfg protocol.Config, co host.ClusterOptions) *host.Cluster {
	t.Helper()
	if co.Log == nil {
		co.Log = hosttest.NewLog(t)
	}
	c, err := host.StartCluster(sys, cfg, co)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// StartSystem starts 3 nodes of sys (Start), their log in the LogBuf.
func StartSystem(t testing.TB, sys *protocol.System, co host.ClusterOptions) (*host.Cluster, *hosttest.LogBuf) {
	l := hosttest.NewLog(t)
	co.Log = l
	return Start(t, sys, protocol.Config{Nodes: 3}, co), l
}

// StartPingers starts 3 pingers (hosttest.Pingers).
func StartPingers(t testing.TB, co host.ClusterOptions) (*host.Cluster, *hosttest.LogBuf) {
	return StartSystem(t, &hosttest.Pingers, co)
}

// Live waits until the cluster's liveness properties hold, then checks
// that its safety properties do too.
func Live(t testing.TB, c *host.Cluster) {
	t.Helper()
	var s *sim.State
	hosttest.WaitFor(t, c.System.Name+"'s liveness property", func() bool {
		s = c.State()
		return c.Holds(s)
	})
	for _, st := range host.Status(c.Model.Properties, s) {
		if st.Kind == properties.Safety && !st.Holds {
			t.Errorf("%s: %s", st.Name, st.Why)
		}
	}
	for i, n := range c.Nodes {
		if err := n.Err(); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
}

// Got is the pings a node of hosttest.Pingers got.
func Got(n *host.Node) int { return n.State().(*hosttest.Pinger).Got }

// MorePings waits until every pinger of c has got k more pings than now.
func MorePings(t testing.TB, c *host.Cluster, k int, what string) {
	t.Helper()
	base := make([]int, len(c.Nodes))
	for i, n := range c.Nodes {
		base[i] = Got(n)
	}
	hosttest.WaitFor(t, what, func() bool {
		for i, n := range c.Nodes {
			if Got(n) < base[i]+k {
				return false
			}
		}
		return true
	})
}

// MergeDir merges the run logs in dir; it fails the test where they
// cannot be read or merged.
func MergeDir(t testing.TB, dir string) *runlog.Merged {
	t.Helper()
	logs, err := runlog.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runlog.Merge(logs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ReplayDir merges the run logs in dir and replays them on sys; it fails
// the test where the logs cannot be read or merged.
func ReplayDir(t testing.TB, dir string, sys *protocol.System) (*runlog.RunReplay, error) {
	t.Helper()
	return runlog.Replay(MergeDir(t, dir), sys)
}

// LoggedKinds counts the entries of the run logs in dir by kind.
func LoggedKinds(t testing.TB, dir string) map[string]int {
	t.Helper()
	logs, err := runlog.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := map[string]int{}
	for _, l := range logs {
		for _, e := range l.Entries {
			k[e.Kind]++
		}
	}
	return k
}
