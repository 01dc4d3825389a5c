package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

func samplePath() sim.Path {
	return sim.Path{
		{Event: sim.Event{Kind: sim.App, Node: 0, Call: 2}},
		{Event: sim.Event{Kind: sim.Deliver, Node: 1, Peer: 0, Msg: 0xdeadbeef}, Choices: []int{1, 0}},
		{Event: sim.Event{Kind: sim.Timer, Node: 2, Timer: "join"}},
		{Event: sim.Event{Kind: sim.SocketError, Node: 0, Peer: 2}},
		{Event: sim.Event{Kind: sim.Drop, Node: 2, Peer: 1, Msg: 7}},
		{Event: sim.Event{Kind: sim.Reset, Node: 1}},
	}
}

func TestTraceRoundTrip(t *testing.T) {
	p := samplePath()
	tr := &Trace{System: "x", Nodes: 3, Bugs: []string{"b"}, Budget: Budget{Resets: 1, Drops: 1, Errors: 1},
		Seed: 9, Result: "safety-violation", Property: "p", Steps: FromPath(p, func(i int) string { return "step" })}
	var buf bytes.Buffer
	if err := tr.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Path(back.Steps)
	if err != nil {
		t.Fatal(err)
	}
	// Without init choices the file is version 1, as before there were.
	if !reflect.DeepEqual(p, q) || back.Seed != 9 || back.Budget != tr.Budget || back.Version != 1 || back.Init != nil ||
		strings.Contains(buf.String(), "init") {
		t.Fatalf("round trip changed the trace (version %d, init %v):\n%v\n%v", back.Version, back.Init, p, q)
	}
	tr.Init = []int{2, 0, 1}
	buf.Reset()
	if err := tr.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if back, err = ReadTrace(&buf); err != nil || back.Version != 2 || !reflect.DeepEqual(back.Init, tr.Init) {
		t.Fatalf("with init choices: %v, version %d, init %v", err, back.Version, back.Init)
	}
	// A budget with duplicates makes it version 3, which a version-2
	// reader refuses for its version rather than for the field.
	tr.Budget.Dups = 1
	buf.Reset()
	if err := tr.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if back, err = ReadTrace(&buf); err != nil || back.Version != 3 || back.Budget.Dups != 1 || !reflect.DeepEqual(back.Init, tr.Init) {
		t.Fatalf("with duplicates: %v, version %d, budget %+v", err, back.Version, back.Budget)
	}
	// A slip makes it version 4, and comes back as it was.
	tr.Critical = &TraceCritical{Case: "C1", Step: 1, Event: "x", Slip: &Slip{Found: true, Step: 1, Event: "x", Kind: "timer", Timer: "t", How: "fired", Tried: 1, Reason: "why"}}
	buf.Reset()
	if err := tr.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if back, err = ReadTrace(&buf); err != nil || back.Version != 4 || back.Critical == nil || !reflect.DeepEqual(back.Critical.Slip, tr.Critical.Slip) {
		t.Fatalf("with a slip: %v, version %d, critical %+v", err, back.Version, back.Critical)
	}
	tr.Critical = nil
	tr.Budget.Dups = 0
	if got := TraceName("x", "p", nil, p); got != TraceName("x", "p", nil, q) || !strings.HasPrefix(got, "x-p-") {
		t.Fatalf("trace name %q", got)
	}
	// Without init choices the name is the path's hash, as before init
	// choices existed; with them, the same path from two initial states
	// gets two names, and the same choices the same one.
	if got, want := PathHash(nil, p), fmt.Sprintf("%08x", uint32(p.Hash())); got != want {
		t.Errorf("PathHash(nil, p) = %s, want %s", got, want)
	}
	a, b := TraceName("x", "p", []int{1, 0}, p), TraceName("x", "p", []int{0, 1}, p)
	if a == b || a == TraceName("x", "p", nil, p) || a != TraceName("x", "p", []int{1, 0}, q) {
		t.Errorf("names %s and %s from two initial states", a, b)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "sub", "t.json")
	if err := WriteFileAtomic(f, func(w io.Writer) error { _, err := w.Write([]byte("one")); return err }); err != nil {
		t.Fatal(err)
	}
	// A failing writer leaves the old file and no temporary file behind.
	err := WriteFileAtomic(f, func(w io.Writer) error { w.Write([]byte("half")); return os.ErrInvalid })
	if err == nil {
		t.Fatal("the writer's error was lost")
	}
	got, _ := os.ReadFile(f)
	entries, _ := os.ReadDir(filepath.Dir(f))
	if string(got) != "one" || len(entries) != 1 {
		t.Fatalf("file %q, %d entries", got, len(entries))
	}
}

