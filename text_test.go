package livecheck_test

import (
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
)

// --version prints one line, the program's name first.
func TestVersionFlag(t *testing.T) {
	var out, errs strings.Builder
	if code := livecheck.Run([]string{"--version"}, &out, &errs, echoSystem(false)); code != 0 || !strings.HasPrefix(out.String(), "livecheck ") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("--version: exit %d, %q %q", code, out.String(), errs.String())
	}
}

// pflag writes "(default x)" itself: a usage string that says its
// default too would say it twice.
func TestHelpSaysEachDefaultOnce(t *testing.T) {
	for _, cmd := range [][]string{{"check", "echo", "--help"}, {"prefix", "echo", "--help"}, {"replay", "--help"}, {"list", "--help"}} {
		var out, errs strings.Builder
		if code := livecheck.Run(cmd, &out, &errs, echoSystem(false)); code != 0 {
			t.Fatalf("%v: exit %d %s", cmd, code, errs.String())
		}
		flags := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "-") {
				flags++
			}
			if strings.Count(l, "default") > 1 {
				t.Errorf("%v: default said twice: %s", cmd, l)
			}
		}
		if flags < 1 {
			t.Errorf("%v: %d flags in\n%s", cmd, flags, out.String())
		}
	}
}
