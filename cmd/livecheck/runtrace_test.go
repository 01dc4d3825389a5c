package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real run's trace that ends neither live nor at a violation (trace or
// snapshot of a stuck cluster) records result "run" and the liveness
// properties that do not hold at its end: replay reads it and reproduces
// it where its end is not live; where the replay shows more (nothing can
// happen there) it says so and exits 1. A property that is not one of the
// system's liveness properties is refused.
func TestRunTrace(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "check", "lcr", "--bug", "ignore-early", "--json", "--out", dir)
	if code != exitViolation {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	var r struct{ Trace string }
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Trace == "" {
		t.Fatalf("no trace in %s (%v)", out, err)
	}
	orig, err := os.ReadFile(r.Trace)
	if err != nil {
		t.Fatal(err)
	}
	asRun := strings.Replace(string(orig), `"result": "liveness-violation"`, `"result": "run"`, 1)
	if asRun == string(orig) {
		t.Fatal("the trace records no liveness violation to rewrite")
	}
	f := filepath.Join(dir, "run.json")
	if err := os.WriteFile(f, []byte(asRun), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "replay", f)
	if code != exitViolation || !strings.Contains(out, "reproduced: the run ends where elected does not hold, and the replay shows it never can again") {
		t.Fatalf("replay of a run: exit %d\n%s%s", code, out, errs)
	}
	bogus := strings.Replace(asRun, `"property": "elected"`, `"property": "bogus"`, 1)
	if err := os.WriteFile(f, []byte(bogus), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "replay", f)
	if want := `a run trace names liveness properties of this system (elected), not "bogus"`; code != 2 || !strings.Contains(errs, want) {
		t.Fatalf("replay: exit %d, stderr %q; want exit 2 and %q", code, errs, want)
	}

	// Cut to its first step: not live, and things can still happen: no
	// violation shown, exit 0.
	var doc map[string]any
	if err := json.Unmarshal([]byte(asRun), &doc); err != nil {
		t.Fatal(err)
	}
	steps := doc["steps"].([]any)
	doc["steps"] = steps[:1]
	for _, k := range []string{"critical", "dead_test", "live_path", "slip", "odds"} {
		delete(doc, k)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "replay", f)
	if code != 0 || !strings.Contains(out, "reproduced: the run ends where elected does not hold; a run cut short shows no liveness violation") {
		t.Fatalf("replay of a run cut short: exit %d\n%s%s", code, out, errs)
	}
}
