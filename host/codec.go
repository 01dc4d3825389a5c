package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"

	"github.com/livecheck/livecheck/sim"
)

// The codec: what carries a Go value across the wire (and into a state
// file) without a codec per protocol. It walks the value by reflection,
// as the simulator copies and hashes it, every field included, exported
// or not, so that the value that arrives is the value that was sent:
// its fingerprint is the same. A value in an interface is written with
// its type's name, which the receiver looks up among the types
// registered (see registerType): every type a node has sent, and those
// a short simulated run of the system sends (discover.go). Channels,
// functions and unsafe pointers cannot cross; pointers are followed (a
// value that shares a pointee writes it twice, and a cycle is refused
// past a depth). Each type's walk is built once and cached.
//
// The encoding: bools one byte; integers as varints (zigzag when
// signed); floats their 8 bytes; strings and byte slices their length
// then their bytes; a slice, map or pointer 0 when nil, else its length
// plus one (1 for a pointer) then its elements (a map's as key, value
// pairs); an array its elements; a struct its fields in order; an
// interface 0 when nil, else its type's name as a string then the value.

// maxDepth bounds the nesting of a value: a cycle of pointers, or a
// message built to exhaust the stack, ends there.
const maxDepth = 100

// errCodec wraps every reason a value cannot be decoded.
var errCodec = errors.New("bad encoding")

type (
	encodeFunc func(e *encoder, v reflect.Value)
	decodeFunc func(d *decoder, v reflect.Value) // v settable
)

type codec struct {
	enc encodeFunc
	dec decodeFunc
	err error // the type cannot cross the wire
}

var codecs sync.Map // reflect.Type -> *codec

// codecOf returns t's codec, building it once.
func codecOf(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	c := buildCodec(t, map[reflect.Type]*codec{})
	v, _ := codecs.LoadOrStore(t, c)
	return v.(*codec)
}

