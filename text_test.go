package livecheck_test

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/livecheck/livecheck"
)

// The replay hint names a command that works: the program as invoked,
// or `go run` of its main package when `go run` built it.
func TestCommandName(t *testing.T) {
	bi := &debug.BuildInfo{Path: "github.com/livecheck/livecheck/cmd/livecheck", Main: debug.Module{Path: "github.com/livecheck/livecheck"}}
	root := &debug.BuildInfo{Path: "example.com/lock", Main: debug.Module{Path: "example.com/lock"}}
	other := &debug.BuildInfo{Path: "example.com/tool/cmd/x", Main: debug.Module{Path: "github.com/livecheck/livecheck"}}
	hash := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		arg0 string
		bi   *debug.BuildInfo
		want string
	}{
		{"livecheck", bi, "livecheck"},
		{"./bin/livecheck", bi, "./bin/livecheck"},
		{"/usr/local/bin/lc", bi, "/usr/local/bin/lc"},
		{"/tmp/go-build1820983351/b001/exe/livecheck", bi, "go run ./cmd/livecheck"},
		{"/root/.cache/go-build/54/" + hash + "-d/livecheck", bi, "go run ./cmd/livecheck"},
		{"/tmp/go-build77/b001/exe/lock", root, "go run ."},
		{"/tmp/go-build77/b001/exe/x", other, "go run example.com/tool/cmd/x"},
		{"/tmp/go-build77/b001/exe/x", nil, "go run ."},
		{"/home/me/exe/livecheck", bi, "/home/me/exe/livecheck"}, // an exe directory, not go run's
		{"/tmp/__debug_bin123", bi, "livecheck"},
	} {
		if got := livecheck.CommandName(tc.arg0, tc.bi); got != tc.want {
			t.Errorf("CommandName(%q) = %q, want %q", tc.arg0, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/livecheck/livecheck", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ebb9114"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := livecheck.Version("livecheck", bi), "livecheck github.com/livecheck/livecheck v0.3.0, revision ebb9114 of 2026-01-02T03:04:05Z with uncommitted changes, go1.26.8"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
	bi.Main.Version, bi.Settings = "", nil
	if got, want := livecheck.Version("lc", bi), "lc github.com/livecheck/livecheck (devel), no VCS revision recorded (built by go run or with -buildvcs=false)"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
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
