package cli

import (
	"io"
	"strings"

	"github.com/livecheck/livecheck/check"

	"github.com/livecheck/livecheck/protocol"

	"github.com/livecheck/livecheck/reports"
)

// writeJUnit writes the JUnit report of a check to file, atomically, with
// its text report as the failures' text.
func writeJUnit(file string, sys *protocol.System, res *check.Result, rep *reports.Check) error {
	var text strings.Builder
	reports.WriteCheck(&text, rep, false)
	j := reports.NewJUnit(rep, check.PropertyCases(sys, res.Config), text.String())
	return reports.WriteFileAtomic(file, func(w io.Writer) error { return j.Write(w) })
}
