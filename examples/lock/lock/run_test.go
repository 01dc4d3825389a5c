package lock_test

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/host"
)

// The System that TestLock checks is the one that runs: the same
// package, built once, runs as three nodes over UDP on loopback, and
// every client gets the lock.
func TestLockRunsForReal(t *testing.T) {
	t.Parallel()
	c, err := host.StartCluster(&lock.System, livecheck.Config{Nodes: 3}, host.ClusterOptions{Data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	start := time.Now()
	for !c.Holds(c.State()) {
		if time.Since(start) > time.Minute {
			t.Fatal("the clients were not all served within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
