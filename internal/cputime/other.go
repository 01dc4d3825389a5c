//go:build !unix

package cputime

import "time"

// Process says it cannot tell where the system does not give a process's
// CPU time as Unix's getrusage does.
func Process() (time.Duration, bool) { return 0, false }
