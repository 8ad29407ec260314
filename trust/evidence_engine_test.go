package trust_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// The evidence the Engine's own problems carry always decodes, so that a
// trust service, which refuses evidence that does not, reads the Engine's
// disagreements and failures as the votes they are: every member the
// Engine writes decodes into the runs and consensus block, and an oracle
// disagreement over it, of a validation or a delegation, answers RETRY
// with the runs of the five sessions as its disagreements.
func TestService_engineEvidenceDecodes(t *testing.T) {
	w := honest(0.9)
	e := newEngine(t, w, w, w, w, routertest.Lie(w))

	req := &router.ValidateV3Request{Consensus: router.ConsensusRequest{Replicas: 5, DisagreementPolicy: router.DisagreeFailHard, WeightBy: router.WeightByReputation, Aggregation: router.AggregationWeighted}}
	req.Claim = router.Claim{Type: "summary", Output: json.RawMessage(`"Paris is French."`)}
	_, err := e.ValidateV3(context.Background(), req)
	var p *router.Error
	if !errors.As(err, &p) || len(p.Extra) == 0 {
		t.Fatalf("ValidateV3: %v, want a problem carrying evidence", err)
	}
	var ev struct {
		Runs      []router.Run             `json:"runs"`
		Consensus router.ConsensusResponse `json:"consensus"`
	}
	dec := json.NewDecoder(bytes.NewReader(p.Extra))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil || len(ev.Runs) != 5 {
		t.Fatalf("the Engine's evidence %s: %v, %d runs; want 5 runs that decode", p.Extra, err, len(ev.Runs))
	}

	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation} {
		resp, err := s.Call(context.Background(), request(mode, trust.PolicyOracle))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		var sessions []router.SessionID
		for _, d := range resp.Evidence.Disagreements {
			sessions = append(sessions, d.SessionID)
		}
		slices.Sort(sessions)
		if diff := cmp.Diff([]router.SessionID{1, 2, 3, 4, 5}, sessions); resp.Status != trust.StatusRetry || diff != "" {
			t.Errorf("%s: status %s, disagreements of sessions (-want +got):\n%s", mode, resp.Status, diff)
		}
	}
}
