package router_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_WithReading checks that a weighted call weighs and records
// its sessions by the Reading its context carries, reading nothing of
// the book, when the Reading is of the call's scope and holds every
// session; that WithoutCalibration spares the calibration map's read and
// states the weighted confidence; and that any other Reading is ignored.
func TestEngine_WithReading(t *testing.T) {
	store := &reputationtest.CountingStore{}
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, equalSessions(3, 0), router.WithReputation(book))
	scope := router.Scope(router.KindValidate, "summary")
	read := router.Reading{
		Scope:         scope,
		Reliabilities: consensus.Reliabilities{Sessions: map[int64]float64{1: 0.9, 2: 0.6, 3: 0.7}, Prior: 0.8},
		Evidence:      map[int64]reputation.Record{1: {Right: 36, Wrong: 4}, 2: {Right: 24, Wrong: 16}, 3: {Right: 28, Wrong: 12}},
	}
	call := func(ctx context.Context) (map[router.SessionID]float64, *router.ValidateV3Response, int64) {
		t.Helper()
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.Aggregation = router.AggregationWeighted
		before := store.Loads()
		resp, err := e.ValidateV3(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := map[router.SessionID]float64{}
		for _, r := range resp.Evidence.Runs {
			got[r.SessionID] = *r.Reliability
		}
		return got, resp, store.Loads() - before
	}
	handed := map[router.SessionID]float64{1: 0.9, 2: 0.6, 3: 0.7}
	prior := map[router.SessionID]float64{1: 0.8, 2: 0.8, 3: 0.8}

	ctx := router.WithoutLearning(context.Background()) // no call teaches: every read below is the book's as it started
	got, resp, loads := call(router.WithReading(ctx, read))
	if diff := cmp.Diff(handed, got); diff != "" {
		t.Errorf("with a Reading: reliabilities recorded (-want +got):\n%s", diff)
	}
	if loads != 1 || resp.Consensus.Calibration == nil {
		t.Errorf("with a Reading: %d store reads and calibration %v, want one read, of the calibration map", loads, resp.Consensus.Calibration)
	}

	got, resp, loads = call(router.WithoutCalibration(router.WithReading(ctx, read)))
	if diff := cmp.Diff(handed, got); diff != "" {
		t.Errorf("with a Reading, without calibration: reliabilities recorded (-want +got):\n%s", diff)
	}
	if loads != 0 || resp.Consensus.Calibration != nil {
		t.Errorf("with a Reading, without calibration: %d store reads and calibration %v, want none", loads, resp.Consensus.Calibration)
	}
	out, err := consensus.Weighted{Reliabilities: read.Reliabilities}.Aggregate([]consensus.Vote{
		{Session: 1, Label: consensus.LabelValid}, {Session: 2, Label: consensus.LabelValid}, {Session: 3, Label: consensus.LabelValid},
	}, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Consensus.Confidence != out.Confidence {
		t.Errorf("without calibration: confidence %v, want the weighted %v", resp.Consensus.Confidence, out.Confidence)
	}

	other := read
	other.Scope = router.Scope(router.KindValidate, "plan_step")
	short := read
	short.Evidence = map[int64]reputation.Record{1: read.Evidence[1], 2: read.Evidence[2]}
	for name, r := range map[string]router.Reading{"of another scope": other, "without session 3": short} {
		got, _, loads := call(router.WithoutCalibration(router.WithReading(ctx, r)))
		if diff := cmp.Diff(prior, got); diff != "" {
			t.Errorf("with a Reading %s: reliabilities recorded (-want the book's +got):\n%s", name, diff)
		}
		if loads != 1 {
			t.Errorf("with a Reading %s: %d store reads, want one, of the sessions' records", name, loads)
		}
	}
}

// TestEngine_WithReading_delegation checks that a delegation, whose
// request names no claim type, takes the scope WithScope names, a kind of
// its operation: a Reading of that scope weighs its runs, and nothing is
// read; without the name, the Reading is of another scope and the engine
// reads its book.
func TestEngine_WithReading_delegation(t *testing.T) {
	store := &reputationtest.CountingStore{}
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok := routertest.Fixed(router.Result{Output: "42"})
	e := newEngine(t, routertest.Sessions(1, 3, ok, ok, ok), router.WithReputation(book))
	read := router.Reading{
		Scope:         router.Scope(router.KindDelegate, "summary"),
		Reliabilities: consensus.Reliabilities{Sessions: map[int64]float64{1: 0.9, 2: 0.6, 3: 0.7}, Prior: 0.8},
		Evidence:      map[int64]reputation.Record{1: {Right: 36, Wrong: 4}, 2: {Right: 24, Wrong: 16}, 3: {Right: 28, Wrong: 12}},
	}
	base := router.WithoutCalibration(router.WithReading(router.WithoutLearning(context.Background()), read))
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		want  map[router.SessionID]float64
		loads int64
	}{
		{"with the scope named", router.WithScope(base, read.Scope), map[router.SessionID]float64{1: 0.9, 2: 0.6, 3: 0.7}, 0},
		{"without", base, map[router.SessionID]float64{1: 0.8, 2: 0.8, 3: 0.8}, 1},
	} {
		before := store.Loads()
		resp, err := e.DelegateV3(tc.ctx, &router.DelegateV3Request{
			DelegateTask: router.DelegateTask{Objective: "answer"},
			Consensus:    router.ConsensusRequest{Replicas: 3, Aggregation: router.AggregationWeighted},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[router.SessionID]float64{}
		for _, r := range resp.Evidence.Runs {
			got[r.SessionID] = *r.Reliability
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: reliabilities recorded (-want +got):\n%s", tc.name, diff)
		}
		if n := store.Loads() - before; n != tc.loads {
			t.Errorf("%s: %d store reads, want %d", tc.name, n, tc.loads)
		}
	}
}

// TestEngine_WithReading_calibration checks that a weighted call reads
// its confidence on the map of CalibrationTier a Reading holds, reading
// nothing of the book, and that a map of another tier is ignored: the
// engine then reads its own.
func TestEngine_WithReading_calibration(t *testing.T) {
	store := &reputationtest.CountingStore{}
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, equalSessions(3, 0), router.WithReputation(book))
	// A map whose every bin turned out right one time in ten: the
	// book's own map holds no outcome.
	doubted := &reputation.Calibration{Tier: router.CalibrationTier}
	for b := range reputation.CalibrationBins {
		s := (float64(b) + 0.5) / reputation.CalibrationBins
		doubted.Outcomes[b] = reputation.Record{Right: 1, Wrong: 9}
		doubted.Scores[b] = reputation.Record{Right: 10 * s, Wrong: 10 * (1 - s)}
		doubted.Conservative[b] = doubted.Scores[b]
	}
	read := router.Reading{
		Scope:         router.Scope(router.KindValidate, "summary"),
		Reliabilities: consensus.Reliabilities{Sessions: map[int64]float64{1: 0.8, 2: 0.8, 3: 0.8}, Prior: 0.8},
		Evidence:      map[int64]reputation.Record{1: {Right: 32, Wrong: 8}, 2: {Right: 32, Wrong: 8}, 3: {Right: 32, Wrong: 8}},
		Calibration:   doubted,
	}
	other := *doubted
	other.Tier = "safe"
	misnamed := read
	misnamed.Calibration = &other
	ctx := router.WithoutLearning(context.Background())
	for _, tc := range []struct {
		name  string
		r     router.Reading
		basis string
		loads int64
	}{
		{"its map", read, reputation.BasisOutcomes, 0},
		{"a map of another tier", misnamed, reputation.BasisUncalibrated, 1},
	} {
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.Aggregation = router.AggregationWeighted
		before := store.Loads()
		resp, err := e.ValidateV3(router.WithReading(ctx, tc.r), req)
		if err != nil {
			t.Fatal(err)
		}
		c := resp.Consensus.Calibration
		if c == nil || c.Basis != tc.basis {
			t.Fatalf("%s: calibration %+v, want basis %q", tc.name, c, tc.basis)
		}
		if want, _ := tc.r.Calibration.Basis(c.Uncalibrated, c.Conservative); tc.basis == reputation.BasisOutcomes && resp.Consensus.Confidence != want {
			t.Errorf("%s: confidence %v, want %v read on the handed map", tc.name, resp.Consensus.Confidence, want)
		}
		if n := store.Loads() - before; n != tc.loads {
			t.Errorf("%s: %d store reads, want %d", tc.name, n, tc.loads)
		}
	}
}

// TestEngine_oneRead checks that a call whose context hands it no
// Reading reads what it needs of the book in one store read: a weighted
// validation, its sessions' records and the calibration map, on which it
// states the confidence Book.Calibrate reads; a weighted delegation that
// teaches, the coincidence of wrong answers as well; a majority call,
// its sessions' records.
func TestEngine_oneRead(t *testing.T) {
	store := &reputationtest.CountingStore{}
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok := routertest.Fixed(router.Result{Verdict: router.VerdictValid, Output: "42"})
	e := newEngine(t, routertest.Sessions(1, 3, ok, ok, ok), router.WithReputation(book))
	ctx := context.Background()
	weighted := func() *router.ValidateV3Request {
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.Aggregation = router.AggregationWeighted
		return req
	}
	for i, right := range []bool{true, true, false, true} { // outcomes in the weighted map
		id := fmt.Sprintf("%032x", i+1)
		if _, err := e.ValidateV3(router.WithTraceID(ctx, id), weighted()); err != nil {
			t.Fatal(err)
		}
		if err := e.Feedback(ctx, id, right); err != nil {
			t.Fatal(err)
		}
	}

	before := store.Loads()
	resp, err := e.ValidateV3(ctx, weighted())
	if err != nil {
		t.Fatal(err)
	}
	if n := store.Loads() - before; n != 1 {
		t.Errorf("weighted validation: %d store reads, want 1", n)
	}
	c := resp.Consensus.Calibration
	if c == nil || c.Basis != reputation.BasisOutcomes || c.Outcomes != 4 {
		t.Fatalf("weighted validation: calibration %+v, want the map of four outcomes", c)
	}
	want, _, err := book.Calibrate(ctx, router.Scope(router.KindValidate, "summary"), router.CalibrationTier, c.Uncalibrated, c.Conservative)
	if err != nil || resp.Consensus.Confidence != want {
		t.Errorf("weighted validation: confidence %v, want %v as Book.Calibrate reads it (%v)", resp.Consensus.Confidence, want, err)
	}

	before = store.Loads()
	if _, err := e.DelegateV3(ctx, &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "answer"},
		Consensus:    router.ConsensusRequest{Replicas: 3, Aggregation: router.AggregationWeighted},
	}); err != nil {
		t.Fatal(err)
	}
	if n := store.Loads() - before; n != 1 {
		t.Errorf("weighted delegation that teaches: %d store reads, want 1", n)
	}

	before = store.Loads()
	if _, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll)); err != nil {
		t.Fatal(err)
	}
	if n := store.Loads() - before; n != 1 {
		t.Errorf("majority validation: %d store reads, want 1", n)
	}
}
