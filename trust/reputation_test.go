package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_adaptiveWeighted: over an engine that keeps reputation,
// adaptive weighs the votes. Sessions never seen read the prior (0.8):
// two agreeing votes weigh 16/17, and the three runs left would all have
// to dissent to turn the verdict, a chance of 16/17·0.2³ + 1/17·0.8³ ≈
// 0.038, under consensus.Stop's flip bound: two runs settle the call.
// With no outcome reported, the confidence stated is never above what
// reputation off states for the same votes: 7/8 for two agreeing. Once
// the host reports the adaptive calls wrong, the calibrated confidence
// falls below the number before calibration.
func TestService_adaptiveWeighted(t *testing.T) {
	w := honest(0.9)
	e := newEngine(t, w, w, w, w, w)
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Evidence.Launched != 2 || resp.Confidence != 7.0/8 || resp.Evidence.Calibration.Basis != reputation.BasisUncalibrated {
		t.Errorf("fresh sessions: %d runs, confidence %v (%+v); want 2 runs and 7/8 uncalibrated", resp.Evidence.Launched, resp.Confidence, resp.Evidence.Calibration)
	}
	for range 30 { // safe calls of three agreeing votes teach the engine
		if _, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicySafe)); err != nil {
			t.Fatal(err)
		}
	}
	resp, err = s.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Evidence.Launched != 2 || resp.Confidence != 7.0/8 {
		t.Errorf("reliable sessions: %d runs, confidence %v; want 2 runs stating 7/8", resp.Evidence.Launched, resp.Confidence)
	}
	for range 10 { // the host reports adaptive's answers wrong
		if err := s.Feedback(ctx, resp.TraceID, false); err != nil {
			t.Fatal(err)
		}
		if resp, err = s.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive)); err != nil {
			t.Fatal(err)
		}
	}
	if c := resp.Evidence.Calibration; c.Basis != reputation.BasisOutcomes || c.Outcomes != 10 || !(resp.Confidence < c.Uncalibrated-0.1) {
		t.Errorf("after outcomes reported wrong: confidence %v on %+v; want it calibrated on 10 outcomes, well below the number before calibration", resp.Confidence, c)
	}

	off, _ := trust.New(newEngine(t, w, w, w, w, w), trust.WithoutReputation())
	resp, err = off.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Evidence.Launched != 2 || resp.Confidence != 7.0/8 {
		t.Errorf("without reputation: %d runs, confidence %v; want 2 and 7/8 as before", resp.Evidence.Launched, resp.Confidence)
	}
}

// TestService_adaptiveShunsALiar: a session that always dissents loses
// its reputation, and adaptive stops starting with it.
func TestService_adaptiveShunsALiar(t *testing.T) {
	w := honest(0.9)
	s, _ := trust.New(agreementEngine(t, routertest.Lie(w), w, w, w, w))
	ctx := context.Background()
	for range 20 {
		if _, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyOracle)); err != nil {
			t.Fatal(err)
		}
	}
	liar := 0
	for range 40 {
		resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != trust.StatusValid {
			t.Fatalf("status %s, want VALID", resp.Status)
		}
		for _, st := range resp.Evidence.Steps {
			if st.Sessions[0] == 1 {
				liar++
			}
		}
	}
	if liar > 4 { // exploration may try it now and then
		t.Errorf("the lying session ran %d times in 40 adaptive calls", liar)
	}
}

