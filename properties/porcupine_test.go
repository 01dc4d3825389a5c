package properties_test

// The incremental check of History against porcupine, the after-the-fact
// checker (Wing & Gong with memoization), as the oracle: on random small
// histories, and on porcupine's own test data read where `go mod
// download` put the module.

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/livecheck/livecheck/properties"
)

// unknown is the output porcupine is given for an operation that never
// returned: any output the spec allows. The History is given no Return.
type unknown struct{}

// oracle is spec as porcupine's nondeterministic model: the states after
// in returning out (any out, for unknown), and with a Key the history
// partitioned by key, as porcupine's own kv model does (the spec's state
// is then one key's).
func oracle[S, I, O comparable](spec properties.Spec[S, I, O]) porcupine.Model {
	var partition func([]porcupine.Event) [][]porcupine.Event
	if spec.Key != nil {
		partition = func(history []porcupine.Event) [][]porcupine.Event {
			byKey := map[string][]porcupine.Event{}
			var keys []string
			keyOf := map[int]string{}
			for _, e := range history {
				if e.Kind == porcupine.CallEvent {
					keyOf[e.Id] = spec.Key(e.Value.(I))
				}
				k := keyOf[e.Id]
				if byKey[k] == nil {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], e)
			}
			var out [][]porcupine.Event
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		}
	}
	m := porcupine.NondeterministicModel{
		PartitionEvent: partition,
		Init:           func() []any { return []any{spec.Init()} },
		Step: func(state, in, out any) []any {
			var next []any
			for _, o := range spec.Step(state.(S), in.(I)) {
				if _, any := out.(unknown); any || o.Out == out.(O) {
					next = append(next, o.Next)
				}
			}
			return next
		},
	}
	return m.ToModel()
}

// hev is one event of a history: its client, the input (a call) or the
// output (a return), and porcupine's id of the operation.
type hev struct {
	client  int
	ret     bool
	abandon bool // the client gives up on its operation
	v       any
	id      int
}

// verdicts checks events with both: the History's verdict, and
// porcupine's. ok says whether the History had one (no Err); porcupine
// is asked only then.
//
// The History's check after the fact (CheckAfter, porcupine through the
// History's own operations and spec) must give porcupine's verdict here
// too, wide histories included.
func verdicts[S, I, O comparable](t *testing.T, spec properties.Spec[S, I, O], events []hev) (mine, theirs, ok bool, h properties.History) {
	t.Helper()
	h = properties.NewHistory(spec)
	var pevs []porcupine.Event
	returned := map[int]bool{}
	for _, e := range events {
		if e.ret {
			returned[e.id] = true
		}
	}
	for _, e := range events {
		if e.abandon {
			h.Abandon(e.client)
			continue
		}
		if e.ret {
			h.Return(e.client, e.v)
			pevs = append(pevs, porcupine.Event{ClientId: e.client, Kind: porcupine.ReturnEvent, Value: e.v, Id: e.id})
		} else {
			h.Invoke(e.client, e.v)
			pevs = append(pevs, porcupine.Event{ClientId: e.client, Kind: porcupine.CallEvent, Value: e.v, Id: e.id})
		}
	}
	for _, e := range events {
		if !e.ret && !e.abandon && !returned[e.id] {
			pevs = append(pevs, porcupine.Event{ClientId: e.client, Kind: porcupine.ReturnEvent, Value: unknown{}, Id: e.id})
		}
	}
	theirs = porcupine.CheckEvents(oracle(spec), pevs)
	if calls := len(pevs) / 2; h.Violation() == "" && len(h.Ops()) != calls { // a violation ends the record
		t.Errorf("the History has %d operations, the history %d", len(h.Ops()), calls)
	}
	if after, decided := h.CheckAfter(0); !decided || after != theirs {
		t.Errorf("after the fact: linearizable %v (decided %v), porcupine %v: %v", after, decided, theirs, h.Ops())
	}
	if h.Err() != "" {
		return false, theirs, false, h // no verdict to compare
	}
	return h.Violation() == "", theirs, true, h
}

