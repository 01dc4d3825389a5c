package livecheck

import (
	"io"
	"strings"

	"github.com/livecheck/livecheck/reports"
)

// PropertyCases lists the properties of a system's configuration, by name
// and kind, in the system's order: the test cases of a JUnit report.
func PropertyCases(sys *System, cfg Config) []reports.PropertyCase {
	_, m, err := sys.Model(cfg)
	if err != nil {
		return nil
	}
	out := make([]reports.PropertyCase, len(m.Properties))
	for i, p := range m.Properties {
		out[i] = reports.PropertyCase{Name: p.Name, Kind: p.Kind.String()}
	}
	return out
}

// writeJUnit writes the JUnit report of a check to file, atomically, with
// its text report as the failures' text.
func writeJUnit(file string, sys *System, res *Result, rep *reports.Check) error {
	var text strings.Builder
	reports.WriteCheck(&text, rep, false)
	j := reports.NewJUnit(rep, PropertyCases(sys, res.Config), text.String())
	return reports.WriteFileAtomic(file, func(w io.Writer) error { return j.Write(w) })
}
