package reports

import (
	"fmt"
	"strings"
	"testing"
)

// A step's changes: the node lines that change with their fields, and
// the messages that leave and enter flight, counted as a multiset.
func TestHTMLGraphStateStep(t *testing.T) {
	g := NewGraphState([]string{"joining root=-1", "idle"}, []string{"Probe{} 1->0", "Probe{} 1->0"})
	var st GraphStep
	g.Step(&st, []string{"joined root=2", "idle"}, []string{"Probe{} 1->0", "Join{} 0->1"})
	got := fmt.Sprint(st.Changes, st.NetOut, st.NetIn)
	want := "[{0 joined root=2 [joining -> joined root: -1 -> 2]}] [Probe{} 1->0] [Join{} 0->1]"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// The next step diffs against the state after this one.
	var st2 GraphStep
	g.Step(&st2, []string{"joined root=2", "idle"}, []string{"Probe{} 1->0", "Join{} 0->1"})
	if st2.Changes != nil || st2.NetIn != nil || st2.NetOut != nil {
		t.Errorf("a step that changes nothing: %+v", st2)
	}
}

// Text from the system (a message, a node's state) cannot end the page's
// script elements or add markup to its title.
func TestHTMLEscapesData(t *testing.T) {
	evil := `</script><script>alert(1)</script>`
	g := &Graph{Title: "<b>" + evil, Message: evil, Nodes: 1,
		Dead: GraphPath{Init: []string{evil}, Steps: []GraphStep{{Kind: "timer", Text: evil, Peer: -1, From: -1}}}}
	var b strings.Builder
	if err := WriteHTML(&b, g); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script> in the page, want 2 (the data's and the script's)", n)
	}
	if !strings.Contains(page, "<title>&lt;b&gt;&lt;/script&gt;") {
		t.Errorf("the title is not escaped")
	}
	// Nothing to fetch: no URL but the SVG namespace's, no src or href.
	if strings.Count(page, "http://") != strings.Count(page, "http://www.w3.org/2000/svg") || strings.Contains(page, "https://") ||
		strings.Contains(page, "src=") || strings.Contains(page, "href=") {
		t.Errorf("the page refers to something outside it")
	}
}
