package reports

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// Each kind of result gives each property the case it should: failed,
// skipped with why, or passed; and the XML reads back to the same.
func TestJUnit(t *testing.T) {
	props := []PropertyCase{{"no-loops", "safety"}, {"single-tree", "liveness"}, {"formed", "reachability"}}
	reached := []Sometimes{{Name: "formed", Reached: true, Step: 3, By: "search"}}
	never := []Sometimes{{Name: "formed", Step: -1}}
	for _, tc := range []struct {
		name string
		c    Check
		want string // each case: p(assed), f(ailed) or s(kipped)
	}{
		{"ok", Check{Result: "ok", Exhausted: true, Sometimes: reached}, "ppp"},
		{"ok-unreached", Check{Result: "ok", Exhausted: true, Sometimes: never}, "ppf"},
		{"ok-no-walks", Check{Result: "ok", Sometimes: reached}, "psp"},
		{"liveness", Check{Result: "liveness-violation", Property: "single-tree", Sometimes: reached, Liveness: &Liveness{Walks: 3}}, "pfp"},
		{"safety", Check{Result: "safety-violation", Property: "no-loops", Sometimes: never}, "fss"},
		{"panic", Check{Result: "safety-violation", Property: "handler-panic", Sometimes: reached}, "sspf"},
		{"inconclusive", Check{Result: "inconclusive", Message: "stopped by --max-states", Sometimes: never}, "sss"},
		{"local", Check{Result: "ok", Exhausted: true, Local: &Local{}, Sometimes: []Sometimes{{Name: "formed", NotEvaluated: true}}}, "pss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.System = "randtree"
			var b bytes.Buffer
			if err := NewJUnit(&tc.c, props, "the report\n]]> and more").Write(&b); err != nil {
				t.Fatal(err)
			}
			var j JUnit
			if err := xml.Unmarshal(b.Bytes(), &j); err != nil {
				t.Fatalf("%v\n%s", err, b.String())
			}
			got := ""
			fails, skips := 0, 0
			for _, c := range j.Suites[0].Cases {
				switch {
				case c.Failure != nil:
					got += "f"
					fails++
					if c.Failure.Text != "the report\n]]> and more" {
						t.Errorf("%s: failure text %q", c.Name, c.Failure.Text)
					}
				case c.Skipped != nil:
					got += "s"
					skips++
					if c.Skipped.Message == "" {
						t.Errorf("%s: skipped without saying why", c.Name)
					}
				default:
					got += "p"
				}
			}
			if got != tc.want {
				t.Errorf("cases %s, want %s:\n%s", got, tc.want, b.String())
			}
			if s := j.Suites[0]; j.Tests != len(tc.want) || s.Tests != len(tc.want) || s.Failures != fails || j.Failures != fails || s.Skipped != skips {
				t.Errorf("counts: tests %d/%d failures %d/%d skipped %d, want %d, %d, %d", j.Tests, s.Tests, j.Failures, s.Failures, s.Skipped, len(tc.want), fails, skips)
			}
			if !strings.HasPrefix(b.String(), xml.Header) {
				t.Errorf("no XML header")
			}
		})
	}
}
