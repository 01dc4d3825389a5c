package sim_test

import (
	"slices"
	"testing"

	"github.com/livecheck/livecheck/sim"
)

// DurableFields names a node's durable fields, those of the structs it
// embeds and of each layer of a stack, and hands them out settable: what
// a host writes to disk and loads back before Init.
func TestDurableFields(t *testing.T) {
	names := func(n sim.Node) []string {
		var out []string
		for _, f := range sim.DurableFields(n) {
			out = append(out, f.Name)
		}
		return out
	}
	w := &walNode{Term: 3}
	if got, want := names(w), []string{"Term", "Log", "walMeta.Boots"}; !slices.Equal(got, want) {
		t.Errorf("walNode's durable fields are %v, want %v", got, want)
	}
	sim.DurableFields(w)[2].Value.SetInt(7)
	if w.Boots != 7 {
		t.Errorf("setting walMeta.Boots gave %d, want 7", w.Boots)
	}
	st := sim.Stack(sim.Layer{Name: "wire", Node: &wire{}}, sim.Layer{Name: "app", Node: &greeter{}})
	if got, want := names(st), []string{"wire/Boots", "app/Epoch"}; !slices.Equal(got, want) {
		t.Errorf("the stack's durable fields are %v, want %v", got, want)
	}
	if got := names(sim.BaseNode{}); got != nil {
		t.Errorf("BaseNode has durable fields %v", got)
	}
}