// buildCodec builds t's codec; building holds the codecs under way, so
// that a recursive type (a list node pointing to the next) refers to its
// own, filled in when done.
func buildCodec(t reflect.Type, building map[reflect.Type]*codec) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	if c, ok := building[t]; ok {
		return c
	}
	c := &codec{}
	building[t] = c
	if sim.LeftOut(t) {
		// A mutex, protobuf's internal state, a logger: what the
		// checker's copies and fingerprints leave out is not the
		// node's state, and does not cross either. It arrives zero.
		c.enc = func(*encoder, reflect.Value) {}
		c.dec = func(*decoder, reflect.Value) {}
		return c
	}
	switch t.Kind() {
	case reflect.Bool:
		c.enc = func(e *encoder, v reflect.Value) {
			if v.Bool() {
				e.b = append(e.b, 1)
			} else {
				e.b = append(e.b, 0)
			}
		}
		c.dec = func(d *decoder, v reflect.Value) { v.SetBool(d.byte() != 0) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.enc = func(e *encoder, v reflect.Value) { e.b = binary.AppendVarint(e.b, v.Int()) }
		c.dec = func(d *decoder, v reflect.Value) {
			x := d.varint()
			if v.OverflowInt(x) {
				d.fail("%d overflows a %v", x, v.Type())
				return
			}
			v.SetInt(x)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.enc = func(e *encoder, v reflect.Value) { e.b = binary.AppendUvarint(e.b, v.Uint()) }
		c.dec = func(d *decoder, v reflect.Value) {
			x := d.uvarint()
			if v.OverflowUint(x) {
				d.fail("%d overflows a %v", x, v.Type())
				return
			}
			v.SetUint(x)
		}
	case reflect.Float32, reflect.Float64:
		c.enc = func(e *encoder, v reflect.Value) {
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v.Float()))
		}
		c.dec = func(d *decoder, v reflect.Value) { v.SetFloat(math.Float64frombits(d.uint64())) }
	case reflect.Complex64, reflect.Complex128:
		c.enc = func(e *encoder, v reflect.Value) {
			x := v.Complex()
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(real(x)))
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(imag(x)))
		}
		c.dec = func(d *decoder, v reflect.Value) {
			re := math.Float64frombits(d.uint64())
			v.SetComplex(complex(re, math.Float64frombits(d.uint64())))
		}
	case reflect.String:
		c.enc = func(e *encoder, v reflect.Value) {
			s := v.String()
			e.b = binary.AppendUvarint(e.b, uint64(len(s)))
			e.b = append(e.b, s...)
		}
		c.dec = func(d *decoder, v reflect.Value) { v.SetString(string(d.bytes(d.length(1)))) }
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			c.enc = func(e *encoder, v reflect.Value) {
				if v.IsNil() {
					e.b = append(e.b, 0)
					return
				}
				e.b = binary.AppendUvarint(e.b, uint64(v.Len())+1)
				e.b = append(e.b, v.Bytes()...)
			}
			c.dec = func(d *decoder, v reflect.Value) {
				n, ok := d.nilOrLength(1)
				if ok {
					b := reflect.MakeSlice(t, n, n)
					copy(b.Bytes(), d.bytes(n))
					v.Set(b)
				}
			}
			break
		}
		ec := buildCodec(t.Elem(), building)
		c.err = ec.err
		min := minSize(t.Elem())
		c.enc = func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.b = append(e.b, 0)
				return
			}
			n := v.Len()
			e.b = binary.AppendUvarint(e.b, uint64(n)+1)
			for i := 0; i < n; i++ {
				ec.enc(e, v.Index(i))
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			n, ok := d.nilOrLength(min)
			if !ok {
				return
			}
			s := reflect.MakeSlice(t, n, n)
			for i := 0; i < n && d.err == nil; i++ {
				ec.dec(d, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Array:
		ec := buildCodec(t.Elem(), building)
		c.err = ec.err
		n := t.Len()
		c.enc = func(e *encoder, v reflect.Value) {
			for i := 0; i < n; i++ {
				ec.enc(e, v.Index(i))
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			for i := 0; i < n && d.err == nil; i++ {
				ec.dec(d, v.Index(i))
			}
		}
	case reflect.Map:
		kc, vc := buildCodec(t.Key(), building), buildCodec(t.Elem(), building)
		c.err = errors.Join(kc.err, vc.err)
		min := minSize(t.Key()) + minSize(t.Elem())
		c.enc = func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.b = append(e.b, 0)
				return
			}
			e.b = binary.AppendUvarint(e.b, uint64(v.Len())+1)
			it := v.MapRange()
			for it.Next() {
				kc.enc(e, it.Key())
				vc.enc(e, it.Value())
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			n, ok := d.nilOrLength(min)
			if !ok {
				return
			}
			m := reflect.MakeMapWithSize(t, n)
			k, x := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			for i := 0; i < n && d.err == nil; i++ {
				k.SetZero()
				x.SetZero()
				kc.dec(d, k)
				vc.dec(d, x)
				m.SetMapIndex(k, x)
			}
			v.Set(m)
		}
	case reflect.Pointer:
		ec := buildCodec(t.Elem(), building)
		c.err = ec.err
		c.enc = func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.b = append(e.b, 0)
				return
			}
			e.b = append(e.b, 1)
			if e.enter() {
				ec.enc(e, v.Elem())
				e.depth--
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			if d.byte() == 0 || d.err != nil {
				v.SetZero()
				return
			}
			if !d.enter() {
				return
			}
			p := reflect.New(t.Elem())
			ec.dec(d, p.Elem())
			d.depth--
			v.Set(p)
		}
	case reflect.Struct:
		type field struct {
			i int
			c *codec
		}
		var fields []field
		for i := 0; i < t.NumField(); i++ {
			if sim.FieldZeroed(t, i) {
				continue // a cache (protobuf's sizeCache): it arrives zero
			}
			fc := buildCodec(t.Field(i).Type, building)
			if fc.err != nil && c.err == nil {
				c.err = fmt.Errorf("field %s of %v: %w", t.Field(i).Name, t, fc.err)
			}
			fields = append(fields, field{i, fc})
		}
		c.enc = func(e *encoder, v reflect.Value) {
			for _, f := range fields {
				f.c.enc(e, v.Field(f.i))
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			for _, f := range fields {
				if d.err != nil {
					return
				}
				f.c.dec(d, settable(v.Field(f.i)))
			}
		}
	case reflect.Interface:
		c.enc = func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.b = append(e.b, 0)
				return
			}
			x := v.Elem()
			name, err := registerType(x.Type())
			if err != nil {
				e.fail(err)
				return
			}
			e.b = append(e.b, 1)
			e.b = binary.AppendUvarint(e.b, uint64(len(name)))
			e.b = append(e.b, name...)
			if e.enter() {
				codecOf(x.Type()).enc(e, x)
				e.depth--
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			if d.byte() == 0 || d.err != nil {
				v.SetZero()
				return
			}
			name := string(d.bytes(d.length(1)))
			xt, ok := typeNamed(name)
			switch {
			case d.err != nil:
				return
			case !ok:
				d.fail("unknown type %q", name)
				return
			case !xt.AssignableTo(t):
				d.fail("a %v is not a %v", xt, t)
				return
			}
			if !d.enter() {
				return
			}
			x := reflect.New(xt).Elem()
			codecOf(xt).dec(d, x)
			d.depth--
			v.Set(x)
		}
	default:
		c.err = fmt.Errorf("a %v cannot cross the wire", t)
		c.enc = func(e *encoder, v reflect.Value) { e.fail(c.err) }
		c.dec = func(d *decoder, v reflect.Value) { d.fail("%v", c.err) }
	}
	return c
}

