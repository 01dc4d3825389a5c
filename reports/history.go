package reports

import (
	"fmt"
	"io"
	"strings"
)

// A History is the client history of a linearizability violation
// (properties.Linearizable), laid on the steps of its path: every
// operation, from the step that invoked it to the step that returned
// it; the one whose response no order of the operations allows; and the
// longest linearizable prefix of the history, with an order of it.
type History struct {
	// Node is the node that holds the history, Spec the name of its
	// sequential spec, Key the key of the operations that cannot be
	// ordered (none for a spec not partitioned by key).
	Node int    `json:"node"`
	Spec string `json:"spec"`
	Key  string `json:"key,omitempty"`
	// Operations are every operation recorded, on every key, in the
	// order of their invocations.
	Operations []Operation `json:"operations"`
	// Illegal indexes Operations: the operation whose response no order
	// allows.
	Illegal int `json:"illegal"`
	// States are the states the spec can be in on Key just before that
	// response.
	States []string `json:"states"`
	// Prefix is the longest linearizable prefix.
	Prefix HistoryPrefix `json:"prefix"`
}

// HistoryPrefix is the longest linearizable prefix of a History: every
// event of the history before the illegal operation's response, Events
// of them (invocations and responses). Order indexes its operations on
// the key (History.Operations) in an order that one copy of the object
// can run them, each returning what it did: every one that returned
// before the illegal response, and those pending there that had to take
// effect. Ordered is false where the prefix was too wide to order (Order
// is then empty).
type HistoryPrefix struct {
	Events  int   `json:"events"`
	Ordered bool  `json:"ordered"`
	Order   []int `json:"order"`
}

// An Operation is one client operation of a History.
type Operation struct {
	Client int    `json:"client"`
	Key    string `json:"key,omitempty"`
	Input  string `json:"input"`
	// Output is what it returned, unless Pending: it never returned on
	// the path.
	Output  string `json:"output,omitempty"`
	Pending bool   `json:"pending,omitempty"`
	// InvokeStep and ReturnStep are the steps of the path that invoked
	// it and that returned it (ReturnStep absent when Pending; step 0
	// is the initial state's Init calls).
	InvokeStep int `json:"invoke_step"`
	ReturnStep int `json:"return_step,omitempty"`
	// Role is its part in the violation: "illegal", the operation whose
	// response no order allows; "before", one on its key that returned
	// before it was invoked; "concurrent", one on its key that overlaps
	// it. None for the other keys' operations.
	Role string `json:"role,omitempty"`
}

func (o Operation) String() string {
	if o.Pending {
		return fmt.Sprintf("client %d: %s pending (from step %s)", o.Client, o.Input, Thousands(o.InvokeStep))
	}
	return fmt.Sprintf("client %d: %s -> %s (steps %s-%s)", o.Client, o.Input, o.Output, Thousands(o.InvokeStep), Thousands(o.ReturnStep))
}

// WriteHistory writes the operations that cannot be ordered (the
// illegal one, then those before and beside it) and an order of the
// longest linearizable prefix, for people, with the steps of the path.
func WriteHistory(w io.Writer, h *History) {
	if h == nil || h.Illegal < 0 || h.Illegal >= len(h.Operations) {
		return
	}
	on := ""
	if h.Key != "" {
		on = ", key " + h.Key
	}
	ill := h.Operations[h.Illegal]
	fmt.Fprintf(w, "operations that cannot be ordered (node %d's history, spec %s%s):\n", h.Node, h.Spec, on)
	fmt.Fprintf(w, "  %s: no order allows it; the state before its response can be %s\n", ill, strings.Join(h.States, " or "))
	for _, role := range []string{"before", "concurrent"} {
		for _, o := range h.Operations {
			if o.Role == role {
				words := "completed before it"
				if role == "concurrent" {
					words = "concurrent with it"
				}
				fmt.Fprintf(w, "  %s: %s\n", o, words)
			}
		}
	}
	fmt.Fprintf(w, "longest linearizable prefix: every event before step %s's response (%s)", Thousands(ill.ReturnStep), Count(h.Prefix.Events, "event"))
	switch {
	case !h.Prefix.Ordered:
		fmt.Fprintf(w, ", too wide to order\n")
	case len(h.Prefix.Order) == 0:
		fmt.Fprintf(w, "; none of its operations on the key need take effect\n")
	default:
		var ops []string
		for _, i := range h.Prefix.Order {
			o := h.Operations[i]
			s := fmt.Sprintf("client %d's %s", o.Client, o.Input)
			if o.Pending {
				s += " (pending, taking effect)"
			} else {
				s += " -> " + o.Output
			}
			ops = append(ops, s)
		}
		fmt.Fprintf(w, "; one order of its operations on the key: %s\n", strings.Join(ops, ", then "))
	}
}
