package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// TestReputationStore_enginesCalibrateTogether: outcomes reported on the
// calls of one engine calibrate the weighted confidence of another over
// the same database, as two servers behind one load balancer.
func TestReputationStore_enginesCalibrateTogether(t *testing.T) {
	engines := enginesOnOneDatabase(t)
	ctx := context.Background()
	req := &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)}},
		Consensus: router.ConsensusRequest{Replicas: 5, Aggregation: router.AggregationWeighted,
			DisagreementPolicy: router.DisagreeReturnAll, SessionPool: []router.SessionID{1, 2, 3, 4, 5}},
	}
	const reported = 12
	for i := range reported {
		trace := fmt.Sprintf("%032x", i+1)
		if _, err := engines[0].ValidateV3(router.WithTraceID(ctx, trace), req); err != nil {
			t.Fatal(err)
		}
		if err := engines[0].Feedback(ctx, trace, i%2 == 0); err != nil { // right half the time
			t.Fatal(err)
		}
	}
	resp, err := engines[1].ValidateV3(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Consensus.Calibration
	if c == nil || c.Basis != reputation.BasisOutcomes || c.Outcomes != reported || len(c.Points) == 0 {
		t.Fatalf("the second engine's basis %+v: want %d outcomes the first engine's host reported", c, reported)
	}
	if got := reputation.Interpolate(c.Points, c.Uncalibrated); got != resp.Confidence || !(got < c.Uncalibrated-0.1) {
		t.Errorf("confidence %v, recomputed %v from %v: want it recomputed, well below the number before calibration after outcomes half wrong", resp.Confidence, got, c.Uncalibrated)
	}
}
