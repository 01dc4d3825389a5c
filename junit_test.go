package livecheck_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/systems"
)

// check --junit writes a JUnit file that reads back with a case per
// property of randtree: single-tree failed with the report as its text,
// the safety properties passed; nothing else is left in its directory.
func TestCheckJUnit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ci", "junit.xml")
	var stdout, stderr strings.Builder
	code := livecheck.Run([]string{"check", "randtree", "--bug", "RT3", "-q", "--out", dir, "--junit", file}, &stdout, &stderr, systems.All()...)
	if code != livecheck.ExitViolation {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var j reports.JUnit
	if err := xml.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Suites) != 1 || j.Tests != 3 || j.Failures != 1 || j.Skipped != 0 {
		t.Fatalf("suites %d, tests %d, failures %d, skipped %d; want 1, 3, 1, 0:\n%s", len(j.Suites), j.Tests, j.Failures, j.Skipped, data)
	}
	got := map[string]string{}
	for _, c := range j.Suites[0].Cases {
		got[c.Classname+" "+c.Name] = "passed"
		if f := c.Failure; f != nil {
			got[c.Classname+" "+c.Name] = f.Type
			if !strings.Contains(f.Text, "critical transition (case C1, the point of no return): step 3 of 3\n") || !strings.Contains(f.Message, "single-tree never holds on this path, and can no longer after step 3") {
				t.Errorf("failure of %s: message %q, text\n%s", c.Name, f.Message, f.Text)
			}
		}
	}
	want := map[string]string{"randtree.liveness single-tree": "liveness-violation", "randtree.safety no-loops": "passed", "randtree.safety recovery-timer": "passed"}
	if len(got) != len(want) {
		t.Errorf("cases %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	left, _ := os.ReadDir(filepath.Dir(file))
	if len(left) != 1 {
		t.Errorf("the JUnit directory holds %d files, want only junit.xml", len(left))
	}
}
