package host

import (
	"fmt"
	"reflect"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// Reports. A node run with `livecheck run --report` writes a
// StateReport, as a line of JSON on its standard output, each time its
// state changes: `livecheck cluster` reads them from its nodes'
// processes, rebuilds each node's state from them and evaluates the
// properties on the nodes' states.

// A StateReport is a node's state after a handler.
type StateReport struct {
	Node  sim.NodeID `json:"node"`
	Event string     `json:"event"`
	Dump  string     `json:"dump"`
	// State holds the node's state, layer by layer, in the codec's
	// encoding (codec.go): what properties read.
	State []byte `json:"state,omitempty"`
}

// layers returns the nodes a state is made of: the layers of a stack,
// or the node itself.
func layers(n sim.Node) []sim.Node {
	if s, ok := n.(*sim.Stacked); ok && s != nil {
		out := make([]sim.Node, s.Len())
		for i := range out {
			_, out[i] = s.Layer(i)
		}
		return out
	}
	return []sim.Node{n}
}

// EncodeState encodes node n's state, layer by layer (each layer a
// pointer to a struct, as nodes are), for a StateReport.
func EncodeState(n sim.Node) ([]byte, error) {
	var b []byte
	for _, l := range layers(n) {
		v := reflect.ValueOf(l)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			b = append(b, 0)
			continue
		}
		if err := registerValue(v); err != nil {
			return nil, err
		}
		var err error
		if b, err = encodeValue(append(b, 1), v.Elem()); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// DecodeState decodes what EncodeState wrote into n, a node New built.
func DecodeState(b []byte, n sim.Node) error {
	d := &decoder{b: b}
	for _, l := range layers(n) {
		v := reflect.ValueOf(l)
		if d.byte() == 0 {
			continue
		}
		if d.err == nil && (v.Kind() != reflect.Pointer || v.IsNil()) {
			return fmt.Errorf("the report has a state where the node has none (a %T)", l)
		}
		if err := decodeInto(d, v.Elem()); err != nil {
			return err
		}
	}
	if d.err == nil && len(d.b) > 0 {
		return fmt.Errorf("the report has more layers than the node")
	}
	return d.err
}

// decodeInto decodes the next value of d into v, settable.
func decodeInto(d *decoder, v reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errCodec, r)
		}
	}()
	d.value(codecOf(v.Type()), v)
	return d.err
}

// A Watcher keeps the latest state of each node of a cluster whose
// nodes run elsewhere, from their reports, and says which properties
// hold now, and since when.
type Watcher struct {
	Model  *protocol.Model
	nodes  []sim.Node
	dumps  []string
	since  map[string]time.Time // by property: when its status last changed
	status map[string]bool
}

// NewWatcher returns a watcher of the nodes of sys for cfg, each as New
// builds it until it reports.
func NewWatcher(sys *protocol.System, cfg protocol.Config) (*Watcher, error) {
	cfg, m, err := sys.Model(cfg)
	if err != nil {
		return nil, err
	}
	if err := discover(fmt.Sprintf("%p %v", sys, cfg), m); err != nil {
		return nil, err
	}
	w := &Watcher{Model: m, since: map[string]time.Time{}, status: map[string]bool{}}
	for i := 0; i < m.Spec.Nodes; i++ {
		w.nodes = append(w.nodes, m.Spec.New(sim.NodeID(i)))
		w.dumps = append(w.dumps, "")
	}
	return w, nil
}

// Update takes a report in; it is an error if its state does not decode
// (the node's dump is kept all the same).
func (w *Watcher) Update(r StateReport) error {
	if r.Node < 0 || int(r.Node) >= len(w.nodes) {
		return fmt.Errorf("a report from node %d, which is no node", r.Node)
	}
	w.dumps[r.Node] = r.Dump
	if r.State == nil {
		return nil
	}
	n := w.Model.Spec.New(r.Node)
	if err := DecodeState(r.State, n); err != nil {
		return fmt.Errorf("node %d's state does not decode: %v", r.Node, err)
	}
	w.nodes[r.Node] = n
	return nil
}

// Reset says node id restarted: its state is New's until it reports.
func (w *Watcher) Reset(id sim.NodeID) {
	w.nodes[id] = w.Model.Spec.New(id)
	w.dumps[id] = ""
}

// Dump is node id's last reported dump.
func (w *Watcher) Dump(id sim.NodeID) string { return w.dumps[id] }

// Status evaluates the properties on the nodes' latest states, and
// returns with each whether its status changed since the last call,
// and since when it has had it.
func (w *Watcher) Status(now time.Time) (out []WatchedStatus) {
	for _, st := range Status(w.Model.Properties, sim.NewState(w.nodes)) {
		old, seen := w.status[st.Name]
		changed := !seen || old != st.Holds
		if changed {
			w.status[st.Name], w.since[st.Name] = st.Holds, now
		}
		out = append(out, WatchedStatus{PropertyStatus: st, Changed: changed, Since: w.since[st.Name]})
	}
	return out
}

// A WatchedStatus is a property's status with its history.
type WatchedStatus struct {
	PropertyStatus
	Changed bool
	Since   time.Time
}

// FreeLoopback returns n loopback addresses with ports free now, for
// nodes of transport t that other processes will bind: a port can be
// taken in between, and the node that finds it taken says so.
func FreeLoopback(n int, t sim.Transport) ([]string, error) {
	peers, bound, err := bindLoopback(n, t)
	if err != nil {
		return nil, err
	}
	for _, b := range bound {
		b.close()
	}
	return peers, nil
}
