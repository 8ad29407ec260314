package main

import (
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestRecord_countsChecks: a leader's check is a run the call cost, so
// the runs per call count it beside the runs the verdict counts.
func TestRecord_countsChecks(t *testing.T) {
	resp := &trust.Response{
		Status:     trust.StatusValid,
		Confidence: 0.9,
		Evidence: trust.Evidence{
			Launched: 1,
			Checked:  1,
			Steps: []trust.Step{
				{Sessions: []router.SessionID{3}},
				{Sessions: []router.SessionID{5}, Check: true},
			},
		},
	}
	k := record(router.VerdictValid, resp)
	if k.launched != 2 || k.runs != [panelSize]int{0, 0, 1, 0, 1} || !k.correct || !k.answered {
		t.Errorf("record = %+v; want 2 runs, one on session 3 and the check on session 5, answered right", k)
	}
}