func TestService_feedback(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := honest(0.9)
	e := newEngine(t, w, w, w, w, w)
	s, err := trust.New(e, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	alice := trust.WithCaller(context.Background(), "key:alice")
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Inline()
	resp, err := s.Call(alice, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	sessions := r.CortensorRefs.Sessions
	sc := router.Scope(router.KindValidate, "summary")
	read := func() map[int64]float64 {
		rel, err := e.Reputation().Reliabilities(context.Background(), sc, sessions)
		if err != nil {
			t.Fatal(err)
		}
		return rel.Sessions
	}
	before := read()
	if err := s.Feedback(alice, r.ReceiptID, false); err != nil {
		t.Fatalf("feedback by receipt id: %v", err)
	}
	mid := read()
	for _, id := range sessions {
		if !(mid[id] < before[id]-0.1) {
			t.Errorf("session %d backed an outcome reported wrong: %v before, %v after", id, before[id], mid[id])
		}
	}
	// The receipt's calibration basis names the verdict's map and both
	// numbers; the outcome reported by receipt id lands in that map at
	// the receipt's score, with its conservative number.
	cal := r.PolicySnapshot.Calibration
	m, err := e.Reputation().Calibration(context.Background(), sc, cal.Tier)
	if err != nil {
		t.Fatal(err)
	}
	b := reputation.Bin(cal.Uncalibrated)
	if cal.Tier != "safe/VALID" || m.Total() != 1 || m.Outcomes[b].Wrong != 1 ||
		math.Abs(m.Scores[b].Right-cal.Uncalibrated) > 1e-12 || math.Abs(m.Conservative[b].Right-cal.Conservative) > 1e-12 || !(cal.Conservative < cal.Uncalibrated) {
		t.Errorf("after a wrong outcome by receipt id, map %s holds %v outcomes (bin %d: %+v, score %+v, conservative %+v); want one wrong at %v and %v",
			cal.Tier, m.Total(), b, m.Outcomes[b], m.Scores[b], m.Conservative[b], cal.Uncalibrated, cal.Conservative)
	}
	if err := s.Feedback(alice, resp.TraceID, true); err != nil {
		t.Fatalf("feedback by trace id: %v", err)
	}
	for id, p := range read() {
		if !(p > mid[id]) {
			t.Errorf("session %d backed an outcome reported right: %v before, %v after", id, mid[id], p)
		}
	}
	bob := trust.WithCaller(context.Background(), "key:bob")
	if err := s.Feedback(bob, r.ReceiptID, true); !errors.Is(err, trust.ErrUnknownCall) {
		t.Errorf("feedback on another caller's receipt: %v, want ErrUnknownCall", err)
	}
	off, _ := trust.New(e, trust.WithoutReputation())
	if err := off.Feedback(alice, resp.TraceID, true); !errors.Is(err, trust.ErrReputationOff) {
		t.Errorf("feedback without reputation: %v, want ErrReputationOff", err)
	}
}

// TestService_calibratesEachVerdict: a validation's confidence is read
// on the map of its verdict, which only the outcomes of calls that
// settled on that verdict build: once the host reports the panel's VALID
// answers right and its INVALID answers wrong, fast states more than its
// conservative number for VALID and less for INVALID, each map on its own
// outcomes, and the basis names the map and both numbers.
func TestService_calibratesEachVerdict(t *testing.T) {
	w := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		v := router.VerdictInvalid
		if strings.Contains(string(job.Claim.Output), "yes") {
			v = router.VerdictValid
		}
		return &router.Result{Verdict: v, Confidence: 0.9}, nil
	})
	s, err := trust.New(newEngine(t, w, w, w, w, w))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(claim string) *trust.Response {
		t.Helper()
		req := request(trust.ModeValidation, trust.PolicyFast)
		req.Task.ClaimedResult = json.RawMessage(strconv.Quote(claim))
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for range 12 {
		if err := s.Feedback(ctx, call("yes").TraceID, true); err != nil {
			t.Fatal(err)
		}
		if err := s.Feedback(ctx, call("no").TraceID, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		claim  string
		status trust.Status
		tier   string
		above  bool
	}{
		{"yes", trust.StatusValid, "fast/VALID", true},
		{"no", trust.StatusInvalid, "fast/INVALID", false},
	} {
		resp := call(tt.claim)
		c := resp.Evidence.Calibration
		if resp.Status != tt.status || c == nil || c.Tier != tt.tier || c.Basis != reputation.BasisOutcomes || c.Outcomes != 12 {
			t.Fatalf("claim %q: %s on %+v; want %s on the 12 outcomes of map %s", tt.claim, resp.Status, c, tt.status, tt.tier)
		}
		if above := resp.Confidence > c.Conservative; above != tt.above || c.Read() != resp.Confidence {
			t.Errorf("claim %q: confidence %v against conservative %v (%+v); want above it: %t, and recomputed from the basis", tt.claim, resp.Confidence, c.Conservative, c, tt.above)
		}
	}
}

// TestService_adaptiveWeightedTie: a weighted adaptive validation whose
// votes tie does not stop on the tie before any outcome is reported. The
// sessions' records set them apart (right 95%, 85%, 75%, 60% and 52% of
// 50,000 votes), so that they run in that order; after four runs sessions 1
// and 4 (VALID) outweigh 2 and 3 (INVALID) by more than session 5 weighs,
// so the fifth run could not change the verdict. Before any outcome the
// stop reads what the call would state, the conservative number of a tie,
// Posterior(2, 2) = 1/2, which settles nothing, so the call runs the fifth
// session, whose VALID makes three of five; once the host reports such
// calls wrong it still does.
func TestService_adaptiveWeightedTie(t *testing.T) {
	ctx := context.Background()
	store := &reputation.Memory{}
	var deltas []reputation.Delta
	sc := router.Scope(router.KindValidate, "summary")
	for id, r := range map[int64]reputation.Record{1: {Right: 47500, Wrong: 2500}, 2: {Right: 42500, Wrong: 7500}, 3: {Right: 37500, Wrong: 12500}, 4: {Right: 30000, Wrong: 20000}, 5: {Right: 26000, Wrong: 24000}} {
		// The same votes at each level of the call's scope.
		for _, k := range []reputation.Key{{Session: id}, {Session: id, Operation: sc.Operation}, {Session: id, Operation: sc.Operation, Kind: sc.Kind}} {
			deltas = append(deltas, reputation.Delta{Key: k, Delta: r})
		}
	}
	if err := store.Add(ctx, 0, deltas); err != nil {
		t.Fatal(err)
	}
	// Records of 50,000 votes (the horizon raised to keep them), which
	// the calls and reports below move by a few votes only.
	book, err := reputation.New(store, reputation.Options{Horizon: 100000})
	if err != nil {
		t.Fatal(err)
	}
	w := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		if job.SessionID == 2 || job.SessionID == 3 {
			return &router.Result{Verdict: router.VerdictInvalid}, nil
		}
		return &router.Result{Verdict: router.VerdictValid}, nil
	})
	e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w), router.WithReputation(book), router.WithSelection(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	call := func() (*trust.Response, []router.SessionID) {
		t.Helper()
		resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
		if err != nil {
			t.Fatal(err)
		}
		var order []router.SessionID
		for _, st := range resp.Evidence.Steps {
			order = append(order, st.Sessions...)
		}
		return resp, order
	}
	resp, order := call()
	if resp.Status != trust.StatusValid || !slices.Equal(order, []router.SessionID{1, 2, 3, 4, 5}) || resp.Evidence.Agreement != 0.6 {
		t.Fatalf("%s, agreement %v, after runs on sessions %v; want VALID by 3 of 5 after runs on sessions 1 to 5 in order", resp.Status, resp.Evidence.Agreement, order)
	}
	if err := s.Feedback(ctx, resp.TraceID, false); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp, order = call()
		if len(order) != 4 {
			break // the map already refuses the tie
		}
		if err := s.Feedback(ctx, resp.TraceID, false); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(order, []router.SessionID{1, 2, 3, 4, 5}) || resp.Status != trust.StatusValid || resp.Evidence.Agreement != 0.6 {
		t.Errorf("after ties reported wrong: %s, agreement %v, after runs on sessions %v; want VALID by 3 of 5 after runs on sessions 1 to 5", resp.Status, resp.Evidence.Agreement, order)
	}
}

