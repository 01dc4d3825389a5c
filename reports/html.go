package reports

import (
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"strings"
)

// A Graph is what the HTML report draws: a path as an event graph, one
// lane per node, with the nearest live path beside it from where the two
// part. States are kept as per-step changes (the node lines that change,
// field by field, and the messages that enter and leave flight); the page
// rebuilds any step's full state from the initial one.
type Graph struct {
	Title    string `json:"title"`
	Config   string `json:"config"`
	Result   string `json:"result"`
	Property string `json:"property,omitempty"`
	Message  string `json:"message,omitempty"`
	Nodes    int    `json:"nodes"`
	// Trace and LiveTrace are the files the paths came from, if any.
	Trace     string         `json:"trace,omitempty"`
	LiveTrace string         `json:"live_trace,omitempty"`
	Critical  *GraphCritical `json:"critical,omitempty"`
	Dead      GraphPath      `json:"dead"`
	// Live is the nearest live path, whole: it shares the dead path's
	// first Critical.LiveStep steps.
	Live *GraphPath `json:"live,omitempty"`
	// Tail summarizes the dead path past the critical step, for the rows
	// the page collapses.
	Tail     *Tail       `json:"tail,omitempty"`
	TailText string      `json:"tail_text,omitempty"`
	Walks    *GraphWalks `json:"walks,omitempty"`
	// History, for a violation of linearizability, is the client
	// history the dead path ends in, drawn as a timeline: a lane per
	// client, each operation a bar from the step that invoked it to the
	// step that returned it, linked to those steps.
	History *History `json:"history,omitempty"`
}

// GraphCritical is the critical step of a dead path and what shows it.
type GraphCritical struct {
	Step      int    `json:"step"`
	LiveStep  int    `json:"live_step"`
	Case      string `json:"case"`
	Event     string `json:"event"`
	LiveEvent string `json:"live_event,omitempty"`
	// Dead, Alive and End say in words what the tests of the state after
	// Step, after LiveStep and at the path's end saw.
	Dead  string `json:"dead,omitempty"`
	Alive string `json:"alive,omitempty"`
	End   string `json:"end,omitempty"`
	// SlipStep is the slip's step (0: none found, or not looked for),
	// Slip its reason, or that none was found.
	SlipStep int    `json:"slip_step,omitempty"`
	Slip     string `json:"slip,omitempty"`
	// Odds are the recovery odds along the path before Step (nil: not
	// worked out; a trace file does not keep them).
	Odds *Odds `json:"odds,omitempty"`
}

// SetSlip records a dead path's slip s (nil: not looked for).
func (g *GraphCritical) SetSlip(s *Slip) {
	if s == nil {
		return
	}
	g.Slip = s.Reason
	if s.Found {
		g.SlipStep = s.Step
	}
}

// A GraphPath is a path from its initial state: the node lines
// (sim.DumpNode) and messages in flight there, then each step.
type GraphPath struct {
	Init    []string    `json:"init"`
	InitNet []string    `json:"init_net,omitempty"`
	Steps   []GraphStep `json:"steps"`
}

// A GraphStep is one step of a path: its event, the step that sent the
// message it delivers or drops (From; 0: sent in Init, -1: none), what
// it sent and logged, and how it changed the state. Keys are short: a
// dead path can have thousands of steps.
type GraphStep struct {
	Kind      string      `json:"k"`
	Node      int         `json:"n"`
	Peer      int         `json:"p"` // -1: none
	Text      string      `json:"t"`
	From      int         `json:"f"`
	Sent      []string    `json:"s,omitempty"`
	Logs      []string    `json:"l,omitempty"`
	Violation string      `json:"v,omitempty"`
	Changes   []GraphNode `json:"c,omitempty"`
	// NetIn and NetOut are the messages the step put into flight and took
	// out of it ("Msg from->to").
	NetIn  []string `json:"ni,omitempty"`
	NetOut []string `json:"no,omitempty"`
}

// A GraphNode is a node whose state a step changed: its line after the
// step, and the fields that changed.
type GraphNode struct {
	Node    int      `json:"n"`
	Line    string   `json:"s"`
	Changes []Change `json:"d"`
}

// GraphWalks are the walk statistics the page charts: the walks from the
// depth bound, and every probe and dead test of the critical search.
type GraphWalks struct {
	Walks     int      `json:"walks"`
	WalkDepth int      `json:"walk_depth"`
	Suspects  int      `json:"suspects"`
	Cleared   int      `json:"cleared"`
	Tested    []Tested `json:"tested,omitempty"`
	// DeadTest is the dead test a trace records, when the tests
	// themselves are not known (a report of a saved trace).
	DeadTest *TraceDeadTest `json:"dead_test,omitempty"`
}

// Tested is one test of the state after a step of a dead path: a probe
// of the critical search, or a dead test (the stronger one that decides).
type Tested struct {
	DeadTest bool `json:"dead_test"`
	Evidence
}

// A GraphState follows a path's state from step to step, to make each
// GraphStep's changes.
type GraphState struct {
	nodes []string
	net   []string
}

// NewGraphState starts from a path's initial state: its node lines and
// messages in flight.
func NewGraphState(nodes, net []string) *GraphState {
	return &GraphState{nodes: nodes, net: net}
}

// Step records in st how the state changes to nodes and net.
func (g *GraphState) Step(st *GraphStep, nodes, net []string) {
	for _, d := range DiffNodes(g.nodes, nodes) {
		st.Changes = append(st.Changes, GraphNode{Node: d.Node, Line: nodes[d.Node], Changes: d.Changes})
	}
	d := DiffNet(g.net, net)
	st.NetOut, st.NetIn = d.Only1, d.Only2
	g.nodes, g.net = nodes, net
}

//go:embed html/graph.css
var graphCSS string

//go:embed html/graph.js
var graphJS string

//go:embed html/graph.html
var graphHTML string

// WriteHTML writes g as a page that needs nothing else: its script,
// style and data inline, drawn as SVG by the script.
func WriteHTML(w io.Writer, g *Graph) error {
	// encoding/json escapes <, > and & in strings, so no "</script>"
	// inside the data can end its element.
	data, err := json.Marshal(g)
	if err != nil {
		return err
	}
	page := strings.NewReplacer(
		"{{title}}", html.EscapeString(g.Title),
		"{{style}}", graphCSS,
		"{{data}}", string(data),
		"{{script}}", graphJS,
	).Replace(graphHTML)
	_, err = io.WriteString(w, page)
	return err
}
