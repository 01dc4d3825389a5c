package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// A violation whose trace cannot be written is still reported: the report
// on stdout, exit 1, and on stderr why there is no trace.
func TestTraceUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{true, false} {
		args := []string{"check", "lcr", "--nodes", "3", "--bug", "no-discard", "--out", file}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, errs := runCLI(t, args...)
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1\n%s%s", args, code, out, errs)
		}
		if !strings.Contains(errs, "the trace could not be written") || !strings.Contains(errs, "a-file") {
			t.Errorf("%v: stderr does not say why there is no trace: %q", args, errs)
		}
		if asJSON {
			var r checkJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			if r.Result != "safety-violation" || r.Property == "" || r.Trace != "" {
				t.Errorf("%v: %+v", args, r)
			}
		} else if !strings.HasPrefix(strings.SplitN(out, "\n\n", 2)[1], "safety-violation of ") || strings.Contains(out, "replay it") {
			t.Errorf("%v: report:\n%s", args, out)
		}
	}
}

// signalled is a stderr that says when the check first reports progress:
// by then it watches for signals.
type signalled struct {
	mu    sync.Mutex
	b     strings.Builder
	once  sync.Once
	ready chan struct{}
}

func (s *signalled) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.Contains(string(p), "livecheck: ") {
		s.once.Do(func() { close(s.ready) })
	}
	return s.b.Write(p)
}

// SIGTERM ends a check as Ctrl-C does: a partial report, exit 3.
func TestSIGTERMStopsWithPartialReport(t *testing.T) {
	e := &signalled{ready: make(chan struct{})}
	var out strings.Builder
	done := make(chan int)
	go func() {
		// Far more than the search can finish: it runs until stopped.
		// (Text, not --json: JSON to a pipe silences the progress lines
		// this waits for.)
		done <- run([]string{"check", "ring", "--nodes", "5", "--depth", "40", "--time", "0", "--out", t.TempDir()}, &out, e)
	}()
	select {
	case <-e.ready:
	case code := <-done:
		t.Fatalf("the check ended by itself, exit %d:\n%s", code, out.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := <-done
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, out.String())
	}
	if !regexp.MustCompile(`\ninconclusive: the check was interrupted: every state within [0-9]+ steps explored \([1-9][0-9,]* states\), no violation; depth [0-9]+ partly explored(: [0-9,]+ states? found from [0-9,]+ of those at depth [0-9]+)?\n`).MatchString(out.String()) {
		t.Fatalf("partial report:\n%s", out.String())
	}
}

// A check that outgrows --max-memory ends inconclusive (exit 3) with its
// partial report, in global and in local mode, instead of dying in the
// runtime's "out of memory" with no report at all.
func TestMaxMemory(t *testing.T) {
	for _, args := range [][]string{
		{"check", "paxos", "--nodes", "4", "--proposers", "2", "--mode", "local", "--max-memory", "100MB"},
		{"check", "paxos", "--nodes", "3", "--proposers", "2", "--max-memory", "100MB"},
	} {
		code, out, errs := runCLI(t, append(args, "--json", "--out", t.TempDir())...)
		if code != 3 {
			t.Fatalf("%v: exit %d, want 3\n%s%s", args, code, out, errs)
		}
		var r struct {
			Result      string
			Message     string
			MemoryLimit bool  `json:"memory_limit"`
			MaxMemory   int64 `json:"max_memory_bytes"`
			Complete    bool
			Stats       struct{ States int }
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if r.Result != "inconclusive" || !r.MemoryLimit || r.MaxMemory != 100e6 || r.Complete || r.Stats.States == 0 ||
			!strings.HasPrefix(r.Message, "the check reached its memory limit (--max-memory 100 MB;") {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	code, _, errs := runCLI(t, "check", "lcr", "--max-memory", "12XB")
	if code != 2 || errs != "livecheck check: --max-memory: \"12XB\" has an unknown unit \"XB\" (valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)\n" {
		t.Fatalf("bad size: exit %d %q", code, errs)
	}
}