// minSize is the fewest bytes a value of type t takes: what bounds a
// slice's or map's length by the bytes left.
func minSize(t reflect.Type) int {
	if sim.LeftOut(t) {
		return 0
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return 8
	case reflect.Complex64, reflect.Complex128:
		return 16
	case reflect.Array:
		return t.Len() * minSize(t.Elem())
	case reflect.Struct:
		n := 0
		for i := 0; i < t.NumField(); i++ {
			if !sim.FieldZeroed(t, i) {
				n += minSize(t.Field(i).Type)
			}
		}
		return n
	}
	return 1
}

// settable returns v, a field reached through an addressable struct,
// settable even when it is unexported.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

type encoder struct {
	b     []byte
	depth int
	err   error
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *encoder) enter() bool {
	e.depth++
	if e.depth > maxDepth {
		e.fail(fmt.Errorf("the value nests deeper than %d (a cycle of pointers?)", maxDepth))
		return false
	}
	return true
}

type decoder struct {
	b     []byte
	depth int
	err   error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCodec, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

func (d *decoder) enter() bool {
	d.depth++
	if d.depth > maxDepth {
		d.fail("nested deeper than %d", maxDepth)
		return false
	}
	return true
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("cut short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a bad number")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("a bad number")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail("cut short")
		return 0
	}
	x := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return x
}

// length reads a length of elements of at least min bytes each, which
// the bytes left must hold.
func (d *decoder) length(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/max(min, 1)) {
		d.fail("a length of %d, more than the bytes left", n)
		return 0
	}
	return int(n)
}

// nilOrLength reads a nil (false) or a length plus one.
func (d *decoder) nilOrLength(min int) (int, bool) {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return 0, false
	}
	n--
	if n > uint64(len(d.b)/max(min, 1)) && n > 0 {
		d.fail("a length of %d, more than the bytes left", n)
		return 0, false
	}
	return int(n), true
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

// encodeValue appends v's encoding to b.
func encodeValue(b []byte, v reflect.Value) ([]byte, error) {
	c := codecOf(v.Type())
	if c.err != nil {
		return b, c.err
	}
	e := &encoder{b: b}
	c.enc(e, v)
	return e.b, e.err
}

// decodeValue decodes b into v, which must be settable; bytes left over
// are an error.
func decodeValue(b []byte, v reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errCodec, r)
		}
	}()
	d := &decoder{b: b}
	codecOf(v.Type()).dec(d, v)
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left over", len(d.b))
	}
	return d.err
}
