package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A PropertyCase is one property of a checked system, by name and kind
// ("safety", "liveness", "reachability"): a test case of the JUnit report.
type PropertyCase struct {
	Name, Kind string
}

// JUnit is a check's JUnit XML report, as CI systems read it.
type JUnit struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// A JUnitSuite is the check of one system: a test case per property.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// A JUnitProperty is one setting of the check.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// A JUnitCase is one property: passed (neither Failure nor Skipped),
// failed, or skipped where the check did not decide it.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *JUnitFailure `xml:"failure"`
	Skipped   *JUnitSkipped `xml:"skipped"`
}

// A JUnitFailure is a violation: its kind, its message and the report.
type JUnitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",cdata"`
}

// JUnitSkipped says why a property was not decided.
type JUnitSkipped struct {
	Message string `xml:"message,attr"`
}

// NewJUnit makes the JUnit report of check c of a system with the
// properties props; text is the report for people, the failure's text.
//
// A violated property fails (a liveness violation fails each liveness
// property it names; a finding of no property of the system, a handler
// that panics or hangs, is a case of its own). The others pass, but
// where the check did not decide them: after a safety violation the
// search stopped, so the other properties are skipped; an inconclusive
// check skips all it did not find violated; local mode and --no-walks
// skip liveness (local mode also reachability). A reachability property
// the check never reached fails, as livecheck.Test fails on it: the check
// may be vacuous.
func NewJUnit(c *Check, props []PropertyCase, text string) *JUnit {
	suite := JUnitSuite{Name: "livecheck check " + c.System, Time: seconds(c)}
	suite.Properties = []JUnitProperty{
		{"config", DescribeConfig(c.System, c.Nodes, c.Bugs, c.Params, c.Budget)},
		{"depth", fmt.Sprint(c.Depth)}, {"seed", fmt.Sprint(c.Seed)}, {"mode", c.Mode}, {"result", c.Result},
	}
	if c.Trace != "" {
		suite.Properties = append(suite.Properties, JUnitProperty{"trace", c.Trace})
	}
	violated := []string{}
	if c.Property != "" && c.Result != "ok" && c.Result != "inconclusive" {
		violated = strings.Split(c.Property, ",")
		if c.Result != "liveness-violation" {
			violated = []string{c.Property}
		}
	}
	reached := map[string]Sometimes{}
	for _, s := range c.Sometimes {
		reached[s.Name] = s
	}
	walked := c.Exhausted || c.Liveness != nil && c.Liveness.Walks > 0
	// stopped: the check ended at its finding, before it had decided
	// the other properties.
	stopped := c.Result == "safety-violation" || c.Result == "property-error"
	for _, v := range violated {
		if !slices.ContainsFunc(props, func(p PropertyCase) bool { return p.Name == v }) {
			// Not a property of the system: a handler that panicked
			// or never returned, or a system that stopped.
			kind := "safety"
			if c.Result == "liveness-violation" {
				kind = "liveness"
			}
			props = append(props, PropertyCase{Name: v, Kind: kind})
			stopped = true
		}
	}
	for _, p := range props {
		tc := JUnitCase{Name: p.Name, Classname: c.System + "." + p.Kind}
		skip := func(why string) { tc.Skipped = &JUnitSkipped{Message: why} }
		switch {
		case slices.Contains(violated, p.Name):
			tc.Failure = &JUnitFailure{Type: c.Result, Message: c.Message, Text: text}
		case c.Result == "inconclusive":
			skip("inconclusive: " + c.Message)
		case stopped && p.Kind != "reachability":
			skip(fmt.Sprintf("not checked to the end: the check stopped at the %s of %s", c.Result, c.Property))
		case p.Kind == "liveness" && c.Local != nil:
			skip("local mode checks safety only")
		case p.Kind == "liveness" && c.Result == "ok" && !walked:
			skip("no walks ran: liveness was checked only where nothing can happen any more")
		case p.Kind == "reachability":
			s := reached[p.Name]
			switch {
			case s.NotEvaluated:
				skip("not evaluated in local mode")
			case !s.Reached && c.Result == "ok":
				tc.Failure = &JUnitFailure{Type: "never-reached", Message: "sometimes " + p.Name + ": never reached: the check may be vacuous", Text: text}
			case !s.Reached:
				skip("not reached before the check stopped at the " + c.Result)
			}
		}
		switch {
		case tc.Failure != nil:
			suite.Failures++
		case tc.Skipped != nil:
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	suite.Tests = len(suite.Cases)
	return &JUnit{Name: "livecheck", Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped, Time: suite.Time, Suites: []JUnitSuite{suite}}
}

// seconds is the time a check took, in seconds, as JUnit writes it.
func seconds(c *Check) string {
	ms := c.Stats.ElapsedMS
	if l := c.Liveness; l != nil {
		ms += l.ElapsedMS
	}
	return fmt.Sprintf("%.3f", float64(ms)/1000)
}

// Write writes the report as an XML document.
func (j *JUnit) Write(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(j); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