// calibrationReads counts the store reads that read the records of a
// trust validation's calibration maps (named "<tier>/<verdict>"; the
// router's own map, "weighted", is the engine's).
type calibrationReads struct {
	reputation.Memory
	mu    sync.Mutex
	reads int
}

func (s *calibrationReads) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	for _, k := range keys {
		if strings.HasPrefix(k.Kind, "calibration ") && strings.Contains(k.Kind, "VALID") {
			s.mu.Lock()
			s.reads++
			s.mu.Unlock()
			break
		}
	}
	return s.Memory.Load(ctx, keys)
}

// TestService_readsCalibrationOnce: a call reads its calibration maps
// from the store once, which adaptive's stop and the number the call
// states both read, whatever the tier (an adaptive call read them twice,
// once to plan and once to state its number).
func TestService_readsCalibrationOnce(t *testing.T) {
	store := &calibrationReads{}
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
		store.mu.Lock()
		store.reads = 0
		store.mu.Unlock()
		if _, err := s.Call(context.Background(), request(trust.ModeValidation, p)); err != nil {
			t.Fatal(err)
		}
		store.mu.Lock()
		if store.reads != 1 {
			t.Errorf("%s: %d reads of the calibration maps, want 1", p, store.reads)
		}
		store.mu.Unlock()
	}
}