// randomHistory makes a small random history: 2 or 3 clients of 1 to 3
// operations each, from ops; a read returns a value written so far (or
// 0), so that about half the histories are linearizable; now and then
// a client gives up on an operation (it never returns, and the client
// goes on) or leaves its last one pending.
func randomHistory(rng *rand.Rand, op func(rng *rand.Rand, client int) any, out func(rng *rand.Rand, in any, written []int) any) []hev {
	clients := 2 + rng.IntN(2)
	left := make([]int, clients)
	pending := make([]int, clients) // id+1 of the operation pending
	ins := map[int]any{}
	for c := range left {
		left[c] = 1 + rng.IntN(3)
	}
	var events []hev
	written := []int{0}
	id := 0
	for {
		var can []int
		for c := range clients {
			if left[c] > 0 || pending[c] != 0 {
				can = append(can, c)
			}
		}
		if len(can) == 0 {
			return events
		}
		c := can[rng.IntN(len(can))]
		switch {
		case pending[c] != 0 && rng.IntN(12) == 0 && left[c] == 0:
			pending[c] = 0 // left pending
		case pending[c] != 0 && (left[c] == 0 || rng.IntN(10) != 0):
			in := ins[pending[c]-1]
			events = append(events, hev{client: c, ret: true, v: out(rng, in, written), id: pending[c] - 1})
			pending[c] = 0
		default: // a call; a pending one, if any, is given up
			in := op(rng, c)
			if o, isW := in.(regOp); isW && o.Write {
				written = append(written, o.V)
			}
			if o, isW := in.(kvOp); isW && o.Write {
				written = append(written, o.V)
			}
			ins[id] = in
			events = append(events, hev{client: c, v: in, id: id})
			pending[c] = id + 1
			id++
			left[c]--
		}
	}
}

func regOpOf(rng *rand.Rand, _ int) any {
	if rng.IntN(2) == 0 {
		return regOp{Write: true, V: 1 + rng.IntN(3)}
	}
	return regOp{}
}

func kvOpOf(rng *rand.Rand, _ int) any {
	k := string(rune('x' + rng.IntN(2)))
	if rng.IntN(2) == 0 {
		return kvOp{Key: k, Write: true, V: 1 + rng.IntN(3)}
	}
	return kvOp{Key: k}
}

func readOut(rng *rand.Rand, in any, written []int) any {
	if o, ok := in.(regOp); ok && o.Write {
		return 0
	}
	if o, ok := in.(kvOp); ok && o.Write {
		return 0
	}
	return written[rng.IntN(len(written))]
}

// TestCrossCheckRandom: on 10,000 random small histories (a register, a
// key-value store partitioned by key, a register whose writes may be
// lost), the History's verdict is porcupine's. The counts of each are
// pinned: the generator is seeded, so a change in them is a change in
// the generator or a checker.
func TestCrossCheckRandom(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(38, 1))
	lin := map[string]int{}
	for i := range n {
		var events []hev
		var mine, theirs, ok bool
		var h properties.History
		kind := []string{"register", "kv", "lossy"}[i%3]
		switch kind {
		case "register":
			events = randomHistory(rng, regOpOf, readOut)
			mine, theirs, ok, h = verdicts(t, register, events)
		case "kv":
			events = randomHistory(rng, kvOpOf, readOut)
			mine, theirs, ok, h = verdicts(t, kv, events)
		case "lossy":
			events = randomHistory(rng, regOpOf, readOut)
			mine, theirs, ok, h = verdicts(t, lossy, events)
		}
		if !ok || mine != theirs {
			t.Fatalf("history %d (%s): incremental %v (error %q), porcupine %v: %v\n%s", i, kind, mine, h.Err(), theirs, h.Ops(), h.Violation())
		}
		if mine {
			lin[kind]++
			continue
		}
		// The longest linearizable prefix is: porcupine says so, and the
		// order given for it is one.
		var prefix []hev
		nl := h.NotLinearizable()
		for _, e := range events {
			if e.ret && e.client == nl.Op.Client && e.id == illegalID(events, nl) {
				break
			}
			prefix = append(prefix, e)
		}
		var err error
		switch kind {
		case "register":
			mine, theirs, ok, _ = verdicts(t, register, prefix)
			err = checkOrder(register, h)
		case "kv":
			mine, theirs, ok, _ = verdicts(t, kv, prefix)
			err = checkOrder(kv, h)
		case "lossy":
			mine, theirs, ok, _ = verdicts(t, lossy, prefix)
			err = checkOrder(lossy, h)
		}
		if !ok || !mine || !theirs || err != nil {
			t.Fatalf("history %d (%s): its prefix of %d events: incremental %v, porcupine %v; its order: %v\n%v\n%s", i, kind, nl.Prefix, mine, theirs, err, h.Ops(), nl.Order)
		}
	}
	// Of 3,334 register histories and 3,333 of each other kind.
	want := map[string]int{"register": 2075, "kv": 1742, "lossy": 2651}
	if !testing.Short() {
		for k, v := range want {
			if lin[k] != v {
				t.Errorf("%s: %d linearizable; want %d", k, lin[k], v)
			}
		}
	}
	t.Logf("linearizable: %v", lin)
}

// illegalID is the id, among events, of the operation whose response nl
// says no order allows: the one invoked as the History's event
// nl.Op.Call (events count Invoke and Return calls, not Abandon).
func illegalID(events []hev, nl *properties.NotLinearizable) int {
	n := 0
	for _, e := range events {
		if e.abandon {
			continue
		}
		if n++; n == nl.Op.Call {
			return e.id
		}
	}
	return -1
}

