package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteGraph draws steps as an event graph for the terminal: one lane
// per node of n, time going down, a row per step. A delivery is an arrow
// from the sender's lane to the receiver's (o---> or <---o), a drop the
// same ending in x, a duplication ending in 2; a timer is T, a driver
// call A, a reset R, a crash C, a socket error E at both ends joined by =, a
// partition P (at the lowest node it cuts off) and its heal H (at node
// 0). Each row ends with what the step was, and the messages it sent (=>
// their types). The step numbered mark is marked * (0: none). Plain
// ASCII, so that it survives pipes and logs.
func WriteGraph(w io.Writer, n int, steps []Step, mark int) {
	if n < 1 || len(steps) == 0 {
		return
	}
	width := max(4, len(strconv.Itoa(n-1))+2)
	numWidth := max(4, len(Thousands(steps[len(steps)-1].Step)))
	var b strings.Builder
	b.WriteString("  ")
	b.WriteString(fmt.Sprintf("%*s  ", numWidth, "step"))
	for i := range n {
		b.WriteString(fmt.Sprintf("%-*d", width, i))
	}
	writeTrimmed(w, b.String())
	lanes := make([]byte, (n-1)*width+1)
	for _, st := range steps {
		for i := range lanes {
			lanes[i] = ' '
			if i%width == 0 {
				lanes[i] = '|'
			}
		}
		label := drawStep(lanes, width, n, st)
		b.Reset()
		if st.Step == mark {
			b.WriteString("* ")
		} else {
			b.WriteString("  ")
		}
		b.WriteString(fmt.Sprintf("%*s  ", numWidth, Thousands(st.Step)))
		b.Write(lanes)
		b.WriteString("  ")
		b.WriteString(label)
		writeTrimmed(w, b.String())
	}
}

// drawStep draws one step into its row of lanes and returns its label.
func drawStep(lanes []byte, width, n int, st Step) string {
	at := func(node int) int {
		if node < 0 || node >= n {
			return -1
		}
		return node * width
	}
	set := func(node int, c byte) {
		if i := at(node); i >= 0 {
			lanes[i] = c
		}
	}
	// line joins two lanes with c, ends left as they are.
	line := func(a, b int, c byte) {
		i, j := at(a), at(b)
		if i < 0 || j < 0 {
			return
		}
		for k := min(i, j) + 1; k < max(i, j); k++ {
			lanes[k] = c
		}
	}
	var label string
	switch st.Kind {
	case "deliver", "drop", "duplicate":
		end := byte('x')
		if st.Kind == "duplicate" {
			end = '2' // one in flight becomes two
		}
		if st.Kind == "deliver" {
			end = '>'
			if st.Peer > st.Node {
				end = '<'
			}
		}
		line(st.Peer, st.Node, '-')
		set(st.Peer, 'o')
		set(st.Node, end)
		if st.Peer == st.Node {
			set(st.Node, '@') // a message to itself
		}
		label = fmt.Sprintf("%s %d->%d", MsgType(st), st.Peer, st.Node)
		if st.Kind != "deliver" {
			label = st.Kind + " " + label
		}
	case "timer":
		set(st.Node, 'T')
		label = strings.TrimSuffix(st.Event, " at "+strconv.Itoa(st.Node))
	case "app":
		set(st.Node, 'A')
		label = strings.TrimSuffix(st.Event, " at "+strconv.Itoa(st.Node))
	case "reset":
		set(st.Node, 'R')
		label = "reset"
	case "crash":
		set(st.Node, 'C')
		label = "crash"
	case "partition", "heal":
		set(st.Node, st.Kind[0]-'a'+'A')
		label = st.Event
	case "socket-error":
		line(st.Node, st.Peer, '=')
		set(st.Node, 'E')
		set(st.Peer, 'E')
		label = "socket error"
	default:
		set(st.Node, '?')
		label = st.Event
	}
	if len(st.Sent) > 0 {
		sent := make([]string, len(st.Sent))
		for i, m := range st.Sent {
			sent[i] = sentWords(m)
		}
		label += "  => " + strings.Join(sent, ", ")
	}
	if st.Violation != "" {
		label += "  !! " + st.Violation
	}
	return label
}

// sentWords shortens a sent message ("Join{Joiner:1 Epoch:1} 1->0") to its
// type and ends ("Join 1->0").
func sentWords(m string) string {
	i := strings.LastIndexByte(m, ' ')
	if i < 0 {
		return m
	}
	body, ends := m[:i], m[i+1:]
	if j := strings.IndexAny(body, "{ "); j > 0 {
		body = body[:j]
	}
	return body + " " + ends
}

func writeTrimmed(w io.Writer, line string) {
	io.WriteString(w, strings.TrimRight(line, " ")+"\n")
}

// writeCriticalGraph draws the steps of a dead path that its text shows
// around the critical step (the shortened path's, where steps were
// removed), as an event graph.
func writeCriticalGraph(w io.Writer, c *Check) {
	step := c.Critical.TraceStep
	steps, crit := c.Steps, step-1
	if sh := c.Shortened; sh != nil && !c.AllSteps {
		steps, crit = append(slices.Clip(sh.Steps), c.Steps[min(step, len(c.Steps)):]...), sh.Kept
	}
	from, to := max(0, crit-stepsBefore), min(len(steps), crit+1+stepsAfter)
	if c.AllSteps {
		from, to = 0, len(steps)
	}
	if from >= to {
		return
	}
	fmt.Fprintf(w, "\nevent graph of steps %s to %s (* the critical one):\n", Thousands(steps[from].Step), Thousands(steps[to-1].Step))
	WriteGraph(w, c.Nodes, steps[from:to], step)
}
