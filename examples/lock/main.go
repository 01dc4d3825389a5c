// Command lock is the livecheck command for the lease-based lock service
// of package lock: livecheck.Main gives it every subcommand.
//
//	go run ./examples/lock check lock
//	go run ./examples/lock check lock --bug early-release
//	go run ./examples/lock replay TRACE
package main

import (
	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/examples/lock/lock"
)

func main() { livecheck.Main(&lock.System) }