// checkOrder says what is wrong with the order h.NotLinearizable gives
// of its longest linearizable prefix, if anything: it must hold every
// operation on the key that returned within the prefix and none but
// the prefix's, respect their real-time order, and be a run of spec
// in which each that returned returns what it did.
func checkOrder[S, I, O comparable](spec properties.Spec[S, I, O], h properties.History) error {
	nl := h.NotLinearizable()
	if nl.Order == nil {
		return fmt.Errorf("no order")
	}
	states := []S{spec.Init()} // those a run of the order so far can leave
	in := map[int]bool{}
	for k, o := range nl.Order {
		in[o.Call] = true
		if o.Call == nl.Op.Call || o.Call > nl.Prefix || o.Return > nl.Prefix || o.Key != nl.Key {
			return fmt.Errorf("%v is not one of the prefix's on key %q", o, nl.Key)
		}
		for _, p := range nl.Order[k+1:] {
			if p.Return != 0 && p.Return < o.Call {
				return fmt.Errorf("%v goes before %v, which returned before it was invoked", o, p)
			}
		}
		var next []S
		for _, s := range states {
			for _, oc := range spec.Step(s, o.Input.(I)) {
				if o.Return == 0 || any(oc.Out) == o.Output {
					next = append(next, oc.Next)
				}
			}
		}
		if len(next) == 0 {
			return fmt.Errorf("%v cannot return what it did after %v", o, nl.Order[:k])
		}
		states = next
	}
	for _, o := range h.Ops() {
		if o.Key == nl.Key && o.Call != nl.Op.Call && o.Return != 0 && o.Return <= nl.Prefix && !in[o.Call] {
			return fmt.Errorf("%v returned within the prefix but is not in its order", o)
		}
	}
	return nil
}

// porcupineDir is where `go mod download` put porcupine's module, ""
// where it did not.
func porcupineDir(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/anishathalye/porcupine").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// etcdIn and etcdOut are the operations of Jepsen's etcd test in
// porcupine's test data: a register read, written and compare-and-set.
type etcdIn struct {
	Op     uint8 // 0 read, 1 write, 2 cas
	A1, A2 int
}

type etcdOut struct {
	OK, Exists bool
	Value      int
}

const etcdNil = -1000000

var etcdSpec = properties.Spec[int, etcdIn, etcdOut]{
	Name: "etcd",
	Init: func() int { return etcdNil },
	Step: func(s int, in etcdIn) []properties.Outcome[int, etcdOut] {
		switch in.Op {
		case 0:
			return []properties.Outcome[int, etcdOut]{{Out: etcdOut{Exists: s != etcdNil, Value: max(s, 0) * b2i(s != etcdNil)}, Next: s}}
		case 1:
			return []properties.Outcome[int, etcdOut]{{Next: in.A1}}
		}
		if s == in.A1 {
			return []properties.Outcome[int, etcdOut]{{Out: etcdOut{OK: true}, Next: in.A2}}
		}
		return []properties.Outcome[int, etcdOut]{{Next: s}}
	},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parseJepsen reads one of porcupine's Jepsen etcd logs: an operation
// that timed out (:info, or a read's :fail) is abandoned, pending for
// ever (a read that timed out has no effect, so that changes nothing).
func parseJepsen(path string) ([]hev, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	re := regexp.MustCompile(`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(invoke|ok|fail|info)\s+:(read|write|cas)\s+(.*)$`)
	var events []hev
	open := map[int]int{} // process -> id
	id := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		proc, _ := strconv.Atoi(m[1])
		arg := m[4]
		switch m[2] {
		case "invoke":
			in := etcdIn{}
			switch m[3] {
			case "write":
				in.Op = 1
				in.A1, _ = strconv.Atoi(arg)
			case "cas":
				in.Op = 2
				if _, err := fmt.Sscanf(arg, "[%d %d]", &in.A1, &in.A2); err != nil {
					return nil, fmt.Errorf("%s: %q: %v", path, sc.Text(), err)
				}
			}
			events = append(events, hev{client: proc, v: in, id: id})
			open[proc] = id
			id++
		case "info":
			if _, ok := open[proc]; ok {
				delete(open, proc)
				events = append(events, hev{client: proc, abandon: true})
			}
		case "ok", "fail":
			oid, ok := open[proc]
			if !ok {
				continue
			}
			out := etcdOut{}
			switch {
			case m[3] == "read" && m[2] == "fail":
				delete(open, proc)
				events = append(events, hev{client: proc, abandon: true})
				continue
			case m[3] == "read" && arg != "nil":
				out.Exists = true
				out.Value, _ = strconv.Atoi(arg)
			case m[3] == "cas":
				out.OK = m[2] == "ok"
			}
			delete(open, proc)
			events = append(events, hev{client: proc, ret: true, v: out, id: oid})
		}
	}
	return events, sc.Err()
}

// kvpIn and kvpOut are the operations of porcupine's kv test data: get,
// put and append on string keys.
type kvpIn struct {
	Op         uint8 // 0 get, 1 put, 2 append
	Key, Value string
}

type kvpOut struct{ Value string }

var kvpSpec = properties.Spec[string, kvpIn, kvpOut]{
	Name: "kv-strings",
	Init: func() string { return "" },
	Step: func(s string, in kvpIn) []properties.Outcome[string, kvpOut] {
		switch in.Op {
		case 0:
			return []properties.Outcome[string, kvpOut]{{Out: kvpOut{s}, Next: s}}
		case 1:
			return []properties.Outcome[string, kvpOut]{{Next: in.Value}}
		}
		return []properties.Outcome[string, kvpOut]{{Next: s + in.Value}}
	},
	Key: func(in kvpIn) string { return in.Key },
}

func parseKV(path string) ([]hev, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	re := regexp.MustCompile(`^\{:process (\d+), :type :(invoke|ok), :f :(get|put|append), :key "(.*)", :value (nil|"(.*)")\}$`)
	var events []hev
	open := map[int]int{}
	id := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		proc, _ := strconv.Atoi(m[1])
		if m[2] == "invoke" {
			in := kvpIn{Key: m[4], Value: m[6]}
			in.Op = map[string]uint8{"get": 0, "put": 1, "append": 2}[m[3]]
			events = append(events, hev{client: proc, v: in, id: id})
			open[proc] = id
			id++
			continue
		}
		oid, ok := open[proc]
		if !ok {
			continue
		}
		delete(open, proc)
		out := kvpOut{}
		if m[3] == "get" {
			out.Value = m[6]
		}
		events = append(events, hev{client: proc, ret: true, v: out, id: oid})
	}
	return events, sc.Err()
}

