package properties_test

import (
	"testing"

	"github.com/livecheck/livecheck/properties"
	"github.com/livecheck/livecheck/sim"
)

// A History read back from its wire form is the History written: the
// same fingerprint, operations, verdict, error and dump, read into a
// History with the spec (a node as New built it) or into a zero one
// (the spec found by its name).
func TestHistoryWireForm(t *testing.T) {
	abandoned := record(properties.NewHistory(register), call(0, w(1)), call(1, r()))
	abandoned.Abandon(1)
	abandoned = record(abandoned, ret(0, 0), call(1, r()), ret(1, 1))
	cases := []struct {
		name  string
		h     properties.History
		calls int
	}{
		{"empty", properties.NewHistory(kv), 0},
		{"two keys, one pending", record(properties.NewHistory(kv), call(0, put("x", 1)), call(1, get("y")), ret(0, 0), call(0, get("x"))), 4},
		{"abandoned", abandoned, 6},
		{"nondeterministic", record(properties.NewHistory(lossy), call(0, w(1)), call(1, r()), ret(0, 0), ret(1, 0)), 4},
		{"not linearizable", record(properties.NewHistory(register), call(0, w(1)), ret(0, 0), call(1, r()), ret(1, 0), call(0, w(2))), 4},
		{"misused", record(properties.NewHistory(register), call(0, r()), ret(0, "0")), 1},
		{"zero, misused", record(properties.History{}, call(0, r())), 0},
		{"zero", properties.History{}, 0},
	}
	fp := func(h properties.History) uint64 { return sim.Fingerprint(&holder{H: h}) }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.h.WireForm()
			if len(r.Calls) != c.calls || r.Spec != c.h.Spec() || r.Err != c.h.Err() && c.h.Spec() != "" {
				t.Errorf("record %+v; want %d calls, spec %q, error %q", r, c.calls, c.h.Spec(), c.h.Err())
			}
			for _, into := range []properties.History{{}, c.h} {
				var got properties.History = into
				if err := got.SetWireForm(r); err != nil {
					t.Fatalf("SetWireForm: %v", err)
				}
				if fp(got) != fp(c.h) || got.String() != c.h.String() || got.Violation() != c.h.Violation() ||
					got.Err() != c.h.Err() || got.Events() != c.h.Events() || got.Possibilities() != c.h.Possibilities() {
					t.Errorf("read back %v (%x, %q, %q, %d events); want %v (%x, %q, %q, %d events)",
						got, fp(got), got.Violation(), got.Err(), got.Events(), c.h, fp(c.h), c.h.Violation(), c.h.Err(), c.h.Events())
				}
				if g, w := opsString(got.Ops()), opsString(c.h.Ops()); g != w {
					t.Errorf("operations read back %s; want %s", g, w)
				}
			}
		})
	}
	if err := new(properties.History).SetWireForm(properties.HistoryRecord{Spec: "nosuch"}); err == nil ||
		err.Error() != "a history of spec nosuch, which no History of this program has: build the node's History with properties.NewHistory" {
		t.Errorf("an unknown spec: %v", err)
	}
}

func opsString(ops []properties.Op) string {
	s := ""
	for _, o := range ops {
		s += o.String() + "; "
	}
	return s
}
