package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
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
// a short simulated run of the system sends (discover.go). Channels and
// unsafe pointers cannot cross. Each type's walk is built once and
// cached.
//
// Identity. A value whose type can alias (sim.Aliases: it can hold one
// pointer or map twice, a cycle, or a func; a RawNode of etcd's raft
// holds all three) is carried with the identity of its pointers and
// maps, as the simulator copies and hashes it: each pointer or map met
// for the first time gets the next index, and one met again (the same
// address and type) is written as a back-reference to it, so that
// aliasing is kept and cycles cross. Any other value crosses as a tree,
// in the same bytes as before identity existed: a pointer met twice
// there is written twice (such a value cannot hold a cycle: a type that
// can is recursive, and so can alias). The
// identity starts at the outermost value that can alias (the value
// encoded, or the value in an interface) and covers everything inside.
//
// Forms of their own. A type T with the methods WireForm() W and
// (*T).SetWireForm(W) error crosses as W: the sender encodes what
// WireForm returns, the receiver decodes a W and hands it to
// SetWireForm on the value it decodes into (for a node's state, the
// node as New built it). A properties.History does so: its spec's funcs
// are closures, which cannot cross, so it crosses as its spec's name
// and the calls that built it, and the receiver replays them.
//
// Funcs. A top-level func (or a method expression) crosses as its name
// and its code's offset from a func of this package, and a method value
// bound to a pointer (raft's r.tick = r.tickElection) as the same plus
// a reference to its receiver, which must be inside the value: the
// receiver rebuilds it as the closure the simulator's copies make. The
// receiver checks that the code at that offset is the func of that
// name, so only the same build of the same program (the nodes of a
// cluster: processes of one executable) can read it back; anything else
// is refused, never run. A closure cannot cross: its captured variables
// are not part of any value.
//
// The encoding: bools one byte; integers as varints (zigzag when
// signed); floats their 8 bytes; strings and byte slices their length
// then their bytes; a slice, map or pointer 0 when nil, else its length
// plus one (1 for a pointer) then its elements (a map's as key, value
// pairs); an array its elements; a struct its fields in order; an
// interface 0 when nil, else its type's name as a string then the value.
// With identity, a pointer is 0 when nil, 1 then its value when new,
// and 2+i for a back-reference to object i; a map 0 when nil, 1 then i
// for a back-reference, and its length plus 2 then its entries when
// new; a func 0 when nil, else 1 (top-level) or 2 (method value), its
// name, its code's offset as a signed varint, and for a method value
// 1+i, its receiver being object i, or 0 for a receiver met later in the
// value, whose index then follows the value at the end of the identity.

