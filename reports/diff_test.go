package reports

import (
	"fmt"
	"testing"
)

// Dumps are compared field by field: a struct's fields, the words of a
// DumpState line and the timers, and each layer's fields of a stacked
// node, named after the layer (two layers may have fields of one name).
func TestDiffFields(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"Node{A:1 B:2}", "Node{A:1 B:3}", "[B: 2 -> 3]"},
		{"joining parent=1", "joined parent=2", "[joining -> joined parent: 1 -> 2]"},
		{"Node{A:1} timers=x", "Node{A:1}", "[timers: x -> (none)]"},
		{"transport:{Next:1 Out:[{Conn:1}]} app:{Next:1 Got:[]}", "transport:{Next:2 Out:[{Conn:1}]} app:{Next:1 Got:[1]}",
			"[transport.Next: 1 -> 2 app.Got: [] -> [1]]"},
		{"tree:{joining parent=1} app:{N:1}", "tree:{joined parent=1} app:{N:1} timers=tree/t", "[tree: joining -> joined timers: (none) -> tree/t]"},
		{"Node{A:{B:1}}", "Node{A:{B:2}}", "[A: {B:1} -> {B:2}]"},
	} {
		if got := fmt.Sprint(DiffFields(tc.a, tc.b)); got != tc.want {
			t.Errorf("DiffFields(%q, %q) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}
