package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/host"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/systems/ring"
)

// A safety violation the watcher saw in the states as they arrived is
// judged at the end on the run's logs merged in causal order: withdrawn
// where their replay reaches none (the watcher paired states of
// different moments), kept where the logs cannot show it, and a live
// check's finding always kept.
func TestClusterConfirmsOnConsistentView(t *testing.T) {
	dir := t.TempDir()
	cl, err := host.StartCluster(&ring.System, protocol.Config{Nodes: 3}, host.ClusterOptions{Seed: 1, LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Until every node has logged some steps (generous: a busy machine).
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := 0
		for i := range 3 {
			data, _ := os.ReadFile(filepath.Join(dir, "node-"+string(rune('0'+i))+".log"))
			if bytes.Count(data, []byte("\n")) >= 8 {
				n++
			}
		}
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			cl.Stop()
			t.Fatal("the ring's nodes logged too little in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cl.Stop()

	judge := func(found bool) (bool, string) {
		var out bytes.Buffer
		cw := &clusterWatch{c: &command{stdout: &out}, procs: &procs{dir: dir, sys: &ring.System}, violated: true, seen: true, found: found}
		cw.confirm()
		return cw.violated, out.String()
	}
	if v, out := judge(false); v || !strings.HasPrefix(out, "no violation on a consistent view: the run's logs, merged in causal order, replay in ") {
		t.Fatalf("the correct ring's run: violated %v, said %q", v, out)
	}
	if v, out := judge(true); !v || !strings.HasPrefix(out, "no violation on a consistent view") {
		t.Fatalf("with a live check's finding: violated %v, said %q; the finding stands", v, out)
	}
	// A log with an entry deleted cannot confirm anything: what the
	// watcher saw stands.
	name := filepath.Join(dir, "node-1.log")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(name, []byte(strings.Join(append(lines[:3:3], lines[4:]...), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, out := judge(false); !v || !strings.HasPrefix(out, "the safety violation seen stands: the run logs ") {
		t.Fatalf("a tampered log: violated %v, said %q", v, out)
	}
}