// maxDepth bounds the nesting of a value: a list too long, or a
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
	if form, ok := wireFormOf(t); ok {
		formCodec(c, t, form, buildCodec(form, building))
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
			extra := uint64(1)
			if e.ids != nil {
				if e.backRef(v.UnsafePointer(), t, true) {
					return
				}
				extra = 2
			}
			e.b = binary.AppendUvarint(e.b, uint64(v.Len())+extra)
			it := v.MapRange()
			for it.Next() {
				kc.enc(e, it.Key())
				vc.enc(e, it.Value())
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			var n int
			var ok bool
			if d.ident {
				switch tag := d.uvarint(); {
				case d.err != nil || tag == 0:
					return
				case tag == 1:
					if o, ok := d.object(d.uvarint(), t); ok {
						v.Set(o)
					}
					return
				default:
					n, ok = d.fits(tag-2, min)
				}
			} else {
				n, ok = d.nilOrLength(min)
			}
			if !ok {
				return
			}
			m := reflect.MakeMapWithSize(t, n)
			if d.ident {
				d.objs = append(d.objs, m)
			}
			k, x := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			pending := len(d.pending)
			for i := 0; i < n && d.err == nil; i++ {
				k.SetZero()
				x.SetZero()
				kc.dec(d, k)
				vc.dec(d, x)
				if len(d.pending) > pending {
					d.fail("a method value in a map, bound to a receiver met after it, cannot be read back")
				}
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
			if e.ids != nil && e.backRef(v.UnsafePointer(), t, false) {
				return
			}
			e.b = append(e.b, 1)
			if e.enter() {
				ec.enc(e, v.Elem())
				e.depth--
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			var tag uint64
			if d.ident {
				tag = d.uvarint()
			} else {
				tag = uint64(d.byte())
			}
			switch {
			case tag == 0 || d.err != nil:
				v.SetZero()
				return
			case d.ident && tag >= 2:
				if o, ok := d.object(tag-2, t); ok {
					v.Set(o)
				}
				return
			}
			if !d.enter() {
				return
			}
			p := reflect.New(t.Elem())
			if d.ident {
				d.objs = append(d.objs, p)
			}
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
				e.value(codecOf(x.Type()), x)
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
			d.value(codecOf(xt), x)
			d.depth--
			v.Set(x)
		}
	case reflect.Func:
		funcCodec(c, t)
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
	if form, ok := wireFormOf(t); ok {
		return minSize(form)
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
	// ids, with identity, are the pointers and maps met, by address
	// and type, each with its index; at has the types of the pointers
	// met at an address, where a method value finds its receiver.
	ids map[objKey]int
	at  map[unsafe.Pointer][]reflect.Type
	// pending are the method values met before their receivers.
	pending []pendingRecv
}

type objKey struct {
	p unsafe.Pointer
	t reflect.Type
}

type pendingRecv struct {
	recv unsafe.Pointer
	name string
}

// value encodes v with c, starting the identity if v is the outermost
// value that can alias.
func (e *encoder) value(c *codec, v reflect.Value) {
	if e.ids != nil || v.Kind() == reflect.Interface || !sim.Aliases(v.Type()) {
		c.enc(e, v)
		return
	}
	e.ids, e.at = map[objKey]int{}, map[unsafe.Pointer][]reflect.Type{}
	c.enc(e, v)
	for _, r := range e.pending {
		i, ok := e.recvIndex(r.recv, r.name)
		if !ok {
			e.fail(fmt.Errorf("the method value %s is bound to an object outside the value sent, which cannot cross the wire with it: bind it to an object the node holds", r.name))
			break
		}
		e.b = binary.AppendUvarint(e.b, uint64(i))
	}
	e.ids, e.at, e.pending = nil, nil, nil
}

// backRef writes a back-reference to the object at p of type t (a
// pointer or a map) if it was met before, and says so; otherwise it
// gives it the next index.
func (e *encoder) backRef(p unsafe.Pointer, t reflect.Type, isMap bool) bool {
	k := objKey{p, t}
	if i, ok := e.ids[k]; ok {
		if isMap {
			e.b = append(e.b, 1)
			e.b = binary.AppendUvarint(e.b, uint64(i))
		} else {
			e.b = binary.AppendUvarint(e.b, uint64(i)+2)
		}
		return true
	}
	e.ids[k] = len(e.ids)
	if !isMap {
		e.at[p] = append(e.at[p], t)
	}
	return false
}

// recvIndex is the index of the receiver at recv of the method value
// named name, if it was met.
func (e *encoder) recvIndex(recv unsafe.Pointer, name string) (int, bool) {
	for _, t := range e.at[recv] {
		if recvMatches(t, name) {
			return e.ids[objKey{recv, t}], true
		}
	}
	return 0, false
}

// recvMatches says whether t, a pointer type, is the receiver of the
// method value named name ("pkg.(*T).M-fm").
func recvMatches(t reflect.Type, name string) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Name() == "" {
		return false
	}
	et := t.Elem()
	return strings.HasPrefix(name, et.PkgPath()+".(*"+et.Name()+").")
}

// funcAnchor is the func whose code the code of funcs on the wire is
// counted from: two processes of one executable agree on the offsets,
// wherever the executable is loaded (a position-independent one
// included).
func funcAnchor() {}

var funcBase = reflect.ValueOf(funcAnchor).Pointer()

// funcAt returns the code of the func named name at offset off, which
// must be the entry of a func of that name in this program.
func funcAt(name string, off int64) (uintptr, error) {
	code := uintptr(int64(funcBase) + off)
	if f := runtime.FuncForPC(code); f == nil || f.Entry() != code || f.Name() != name {
		return 0, fmt.Errorf("func %s is not in this program where the sender has it: run every node as the same build of the same program", name)
	}
	return code, nil
}

// funcCodec fills in the codec of func type t (see the top of this
// file).
func funcCodec(c *codec, t reflect.Type) {
	c.enc = func(e *encoder, v reflect.Value) {
		fv, ok, err := sim.ReadFunc(v)
		switch {
		case err != nil:
			e.fail(fmt.Errorf("a %v cannot cross the wire: %w", t, err))
			return
		case !ok:
			e.b = append(e.b, 0)
			return
		case e.ids == nil:
			e.fail(fmt.Errorf("a %v crosses the wire only inside a value that can alias", t))
			return
		}
		kind := byte(1)
		if fv.Recv != nil {
			kind = 2
		}
		e.b = append(e.b, kind)
		e.b = binary.AppendUvarint(e.b, uint64(len(fv.Name)))
		e.b = append(e.b, fv.Name...)
		e.b = binary.AppendVarint(e.b, int64(fv.Code)-int64(funcBase))
		if fv.Recv == nil {
			return
		}
		if i, ok := e.recvIndex(fv.Recv, fv.Name); ok {
			e.b = binary.AppendUvarint(e.b, uint64(i)+1)
			return
		}
		e.b = append(e.b, 0)
		e.pending = append(e.pending, pendingRecv{fv.Recv, fv.Name})
	}
	c.dec = func(d *decoder, v reflect.Value) {
		kind := d.byte()
		switch {
		case kind == 0 || d.err != nil:
			v.SetZero()
			return
		case kind > 2 || !d.ident:
			d.fail("a func of kind %d", kind)
			return
		}
		name := string(d.bytes(d.length(1)))
		off := d.varint()
		if d.err != nil {
			return
		}
		code, err := funcAt(name, off)
		if err != nil {
			d.fail("%v", err)
			return
		}
		if kind == 1 {
			sim.SetFunc(v, code, nil)
			return
		}
		r := d.uvarint()
		switch {
		case d.err != nil:
		case r == 0:
			v.SetZero()
			d.pending = append(d.pending, pendingFunc{v, code, name})
		default:
			d.bindRecv(v, code, name, r-1)
		}
	}
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *encoder) enter() bool {
	e.depth++
	if e.depth > maxDepth {
		e.fail(fmt.Errorf("the value nests deeper than %d pointers or interfaces", maxDepth))
		return false
	}
	return true
}

type decoder struct {
	b     []byte
	depth int
	err   error
	// ident says the identity is on (see encoder.value); objs are the
	// pointers and maps read so far, by index, and pending the method
	// values whose receivers come later.
	ident   bool
	objs    []reflect.Value
	pending []pendingFunc
	// legacy reads the encoding without identity, as a state file of
	// version 1 has it.
	legacy bool
}

type pendingFunc struct {
	v    reflect.Value
	code uintptr
	name string
}

// value decodes into v with c, starting the identity where the encoder
// started it.
func (d *decoder) value(c *codec, v reflect.Value) {
	if d.ident || d.legacy || v.Kind() == reflect.Interface || !sim.Aliases(v.Type()) {
		c.dec(d, v)
		return
	}
	d.ident = true
	c.dec(d, v)
	for _, p := range d.pending {
		i := d.uvarint()
		if d.err != nil {
			break
		}
		d.bindRecv(p.v, p.code, p.name, i)
	}
	d.ident, d.objs, d.pending = false, nil, nil
}

// object returns object i, which must be of type t.
func (d *decoder) object(i uint64, t reflect.Type) (reflect.Value, bool) {
	if i >= uint64(len(d.objs)) {
		d.fail("a reference to object %d of %d", i, len(d.objs))
		return reflect.Value{}, false
	}
	if o := d.objs[i]; o.Type() != t {
		d.fail("a reference to a %v where a %v is", o.Type(), t)
		return reflect.Value{}, false
	}
	return d.objs[i], true
}

// bindRecv sets v to the method value named name, whose code is at
// code, bound to object i.
func (d *decoder) bindRecv(v reflect.Value, code uintptr, name string, i uint64) {
	if i >= uint64(len(d.objs)) {
		d.fail("a reference to object %d of %d", i, len(d.objs))
		return
	}
	o := d.objs[i]
	if !recvMatches(o.Type(), name) {
		d.fail("%s bound to a %v", name, o.Type())
		return
	}
	sim.SetFunc(v, code, o.UnsafePointer())
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
	return d.fits(n-1, min)
}

// fits checks a length of n elements of at least min bytes each against
// the bytes left.
func (d *decoder) fits(n uint64, min int) (int, bool) {
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
	e.value(c, v)
	return e.b, e.err
}

// decodeValue decodes b into v, which must be settable; bytes left over
// are an error.
func decodeValue(b []byte, v reflect.Value) error { return decodeAs(b, v, false) }

// decodeAs is decodeValue, of the encoding without identity if legacy.
func decodeAs(b []byte, v reflect.Value, legacy bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errCodec, r)
		}
	}()
	d := &decoder{b: b, legacy: legacy}
	d.value(codecOf(v.Type()), v)
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left over", len(d.b))
	}
	return d.err
}

