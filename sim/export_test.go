package sim

import (
	"reflect"
	"unsafe"
)

// NetSumOK says whether s's network sum is that of its messages in
// flight, as the steps must keep it.
func NetSumOK(s *State) bool { return s.netSum == netSumOf(s) }

// BlindOK says whether the blind fingerprints of s's nodes are what
// hashing them again with every group member anonymous gives (true
// without symmetry).
func BlindOK(w *World, s *State) bool {
	if w.sym == nil {
		return true
	}
	for i := range s.nodes {
		if s.nodes[i].blind != w.sym.blindHash(s, NodeID(i)) {
			return false
		}
	}
	return true
}

// CopyReflective and FingerprintReflective are Copy and Fingerprint of a
// value that can alias through the reflective plans, which the compiled
// ones (fast.go) must match.
func CopyReflective[T any](v T) T {
	return copyAliased(planOf(typeOf(v)), reflect.ValueOf(v)).Interface().(T)
}

func FingerprintReflective(v any) uint64 {
	var h Hasher
	p := planOf(typeOf(v))
	h.buf = append(h.buf, 1)
	h.Uint64(p.typeHash)
	h.hashAliased(p, reflect.ValueOf(v))
	return h.Sum64()
}

// CopyIntoReflective and CopyIntoFast copy the node n, a pointer that can
// alias, into a new object through the reflective and the compiled plans.
func CopyIntoReflective(n Node) Node { return copyIntoWith(n, copyAliasedInto) }
func CopyIntoFast(n Node) Node       { return copyIntoWith(n, copyAliasedFast) }

func copyIntoWith(n Node, f func(p *plan, dst, src unsafe.Pointer)) Node {
	p := planOf(typeOf(n))
	if !p.alias || p.t.Kind() != reflect.Pointer {
		panic("not a pointer that can alias")
	}
	out := n
	dst := reflect.New(p.et).UnsafePointer()
	(*[2]unsafe.Pointer)(unsafe.Pointer(&out))[1] = dst
	f(p, dst, ifaceData(n))
	return out
}

// CanAlias says whether v's type goes through the memo.
func CanAlias(v any) bool { return planOf(typeOf(v)).alias }
