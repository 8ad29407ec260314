package decide

import (
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// TestMaps_Lower: before the first vote a validation plans on
// the lower of what either verdict would state; a verdict whose map holds
// no outcome states the conservative number, so it bounds the plan too.
// With no outcome in either map there is nothing to read (nil).
func TestMaps_Lower(t *testing.T) {
	var valid, invalid reputation.Calibration
	b := reputation.Bin(0.95)
	valid.Outcomes[b] = reputation.Record{Right: 40} // every outcome right
	valid.Scores[b] = reputation.Record{Right: 40 * 0.95, Wrong: 40 * 0.05}
	valid.Conservative[b] = reputation.Record{Right: 40 * 0.875, Wrong: 40 * 0.125}
	m := &Maps{Labels: []consensus.Label{"VALID", "INVALID"}, Calibrations: []*reputation.Calibration{&valid, &invalid}}
	lower := m.Lower()
	if lower == nil {
		t.Fatal("lower is nil although one map holds outcomes")
	}
	if y := valid.Read(0.95, 0.875); !(y > 0.875) {
		t.Fatalf("the VALID map reads %v at 0.95, want above the conservative 0.875 after 40 right outcomes", y)
	}
	if got := lower(0.95, 0.875); got != 0.875 {
		t.Errorf("lower(0.95, 0.875) = %v, want 0.875: the INVALID map holds no outcome and states the conservative number", got)
	}
	empty := &Maps{Labels: m.Labels, Calibrations: []*reputation.Calibration{{}, {}}}
	if empty.Lower() != nil {
		t.Error("lower of maps of no outcome is not nil")
	}
	var none *Maps
	if none.Lower() != nil {
		t.Error("lower of no maps is not nil")
	}
}
