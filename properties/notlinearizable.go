package properties

import (
	"fmt"
	"strings"

	"github.com/livecheck/livecheck/sim"
)

// NotLinearizable is why a History is not linearizable, as data: what
// History.Violation says in words, for reports that lay the operations
// out (a list in JSON, a timeline).
type NotLinearizable struct {
	// Spec names the spec; Key is the key of the operations that cannot
	// be ordered ("" for a spec without Key).
	Spec, Key string
	// Op is the operation whose response no order allows: its Output is
	// that response, its Return the response's event, the last the
	// History recorded.
	Op Op
	// Before are the operations on Key that returned before Op was
	// invoked; Concurrent the others on Key, invoked before Op returned
	// and not returned before it was invoked (pending ones among them).
	// Both in the order of their invocations.
	Before, Concurrent []Op
	// States are the states the spec can be in on Key just before Op's
	// response, in words, sorted.
	States []string
	// Prefix is the length of the longest linearizable prefix of the
	// history: its first Prefix events, all but Op's response. The
	// check stops at the first response no order allows, so what came
	// before it is linearizable.
	Prefix int
	// Order lists the prefix's operations on Key in an order that one
	// copy of the object can run them, each returning what it did: every
	// one that returned within the prefix, and those pending (Return 0)
	// that had to take effect for the others to return what they did.
	// Op is not among them. Nil where the prefix holds more than
	// MaxPending operations on Key, or ordering it would explore more
	// than MaxPossibilities.
	Order []Op
}

// NotLinearizable returns why the operations recorded are not
// linearizable (nil while they are), with an order of the longest
// linearizable prefix, which it works out on each call.
func (x History) NotLinearizable() *NotLinearizable {
	if x.h == nil || x.h.nl == nil {
		return nil
	}
	nl := *x.h.nl
	nl.Order = x.h.order(&nl)
	return &nl
}

func (nl *NotLinearizable) String() string {
	var b strings.Builder
	key := ""
	if nl.Key != "" {
		key = " on key " + nl.Key
	}
	fmt.Fprintf(&b, "not linearizable (%s%s): client %d's %v returned %v, which no order of the operations allows",
		nl.Spec, key, nl.Op.Client, nl.Op.Input, nl.Op.Output)
	fmt.Fprintf(&b, "; the operation: %s", nl.Op)
	list := func(ops []Op) string {
		s := make([]string, len(ops))
		for i, o := range ops {
			s[i] = o.String()
		}
		return strings.Join(s, ", ")
	}
	if len(nl.Before) > 0 {
		fmt.Fprintf(&b, "; completed before it: %s", list(nl.Before))
	}
	if len(nl.Concurrent) > 0 {
		fmt.Fprintf(&b, "; concurrent with it: %s", list(nl.Concurrent))
	}
	fmt.Fprintf(&b, "; the spec's state before it can be: %s", strings.Join(nl.States, " or "))
	return b.String()
}

// order finds an order of the operations on nl.Key in the first
// nl.Prefix events of h that the spec allows (see NotLinearizable.Order),
// by Wing and Gong's search: an operation may go next once every one
// that returned before it was invoked has gone; one that returned must
// return what it did; a pending one may go or not. Pairs of (operations
// gone, state) already tried and failed are not tried again.
func (h *hist) order(nl *NotLinearizable) []Op {
	var ops []Op
	for _, o := range h.log.ops() {
		if o.Key != nl.Key || o.Call == nl.Op.Call || o.Call > nl.Prefix {
			continue
		}
		if o.Return > nl.Prefix {
			o.Output, o.Return = nil, 0
		}
		ops = append(ops, o)
	}
	if len(ops) > MaxPending {
		return nil
	}
	// must: the operations that returned; after[i]: those that returned
	// before ops[i] was invoked.
	var must uint64
	after := make([]uint64, len(ops))
	for i, o := range ops {
		if o.Return != 0 {
			must |= 1 << uint(i)
		}
		for k, p := range ops {
			if p.Return != 0 && p.Return < o.Call {
				after[i] |= 1 << uint(k)
			}
		}
	}
	init, err := guarded(h.m.init)
	if err != "" {
		return nil
	}
	type tried struct {
		gone  uint64
		state any
	}
	failed := map[tried]bool{}
	var path []int
	explored := 0
	var search func(gone uint64, state any) (found, ok bool)
	search = func(gone uint64, state any) (bool, bool) {
		if gone&must == must {
			return true, true
		}
		if failed[tried{gone, state}] {
			return false, true
		}
		if explored++; explored > MaxPossibilities {
			return false, false
		}
		// Those that returned first: a pending one goes only where it
		// must.
		for _, pending := range []bool{false, true} {
			for i, o := range ops {
				bit := uint64(1) << uint(i)
				if gone&bit != 0 || after[i]&^gone != 0 || (o.Return == 0) != pending {
					continue
				}
				os, e := guardedStep(h.m, state, o.Input)
				if e != "" {
					return false, false
				}
				for _, oc := range os {
					if !pending && oc.out != o.Output {
						continue
					}
					path = append(path, i)
					found, ok := search(gone|bit, oc.next)
					if found || !ok {
						return found, ok
					}
					path = path[:len(path)-1]
				}
			}
		}
		failed[tried{gone, state}] = true
		return false, true
	}
	if found, _ := search(0, init); !found {
		return nil
	}
	out := make([]Op, len(path))
	for k, i := range path {
		out[k] = ops[i]
	}
	return out
}

// HistoriesOf returns the Histories that node n holds: fields of its
// struct, or of structs it embeds by value (each layer of a
// sim.Stacked), in the order of the fields.
func HistoriesOf(n sim.Node) []History { return historiesOf(n) }
