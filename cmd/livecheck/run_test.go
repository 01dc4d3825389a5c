package main

import (
	"io"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/systems"
)

// The exit status, as the tests name it.
const (
	exitOK           = livecheck.ExitOK
	exitViolation    = livecheck.ExitViolation
	exitUsage        = livecheck.ExitUsage
	exitInconclusive = livecheck.ExitInconclusive
)

// lookup gives the systems the command knows; a test adds its own.
var lookup = systems.All

// run is the command as main runs it.
func run(args []string, stdout, stderr io.Writer) int {
	return livecheck.Run(args, stdout, stderr, lookup()...)
}