// FuzzReadTrace: whatever the bytes, reading a trace and converting its
// steps never panics, and what reads back converts to a path.
func FuzzReadTrace(f *testing.F) {
	var buf bytes.Buffer
	(&Trace{System: "x", Nodes: 2, Result: "safety-violation", Steps: FromPath(samplePath(), nil)}).Write(&buf)
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte(`{"format":"livecheck-trace","version":1,"system":"x","nodes":1,"steps":[{"kind":"deliver","node":0}]}`))
	f.Add([]byte(`{"format":"livecheck-trace","version":1,"system":"x","nodes":1,"steps":[{"kind":"app","node":-1,"call":-5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadTrace(bytes.NewReader(data))
		if err != nil {
			return
		}
		if _, err := Path(tr.Steps); err != nil {
			t.Fatalf("ReadTrace accepted steps that Path refuses: %v", err)
		}
	})
}

// A file written before the version field (none: version 0) reads as
// version 1; a newer version is refused for its version, even with fields
// this version does not know; a negative one is refused.
func TestTraceVersions(t *testing.T) {
	const body = `"system":"x","nodes":2,"bugs":[],"budget":{"resets":0,"drops":0,"errors":0},"seed":1,"result":"safety-violation","steps":[{"kind":"timer","node":1,"timer":"t"}]`
	for _, tc := range []struct {
		name, file, err string
	}{
		{"no version", `{"format":"livecheck-trace",` + body + `}`, ""},
		{"version 1", `{"format":"livecheck-trace","version":1,` + body + `}`, ""},
		{"version 2", `{"format":"livecheck-trace","version":2,"init":[1],` + body + `}`, ""},
		{"version 3", `{"format":"livecheck-trace","version":3,"budget":{"resets":0,"drops":0,"errors":0,"dups":2},` + body[strings.Index(body, `"seed"`):] + `,"system":"x","nodes":2,"bugs":[]}`, ""},
		{"version 4", `{"format":"livecheck-trace","version":4,"init_fp":["00000000000000aa"],` + body[:len(body)-2] + `,"fp":"00000000000000bb"}]}`, ""},
		{"version 4 slip", `{"format":"livecheck-trace","version":4,"critical":{"case":"C1","step":1,"event":"timer t at 1","node":1,"live_step":0,"slip":{"found":false,"node":0,"tried":0,"reason":"no slip found"}},` + body + `}`, ""},
		{"version 5", `{"format":"livecheck-trace","version":5,"budget":{"resets":0,"drops":0,"errors":0,"crashes":1},` + body[strings.Index(body, `"seed"`):] + `,"system":"x","nodes":2,"bugs":[]}`, ""},
		{"version 6", `{"format":"livecheck-trace","version":6,"critical":{"case":"C1","step":1,"event":"timer t at 1","node":1,"live_step":0,"odds":{"walks":20,"walk_depth":5000,"from_step":0,"recovered":[20,0]},"slip_unfinished":"the check was interrupted"},` + body + `}`, ""},
		{"newer", `{"format":"livecheck-trace","version":7,"shrunk":true,` + body + `}`,
			"trace format version 7 is not supported (this livecheck reads versions up to 6; replay it with a newer one)"},
		{"bad fp", `{"format":"livecheck-trace","version":4,` + body[:len(body)-2] + `,"fp":"xyz"}]}`,
			`the trace's step 1 has fp "xyz", not a 16-digit hex fingerprint`},
		{"negative init", `{"format":"livecheck-trace","version":2,"init":[0,-3],` + body + `}`, "the trace's init choice 1 is -3: choices are not negative"},
		{"negative", `{"format":"livecheck-trace","version":-1,` + body + `}`, "trace format version -1 is not a version"},
	} {
		tr, err := ReadTrace(strings.NewReader(tc.file))
		switch {
		case tc.err == "" && (err != nil || tr.Version != max(1, len(tr.Init)+1, 3*min(1, tr.Budget.Dups), 4*min(1, len(tr.InitFP)), 4*btoi(tr.Critical != nil), 5*min(1, tr.Budget.Crashes), 6*btoi(tr.Critical != nil && tr.Critical.Odds != nil)) || len(tr.Steps) != 1 || tr.Steps[0].Timer != "t"):
			t.Errorf("%s: %v, %+v; want its version with its step", tc.name, err, tr)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Scope says what a search covered, and under observer postponement that
// the states are the reduced search's.
func TestScope(t *testing.T) {
	for _, tc := range []struct {
		depth     int
		exhausted bool
		postponed int64
		want      string
	}{
		{1, false, 0, "every state within 1 step"},
		{20, true, 0, "every reachable state"},
		{20, true, 7, "any reachable state (observer events postponed: every violation is reachable in the reduced search, not every state)"},
		{20, false, 7, "the reduced search to depth 20 (observer events postponed: not every state within 20 steps)"},
	} {
		if got := Scope(tc.depth, tc.exhausted, tc.postponed); got != tc.want {
			t.Errorf("Scope(%d, %v, %d) = %q, want %q", tc.depth, tc.exhausted, tc.postponed, got, tc.want)
		}
	}
}

// A partition step carries its side as the nodes it cuts off, and a heal
// nothing; both come back as the events they were. A cut that is empty,
// names a node twice or one past the bound is malformed.
func TestTracePartitionSteps(t *testing.T) {
	p := sim.Path{{Event: sim.PartitionEvent(sim.NodeSet(0).Add(0).Add(2))}, {Event: sim.Event{Kind: sim.Heal}}}
	steps := FromPath(p, nil)
	if got := fmt.Sprint(steps[0].Cut); steps[0].Kind != "partition" || got != "[0 2]" || steps[1].Kind != "heal" || steps[1].Cut != nil {
		t.Fatalf("steps %+v", steps)
	}
	q, err := Path(steps)
	if err != nil || !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip: %v, %v, want %v", q, err, p)
	}
	for cut, want := range map[string]string{
		"[]":     "step 1: a partition step needs the nodes of its side (cut)",
		"[1,1]":  "step 1: a partition's cut lists node 1: nodes are 0 to 10, each once",
		"[11]":   "step 1: a partition's cut lists node 11: nodes are 0 to 10, each once",
		"[0,-1]": "step 1: a partition's cut lists node -1: nodes are 0 to 10, each once",
	} {
		var c []int
		if err := json.Unmarshal([]byte(cut), &c); err != nil {
			t.Fatal(err)
		}
		if _, err := Path([]TraceStep{{Kind: "partition", Cut: c}}); err == nil || err.Error() != want {
			t.Errorf("cut %s: %v, want %q", cut, err, want)
		}
	}
}

// A crash step round-trips; a trace with one, or with a crash budget,
// is version 5, whatever else it has; one with neither is as before.
func TestTraceCrash(t *testing.T) {
	p := append(samplePath(), sim.Step{Event: sim.Event{Kind: sim.Crash, Node: 2}}, sim.Step{Event: sim.Event{Kind: sim.Reset, Node: 2}})
	for _, tc := range []struct {
		name   string
		budget Budget
		path   sim.Path
		want   int
	}{
		{"a crash step", Budget{Resets: 1}, p, 5},
		{"a crash budget", Budget{Crashes: 1}, samplePath(), 5},
		{"neither", Budget{Resets: 1}, samplePath(), 1},
	} {
		tr := &Trace{System: "x", Nodes: 3, Budget: tc.budget, Result: "prefix", Steps: FromPath(tc.path, nil)}
		var buf bytes.Buffer
		if err := tr.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadTrace(&buf)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		q, err := Path(back.Steps)
		if err != nil || !reflect.DeepEqual(q, tc.path) || back.Version != tc.want || back.Budget != tc.budget {
			t.Errorf("%s: %v, version %d (want %d), budget %+v, path %v", tc.name, err, back.Version, tc.want, back.Budget, q)
		}
	}
	if st := FromPath(p, nil)[len(p)-2]; st.Kind != "crash" || st.Node != 2 || st.Peer != nil || st.Msg != "" {
		t.Errorf("the crash step is written %+v", st)
	}
}
