package reports

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A Slip is the step of a dead path that took away what would have let
// the state after its critical step recover: a timer that fired and was
// not set again, or was cancelled, or a message lost or ignored. Found
// false says none was found among Tried timers and messages put back.
type Slip struct {
	Found bool `json:"found"`
	// Step is the slip's step (as the trace counts), Event it in words,
	// Kind its kind; CriticalStep says it is the critical step itself.
	Step         int    `json:"step,omitempty"`
	Event        string `json:"event,omitempty"`
	Kind         string `json:"kind,omitempty"`
	CriticalStep bool   `json:"critical_step,omitempty"`
	// What it took away: Timer at Node, or Message ("Msg from->to", to
	// Node); How: fired, cancelled, reset, ignored, dropped or lost.
	Node    int    `json:"node"`
	Timer   string `json:"timer,omitempty"`
	Message string `json:"message,omitempty"`
	How     string `json:"how,omitempty"`
	// State is the node's state before the step, Changes what the step
	// changed in it.
	State   string   `json:"state,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// Failure says the critical step is a failure the protocol did not
	// tolerate.
	Failure bool `json:"failure,omitempty"`
	// Recovery is how the state after the critical step recovers with
	// what the slip took away put back.
	Recovery *Evidence `json:"recovery,omitempty"`
	Tried    int       `json:"tried"`
	// Reason says it all in one line.
	Reason string `json:"reason"`
}

// What names what the slip took away: "timer retry at 0", or the message.
func (s *Slip) What() string {
	if s.Timer != "" {
		return fmt.Sprintf("timer %s at %d", s.Timer, s.Node)
	}
	return s.Message
}

// SlipReason says in one line why s is the slip of a dead path whose
// critical step is step crit (its event critEvent), for liveness
// property prop; or that none was found.
func SlipReason(s *Slip, crit int, critEvent, prop string) string {
	at := Thousands(crit)
	if !s.Found {
		lost := "by step " + at
		failure := ""
		if s.Failure {
			lost = "before it"
			failure = fmt.Sprintf("the protocol did not tolerate the failure at step %s (%s), and ", at, critEvent)
		}
		switch s.Tried {
		case 0:
			return fmt.Sprintf("no slip found: %sthe path lost no timer or message %s that is still missing after step %s", failure, lost, at)
		case 1:
			return fmt.Sprintf("no slip found: %sthe one timer or message the path lost %s does not make the state after step %s recover when put back", failure, lost, at)
		}
		return fmt.Sprintf("no slip found: %snone of the %s timers and messages the path lost %s makes the state after step %s recover when put back",
			failure, Thousands(s.Tried), lost, at)
	}
	what, step := s.What(), "step "+Thousands(s.Step)
	while := ""
	if name := StateName(s.State); name != "" {
		while = fmt.Sprintf(" while node %d was %s", s.Node, name)
	}
	var did string
	switch s.How {
	case "fired":
		did = fmt.Sprintf("%s fired %s%s and did not set it again", step, what, while)
	case "cancelled":
		did = fmt.Sprintf("%s (%s) cancelled %s%s", step, s.Event, what, while)
	case "reset":
		did = fmt.Sprintf("%s reset node %d, which lost %s", step, s.Node, what)
	case "ignored":
		did = fmt.Sprintf("%s delivered %s, and node %d did nothing with it%s", step, what, s.Node, strings.Replace(while, fmt.Sprintf(" node %d ", s.Node), " it ", 1))
	case "dropped":
		did = fmt.Sprintf("%s dropped %s", step, what)
	default:
		did = fmt.Sprintf("%s (%s) lost %s", step, s.Event, what)
	}
	if len(s.Changes) > 0 {
		did += " (" + NodeDiff{Changes: s.Changes}.String() + ")"
	}
	recovers := fmt.Sprintf("had it still been %s, the state after step %s would recover", still(s), at)
	if s.Recovery != nil {
		recovers += ": " + EvidenceWords(s.Recovery, prop)
	}
	switch {
	case s.Failure:
		return fmt.Sprintf("the protocol did not tolerate the failure at step %s (%s), which %s would have: %s; %s", at, critEvent, what, did, recovers)
	case s.CriticalStep && s.How == "ignored":
		// Put back, the message the node did nothing with gives the
		// state before the critical step: its recovery is shown above,
		// and a what-if would only say it again.
		return fmt.Sprintf("the slip is the critical step itself: %s; had it still been in flight, the state would be the one before step %s, which recovers", did, at)
	case s.CriticalStep:
		return fmt.Sprintf("the slip is the critical step itself: %s; %s", did, recovers)
	}
	return fmt.Sprintf("%s; %s", did, recovers)
}

// still is what the slip's timer or message would still have been.
func still(s *Slip) string {
	if s.Timer != "" {
		return "set"
	}
	return "in flight"
}

// StateName is the name a node's dump opens with, a word that stands
// alone ("joining" of "joining peers=[0 2] timers=join"), or "".
func StateName(dump string) string {
	fs, ok := fields(dump)
	if !ok || len(fs) == 0 || fs[0].key != "#0" {
		return ""
	}
	v := fs[0].val
	for i := 0; i < len(v); i++ {
		if !identByte(v[i]) {
			return ""
		}
	}
	return v
}

// writeStory puts the marks of a dead path on one line, in the order of
// its steps: where the property last held, the slip, the sharp fall of
// the recovery odds, the last state that can recover and the critical
// step, each with what it means (those the report has).
func writeStory(w io.Writer, c *Check) {
	cx := c.Critical
	step := cx.TraceStep
	type mark struct {
		at    int
		after bool // "after step at": a state; otherwise step at itself
		words string
	}
	var marks []mark
	if cx.Dinit > 0 {
		marks = append(marks, mark{cx.Dinit - 1, true, c.Property + " last holds"})
	}
	if s := cx.Slip; s != nil && s.Found {
		marks = append(marks, mark{s.Step, false, "the slip (takes " + s.What() + ")"})
	}
	if o := cx.Odds; o != nil && o.Suspect > 0 {
		k := o.Suspect - o.From
		marks = append(marks, mark{o.Suspect, false, fmt.Sprintf("the odds fall (%d -> %d of %d)", o.Recovered[k-1], o.Recovered[k], o.Walks)})
	}
	if step > 0 {
		marks = append(marks, mark{step - 1, true, "the last state that can recover"})
	}
	marks = append(marks, mark{step, false, "the critical step (no way back after it)"})
	// In step order; a step's own mark before the state after it.
	sort.SliceStable(marks, func(i, j int) bool {
		if marks[i].at != marks[j].at {
			return marks[i].at < marks[j].at
		}
		return !marks[i].after && marks[j].after
	})
	var parts []string
	for i := 0; i < len(marks); {
		m := marks[i]
		words := []string{m.words}
		for i++; i < len(marks) && marks[i].at == m.at && marks[i].after == m.after; i++ {
			words = append(words, marks[i].words)
		}
		where := "step " + Thousands(m.at)
		if m.after {
			where = "after step " + Thousands(m.at)
		}
		parts = append(parts, where+": "+strings.Join(words, ", "))
	}
	fmt.Fprintf(w, "along the path: %s.\n", strings.Join(parts, "; "))
}

// writeUnfinished says, a line each, why a report has no slip or no
// recovery odds (slip and odds: the reasons, "" for those it has).
func writeUnfinished(w io.Writer, slip, odds string) {
	if slip != "" {
		fmt.Fprintf(w, "slip: not known: its search did not finish: %s\n", slip)
	}
	if odds != "" {
		fmt.Fprintf(w, "recovery odds: not known: their walks did not finish: %s\n", odds)
	}
}

// writeSlip writes a liveness violation's slip: its step and what it took
// away, then why, in one line.
func writeSlip(w io.Writer, s *Slip) {
	if s == nil {
		return
	}
	if !s.Found {
		fmt.Fprintln(w, s.Reason)
		return
	}
	fmt.Fprintf(w, "slip: step %s, %s\n    %s\n", Thousands(s.Step), s.Event, s.Reason)
}

// Odds are the recovery odds along a dead path before its critical step:
// from the state after each step from From on (the critical step last),
// how many of Walks walks of WalkDepth steps reach a live state. Suspect
// is the step before the critical one after which they fell most, by at
// least half the walks (0: none).
type Odds struct {
	Walks     int   `json:"walks"`
	WalkDepth int   `json:"walk_depth"`
	From      int   `json:"from_step"`
	Recovered []int `json:"recovered"`
	Suspect   int   `json:"suspect,omitempty"`
}

// oddsPerLine is how many steps a line of the odds shows.
const oddsPerLine = 16

// chanceDiff is about how far apart the figures of two samples of n
// walks each may fall by chance alone: twice the standard deviation of
// their difference where it is largest (each walk recovering with
// probability one half), rounded up.
func chanceDiff(n int) int {
	sd := math.Sqrt(float64(n) / 2) // sqrt(2 * n/4)
	return int(math.Ceil(2 * sd))
}

// writeOdds writes the recovery odds as rows of figures under the steps,
// the critical step (crit) marked, then the sharp fall, if any. Where
// the critical search proved that the state after step crit-1 recovers
// (alive says how; "": not known), every state before it on the path
// recovers too, through it: a figure of 0 there is the walks' bad luck,
// and is written "+", with a line that says so.
func writeOdds(w io.Writer, o *Odds, crit int, slip *Slip, prop, alive string) {
	if o == nil || len(o.Recovered) == 0 {
		return
	}
	proven := func(i int) bool { return alive != "" && o.From+i < crit && o.Recovered[i] == 0 }
	fmt.Fprintf(w, "recovery odds: of %s of %s from the state after each step, how many reach %s (a sample: two figures may differ by chance by up to about %d):\n",
		Count(o.Walks, "walk"), Count(o.WalkDepth, "step"), prop, chanceDiff(o.Walks))
	plus := false
	for at := 0; at < len(o.Recovered); at += oddsPerLine {
		var steps, odds strings.Builder
		steps.WriteString("  after step")
		odds.WriteString("  recover   ")
		for i := at; i < min(len(o.Recovered), at+oddsPerLine); i++ {
			st := Thousands(o.From + i)
			if o.From+i == crit {
				st += "*"
			}
			fig := strconv.Itoa(o.Recovered[i])
			if proven(i) {
				fig, plus = "+", true
			}
			width := max(len(st), len(fig), 2) + 1
			fmt.Fprintf(&steps, "%*s", width, st)
			fmt.Fprintf(&odds, "%*s", width, fig)
		}
		fmt.Fprintln(w, steps.String())
		fmt.Fprintln(w, odds.String())
	}
	if plus {
		fmt.Fprintf(w, "  +: none of the %s recovered, yet the state does: the path leads from it to the state after step %s, and %s\n",
			Count(o.Walks, "walk"), Thousands(crit-1), alive)
	}
	if o.Suspect > 0 {
		k := o.Suspect - o.From
		why := "a suspect: the path became fragile there"
		switch {
		case slip != nil && slip.Found && slip.Step == o.Suspect:
			why = "the slip"
		case slip != nil && !slip.Found:
			why = "a suspect, though no slip was found"
		}
		fmt.Fprintf(w, "  a sharp fall after step %s (%d -> %d of %d): %s\n", Thousands(o.Suspect), o.Recovered[k-1], o.Recovered[k], o.Walks, why)
	}
}
