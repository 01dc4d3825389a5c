package cli_test

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/internal/cli"
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
		if got := cli.CommandName(tc.arg0, tc.bi); got != tc.want {
			t.Errorf("CommandName(%q) = %q, want %q", tc.arg0, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/livecheck/livecheck", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ebb9114"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := cli.Version("livecheck", bi), "livecheck github.com/livecheck/livecheck v0.3.0, revision ebb9114 of 2026-01-02T03:04:05Z with uncommitted changes, go1.26.8"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
	bi.Main.Version, bi.Settings = "", nil
	if got, want := cli.Version("lc", bi), "lc github.com/livecheck/livecheck (devel), no VCS revision recorded (built by go run or with -buildvcs=false)"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
}
