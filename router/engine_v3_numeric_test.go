package router_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_DelegateV3_numericLearning: the reputation a numeric call
// teaches follows agreement within the tolerance, not equal JSON: a
// session that writes its numbers as strings ("18") backs the median as
// much as one that writes 18, and one that answers in words does not.
func TestEngine_DelegateV3_numericLearning(t *testing.T) {
	e := newEngine(t, routertest.Sessions(1, 4,
		routertest.Answer(18), routertest.Answer("18"), routertest.Answer(json.RawMessage(`18.0`)), routertest.Answer("eighteen")),
		router.WithReputation(agreementBook(t, nil, reputation.Options{})))
	for range 30 {
		_, err := e.DelegateV3(context.Background(), &router.DelegateV3Request{
			DelegateTask: router.DelegateTask{Objective: "how many?"},
			Consensus:    router.ConsensusRequest{Replicas: 3, Aggregation: router.AggregationMedian, DisagreementPolicy: router.DisagreeReturnAll},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rel, err := e.Reputation().Reliabilities(context.Background(), router.Scope(router.KindDelegate, ""), []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	prior := rel.Prior
	for _, s := range []int64{1, 2, 3} {
		if p := rel.Of(s); p <= prior {
			t.Errorf("session %d, which always agreed with the median, reads %v, no more than the prior %v", s, p, prior)
		}
	}
	if p := rel.Of(4); p >= prior {
		t.Errorf("session 4, which answered in words, reads %v, at least the prior %v", p, prior)
	}
}
