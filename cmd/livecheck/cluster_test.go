package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems"
)

// Two bundled systems run for real as clusters of processes on
// loopback, over TCP: the ring forms, RandTree forms one tree (its
// parameter peers, a flag of run's own name, goes to the nodes as
// --param-peers).
func TestClusterBundled(t *testing.T) {
	t.Setenv(asCommand, "1") // for the node processes cluster starts
	for _, args := range [][]string{
		{"cluster", "ring", "--nodes", "4"},
		{"cluster", "randtree", "--peers", "all"},
	} {
		var o, e bytes.Buffer
		code := livecheck.Run(append(args, "--until-live", "--for", "2m", "--states=false"), &o, &e, systems.All()...)
		if code != livecheck.ExitOK || !strings.Contains(o.String(), "every liveness property holds") || strings.Contains(o.String(), "VIOLATED") {
			t.Errorf("%v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, o.String(), e.String())
		}
	}
}

// Live checks: the ring runs as a cluster and, every half second, a
// snapshot of it is checked in the background. The correct ring's
// checks find nothing; with rejoin-self (seconds of CPU: not with
// -short) a check finds the violation the cluster can reach from where
// it is, with its trace, and the cluster exits 1.
func TestClusterCheckEvery(t *testing.T) {
	t.Setenv(asCommand, "1")
	for _, c := range []struct {
		bugs []string
		code int
		want string
	}{
		{nil, livecheck.ExitOK, "live check 1: snapshot 1 (0 nodes down"},
		{[]string{"--bug", "rejoin-self"}, livecheck.ExitViolation, "reachable from where the cluster is: ring-formed can never hold again"},
	} {
		if c.bugs != nil && testing.Short() {
			continue
		}
		var o, e bytes.Buffer
		args := append([]string{"cluster", "ring", "--nodes", "3", "--for", "2s", "--check-every", "500ms", "--check-time", "20s",
			"--states=false", "--data", t.TempDir()}, c.bugs...)
		code := livecheck.Run(args, &o, &e, systems.All()...)
		if code != c.code || !strings.Contains(o.String(), c.want) {
			t.Errorf("%v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, o.String(), e.String())
		}
		t.Logf("%v:\n%s", args, o.String())
	}
}
