package traceview_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/systems"
	"github.com/livecheck/livecheck/traceview"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scripts under testdata/debug")

// A script block is a command line, a line "----", and the output
// expected, up to the next empty line.
type scriptBlock struct {
	cmd, want string
	line      int
}

// parseScript reads a script: blocks, with empty lines and lines starting
// with # between them.
func parseScript(t *testing.T, name, text string) []scriptBlock {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var out []scriptBlock
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s:%d: %q is not followed by a line ----", name, i+1, l)
		}
		b := scriptBlock{cmd: l, line: i + 1}
		j := i + 2
		for ; j < len(lines) && lines[j] != ""; j++ {
			b.want += lines[j] + "\n"
		}
		out = append(out, b)
		i = j
	}
	return out
}

// TestDebugScripts runs the stepper's scripts, testdata/debug/*.txt: a
// script first checks a bundled system ("check SYSTEM FLAGS..."), then
// debugs the trace the check wrote, one command a block. go test -run
// TestDebugScripts -rewrite writes the output they give as expected.
func TestDebugScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/debug/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts under testdata/debug: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var d *traceview.Stepper
			var rewritten strings.Builder
			blocks := parseScript(t, file, string(text))
			for _, b := range blocks {
				var out strings.Builder
				if cmd, ok := strings.CutPrefix(b.cmd, "check "); ok {
					d = checkForDebug(t, strings.Fields(cmd), &out)
				} else {
					if d == nil {
						t.Fatalf("%s:%d: the script must check a system first", file, b.line)
					}
					if d.Do(&out, b.cmd) {
						fmt.Fprintln(&out, "(session ended)")
					}
				}
				fmt.Fprintf(&rewritten, "%s\n----\n%s\n", b.cmd, out.String())
				if !*rewrite && out.String() != b.want {
					t.Errorf("%s:%d: %s gives\n%s\nwant\n%s", file, b.line, b.cmd, out.String(), b.want)
				}
			}
			if *rewrite {
				head, _, _ := strings.Cut(string(text), blocks[0].cmd+"\n----")
				if err := os.WriteFile(file, []byte(head+strings.TrimRight(rewritten.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkForDebug runs `livecheck check` with args, says on out what it
// found, and returns a stepper of the trace it wrote.
func checkForDebug(t *testing.T, args []string, out *strings.Builder) *traceview.Stepper {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	args = append([]string{"check"}, append(args, "-q", "--json", "--out", dir)...)
	livecheck.Run(args, &stdout, &stderr, systems.All()...)
	var rep reports.Check
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil || rep.Trace == "" {
		t.Fatalf("check %v wrote no trace: %v\n%s", args, err, stderr.String())
	}
	fmt.Fprintf(out, "%s of %s", rep.Result, rep.Property)
	if rep.Critical != nil {
		fmt.Fprintf(out, ", critical step %d of %d", rep.Critical.TraceStep, rep.PathLen)
	}
	fmt.Fprintln(out)
	sys, err := systems.Lookup(rep.System)
	if err != nil {
		t.Fatal(err)
	}
	d, err := traceview.NewStepper(sys, rep.Trace, "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The debug command steps through a trace from stdin and ends with exit
// 0; a trace file that is not one is a line on stderr and exit 2.
func TestDebugCommand(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	livecheck.Run([]string{"check", "randtree", "--bug", "RT3", "-q", "--graph", "--out", dir}, &stdout, &stderr, systems.All()...)
	graph := "\nevent graph of steps 1 to 3 (* the critical one):\n" +
		"  step  0   1\n" +
		"     1  |   T  timer start  => Join 1->0\n" +
		"     2  <---o  Join 1->0\n" +
		"*    3  |   T  timer recovery\n\nwhat step 3 changes:\n"
	if !strings.Contains(stdout.String(), graph) {
		t.Errorf("check --graph does not draw%s\n%s", graph, stdout.String())
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "randtree-single-tree-*.json"))
	if len(traces) != 1 {
		t.Fatalf("want one dead trace, got %v\n%s", traces, stderr.String())
	}
	in := filepath.Join(dir, "commands")
	if err := os.WriteFile(in, []byte("run node 1\nrun node 1\nbogus\nvs\nquit\nnext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	stdout.Reset()
	stderr.Reset()
	code := livecheck.Run([]string{"debug", traces[0]}, &stdout, &stderr, systems.All()...)
	out := stdout.String()
	if code != livecheck.ExitOK || stderr.Len() > 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{
		"randtree, 2 nodes, bugs RT3",
		"step 1 of 3: timer start at 1\n",
		"step 3 of 3 (critical): timer recovery at 1\n",
		`unknown command "bogus" (valid: step, next, prev, run, state, net, diff, vs, logs, graph, where, help, quit)`,
		"  node 1: timers: join vs join,recovery\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the session lacks %q:\n%s", want, out)
		}
	}
	// quit ends it: the next after it is not run.
	if strings.Count(out, "step 3 of 3") != 1 {
		t.Errorf("a command after quit ran:\n%s", out)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "livecheck-trace", "steps": [`), 0o644)
	stdout.Reset()
	stderr.Reset()
	code = livecheck.Run([]string{"debug", bad}, &stdout, &stderr, systems.All()...)
	if code != livecheck.ExitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "not a valid trace file") {
		t.Errorf("a bad trace: exit %d, stderr %q; want 2 and one line", code, stderr.String())
	}
}
