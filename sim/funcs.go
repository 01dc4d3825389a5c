package sim

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A func value in a node state is a pointer to a closure object whose
// first word is the code pointer. A top-level func (or a method
// expression) is a static object with nothing else: it holds no state,
// so a copy shares it and a hash writes its name, stable across runs. A
// method value bound to a pointer (x.M, named "pkg.(*T).M-fm") is the code
// pointer and the receiver pointer: a copy must call M on the copy of the
// receiver, not on the original (raft's r.tick = r.tickElection), so the
// copy gets a new closure object bound to it. Any other closure captures
// variables a copy would share, and cannot be copied.

type funcKind uint8

const (
	funcStatic   funcKind = iota // a top-level func or method expression
	funcMethod                   // a method value with a pointer receiver
	funcCaptures                 // a func literal, a method value on a value or an interface, a reflect-made func
)

type funcInfo struct {
	name string
	kind funcKind
}

// methodValue is the layout of the closure of a method value bound to a
// pointer. fn is a code pointer, which the garbage collector need not
// see; recv is a heap pointer, which it must.
type methodValue struct {
	fn   uintptr
	recv unsafe.Pointer
}

var funcInfos sync.Map // code pointer -> funcInfo

// funcOf returns the closure object of the func at ptr, nil for a nil
// func, and what it is.
func funcOf(ptr unsafe.Pointer) (unsafe.Pointer, funcInfo) {
	cl := *(*unsafe.Pointer)(ptr)
	if cl == nil {
		return nil, funcInfo{}
	}
	code := *(*uintptr)(cl)
	slot := &funcCache[(code*0x9e3779b97f4a7c15)>>(64-funcCacheBits)]
	if c := slot.Load(); c != nil && c.code == code {
		return cl, c.funcInfo
	}
	var fi funcInfo
	if v, ok := funcInfos.Load(code); ok {
		fi = v.(funcInfo)
	} else {
		fi = classifyFunc(code)
		funcInfos.Store(code, fi)
	}
	slot.Store(&cachedFunc{code, fi})
	return cl, fi
}

// funcCache holds in front of funcInfos the funcs met last, one per slot
// of their code pointers' hash: a hash or a copy meets the same few
// funcs at every step (raft's tick and step), which a sync.Map lookup
// made a tenth of a node's hash.
var funcCache [1 << funcCacheBits]atomic.Pointer[cachedFunc]

const funcCacheBits = 8

type cachedFunc struct {
	code uintptr
	funcInfo
}

func classifyFunc(code uintptr) funcInfo {
	f := runtime.FuncForPC(code)
	if f == nil {
		return funcInfo{name: "?", kind: funcCaptures}
	}
	name := f.Name()
	fi := funcInfo{name: name, kind: funcStatic}
	// The last element of the path holds the package name, the type and
	// the func; a closure's name has ".funcN" or a wrapper's suffix.
	last := name[strings.LastIndexByte(name, '/')+1:]
	switch {
	case strings.HasSuffix(name, "-fm"):
		fi.kind = funcCaptures
		if strings.Contains(last, ".(*") {
			fi.kind = funcMethod
		}
	case strings.HasPrefix(name, "reflect."), strings.Contains(last, "-range"),
		strings.Contains(last, ".gowrap"), strings.Contains(last, ".deferwrap"):
		fi.kind = funcCaptures
	default:
		for _, part := range strings.Split(last, ".") {
			if len(part) > 4 && strings.HasPrefix(part, "func") && part[4] >= '0' && part[4] <= '9' {
				fi.kind = funcCaptures
			}
		}
	}
	return fi
}

// rebind returns a method value of the same method as cl, bound to recv.
func rebind(cl, recv unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(&methodValue{fn: (*methodValue)(cl).fn, recv: recv})
}

// funcAt hashes the func of type t stored at ptr: 0 for nil, else 3 and
// its name, and for a method value its receiver, a back-reference (1 and
// its index) when the memo met it already, else 0 (the memo hashes it
// later: see hashMemo.recvs).
func (h *Hasher) funcAt(t reflect.Type, ptr unsafe.Pointer) {
	cl, fi := funcOf(ptr)
	switch {
	case cl == nil:
		h.buf = append(h.buf, 0)
		return
	case fi.kind == funcCaptures:
		panic(&TypeError{Type: t, Reason: capturesReason(fi)})
	}
	h.buf = append(h.buf, 3)
	h.String(fi.name)
	if fi.kind != funcMethod {
		return
	}
	recv := (*methodValue)(cl).recv
	if m := h.memo; m != nil {
		if e := m.seen.find(recv); e != nil {
			h.buf = append(h.buf, 1)
			h.Uint64(uint64(e.i))
			return
		}
		m.recvs = append(m.recvs, recv)
	}
	h.buf = append(h.buf, 0)
}

