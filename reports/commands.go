package reports

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// A Replay is the report of a trace file replayed: what `livecheck
// replay --json` prints, and what its text is written from.
type Replay struct {
	Trace      string `json:"trace"`
	System     string `json:"system"`
	Result     string `json:"result"`
	Property   string `json:"property,omitempty"`
	Message    string `json:"message,omitempty"`
	Reproduced bool   `json:"reproduced"`
	// End is what the dead test saw from the final state of a liveness
	// violation.
	End   *Evidence `json:"end,omitempty"`
	Steps []Step    `json:"steps"`
	// History, for a violation of properties.Linearizable, is the client
	// history that shows it, on the steps.
	History *History `json:"history,omitempty"`

	// Config is the trace's configuration in words (DescribeConfig);
	// Live says the final state is live; Recorded is the trace file.
	Config   string `json:"-"`
	Live     bool   `json:"-"`
	Recorded *Trace `json:"-"`
}

// WriteReplay writes a replay's report for people: the steps, then what
// the path reaches.
func WriteReplay(w io.Writer, r *Replay) {
	fmt.Fprintf(w, "%s: %s\n\n", r.Trace, r.Config)
	WriteSteps(w, r.Steps)
	fmt.Fprintln(w)
	switch {
	case r.Result != "ok":
		fmt.Fprintf(w, "%s of %s: %s\n", r.Result, r.Property, r.Message)
		WriteHistory(w, r.History)
	case r.Live:
		fmt.Fprintln(w, "the final state is live")
	default:
		fmt.Fprintln(w, "the final state is not live")
	}
	t := r.Recorded
	if ev := r.End; ev != nil && !ev.Live {
		fmt.Fprintf(w, "the check's dead test from the final state: %s\n", EvidenceWords(ev, t.Property))
	}
	if c := t.Critical; c != nil {
		fmt.Fprintf(w, "critical transition (%s): step %s, %s; nearest live path: %s\n", CaseWords(c.Case), Thousands(c.Step), c.Event, c.LiveTrace)
		writeSlip(w, c.Slip)
		writeUnfinished(w, c.SlipUnfinished, c.OddsUnfinished)
		alive := "" // the trace does not say how the state after step LiveStep recovers, only that it does
		if c.Case == "C1" {
			alive = "the check's critical search showed that state recovers"
		}
		writeOdds(w, c.Odds, c.Step, c.Slip, t.Property, alive)
	}
}

// A Compare is the report of the same check in global and in local mode.
type Compare struct {
	Global           Check   `json:"global"`
	Local            Check   `json:"local"`
	Agree            bool    `json:"agree"`
	TransitionsRatio float64 `json:"transitions_ratio"`
	TimeRatio        float64 `json:"time_ratio"`

	Rounds int `json:"-"` // local mode's round bound
}

// WriteCompare writes the two modes side by side.
func WriteCompare(w io.Writer, c *Compare) {
	g := &c.Global
	fmt.Fprintf(w, "%s; global depth %s, local rounds %s\n", DescribeConfig(g.System, g.Nodes, g.Bugs, g.Params, g.Budget), Thousands(g.Depth), Thousands(c.Rounds))
	WriteBugSettings(w, g.FromBugs)
	fmt.Fprintln(w)
	rows := [][]string{}
	for i, r := range []*Check{&c.Global, &c.Local} {
		found := r.Result
		if r.Property != "" {
			found += " of " + r.Property
		}
		states := Thousands(r.Stats.States)
		if r.Local != nil {
			states = Count(r.Local.TotalNodeStates, "node state") + " " + thousandsList(r.Local.NodeStates)
		}
		rows = append(rows, []string{[]string{"global", "local"}[i], found, fmt.Sprint(r.Complete), states,
			Thousands(r.Stats.Transitions), r.Stats.Elapsed.Round(time.Microsecond).String()})
	}
	Table(w, []string{"MODE", "RESULT", "COMPLETE", "STATES", "TRANSITIONS", "TIME"}, rows)
	fmt.Fprintf(w, "\nglobal/local: %.1fx the transitions, %.1fx the time\n", c.TransitionsRatio, c.TimeRatio)
	for i, r := range []*Check{&c.Global, &c.Local} {
		if r.Trace != "" {
			fmt.Fprintf(w, "%s trace: %s\n", []string{"global", "local"}[i], r.Trace)
		}
	}
}

// A ListEntry describes one system for `livecheck list`.
type ListEntry struct {
	Name       string   `json:"name"`
	Doc        string   `json:"doc"`
	Nodes      int      `json:"nodes"`
	Bugs       []string `json:"bugs"`
	Properties []string `json:"properties"`
	// BugNeeds gives each bug's declared settings as flags, by bug name.
	BugNeeds map[string]string `json:"bug_needs"`
	// PropertyDocs says what each property means, in the order of
	// Properties, with its kind ("liveness: every node ...").
	PropertyDocs []string `json:"property_docs"`

	// Needs are the bugs' needs in the order of Bugs.
	Needs []string `json:"-"`
}

// WriteList writes one line per system.
func WriteList(w io.Writer, entries []ListEntry) {
	for _, e := range entries {
		bugs := "none"
		if len(e.Bugs) > 0 {
			named := make([]string, len(e.Bugs))
			for j, b := range e.Bugs {
				named[j] = b
				if j < len(e.Needs) && e.Needs[j] != "" {
					named[j] += " (" + e.Needs[j] + ")"
				}
			}
			bugs = strings.Join(named, ", ")
		}
		fmt.Fprintf(w, "%s: %s; bugs: %s; properties: %s\n", e.Name, e.Doc, bugs, strings.Join(e.Properties, ","))
		for i, p := range e.Properties {
			if i < len(e.PropertyDocs) && e.PropertyDocs[i] != "" {
				fmt.Fprintf(w, "    %s (%s)\n", p, e.PropertyDocs[i])
			}
		}
	}
}

// A PrefixFile is one live prefix written by `livecheck prefix`.
type PrefixFile struct {
	File      string `json:"file"`
	Length    int    `json:"length"`
	FirstLive int    `json:"first_live"`
}

// WritePrefixes writes the prefixes made, under a line that says for what
// configuration and how long it took; checkFrom is the command that checks
// from the first one.
func WritePrefixes(w io.Writer, config string, files []PrefixFile, elapsed time.Duration, checkFrom string) {
	fmt.Fprintf(w, "%s: %s in %s\n\n", config, Count(len(files), "prefix", "prefixes"), elapsed.Round(time.Millisecond))
	var rows [][]string
	for _, f := range files {
		rows = append(rows, []string{f.File, Thousands(f.FirstLive), Thousands(f.Length)})
	}
	Table(w, []string{"PREFIX FILE", "STEPS TO LIVE", "LENGTH"}, rows)
	if len(files) > 0 {
		fmt.Fprintf(w, "\ncheck from one: %s\n", checkFrom)
	}
}
