package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Durable fields are what a node keeps across a reset, as a disk keeps a
// write-ahead log or an acceptor's promise: a field of the node's struct
// tagged `livecheck:"durable"`. A reset builds the node again with
// Spec.New, copies the durable fields of the crashed node into it, and
// runs Init, which finds them as they were. They are ordinary fields
// otherwise, hashed, copied and dumped with the rest of the node state, so
// properties read them as they read any field.

// durableTag is the struct tag value that marks a durable field.
const durableTag = "durable"

var durables sync.Map // reflect.Type (the node type) -> [][]int, the durable fields' index paths

// durableFields returns the index paths of node type t's durable fields:
// the fields of the struct t points to, and of structs it embeds by value,
// tagged `livecheck:"durable"`. A node that is not a pointer to a struct
// has none: its handlers could not change them.
func durableFields(t reflect.Type) [][]int {
	if v, ok := durables.Load(t); ok {
		return v.([][]int)
	}
	var paths [][]int
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		st := t.Elem()
		for _, f := range reflect.VisibleFields(st) {
			if f.Tag.Get("livecheck") == durableTag && byValue(st, f.Index) {
				paths = append(paths, f.Index)
			}
		}
	}
	v, _ := durables.LoadOrStore(t, paths)
	return v.([][]int)
}

// byValue says whether the field at path is reached without following a
// pointer (an embedded *T may be nil in the new node).
func byValue(st reflect.Type, path []int) bool {
	for _, i := range path[:len(path)-1] {
		st = st.Field(i).Type
		if st.Kind() != reflect.Struct {
			return false
		}
	}
	return true
}

// keepDurable returns fresh, the node New built for a reset, with the
// durable fields of old, the node that crashed, deep-copied into it (old
// is shared with other states and must not be changed).
func keepDurable(id NodeID, old, fresh Node) (Node, error) {
	if old == nil {
		return fresh, nil
	}
	if os, ok := old.(*Stacked); ok {
		return keepDurableLayers(id, os, fresh)
	}
	t := reflect.TypeOf(old)
	paths := durableFields(t)
	if len(paths) == 0 {
		return fresh, nil
	}
	if ft := reflect.TypeOf(fresh); ft != t {
		return nil, fmt.Errorf("node %d is a %v with durable fields, but New built a %v for its restart: durable fields need the same type", id, t, ft)
	}
	src, dst := reflect.ValueOf(old), reflect.ValueOf(fresh)
	if src.IsNil() || dst.IsNil() {
		return nil, fmt.Errorf("node %d: a nil %v has no durable fields to keep", id, t)
	}
	src, dst = src.Elem(), dst.Elem()
	for _, path := range paths {
		d, s := writable(dst.FieldByIndex(path)), writable(src.FieldByIndex(path))
		d.Set(s)
		deepCopyInto(planOf(d.Type()), d, s)
	}
	return fresh, nil
}

// keepDurableLayers keeps the durable fields of each layer of a stacked
// node in the same layer of fresh, which must be a stack of the same
// layers.
func keepDurableLayers(id NodeID, old *Stacked, fresh Node) (Node, error) {
	fs, ok := fresh.(*Stacked)
	if !ok || fs == nil || !slices.Equal(fs.names, old.names) {
		return nil, fmt.Errorf("node %d is a stack of layers %s, but New built a %v for its restart: durable fields need the same layers",
			id, strings.Join(old.names, ", "), describeNode(fresh))
	}
	for i, l := range old.layers {
		n, err := keepDurable(id, l, fs.layers[i])
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", old.names[i], err)
		}
		fs.layers[i] = n
	}
	return fs, nil
}

func describeNode(n Node) string {
	if s, ok := n.(*Stacked); ok && s != nil {
		return "stack of layers " + strings.Join(s.names, ", ")
	}
	return fmt.Sprintf("%T", n)
}

// A DurableField is one durable field of a node, as a host keeps it on
// disk: its name and the field itself, settable even when unexported.
type DurableField struct {
	// Name is the field's name, its path through embedded structs joined
	// with '.', after the layer's name and a '/' in a stacked node
	// ("Lease", "transport/Seq").
	Name  string
	Value reflect.Value
}

// DurableFields returns node n's durable fields, layer by layer in a
// stacked node, in a fixed order: what a host (package host) writes to
// disk after each handler, and loads into the node New builds for a
// restart before its Init, as a reset keeps them in the world.
func DurableFields(n Node) []DurableField {
	var out []DurableField
	if s, ok := n.(*Stacked); ok {
		if s == nil {
			return nil
		}
		for i, l := range s.layers {
			for _, f := range DurableFields(l) {
				f.Name = s.names[i] + "/" + f.Name
				out = append(out, f)
			}
		}
		return out
	}
	if n == nil {
		return nil
	}
	t := reflect.TypeOf(n)
	paths := durableFields(t)
	v := reflect.ValueOf(n)
	if len(paths) == 0 || v.IsNil() {
		return nil
	}
	v = v.Elem()
	for _, path := range paths {
		var name []string
		st := v.Type()
		for _, i := range path {
			f := st.Field(i)
			name = append(name, f.Name)
			st = f.Type
		}
		out = append(out, DurableField{Name: strings.Join(name, "."), Value: writable(v.FieldByIndex(path))})
	}
	return out
}