var errorType = reflect.TypeFor[error]()

// wireFormOf returns the form that t crosses as, if t has one (see the
// top of this file): t has WireForm() W, and *T has SetWireForm(W) error.
func wireFormOf(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer {
		return nil, false
	}
	get, ok := t.MethodByName("WireForm")
	if !ok || get.Type.NumIn() != 1 || get.Type.NumOut() != 1 {
		return nil, false
	}
	form := get.Type.Out(0)
	set, ok := reflect.PointerTo(t).MethodByName("SetWireForm")
	if !ok || set.Type.NumIn() != 2 || set.Type.In(1) != form || set.Type.NumOut() != 1 || set.Type.Out(0) != errorType {
		return nil, false
	}
	return form, true
}

// wireForm returns v's form; false if v cannot be read (a value behind
// an unexported field, copied where it cannot be addressed).
func wireForm(v reflect.Value) (reflect.Value, bool) {
	switch {
	case v.CanInterface():
	case v.CanAddr():
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	default:
		return reflect.Value{}, false
	}
	return v.MethodByName("WireForm").Call(nil)[0], true
}

// formCodec fills in the codec of t, which crosses as form, whose codec
// is fc.
func formCodec(c *codec, t, form reflect.Type, fc *codec) {
	c.err = fc.err
	c.enc = func(e *encoder, v reflect.Value) {
		w, ok := wireForm(v)
		if !ok {
			e.fail(fmt.Errorf("a %v where it cannot be read (an unexported field of a map's or an interface's value) cannot cross the wire", t))
			return
		}
		fc.enc(e, w)
	}
	c.dec = func(d *decoder, v reflect.Value) {
		w := reflect.New(form).Elem()
		fc.dec(d, w)
		if d.err != nil {
			return
		}
		p := reflect.NewAt(t, unsafe.Pointer(v.UnsafeAddr()))
		if err := p.MethodByName("SetWireForm").Call([]reflect.Value{w})[0]; !err.IsNil() {
			d.fail("%v", err.Interface())
		}
	}
}
