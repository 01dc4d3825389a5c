package livecheck

import (
	"fmt"
	"io"
	"strings"
)

// WriteSteps writes replayed steps for people, one a line, numbered from
// 1, with the messages each sent, its log lines and the violation it
// showed.
func WriteSteps(w io.Writer, steps []ReplayStep) {
	for _, st := range steps {
		fmt.Fprintf(w, "  %3d. %s", st.Index+1, st.Text)
		if len(st.Sent) > 0 {
			fmt.Fprintf(w, "  => sends %s", strings.Join(st.Sent, ", "))
		}
		fmt.Fprintln(w)
		for _, l := range st.Logs {
			fmt.Fprintf(w, "         log %s\n", l)
		}
		if st.Violation != "" {
			fmt.Fprintf(w, "         !! %s\n", st.Violation)
		}
	}
}
