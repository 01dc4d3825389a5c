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
