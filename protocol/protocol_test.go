package protocol_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

type idle struct{}

func (idle) Init(sim.Context)                             {}
func (idle) Receive(sim.Context, sim.NodeID, sim.Message) {}
func (idle) Timer(sim.Context, string)                    {}
func (idle) App(sim.Context, sim.AppCall)                 {}
func (idle) Error(sim.Context, sim.NodeID)                {}

// counters is a system with an integer parameter of each form, and one
// that is not an integer. Its Build keeps the configuration it was given.
func counters(built *protocol.Config) *protocol.System {
	return &protocol.System{
		Name: "counters",
		Params: []protocol.Param{
			{Name: "width", Default: "2", Int: true, Min: 1, Max: 8},
			{Name: "rounds", Default: "3", Int: true, Min: 1},
			{Name: "senders", Default: "1", Int: true, Min: 1, MaxNodes: true},
			{Name: "mode"},
		},
		Build: func(cfg protocol.Config) (*protocol.Model, error) {
			*built = cfg
			return &protocol.Model{
				Spec: sim.Spec{New: func(sim.NodeID) sim.Node { return idle{} }},
				Properties: []properties.Property{
					properties.Always("nothing", "nothing goes wrong", func(*sim.State) error { return nil }),
				},
			}, nil
		},
	}
}

// An integer parameter is checked in Normalize, in one wording that names
// the flag, the range and the value given; Build reads the checked value.
func TestIntParam(t *testing.T) {
	for _, tc := range []struct {
		nodes  int
		params map[string]string
		err    string         // the whole error; "" for none
		want   map[string]int // IntParam of each, when valid
	}{
		{0, nil, "", map[string]int{"width": 2, "rounds": 3, "senders": 1}},
		{0, map[string]string{"width": "x"}, `--width must be a whole number from 1 to 8, not "x"`, nil},
		{0, map[string]string{"width": ""}, `--width must be a whole number from 1 to 8, not ""`, nil},
		{0, map[string]string{"width": "2.5"}, `--width must be a whole number from 1 to 8, not "2.5"`, nil},
		{0, map[string]string{"width": "0"}, `--width must be a whole number from 1 to 8, not "0"`, nil},
		{0, map[string]string{"width": "12"}, `--width must be a whole number from 1 to 8, not "12"`, nil},
		{0, map[string]string{"width": "8"}, "", map[string]int{"width": 8}},
		{0, map[string]string{"width": " 4 "}, "", map[string]int{"width": 4}},
		// No Max: any value from Min up.
		{0, map[string]string{"rounds": "1000000"}, "", map[string]int{"rounds": 1000000}},
		{0, map[string]string{"rounds": "0"}, `--rounds must be a whole number of at least 1, not "0"`, nil},
		{0, map[string]string{"rounds": "many"}, `--rounds must be a whole number of at least 1, not "many"`, nil},
		// MaxNodes: at most the number of nodes.
		{3, map[string]string{"senders": "3"}, "", map[string]int{"senders": 3}},
		{3, map[string]string{"senders": "4"}, `--senders must be a whole number from 1 to 3 (the number of nodes), not "4"`, nil},
		{5, map[string]string{"senders": "4"}, "", map[string]int{"senders": 4}},
		// A parameter that is not an integer is left as given.
		{0, map[string]string{"mode": "12"}, "", map[string]int{"width": 2}},
	} {
		var built protocol.Config
		_, _, err := counters(&built).Model(protocol.Config{Nodes: tc.nodes, Params: tc.params})
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("nodes %d, params %q: error %v, want %q", tc.nodes, tc.params, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("nodes %d, params %q: %v", tc.nodes, tc.params, err)
			continue
		}
		for name, want := range tc.want {
			if got := built.IntParam(name); got != want {
				t.Errorf("params %q: IntParam(%q) = %d, want %d", tc.params, name, got, want)
			}
		}
	}
}

// What Normalize keeps is the number itself, so that it reads the same
// when given again.
func TestIntParamNormalized(t *testing.T) {
	cfg, err := counters(new(protocol.Config)).Normalize(protocol.Config{Params: map[string]string{"width": " 04", "mode": " x "}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params["width"] != "4" || cfg.Params["mode"] != " x " || cfg.IntParam("mode") != 0 || cfg.IntParam("absent") != 0 {
		t.Errorf("normalized params %q", cfg.Params)
	}
}

// A badly declared integer parameter is an error naming it.
func TestIntParamValidate(t *testing.T) {
	for _, tc := range []struct {
		p    protocol.Param
		want string
	}{
		{protocol.Param{Name: "n", Min: 1}, "Params: n has Min, Max or MaxNodes but not Int, which they bound"},
		{protocol.Param{Name: "n", MaxNodes: true}, "Params: n has Min, Max or MaxNodes but not Int, which they bound"},
		{protocol.Param{Name: "n", Int: true, Min: 3, Max: 2}, "Params: n has Max 2: give at least Min, 3, or 0 for no upper bound"},
		{protocol.Param{Name: "n", Int: true, Max: -1}, "Params: n has Max -1: give at least Min, 0, or 0 for no upper bound"},
		{protocol.Param{Name: "n", Int: true, Max: 4, MaxNodes: true}, "Params: n has both Max and MaxNodes"},
		{protocol.Param{Name: "n", Int: true, Min: 1, Max: 4, Default: "5"}, `Params: the Default of n: --n must be a whole number from 1 to 4, not "5"`},
		{protocol.Param{Name: "n", Int: true, Min: 1, MaxNodes: true, Default: "0"}, `Params: the Default of n: --n must be a whole number of at least 1, not "0"`},
	} {
		s := counters(new(protocol.Config))
		s.Params = []protocol.Param{tc.p}
		err := s.Validate()
		if want := `system "counters": ` + tc.want; err == nil || err.Error() != want {
			t.Errorf("%+v: %v, want %q", tc.p, err, want)
		}
	}
	if err := counters(new(protocol.Config)).Validate(); err != nil {
		t.Errorf("valid parameters: %v", err)
	}
}

// A bug's value with a range reads as a parameter's does.
func TestWholeNumber(t *testing.T) {
	_, err := protocol.WholeNumber("4", "the quorum size K in --bug quorum=K", 1, 3, "acceptors")
	if want := `the quorum size K in --bug quorum=K must be a whole number from 1 to 3 (the number of acceptors), not "4"`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if v, err := protocol.WholeNumber("3", "K", 1, 3, "acceptors"); v != 3 || err != nil {
		t.Errorf("3 of 1 to 3: %d, %v", v, err)
	}
	if _, err := protocol.WholeNumber("-1", "K", 0, 0, ""); err == nil || !strings.Contains(err.Error(), "at least 0") {
		t.Errorf("-1 of at least 0: %v", err)
	}
}

// A timer's timing is its own, its layer-less name's, the model's "*",
// or the default, in that order.
func TestTimingOf(t *testing.T) {
	m := &protocol.Model{Timers: map[string]protocol.Timing{
		"lease": {After: time.Second}, "retransmit": {After: 2 * time.Second}, "*": {After: 3 * time.Second}}}
	for name, want := range map[string]time.Duration{"lease": time.Second, "transport/retransmit": 2 * time.Second, "work": 3 * time.Second} {
		if got := m.TimingOf(name).After; got != want {
			t.Errorf("TimingOf(%q) waits %v, want %v", name, got, want)
		}
	}
	if got := (&protocol.Model{}).TimingOf("x"); got != protocol.DefaultTiming {
		t.Errorf("a model without timers gives %+v, want DefaultTiming", got)
	}
}
