package pgstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestReputationStore_enginesLearnTogether runs two engines, as two
// servers would, each with a book over its own connection to one
// database. Calls made on the first teach the second: its reliabilities
// read what the first learned of a session that lies, and its weighted
// call weighs that session least.
func TestReputationStore_enginesLearnTogether(t *testing.T) {
	engines := enginesOnOneDatabase(t)
	ctx := context.Background()
	req := func(aggregation router.Aggregation) *router.ValidateV3Request {
		return &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)}},
			Consensus: router.ConsensusRequest{Replicas: 5, Aggregation: aggregation,
				DisagreementPolicy: router.DisagreeReturnAll, SessionPool: []router.SessionID{1, 2, 3, 4, 5}},
		}
	}
	scope := router.Scope(router.KindValidate, "summary")
	before, err := engines[1].Reputation().Reliabilities(ctx, scope, []int64{1, 5})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := engines[0].ValidateV3(ctx, req(router.AggregationMajority)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := engines[1].Reputation().Reliabilities(ctx, scope, []int64{1, 5})
	if err != nil {
		t.Fatal(err)
	}
	if !(after.Sessions[5] < before.Sessions[5]-0.2 && after.Sessions[1] > before.Sessions[1]) {
		t.Errorf("the second engine reads session 5 at %.3f (%.3f before) and session 1 at %.3f (%.3f before): it did not learn what the first did",
			after.Sessions[5], before.Sessions[5], after.Sessions[1], before.Sessions[1])
	}

	resp, err := engines[1].ValidateV3(ctx, req(router.AggregationWeighted))
	if err != nil {
		t.Fatal(err)
	}
	weights := map[router.SessionID]float64{}
	for _, r := range resp.Evidence.Runs {
		if r.Weight != nil {
			weights[r.SessionID] = *r.Weight
		}
	}
	w5, ok := weights[5]
	if !ok {
		t.Fatalf("the weighted call gave session 5 no weight: runs %+v", resp.Evidence.Runs)
	}
	for id, w := range weights {
		if id != 5 && !(w > w5) {
			t.Errorf("session %d weighs %.3f, not more than the liar's %.3f", id, w, w5)
		}
	}
}

// enginesOnOneDatabase returns two engines, as two servers would run them,
// each with a reputation book over its own connection to one database, on
// five sessions of which the fifth lies.
func enginesOnOneDatabase(t *testing.T) []*router.Engine {
	t.Helper()
	honest := routertest.Verdict(router.VerdictValid)
	workers := []router.Worker{honest, honest, honest, honest, routertest.Lie(honest)}
	var engines []*router.Engine
	for _, db := range openDBs(t, 2) {
		book, err := reputation.New(db.Reputation(), reputation.Options{LearnFromAgreement: true}) // agreement shows the liar
		if err != nil {
			t.Fatal(err)
		}
		e, err := router.NewEngine(routertest.Sessions(1, 5, workers...), router.WithReputation(book))
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
	}
	return engines
}
