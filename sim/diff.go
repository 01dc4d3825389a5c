package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// FirstDifference returns the first place where a and b differ, walking
// them as the fingerprint does (fields tagged `livecheck:"-"` and what
// the type rules leave out left out, maps by sorted key), in words: the path from the top value and the two
// values there, `Log[2]: "chose 1" vs "chose 0"`, or "" when it finds no
// difference. It says where a handler that is not deterministic left its
// node otherwise the second time, so a user sees the field, not only the
// node.
func FirstDifference(a, b any) string {
	d := differ{seen: map[[2]uintptr]bool{}}
	return d.diff("", reflect.ValueOf(a), reflect.ValueOf(b))
}

type differ struct {
	seen map[[2]uintptr]bool // pointer pairs compared already (cycles)
}

func (d *differ) diff(path string, a, b reflect.Value) string {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return d.say(path, a, b)
		}
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: a %v vs a %v", top(path), a.Type(), b.Type())
	}
	p := planOf(a.Type())
	if p.skip || p.share {
		return "" // not part of the fingerprint (a rule's)
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return d.say(path, a, b)
			}
			return ""
		}
		if a.Kind() == reflect.Pointer {
			key := [2]uintptr{a.Pointer(), b.Pointer()}
			if d.seen[key] {
				return ""
			}
			d.seen[key] = true
		}
		return d.diff(path, a.Elem(), b.Elem())
	case reflect.Struct:
		// The fields the fingerprint hashes: not those tagged
		// `livecheck:"-"` or left out by a rule.
		a, b := addressable(a), addressable(b)
		for _, f := range p.fields {
			if s := d.diff(join(path, f.name), writable(a.Field(f.i)), writable(b.Field(f.i))); s != "" {
				return s
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d elements vs %d", top(path), a.Len(), b.Len())
		}
		for i := range a.Len() {
			if s := d.diff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); s != "" {
				return s
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries vs %d", top(path), a.Len(), b.Len())
		}
		keys := a.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(Dump(x.Interface()), Dump(y.Interface())) })
		for _, k := range keys {
			bv := b.MapIndex(k)
			p := fmt.Sprintf("%s[%s]", path, Dump(k.Interface()))
			if !bv.IsValid() {
				return fmt.Sprintf("%s: present vs absent", top(p))
			}
			if s := d.diff(p, a.MapIndex(k), bv); s != "" {
				return s
			}
		}
		return ""
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return "" // not part of the fingerprint
	}
	if a.Equal(b) {
		return ""
	}
	return d.say(path, a, b)
}

func (d *differ) say(path string, a, b reflect.Value) string {
	return fmt.Sprintf("%s: %s vs %s", top(path), dumpOf(a), dumpOf(b))
}

func dumpOf(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	var b strings.Builder
	planOf(v.Type()).dump(&b, v)
	return b.String()
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func top(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}