// funcPlan fills in the plan of a func type: see the top of this file.
func funcPlan(p *plan) {
	t := p.t
	p.alias = true
	p.hash = func(h *Hasher, v reflect.Value) {
		v = addressable(v)
		h.funcAt(t, unsafe.Pointer(v.UnsafeAddr()))
	}
	p.clone = func(c *copier, dst, src reflect.Value) {
		cl, fi := funcOf(unsafe.Pointer(src.UnsafeAddr()))
		switch {
		case cl == nil || fi.kind == funcStatic:
			return
		case fi.kind == funcCaptures:
			panic(&TypeError{Type: t, Reason: capturesReason(fi)})
		}
		if c == nil {
			return
		}
		at := unsafe.Pointer(dst.UnsafeAddr())
		recv := (*methodValue)(cl).recv
		if e := c.seen.find(recv); e != nil {
			*(*unsafe.Pointer)(at) = rebind(cl, e.copied())
			return
		}
		c.fixups = append(c.fixups, fixup{at: at, cl: cl})
	}
	p.dump = func(b *strings.Builder, v reflect.Value) {
		v = addressable(v)
		cl, fi := funcOf(unsafe.Pointer(v.UnsafeAddr()))
		if cl == nil {
			b.WriteString("nil")
			return
		}
		b.WriteString(fi.name)
	}
}

// addressable returns v, or an addressable copy of it.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	a := reflect.New(v.Type()).Elem()
	typedCopy(a, v)
	return a
}

// typedCopy sets dst, addressable, to src, even when src was reached
// through an unexported field, which reflect.Value.Set refuses: the copy
// is a read of a value sim only hashes or copies, never hands back.
func typedCopy(dst, src reflect.Value) {
	type value struct {
		typ, ptr unsafe.Pointer
		flag     uintptr
	}
	const readOnly = 1<<5 | 1<<6 // reflect's flagStickyRO and flagEmbedRO
	(*value)(unsafe.Pointer(&src)).flag &^= readOnly
	writable(dst).Set(src)
}

// Aliases says whether a value of type t can hold one pointer or map
// twice, a pointer cycle, or a func: what Copy and Fingerprint go
// through a memo for (see alias.go). host's codec carries such a value
// with the identity of its pointers and maps, so that what arrives has
// the aliasing, and so the fingerprint, of what left; any other value
// it carries as a tree.
func Aliases(t reflect.Type) bool { return planOf(t).alias }

// A FuncValue is what a non-nil func value in a node's state is, for
// host's codec: its code pointer and name, and for a method value bound
// to a pointer, the receiver (nil for a top-level func or a method
// expression, which holds no state).
type FuncValue struct {
	Code uintptr
	Name string
	Recv unsafe.Pointer
}

// ReadFunc returns what v, a func value, is; ok is false for a nil
// func. A closure, or a method value bound to a value or an interface,
// holds variables a copy would share, and is an error that says so.
func ReadFunc(v reflect.Value) (fv FuncValue, ok bool, err error) {
	v = addressable(v)
	cl, fi := funcOf(unsafe.Pointer(v.UnsafeAddr()))
	switch {
	case cl == nil:
		return FuncValue{}, false, nil
	case fi.kind == funcCaptures:
		return FuncValue{}, false, &TypeError{Type: v.Type(), Reason: capturesReason(fi)}
	}
	fv = FuncValue{Code: (*methodValue)(cl).fn, Name: fi.name}
	if fi.kind == funcMethod {
		fv.Recv = (*methodValue)(cl).recv
	}
	return fv, true, nil
}

// SetFunc sets v, an addressable func value, to the func whose code is
// at code, bound to recv for a method value (the closure layout of a
// method value, as a copy rebinds one), nil for a top-level func. The
// caller vouches that code is the entry of a func of v's type: host's
// codec checks the func's name at that address.
func SetFunc(v reflect.Value, code uintptr, recv unsafe.Pointer) {
	*(*unsafe.Pointer)(unsafe.Pointer(v.UnsafeAddr())) = unsafe.Pointer(&methodValue{fn: code, recv: recv})
}
