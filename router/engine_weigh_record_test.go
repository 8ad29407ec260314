package router_test

import (
	"context"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestValidateV3_abandonedFailureWeighsItsSession: under weighted voting
// with failures as negative evidence, a replica whose worker ignores its
// cancelled context, abandoned after the grace, weighs as its own session
// (reliability about 0.98 from 100 outcomes), as any failed run does, and
// not as an unknown session's prior: its failure then outweighs the two
// VALID votes, and the call has no verdict.
func TestValidateV3_abandonedFailureWeighsItsSession(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := router.Scope(router.KindValidate, "summary")
	for range 100 {
		if err := book.Feedback(context.Background(), scope, []reputation.Ballot{{Session: 3, Backed: true}}, true); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := book.Reliabilities(context.Background(), scope, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	V := routertest.Verdict(valid)
	e := newEngine(t, routertest.Sessions(1, 3, V, V, stubborn(release)),
		router.WithReputation(book), router.WithFailureMode(consensus.FailuresNegative),
		router.WithStopGrace(time.Millisecond), router.WithReplicaTimeout(30*time.Millisecond))
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.Aggregation = router.AggregationWeighted
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	got, err := e.ValidateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	var r3 *router.Run
	for i, r := range got.Evidence.Runs {
		if r.SessionID == 3 {
			r3 = &got.Evidence.Runs[i]
		}
	}
	if r3 == nil || r3.Label != router.LabelTimeout {
		t.Fatalf("session 3's run %+v, want a TIMEOUT", r3)
	}
	if r3.Reliability == nil || *r3.Reliability != rel.Of(3) || r3.Weight == nil || *r3.Weight != consensus.Weight(rel.Of(3)) {
		t.Errorf("session 3's failed run records reliability %v and weight %v, want its session's %v and %v",
			r3.Reliability, r3.Weight, rel.Of(3), consensus.Weight(rel.Of(3)))
	}
	if got.Verdict != "" {
		t.Errorf("verdict %q, want none: the failure of session 3 outweighs the two answers", got.Verdict)
	}
}

// TestDelegateV3_medianRunsRecordTheirWeight: a weighted median weighs
// each number by its session's reliability alone, so its runs record a
// weight of Weight(reliability) and no confidence_slope, which would
// recompute another weight, even for sessions whose outcomes taught one.
func TestDelegateV3_medianRunsRecordTheirWeight(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := router.Scope(router.KindDelegate, "")
	for s := int64(1); s <= 3; s++ {
		for i := range 40 { // confident votes right, hesitant ones wrong: a slope
			right, c := i%4 != 0, 0.95
			if !right {
				c = 0.55
			}
			if err := book.Feedback(ctx, scope, []reputation.Ballot{{Session: s, Backed: true, Confidence: c}}, right); err != nil {
				t.Fatal(err)
			}
		}
	}
	e := newEngine(t, routertest.Sessions(1, 3,
		routertest.Fixed(router.Result{Output: 18, Confidence: 0.99}),
		routertest.Fixed(router.Result{Output: 18, Confidence: 0.99}),
		routertest.Fixed(router.Result{Output: 20, Confidence: 0.55})),
		router.WithReputation(book))
	got, err := e.DelegateV3(ctx, &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "how many?"},
		Consensus: router.ConsensusRequest{Replicas: 3, Aggregation: router.AggregationMedian, WeightBy: router.WeightByReputation,
			DisagreementPolicy: router.DisagreeReturnAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	weighed := 0
	for _, r := range got.Evidence.Runs {
		if r.Weight == nil {
			continue
		}
		weighed++
		if r.ConfidenceSlope != nil || *r.Weight != consensus.Weight(*r.Reliability) {
			t.Errorf("run %d: weight %v, confidence_slope %+v; want Weight(%v) and no slope", r.Replica, *r.Weight, r.ConfidenceSlope, *r.Reliability)
		}
	}
	if weighed != 3 {
		t.Errorf("%d runs record a weight, want 3", weighed)
	}
}
