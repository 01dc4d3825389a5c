package check

import (
	"fmt"
	"strings"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/reports"
	"github.com/livecheck/livecheck/sim"
)

// historySteps follows the client histories (properties.History) that
// the nodes of a replayed path hold, to put each event they record on
// the step that recorded it: a History counts its events, not steps.
type historySteps struct {
	// at holds, by node and History (its index in HistoriesOf), the step
	// of each event, the first at index 0.
	at map[[2]int][]int
}

// observe records the events the Histories in s gained at step.
func (hs *historySteps) observe(step int, s *sim.State) {
	for i := range s.N() {
		for k, h := range properties.HistoriesOf(s.Node(sim.NodeID(i))) {
			if hs.at == nil {
				hs.at = map[[2]int][]int{}
			}
			id := [2]int{i, k}
			steps := hs.at[id]
			n := h.Events()
			if n < len(steps) {
				// Built anew (a History not tagged durable, on a reset):
				// its events count from 1 again.
				steps = steps[:0]
			}
			for len(steps) < n {
				steps = append(steps, step)
			}
			hs.at[id] = steps
		}
	}
}

// report is the History of s whose violation message says (a violation
// of Linearizable, "node N: not linearizable ...", or of a property of
// the user's that quotes it) as a report, its events on the steps
// observe saw them at; nil where none is in message.
func (hs *historySteps) report(s *sim.State, message string) *reports.History {
	for i := range s.N() {
		for k, h := range properties.HistoriesOf(s.Node(sim.NodeID(i))) {
			if v := h.Violation(); v == "" || !strings.Contains(message, v) {
				continue
			}
			return historyReport(i, h.NotLinearizable(), h.Ops(), hs.at[[2]int{i, k}])
		}
	}
	return nil
}

// historyReport lays ops, the operations of node's History, which nl
// says is not linearizable, on the path's steps: steps[e-1] is the step
// of event e.
func historyReport(node int, nl *properties.NotLinearizable, ops []properties.Op, steps []int) *reports.History {
	stepOf := func(e int) int {
		if e < 1 || e > len(steps) {
			return 0
		}
		return steps[e-1]
	}
	h := &reports.History{Node: node, Spec: nl.Spec, Key: nl.Key, States: nl.States, Illegal: -1,
		Prefix: reports.HistoryPrefix{Events: nl.Prefix, Ordered: nl.Order != nil, Order: []int{}}}
	role := map[int]string{nl.Op.Call: "illegal"}
	for _, o := range nl.Before {
		role[o.Call] = "before"
	}
	for _, o := range nl.Concurrent {
		role[o.Call] = "concurrent"
	}
	index := map[int]int{} // by Call
	for i, o := range ops {
		op := reports.Operation{Client: o.Client, Key: o.Key, Input: fmt.Sprint(o.Input), InvokeStep: stepOf(o.Call), Role: role[o.Call]}
		if o.Return == 0 {
			op.Pending = true
		} else {
			op.Output, op.ReturnStep = fmt.Sprint(o.Output), stepOf(o.Return)
		}
		if o.Call == nl.Op.Call {
			h.Illegal = i
		}
		index[o.Call] = i
		h.Operations = append(h.Operations, op)
	}
	for _, o := range nl.Order {
		h.Prefix.Order = append(h.Prefix.Order, index[o.Call])
	}
	if h.Illegal < 0 {
		return nil // cannot be: nl.Op is one of ops
	}
	return h
}
