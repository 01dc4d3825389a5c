package properties

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/livecheck/livecheck/sim"
)

// Linearizable returns a safety property named "linearizable": every
// History of spec that a node holds (a field of the node's struct, or of
// a struct it embeds) is linearizable. A History checks itself as it
// records (see History), so the property only reads its verdict; a
// violation is History.Violation, which names the operation that cannot
// return what it did and the operations before and beside it.
//
// A state in which no node holds a History of spec is a property error,
// as for the helpers over one node type: the property would hold
// vacuously. So is a History's Err (a wrong use, a history too wide).
// A spec without a Name, Init or Step panics here: it is a bug in the
// system's definition, found when it is built.
//
//	props := []properties.Property{properties.Linearizable(kvSpec)}
func Linearizable[S, I, O comparable](spec Spec[S, I, O]) Property {
	if err := validate(spec); err != nil {
		panic(err.Error())
	}
	name := spec.Name
	return Always("linearizable", fmt.Sprintf("every client history of %s is linearizable", name),
		func(s *sim.State) error { return linearizable(s, name) })
}

// linearizable is Linearizable's predicate over the histories of the
// spec named name.
func linearizable(s *sim.State, name string) error {
	found := false
	for i := range s.N() {
		n := s.Node(sim.NodeID(i))
		for _, h := range historiesOf(n) {
			if h.Spec() != name && h.Err() == "" {
				continue
			}
			found = true
			if e := h.Err(); e != "" {
				panic(fmt.Sprintf("node %d's history: %s", i, e))
			}
			if v := h.Violation(); v != "" {
				return fmt.Errorf("node %d: %s", i, v)
			}
		}
	}
	if !found && s.N() > 0 {
		panic(fmt.Sprintf("no node holds a properties.History of spec %s: the property would hold vacuously (a History is a field of a node's struct, built with properties.NewHistory)", name))
	}
	return nil
}

// historyFields caches, per node type (a pointer to a struct), the index
// paths of its History fields.
var historyFields sync.Map // reflect.Type -> [][]int

var historyType = reflect.TypeFor[History]()

// historiesOf returns the Histories that node n holds: fields of its
// struct, or of structs it embeds by value. A stacked node's layers are
// each looked at.
func historiesOf(n sim.Node) []History {
	if st, ok := n.(*sim.Stacked); ok {
		var out []History
		for i := range st.Len() {
			_, l := st.Layer(i)
			out = append(out, historiesOf(l)...)
		}
		return out
	}
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	v = v.Elem()
	paths, ok := historyFields.Load(v.Type())
	if !ok {
		paths, _ = historyFields.LoadOrStore(v.Type(), findHistories(v.Type(), nil))
	}
	var out []History
	for _, p := range paths.([][]int) {
		f := v.FieldByIndex(p)
		// Unexported fields are read through their address: a History
		// is a value the property only reads.
		out = append(out, *(*History)(f.Addr().UnsafePointer()))
	}
	return out
}

// findHistories returns the index paths of t's History fields, into
// structs embedded by value.
func findHistories(t reflect.Type, at []int) [][]int {
	var out [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		path := append(append([]int(nil), at...), i)
		switch {
		case f.Type == historyType:
			out = append(out, path)
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, findHistories(f.Type, path)...)
		}
	}
	return out
}
