package host

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/livecheck/livecheck/sim"
)

// The wire format. A frame is one message from one node: the magic
// bytes "LCW", the format's version, the sender's node id and its
// Lamport clock (uvarints), then the message as encoding/gob writes a struct whose one field is
// the message as an interface value, so that gob names its concrete
// type. On a datagram transport a frame is one datagram; on a stream it
// follows its length as 4 bytes, big-endian. No protocol writes a codec:
// gob encodes the Go values the nodes send, by reflection, as the
// simulator copies and hashes them.
//
// gob carries exported fields only. A message type with an unexported
// field, anywhere in it, would arrive changed, and the node that gets it
// would not be the node the checker checked: encode refuses it, and the
// host logs and counts the message as unsendable.

const (
	wireMagic   = "LCW"
	wireVersion = 1
	// DefaultMaxMessage is the largest frame a node sends or accepts
	// when Options.MaxMessage is 0: a UDP datagram holds at most 65,507
	// bytes.
	DefaultMaxMessage = 60000
)

// envelope is what gob encodes: the message as an interface value.
type envelope struct{ M sim.Message }

// errMalformed wraps every reason a frame cannot be read.
var errMalformed = errors.New("malformed frame")

// A frame is what travels: a message, its sender, and the sender's
// Lamport clock when it sent it (see runlog.go).
type frame struct {
	from  sim.NodeID
	clock uint64
	msg   sim.Message
}

// encodeFrame appends f to buf.
func encodeFrame(buf *bytes.Buffer, f frame) error {
	if err := registerValue(reflect.ValueOf(f.msg)); err != nil {
		return err
	}
	buf.WriteString(wireMagic)
	buf.WriteByte(wireVersion)
	var n [2 * binary.MaxVarintLen64]byte
	k := binary.PutUvarint(n[:], uint64(f.from))
	k += binary.PutUvarint(n[k:], f.clock)
	buf.Write(n[:k])
	return gob.NewEncoder(buf).Encode(envelope{f.msg})
}

// decodeFrame reads a frame. Any damage is an error wrapping
// errMalformed, never a panic.
func decodeFrame(b []byte) (f frame, err error) {
	if len(b) < len(wireMagic)+3 || string(b[:len(wireMagic)]) != wireMagic {
		return f, fmt.Errorf("%w: no magic", errMalformed)
	}
	if v := b[len(wireMagic)]; v != wireVersion {
		return f, fmt.Errorf("%w: version %d, not %d", errMalformed, v, wireVersion)
	}
	b = b[len(wireMagic)+1:]
	id, n := binary.Uvarint(b)
	if n <= 0 || id > 1<<20 {
		return f, fmt.Errorf("%w: bad sender", errMalformed)
	}
	b = b[n:]
	clock, n := binary.Uvarint(b)
	if n <= 0 {
		return f, fmt.Errorf("%w: bad clock", errMalformed)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errMalformed, r)
		}
	}()
	var e envelope
	if err := gob.NewDecoder(bytes.NewReader(b[n:])).Decode(&e); err != nil {
		return f, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return frame{from: sim.NodeID(id), clock: clock, msg: e.M}, nil
}

// Types. gob decodes an interface value only into a type registered
// under the name the sender wrote, so both ends must have registered
// every concrete type a message holds before the first one arrives:
// registerValue registers the types of a value and of everything inside
// its interfaces, and Start registers those of the messages a short
// simulated run sends (see discover.go), and of Model.Messages.

var types struct {
	sync.Mutex
	done  map[reflect.Type]error // registered (nil) or refused
	inner map[reflect.Type]bool  // holds an interface somewhere
}

// registerValue registers v's type, and the types of the values inside
// its interfaces, with gob.
func registerValue(v reflect.Value) error {
	if !v.IsValid() {
		return nil
	}
	if err := registerType(v.Type()); err != nil {
		return err
	}
	types.Lock()
	inner := types.inner[v.Type()]
	types.Unlock()
	if inner {
		return walkInterfaces(v, 0)
	}
	return nil
}

// walkInterfaces registers the dynamic types of the interfaces in v.
func walkInterfaces(v reflect.Value, depth int) error {
	if depth > 64 {
		return nil // a cycle: gob refuses it when it encodes
	}
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			return registerValue(v.Elem())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return walkInterfaces(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if err := walkInterfaces(v.Field(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := walkInterfaces(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := walkInterfaces(it.Key(), depth+1); err != nil {
				return err
			}
			if err := walkInterfaces(it.Value(), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// registerType registers t with gob under its package path and name,
// once; a type gob would carry changed is refused.
func registerType(t reflect.Type) error {
	types.Lock()
	defer types.Unlock()
	if err, ok := types.done[t]; ok {
		return err
	}
	if types.done == nil {
		types.done, types.inner = map[reflect.Type]error{}, map[reflect.Type]bool{}
	}
	err := lossless(t, map[reflect.Type]bool{})
	if err == nil {
		err = gobRegister(t)
	}
	types.done[t] = err
	types.inner[t] = hasInterface(t, map[reflect.Type]bool{})
	return err
}

// gobRegister registers t under a name that says its package.
func gobRegister(t reflect.Type) (err error) {
	defer func() {
		// gob panics when the name or the type is registered already
		// under another: someone registered it by hand, which does.
		if r := recover(); r != nil {
			err = nil
		}
	}()
	name := t.String()
	if pt := t; pt.Name() != "" || pt.Kind() == reflect.Pointer && pt.Elem().Name() != "" {
		star := ""
		if pt.Kind() == reflect.Pointer {
			star, pt = "*", pt.Elem()
		}
		name = star + pt.PkgPath() + "." + pt.Name()
	}
	gob.RegisterName(name, reflect.Zero(t).Interface())
	return nil
}

// lossless says why gob would not carry a value of type t as it is: an
// unexported field, a channel or a function.
func lossless(t reflect.Type, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if t.Implements(gobEncoder) || reflect.PointerTo(t).Implements(gobEncoder) {
		return nil
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return fmt.Errorf("a %v cannot cross the wire", t)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return lossless(t.Elem(), seen)
	case reflect.Map:
		if err := lossless(t.Key(), seen); err != nil {
			return err
		}
		return lossless(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				if f.Type.Size() == 0 {
					continue // sim.BaseNode and the like: nothing to lose
				}
				return fmt.Errorf("message type %v has an unexported field %s, which the wire would lose: export it", t, f.Name)
			}
			if err := lossless(f.Type, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

var gobEncoder = reflect.TypeFor[gob.GobEncoder]()

// hasInterface says whether a value of type t can hold an interface.
func hasInterface(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return hasInterface(t.Elem(), seen)
	case reflect.Map:
		return hasInterface(t.Key(), seen) || hasInterface(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasInterface(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// bytesBuffer is a bytes.Buffer, for a frame built outside a node.
type bytesBuffer struct{ bytes.Buffer }
