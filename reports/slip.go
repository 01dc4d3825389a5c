package reports

import (
	"fmt"
	"io"
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
// critical step is step crit (its event critEvent, its kind critKind),
// for liveness property prop; or that none was found.
func SlipReason(s *Slip, crit int, critEvent, prop string) string {
	at := Thousands(crit)
	if !s.Found {
		if s.Tried == 0 {
			return fmt.Sprintf("no slip found: the path lost no timer or message before step %s that is still missing after it", at)
		}
		return fmt.Sprintf("no slip found: none of the %s the path lost by step %s makes the state after it recover when put back",
			Count(s.Tried, "timer or message", "timers and messages"), at)
	}
	what := s.What()
	while := fmt.Sprintf("at node %d", s.Node)
	if name := StateName(s.State); name != "" {
		while = fmt.Sprintf("while node %d was %s", s.Node, name)
	}
	var did string
	switch s.How {
	case "fired":
		did = fmt.Sprintf("fired it %s and did not set it again", while)
	case "cancelled":
		did = fmt.Sprintf("cancelled it %s", while)
	case "reset":
		did = fmt.Sprintf("reset node %d, which lost it", s.Node)
	case "ignored":
		did = fmt.Sprintf("delivered it to node %d, which did nothing with it", s.Node)
		if name := StateName(s.State); name != "" {
			did += " while it was " + name
		}
	case "dropped":
		did = "dropped it"
	default:
		did = "lost it"
	}
	if len(s.Changes) > 0 {
		did += ": " + NodeDiff{Changes: s.Changes}.String()
	}
	recovers := ""
	if s.Recovery != nil {
		recovers = " (" + EvidenceWords(s.Recovery, prop) + ")"
	}
	if s.Failure {
		return fmt.Sprintf("the protocol did not tolerate the failure at step %s (%s); %s would have: had it still been %s, the state after step %s would recover%s; step %s (%s) %s",
			at, critEvent, what, still(s), at, recovers, Thousands(s.Step), s.Event, did)
	}
	if s.CriticalStep {
		return fmt.Sprintf("the critical step itself took away %s: it %s; had it still been %s, the state after step %s would recover%s", what, did, still(s), at, recovers)
	}
	return fmt.Sprintf("had %s still been %s, the state after step %s would recover%s; step %s (%s) %s", what, still(s), at, recovers, Thousands(s.Step), s.Event, did)
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