// TestCrossCheckPorcupineData: on the histories of porcupine's test data
// that fit the spec types (Jepsen's etcd register, the kv store), the
// History's verdict is porcupine's. A history too wide for the
// incremental form (more than MaxPossibilities on one key: many
// operations that never returned) is counted, not compared.
func TestCrossCheckPorcupineData(t *testing.T) {
	if testing.Short() {
		t.Skip("reads porcupine's 109 test histories: runs without -short")
	}
	dir := porcupineDir(t)
	if dir == "" {
		t.Skip("porcupine's module is not downloaded (go mod download github.com/anishathalye/porcupine): its test data is read from there")
	}
	if _, err := os.Stat(filepath.Join(dir, "test_data")); err != nil {
		t.Skipf("porcupine's test data is absent from %s: %v", dir, err)
	}
	type result struct{ agree, lin, wide int }
	var res = map[string]*result{"jepsen": {}, "kv": {}}
	check := func(kind, path string, mine, theirs, ok bool, h properties.History) {
		r := res[kind]
		switch {
		case !ok:
			r.wide++
			t.Logf("%s: no verdict: %s", filepath.Base(path), h.Err())
		case mine != theirs:
			t.Errorf("%s: incremental %v, porcupine %v: %s", filepath.Base(path), mine, theirs, h.Violation())
		default:
			r.agree++
			if mine {
				r.lin++
			}
		}
	}
	jepsen, _ := filepath.Glob(filepath.Join(dir, "test_data", "jepsen", "etcd_*.log"))
	for _, path := range jepsen {
		events, err := parseJepsen(path)
		if err != nil {
			t.Fatal(err)
		}
		mine, theirs, ok, h := verdicts(t, etcdSpec, events)
		check("jepsen", path, mine, theirs, ok, h)
	}
	kvs, _ := filepath.Glob(filepath.Join(dir, "test_data", "kv", "*.txt"))
	for _, path := range kvs {
		events, err := parseKV(path)
		if err != nil {
			t.Fatal(err)
		}
		mine, theirs, ok, h := verdicts(t, kvpSpec, events)
		check("kv", path, mine, theirs, ok, h)
	}
	if len(jepsen) == 0 || len(kvs) == 0 {
		t.Skipf("porcupine's test data has %d jepsen and %d kv histories: none to check", len(jepsen), len(kvs))
	}
	// Porcupine v1.3.1's data: 103 Jepsen etcd histories, 6 kv ones.
	// Too wide: etcd_007 (5 clients and 14 operations that timed out,
	// whose orders the possibilities keep), and the two of 50 clients.
	want := map[string]result{"jepsen": {agree: 102, lin: 23, wide: 1}, "kv": {agree: 4, lin: 2, wide: 2}}
	for k, r := range res {
		if *r != want[k] {
			t.Errorf("%s: %d agree (%d linearizable), %d too wide; want %+v", k, r.agree, r.lin, r.wide, want[k])
		}
	}
}
