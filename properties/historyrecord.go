package properties

import (
	"fmt"
	"slices"
	"sync"
)

// This file is a History as a plain value, for a real run: a node's
// state crosses to another process (a state file, a report to
// `livecheck cluster`) through host's codec, which walks plain values
// and cannot carry the spec's funcs, closures that capture nothing a
// value holds. What crosses instead is the spec's name and the calls
// that built the History; the receiver finds the spec by its name among
// the specs of its program and replays the calls, which rebuilds the
// same History, fingerprint and all: the spec is deterministic, and so
// is the check.

// specs are the specs NewHistory has been given, by name (the latest of
// a name): what a HistoryRecord is replayed through where the History
// it is read into has no spec.
var specs sync.Map // string -> *model

// A HistoryRecord is a History as a plain value: the name of its spec,
// the calls that built it, in order, and a wrong use that ended it.
type HistoryRecord struct {
	Spec  string
	Calls []HistoryCall
	Err   string
}

// A HistoryCall is one call on a History: Invoke (Kind CallInvoke, V
// the input), Return (CallReturn, V the output) or Abandon (CallAbandon).
type HistoryCall struct {
	Kind   CallKind
	Client int
	V      any
}

// CallKind says which call a HistoryCall is.
type CallKind uint8

const (
	CallInvoke CallKind = iota
	CallReturn
	CallAbandon
)

// WireForm returns x as a HistoryRecord; SetWireForm reads it back.
// host's codec carries a History so.
func (x History) WireForm() HistoryRecord {
	if x.h == nil {
		return HistoryRecord{}
	}
	r := HistoryRecord{Spec: x.Spec(), Err: x.h.err}
	for e := x.h.log; e != nil; e = e.prev {
		c := HistoryCall{Client: e.client, V: e.v}
		switch {
		case e.abandon:
			c.Kind = CallAbandon
		case e.call != 0:
			c.Kind = CallReturn
		}
		r.Calls = append(r.Calls, c)
	}
	slices.Reverse(r.Calls)
	return r
}

// SetWireForm sets x to the History r records: it replays r's calls
// through r's spec, x's own if it has one of that name (a node as New
// built it), else the latest spec of that name given to NewHistory in
// this program. A spec it cannot find is an error.
func (x *History) SetWireForm(r HistoryRecord) error {
	var h History
	if r.Spec != "" {
		m := (*model)(nil)
		if x.h != nil && x.h.m != nil && x.h.m.name == r.Spec {
			m = x.h.m
		} else if v, ok := specs.Load(r.Spec); ok {
			m = v.(*model)
		}
		if m == nil {
			return fmt.Errorf("a history of spec %s, which no History of this program has: build the node's History with properties.NewHistory", r.Spec)
		}
		h = (&hist{m: m}).value()
	} else if len(r.Calls) > 0 {
		return fmt.Errorf("a history with %d calls and no spec", len(r.Calls))
	}
	for _, c := range r.Calls {
		switch c.Kind {
		case CallInvoke:
			h.Invoke(c.Client, c.V)
		case CallReturn:
			h.Return(c.Client, c.V)
		case CallAbandon:
			h.Abandon(c.Client)
		default:
			return fmt.Errorf("a history call of kind %d", c.Kind)
		}
	}
	if r.Err != "" && h.Err() == "" {
		h.fail(r.Err)
	}
	*x = h
	return nil
}
