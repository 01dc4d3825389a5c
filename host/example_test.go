package host_test

import (
	"fmt"
	"os"
	"time"

	"github.com/livecheck/livecheck/examples/lock/lock"
	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
)

// The lock service that the checker checks runs as three nodes on
// loopback, over UDP, with its durable fields on disk; a node that
// crashes comes back with them.
func ExampleStartCluster() {
	dir, _ := os.MkdirTemp("", "lock")
	defer os.RemoveAll(dir)
	c, err := host.StartCluster(&lock.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Data: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Stop()
	for deadline := time.Now().Add(time.Minute); !c.Holds(c.State()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			fmt.Println("not live within a minute")
			return
		}
	}
	fmt.Println("every client had the lock")
	lease := c.Nodes[0].State().(*lock.Server).Lease
	c.Restart(0) // a crash and restart: the simulator's reset
	fmt.Println("the server's lease count survives its restart:", c.Nodes[0].State().(*lock.Server).Lease == lease)
	// Output:
	// every client had the lock
	// the server's lease count survives its restart: true
}
