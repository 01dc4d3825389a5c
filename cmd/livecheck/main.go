// Command livecheck checks distributed protocols for safety and liveness
// bugs: livecheck.Main with the bundled systems.
//
//	livecheck list [--json]
//	livecheck check SYSTEM [flags]
//	livecheck prefix SYSTEM [flags]
//	livecheck replay TRACE [--json]
//
// Exit status: 0 nothing found, 1 violation found, 2 usage or input error,
// 3 inconclusive.
package main

import (
	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems"
)

func main() { livecheck.Main(systems.All()...) }
