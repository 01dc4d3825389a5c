package properties_test

import (
	"testing"

	"github.com/livecheck/livecheck/properties"
)

// CheckAfter gives no verdict where it has none to give: a History of a
// spec that panics, and one used wrongly; an empty History is
// linearizable. A history that is not linearizable is said so, after
// the fact as incrementally.
func TestCheckAfterVerdicts(t *testing.T) {
	if lin, decided := (properties.History{}).CheckAfter(0); !lin || !decided {
		t.Errorf("the zero History: linearizable %v, decided %v; want both", lin, decided)
	}
	panicky := properties.Spec[int, int, int]{Name: "panicky", Init: func() int { return 0 },
		Step: func(s, in int) []properties.Outcome[int, int] {
			if in == 2 {
				panic("no 2")
			}
			return []properties.Outcome[int, int]{{Out: s, Next: in}}
		}}
	h := properties.NewHistory(panicky)
	h.Invoke(0, 1)
	h.Return(0, 0)
	if lin, decided := h.CheckAfter(0); !lin || !decided {
		t.Errorf("write 1 returning 0: linearizable %v, decided %v; want both", lin, decided)
	}
	h.Invoke(0, 1)
	h.Return(0, 5) // the register held 1
	if lin, decided := h.CheckAfter(0); lin || !decided || h.Violation() == "" {
		t.Errorf("a return no order allows: linearizable %v, decided %v, incremental %q; want not linearizable, decided", lin, decided, h.Violation())
	}
	h = properties.NewHistory(panicky)
	h.Invoke(0, 2)
	h.Return(0, 0)
	if lin, decided := h.CheckAfter(0); decided {
		t.Errorf("a spec that panics: linearizable %v, decided; want no verdict (the History says %q)", lin, h.Err())
	}
	h = properties.NewHistory(panicky)
	h.Return(0, 0) // no operation pending: a wrong use
	if _, decided := h.CheckAfter(0); decided || h.Err() == "" {
		t.Errorf("a wrong use: decided %v, Err %q; want no verdict", decided, h.Err())
	}
}
