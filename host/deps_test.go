package host

import (
	"os/exec"
	"strings"
	"testing"
)

// host/ is the node's side of a real run: it links none of the checker
// (issue 37, item 7), so that a node `livecheck run` starts, or a user's
// own binary, carries the system and the transport alone. What happens
// to a run afterwards is package runlog's.
func TestHostImportsNoChecker(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's imports")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var mine []string
	for _, p := range strings.Fields(string(out)) {
		if rest, ok := strings.CutPrefix(p, "github.com/livecheck/livecheck/"); ok {
			mine = append(mine, rest)
		}
	}
	allowed := map[string]bool{"host": true, "sim": true, "protocol": true, "properties": true, "internal/gid": true}
	for _, p := range mine {
		if !allowed[p] {
			t.Errorf("host imports %s (all it imports of livecheck: %v); what needs the checker belongs in runlog", p, mine)
		}
	}
}
