package router_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// TestClient_ValidateV3_storeDownWeighsThePrior: a weighted version 3
// call over loopback HTTP while the engine's reputation store is out of
// reach is answered all the same, and says what it weighed: every run
// records the prior's reliability, not the record the store holds (one
// session was reported wrong), the reputation snapshot the prior, and the
// confidence is the conservative number, its basis uncalibrated.
func TestClient_ValidateV3_storeDownWeighsThePrior(t *testing.T) {
	store := new(downStore)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, alice, _ := feedbackServer(t, newEngine(t, equalSessions(3, 0), router.WithReputation(book)))
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), trace)
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.Aggregation = router.AggregationWeighted
	if _, err := alice.ValidateV3(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := alice.Feedback(ctx, trace, false); err != nil {
		t.Fatal(err)
	}

	store.down.Store(true)
	resp, err := alice.ValidateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("weighted call with the store down: %v", err)
	}
	prior := book.Options().Prior.Mean()
	type weighed struct {
		Reliabilities []float64
		Prior         float64
		Basis         string
		Confidence    float64
	}
	want := weighed{Reliabilities: []float64{prior, prior, prior}, Prior: prior, Basis: reputation.BasisUncalibrated}
	var got weighed
	for _, r := range resp.Evidence.Runs {
		if r.Reliability != nil {
			got.Reliabilities = append(got.Reliabilities, *r.Reliability)
		}
	}
	if s := resp.Consensus.Reputation; s != nil {
		got.Prior = s.Prior
	}
	if c := resp.Consensus.Calibration; c != nil {
		got.Basis = c.Basis
		want.Confidence = c.Conservative
	}
	got.Confidence = resp.Consensus.Confidence
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("weighted call with the store down (-want +got):\n%s", diff)
	}
	if want := consensus.Posterior(3, 0); want != got.Confidence {
		t.Errorf("confidence %v, want %v, the unweighted count of 3 to 0", got.Confidence, want)
	}
}
