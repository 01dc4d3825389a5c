package reports

import (
	"slices"
	"strconv"
	"strings"
)

// A Change is one field of a node's state that differs between two dumps
// of it: "parent: 0 -> 2". Field is empty for a word that stands alone
// (a state's name: "joining -> joined"), or for the whole line where a
// dump does not split into fields. From or To is "(none)" for a field
// only one side has.
type Change struct {
	Field string `json:"field,omitempty"`
	From  string `json:"from"`
	To    string `json:"to"`
}

func (c Change) String() string {
	if c.Field == "" {
		return c.From + " -> " + c.To
	}
	return c.Field + ": " + c.From + " -> " + c.To
}

// A NodeDiff is a node whose state differs, with the fields that do.
type NodeDiff struct {
	Node    int      `json:"node"`
	Changes []Change `json:"changes"`
}

// String says the changes from one state to the next: "parent: 0 -> 2,
// joining -> joined".
func (d NodeDiff) String() string {
	parts := make([]string, len(d.Changes))
	for i, ch := range d.Changes {
		parts[i] = ch.String()
	}
	return strings.Join(parts, ", ")
}

// Versus says the changes as one path's state against another's: "parent:
// 0 vs 2, joined vs init".
func (d NodeDiff) Versus() string {
	parts := make([]string, len(d.Changes))
	for i, ch := range d.Changes {
		parts[i] = ch.From + " vs " + ch.To
		if ch.Field != "" {
			parts[i] = ch.Field + ": " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

// A NetDiff is how two networks differ: the messages in flight (as
// "Msg from->to") only in the first and only in the second, counted as a
// multiset.
type NetDiff struct {
	Only1 []string `json:"only_first,omitempty"`
	Only2 []string `json:"only_second,omitempty"`
}

// Empty says the networks are the same.
func (d NetDiff) Empty() bool { return len(d.Only1) == 0 && len(d.Only2) == 0 }

// none marks a field one side lacks.
const none = "(none)"

// DiffNodes compares node dumps a and b (DumpNode lines, node i at i) and
// returns the nodes that differ, in node order, each with its changes.
func DiffNodes(a, b []string) []NodeDiff {
	var out []NodeDiff
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			out = append(out, NodeDiff{Node: i, Changes: DiffFields(a[i], b[i])})
		}
	}
	return out
}

// DiffFields compares two one-line dumps of a node field by field: the
// fields of sim.Dump's struct form ({A:1 B:2}, Name{A:1}), the key=value
// words of a DumpState line or of the timers, and the fields of each layer
// of a stacked node (transport:{Next:1} app:{...}), named after the layer
// (transport.Next). A dump that does
// not split into distinct fields is compared as a whole line.
func DiffFields(a, b string) []Change {
	fa, oka := fields(a)
	fb, okb := fields(b)
	if !oka || !okb {
		return []Change{{From: a, To: b}}
	}
	get := func(fs []field, k string) (string, bool) {
		for _, f := range fs {
			if f.key == k {
				return f.val, true
			}
		}
		return none, false
	}
	var out []Change
	for _, f := range fa {
		if v, _ := get(fb, f.key); v != f.val {
			out = append(out, Change{Field: f.name, From: f.val, To: v})
		}
	}
	for _, f := range fb {
		if _, ok := get(fa, f.key); !ok {
			out = append(out, Change{Field: f.name, From: none, To: f.val})
		}
	}
	return out
}

// A field of a dump: key identifies it (a name, or the place of a word
// that stands alone), name is what a reader sees.
type field struct{ key, name, val string }

// fields splits a dump into fields; false where it does not split into
// distinct ones (brackets that do not balance, a name given twice).
func fields(s string) ([]field, bool) {
	words, ok := split(s)
	if !ok {
		return nil, false
	}
	var out []field
	bare := 0
	// add adds word w, its field names prefixed by prefix ("transport.").
	var add func(w, prefix string) bool
	addAll := func(s, prefix string) bool {
		inner, ok := split(s)
		if !ok {
			return false
		}
		for _, x := range inner {
			if !add(x, prefix) {
				return false
			}
		}
		return true
	}
	add = func(w, prefix string) bool {
		// A struct, bare or named: its fields are the node's.
		if open := strings.IndexByte(w, '{'); open >= 0 && strings.HasSuffix(w, "}") && ident(w[:open]) {
			return addAll(w[open+1:len(w)-1], prefix)
		}
		if k := keyEnd(w); k > 0 {
			name := prefix + w[:k]
			if slices.ContainsFunc(out, func(f field) bool { return f.key == name }) {
				return false
			}
			out = append(out, field{key: name, name: name, val: w[k+1:]})
			return true
		}
		out = append(out, field{key: prefix + "#" + strconv.Itoa(bare), name: strings.TrimSuffix(prefix, "."), val: w})
		bare++
		return true
	}
	for _, w := range words {
		// A layer of a stacked node, "transport:{...}": its fields are
		// the node's, named after the layer ("transport.Next").
		if k := keyEnd(w); k > 0 && w[k] == ':' && strings.HasPrefix(w[k+1:], "{") && strings.HasSuffix(w, "}") {
			if !addAll(w[k+2:len(w)-1], w[:k]+".") {
				return nil, false
			}
			continue
		}
		if !add(w, "") {
			return nil, false
		}
	}
	return out, true
}

// split cuts s at the spaces outside brackets, braces and parentheses.
func split(s string) ([]string, bool) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			if depth--; depth < 0 {
				return nil, false
			}
		case ' ':
			if depth == 0 {
				if i > start {
					out = append(out, s[start:i])
				}
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, false
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out, true
}

// keyEnd is the index of the ':' or '=' that ends a word's field name, or
// -1 where the word has none.
func keyEnd(w string) int {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if (c == ':' || c == '=') && i > 0 {
			return i
		}
		if !identByte(c) {
			return -1
		}
	}
	return -1
}

func ident(s string) bool {
	for i := 0; i < len(s); i++ {
		if !identByte(s[i]) && s[i] != '.' && s[i] != '*' {
			return false
		}
	}
	return true
}

func identByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// DiffNet compares two lists of messages in flight as multisets.
func DiffNet(a, b []string) NetDiff {
	count := map[string]int{}
	for _, m := range b {
		count[m]++
	}
	var d NetDiff
	for _, m := range a {
		if count[m] > 0 {
			count[m]--
			continue
		}
		d.Only1 = append(d.Only1, m)
	}
	left := map[string]int{}
	for _, m := range a {
		left[m]++
	}
	for _, m := range b {
		if left[m] > 0 {
			left[m]--
			continue
		}
		d.Only2 = append(d.Only2, m)
	}
	return d
}
