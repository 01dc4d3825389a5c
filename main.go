package livecheck

import (
	"io"

	"github.com/livecheck/livecheck/internal/cli"
)

// The exit status of Main and Run.
const (
	ExitOK           = cli.ExitOK           // nothing found
	ExitViolation    = cli.ExitViolation    // a violation found, or a trace replays to it
	ExitUsage        = cli.ExitUsage        // a usage or input error, or a broken property
	ExitInconclusive = cli.ExitInconclusive // the check was cut short before it could tell
)

// Main is the livecheck command for the systems given: a program whose
// main calls it gets every subcommand of cmd/livecheck (list, check,
// prefix, replay) with the same flags, output and exit status, for its
// own systems. It does not return.
//
//	func main() { livecheck.Main(&lock.System) }
//
// Then `go run . check lock --bug early-release` checks it, and `go run .
// replay FILE` replays the trace it writes.
func Main(systems ...*System) { cli.Main(systems...) }

// Run is Main without the exit: it runs the command line args (without
// the program's name) for the systems given, writes to stdout and stderr,
// and returns the exit status (ExitOK and the rest).
func Run(args []string, stdout, stderr io.Writer, systems ...*System) int {
	return cli.Run(args, stdout, stderr, systems...)
}
