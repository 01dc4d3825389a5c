package reports

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A Tail summarizes the steps of a dead path past those a report shows:
// what kinds of events they are, and how few states they go round.
type Tail struct {
	From  int `json:"from"`  // the number of its first step
	Steps int `json:"steps"` // how many
	// Events are the steps by what they are, most first.
	Events []EventCount `json:"events"`
	// SettledAfter is the last step of the path that reaches a state the
	// path had not been in before; from there on it stays within
	// Distinct states (0 both: the steps carry no state fingerprints).
	SettledAfter int `json:"settled_after,omitempty"`
	Distinct     int `json:"distinct,omitempty"`
}

// An EventCount is a kind of event ("timer firings", "deliveries"), how
// many of the tail's steps are one, and where: the nodes, or the message
// types with their counts.
type EventCount struct {
	Kind  string   `json:"kind"`
	What  string   `json:"what"`
	N     int      `json:"n"`
	Nodes []int    `json:"nodes,omitempty"`
	Types []string `json:"types,omitempty"`
}

// kindWords names an event of each kind, and several, in a tail summary.
var kindWords = map[string][2]string{"deliver": {"delivery", "deliveries"}, "timer": {"timer firing", "timer firings"},
	"app": {"driver call", "driver calls"}, "drop": {"drop", "drops"}, "socket-error": {"socket error", "socket errors"},
	"reset": {"reset", "resets"}, "duplicate": {"duplication", "duplications"},
	"partition": {"partition", "partitions"}, "heal": {"heal", "heals"}, "crash": {"crash", "crashes"}}

// words names one event of kind, and several.
func words(kind string) (string, string) {
	if w, ok := kindWords[kind]; ok {
		return w[0], w[1]
	}
	return kind + " event", kind + " events"
}

// SummarizeTail summarizes path[from:] (steps numbered from 1, the
// whole path given so that states seen before the tail count as seen).
func SummarizeTail(path []Step, from int) *Tail {
	if from >= len(path) {
		return nil
	}
	t := &Tail{From: path[from].Step, Steps: len(path) - from}
	byKind := map[string]*EventCount{}
	types := map[string]map[string]int{}
	for _, st := range path[from:] {
		ec := byKind[st.Kind]
		if ec == nil {
			_, many := words(st.Kind)
			ec = &EventCount{Kind: st.Kind, What: many}
			byKind[st.Kind] = ec
			types[st.Kind] = map[string]int{}
		}
		ec.N++
		if !slices.Contains(ec.Nodes, st.Node) {
			ec.Nodes = append(ec.Nodes, st.Node)
		}
		if m := MsgType(st); m != "" {
			types[st.Kind][m]++
		}
	}
	for k, ec := range byKind {
		slices.Sort(ec.Nodes)
		ts := types[k]
		names := slices.SortedFunc(maps.Keys(ts), func(a, b string) int {
			return cmp.Or(cmp.Compare(ts[b], ts[a]), cmp.Compare(a, b))
		})
		for _, n := range names {
			ec.Types = append(ec.Types, n+" "+Thousands(ts[n]))
		}
		t.Events = append(t.Events, *ec)
	}
	slices.SortFunc(t.Events, func(a, b EventCount) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.What, b.What)) })
	seen := map[uint64]bool{}
	last := -1
	for i, st := range path {
		if st.State == 0 {
			return t
		}
		if !seen[st.State] {
			seen[st.State] = true
			last = i
		}
	}
	// A path whose last step reached a new state has settled nowhere: it
	// may climb for ever (terms, counters), and says nothing about it.
	if last >= from && last < len(path)-1 {
		distinct := map[uint64]bool{}
		for _, st := range path[last:] {
			distinct[st.State] = true
		}
		t.SettledAfter, t.Distinct = path[last].Step, len(distinct)
	}
	return t
}

// MsgType is the type of the message a delivery, drop or duplication carries, from
// its words ("deliver Probe{Root:0} 1->0": Probe).
func MsgType(st Step) string {
	if st.Kind != "deliver" && st.Kind != "drop" && st.Kind != "duplicate" {
		return ""
	}
	_, rest, _ := strings.Cut(st.Event, " ")
	if i := strings.IndexAny(rest, "{ "); i > 0 {
		return rest[:i]
	}
	return ""
}

// String says the tail in words: "4,988 further steps, no live state:
// 2,990 timer firings at nodes 0-2, 1,998 deliveries (Probe 1,990, ...);
// after step 31 the path reaches no new state: it stays within 12
// distinct states".
func (t *Tail) String() string {
	var parts []string
	for _, ec := range t.Events {
		one, many := words(ec.Kind)
		s := Count(ec.N, one, many)
		if len(ec.Types) > 0 {
			s += " (" + strings.Join(ec.Types, ", ") + ")"
		} else {
			s += " at " + nodeRanges(ec.Nodes)
		}
		parts = append(parts, s)
	}
	out := fmt.Sprintf("%s, no live state: %s", Count(t.Steps, "further step"), strings.Join(parts, ", "))
	if t.Distinct > 0 {
		out += fmt.Sprintf("; after step %s the path reaches no state it has not been in: it stays within %s",
			Thousands(t.SettledAfter), Count(t.Distinct, "distinct state"))
	}
	return out
}

// nodeRanges writes sorted node ids as people read them: "node 2",
// "nodes 0 and 1", "nodes 0, 1 and 3", "nodes 0 to 3" (a run of three or
// more), "nodes 0 and 2 to 4".
func nodeRanges(ids []int) string {
	if len(ids) == 1 {
		return "node " + strconv.Itoa(ids[0])
	}
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, strconv.Itoa(ids[i])+" to "+strconv.Itoa(ids[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(ids[k]))
			}
		}
		i = j + 1
	}
	if len(parts) == 1 {
		return "nodes " + parts[0]
	}
	return "nodes " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
