package boltstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestStore_enginesCalibrate: outcomes reported on the calls of one
// engine calibrate the weighted confidence of another over the same
// file, and of a third after a restart.
func TestStore_enginesCalibrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reputation.db")
	ctx := context.Background()
	s := open(t, path)
	honest := routertest.Verdict(router.VerdictValid)
	workers := []router.Worker{honest, honest, honest, honest, routertest.Lie(honest)}
	engine := func(store reputation.Store) *router.Engine {
		// Agreement teaches the sessions' weights, so that the number
		// before calibration stays high while the outcomes say otherwise.
		book, err := reputation.New(store, reputation.Options{LearnFromAgreement: true})
		if err != nil {
			t.Fatal(err)
		}
		e, err := router.NewEngine(routertest.Sessions(1, 5, workers...), router.WithReputation(book))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	req := &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)}},
		Consensus: router.ConsensusRequest{Replicas: 5, Aggregation: router.AggregationWeighted,
			DisagreementPolicy: router.DisagreeReturnAll, SessionPool: []router.SessionID{1, 2, 3, 4, 5}},
	}
	const reported = 12
	first, second := engine(s), engine(s)
	for i := range reported {
		trace := fmt.Sprintf("%032x", i+1)
		if _, err := first.ValidateV3(router.WithTraceID(ctx, trace), req); err != nil {
			t.Fatal(err)
		}
		if err := first.Feedback(ctx, trace, i%2 == 0); err != nil { // right half the time
			t.Fatal(err)
		}
	}
	check := func(what string, e *router.Engine) {
		t.Helper()
		resp, err := e.ValidateV3(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		c := resp.Consensus.Calibration
		if c == nil || c.Basis != reputation.BasisOutcomes || c.Outcomes != reported || len(c.Points) == 0 {
			t.Fatalf("%s: basis %+v, want the %d outcomes reported on the first engine", what, c, reported)
		}
		if got := reputation.Interpolate(c.Points, c.Uncalibrated); got != resp.Confidence || !(got < c.Uncalibrated-0.1) {
			t.Errorf("%s: confidence %v, recomputed %v from %v: want it well below the number before calibration", what, resp.Confidence, got, c.Uncalibrated)
		}
	}
	check("the second engine", second)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer s.Close()
	check("an engine after a restart", engine(s))
}
