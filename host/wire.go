package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/livecheck/livecheck/sim"
)

// The wire format. A frame is one message from one node: the magic
// bytes "LCW", the format's version, the sender's node id, its
// Lamport clock, its snapshot epoch (see snapshot.go) and the index of
// the entry in its run log of the handler that sent the frame (0: none;
// see chain.go), all uvarints, then the message as an interface value in
// the codec's encoding (codec.go): its type's name, then the value. On a
// datagram transport a frame is one datagram; on a stream it follows its
// length as 4 bytes, big-endian. No protocol writes a codec: the codec
// walks the Go values the nodes send by reflection, as the simulator
// copies and hashes them. On a datagram the frame is followed by the
// channel's trailer; with a cluster key, a frame ends in its MAC (see
// channel.go).

const (
	wireMagic   = "LCW"
	wireVersion = 6
	// DefaultMaxMessage is the largest frame a node sends or accepts
	// when Options.MaxMessage is 0: a UDP datagram holds at most 65,507
	// bytes.
	DefaultMaxMessage = 60000
)

// errMalformed wraps every reason a frame cannot be read.
var errMalformed = errors.New("malformed frame")

// A frame is what travels: a message, its sender, and the sender's
// Lamport clock when it sent it (see runlog.go).
type frame struct {
	from  sim.NodeID
	clock uint64
	// epoch is the last snapshot the sender had recorded when it sent
	// the frame (snapshot.go): a frame from a later snapshot than the
	// receiver's makes it record first.
	epoch uint64
	// seq is the index in the sender's run log of the entry of the
	// handler that sent it (0: it keeps none): the receiver logs it,
	// and trace finds a log cut short by it (chain.go).
	seq uint64
	msg sim.Message
}

// encodeFrame appends f to buf.
func encodeFrame(buf *bytes.Buffer, f frame) error {
	b := buf.AvailableBuffer()
	b = append(b, wireMagic...)
	b = append(b, wireVersion)
	b = binary.AppendUvarint(b, uint64(f.from))
	b = binary.AppendUvarint(b, f.clock)
	b = binary.AppendUvarint(b, f.epoch)
	b = binary.AppendUvarint(b, f.seq)
	msg := f.msg
	b, err := encodeValue(b, reflect.ValueOf(&msg).Elem())
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

// decodeFrame reads a frame. Any damage is an error wrapping
// errMalformed, never a panic.
func decodeFrame(b []byte) (f frame, err error) {
	if len(b) < len(wireMagic)+4 || string(b[:len(wireMagic)]) != wireMagic {
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
	b = b[n:]
	epoch, n := binary.Uvarint(b)
	if n <= 0 {
		return f, fmt.Errorf("%w: bad snapshot epoch", errMalformed)
	}
	b = b[n:]
	seq, n := binary.Uvarint(b)
	if n <= 0 {
		return f, fmt.Errorf("%w: bad log entry", errMalformed)
	}
	var msg sim.Message
	if err := decodeValue(b[n:], reflect.ValueOf(&msg).Elem()); err != nil {
		return f, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return frame{from: sim.NodeID(id), clock: clock, epoch: epoch, seq: seq, msg: msg}, nil
}

// Types. The codec writes a value in an interface with its type's name,
// and the receiver must know the type by that name before the first
// value of it comes: registerType gives a type its name, once, and
// registerValue registers the types of a value and of everything inside
// its interfaces. Start registers those of the messages a short
// simulated run sends (see discover.go), and of Model.Messages.

var types struct {
	sync.Mutex
	names  map[reflect.Type]string
	byName map[string]reflect.Type
	errs   map[reflect.Type]error
	inner  map[reflect.Type]bool // holds an interface somewhere
}

// registerType returns t's name on the wire, registering it the first
// time: its package path and name ("*" before for a pointer), or for an
// unnamed type what reflect calls it. A type the codec cannot carry is
// an error.
func registerType(t reflect.Type) (string, error) {
	types.Lock()
	defer types.Unlock()
	if name, ok := types.names[t]; ok {
		return name, nil
	}
	if err, ok := types.errs[t]; ok {
		return "", err
	}
	if types.names == nil {
		types.names, types.byName = map[reflect.Type]string{}, map[string]reflect.Type{}
		types.errs, types.inner = map[reflect.Type]error{}, map[reflect.Type]bool{}
	}
	if err := codecOf(t).err; err != nil {
		err = fmt.Errorf("type %v cannot cross the wire: %w", t, err)
		types.errs[t] = err
		return "", err
	}
	name := t.String()
	if pt := t; pt.Name() != "" || pt.Kind() == reflect.Pointer && pt.Elem().Name() != "" {
		star := ""
		if pt.Kind() == reflect.Pointer {
			star, pt = "*", pt.Elem()
		}
		name = star + pt.PkgPath() + "." + pt.Name()
	}
	if other, ok := types.byName[name]; ok && other != t {
		err := fmt.Errorf("types %v and %v are both %q on the wire: name one of them", other, t, name)
		types.errs[t] = err
		return "", err
	}
	types.names[t], types.byName[name] = name, t
	types.inner[t] = hasInterface(t, map[reflect.Type]bool{})
	return name, nil
}

// typeNamed returns the type registered under name.
func typeNamed(name string) (reflect.Type, bool) {
	types.Lock()
	defer types.Unlock()
	t, ok := types.byName[name]
	return t, ok
}

// registerValue registers v's type, and the types of the values inside
// its interfaces.
func registerValue(v reflect.Value) error {
	if !v.IsValid() {
		return nil
	}
	if _, err := registerType(v.Type()); err != nil {
		return err
	}
	types.Lock()
	inner := types.inner[v.Type()]
	types.Unlock()
	if inner {
		return walkInterfaces(v, 0, map[objKey]bool{})
	}
	return nil
}

// walkInterfaces registers the dynamic types of the interfaces in v,
// each object behind a pointer walked once (seen).
func walkInterfaces(v reflect.Value, depth int, seen map[objKey]bool) error {
	if depth > maxDepth {
		return nil // too deep: the codec refuses it when it encodes
	}
	if sim.LeftOut(v.Type()) {
		return nil // it does not cross (codec.go)
	}
	if _, ok := wireFormOf(v.Type()); ok {
		if w, ok := wireForm(v); ok {
			return walkInterfaces(w, depth+1, seen) // what crosses
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			return registerValue(v.Elem())
		}
	case reflect.Pointer:
		if k := (objKey{v.UnsafePointer(), v.Type()}); !v.IsNil() && !seen[k] {
			seen[k] = true
			return walkInterfaces(v.Elem(), depth+1, seen)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if err := walkInterfaces(v.Field(i), depth+1, seen); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := walkInterfaces(v.Index(i), depth+1, seen); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := walkInterfaces(it.Key(), depth+1, seen); err != nil {
				return err
			}
			if err := walkInterfaces(it.Value(), depth+1, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasInterface says whether a value of type t can hold an interface.
func hasInterface(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if sim.LeftOut(t) {
		return false
	}
	if form, ok := wireFormOf(t); ok {
		return hasInterface(form, seen)
	}
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
