package trust_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// scattered is a panel whose runs answer a delegation 16, 13, 21, 13 and
// 16, in the order the panel receives them, whichever session runs them:
// adaptive's first runs never agree, and its five runs hold two pairs
// and a single answer, no majority.
func scattered(t *testing.T) *router.Engine {
	t.Helper()
	var jobs atomic.Int64
	answers := [...]int{16, 13, 21, 13, 16}
	w := router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return &router.Result{Output: answers[(jobs.Add(1)-1)%int64(len(answers))], Confidence: 1}, nil
	})
	return newEngine(t, w, w, w, w, w)
}

// TestService_adaptiveScatteredDelegation: an adaptive delegation whose
// panel scatters spends its five runs and states the plurality (16 or 13,
// whichever pair the weighted tally ranks first: the runs answer
// concurrently) with its confidence. Before any outcome that is the
// PluralityPosteriorAt of two pairs and a single answer at the prior's
// coincidence and reliability, 0.427, not above DefaultPluralityFloor:
// RETRY, with the plurality
// as the best-effort result and retry instructions. Once the host reports
// such answers right, the calibrated confidence rises above the floor and
// the same call answers VALID, flagged low_confidence, without retry
// instructions. Reputation off answers RETRY as before. Every figure is
// recomputed from the response's JSON (checkPluralityContract).
func TestService_adaptiveScatteredDelegation(t *testing.T) {
	s, err := trust.New(scattered(t), trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := trust.WithCaller(context.Background(), "key:alice")
	call := func() *trust.Response {
		t.Helper()
		req := request(trust.ModeDelegation, trust.PolicyAdaptive)
		req.Receipt = receipt.Inline()
		req.Receipt.Include = receipt.Include{ConsensusSnapshot: true, PolicySnapshot: true}
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		checkPluralityContract(t, resp, trust.DefaultPluralityFloor)
		return resp
	}
	resp := call()
	stated := consensus.PluralityPosteriorAt([]int{2, 2, 1}, 0, reputation.DefaultCoincidencePrior().Mean(), consensus.DefaultReliability)
	if resp.Status != trust.StatusRetry || !aPair(resp.Result) || resp.Evidence.Launched != 5 ||
		resp.Confidence != stated || resp.RetryInstructions == nil {
		t.Fatalf("before outcomes: %s %s at %d runs, confidence %v, retry %+v; want RETRY 16 or 13 at 5 runs stating %v with retry instructions",
			resp.Status, resp.Result, resp.Evidence.Launched, resp.Confidence, resp.RetryInstructions, stated)
	}
	if want := fmt.Sprintf("the runs did not settle: the answer 2 of 5 runs gave states confidence %.3f, not above 0.5", stated); resp.RetryInstructions.Reason != want {
		t.Errorf("retry reason %q, want %q", resp.RetryInstructions.Reason, want)
	}
	for range 12 { // the host finds the panel's plurality right
		if err := s.Feedback(ctx, resp.TraceID, true); err != nil {
			t.Fatal(err)
		}
		resp = call()
	}
	if resp.Status != trust.StatusValid || !aPair(resp.Result) || !(resp.Confidence > trust.DefaultPluralityFloor) ||
		resp.RetryInstructions != nil || resp.Evidence.Calibration.Basis != reputation.BasisOutcomes {
		t.Fatalf("after outcomes: %s %s, confidence %v on %+v, retry %+v; want VALID 16 or 13 calibrated above the floor, no retry instructions",
			resp.Status, resp.Result, resp.Confidence, resp.Evidence.Calibration, resp.RetryInstructions)
	}
	var rec struct {
		Consensus struct {
			Confidence    float64 `json:"confidence"`
			LowConfidence bool    `json:"low_confidence"`
			Agreeing      []int   `json:"agreeing"`
		} `json:"consensus_snapshot"`
		Policy struct {
			Calibration struct {
				Conservative float64 `json:"conservative"`
			} `json:"calibration"`
			Plurality *pluralityJSON `json:"plurality"`
		} `json:"policy_snapshot"`
	}
	if err := json.Unmarshal(resp.Receipt, &rec); err != nil {
		t.Fatal(err)
	}
	if c := rec.Consensus; !c.LowConfidence || len(c.Agreeing) != 2 || c.Confidence != resp.Confidence {
		t.Errorf("receipt's consensus snapshot %+v; want low_confidence, two agreeing, the response's confidence %v", c, resp.Confidence)
	}
	if p := rec.Policy.Plurality; p == nil || !slices.Equal(p.Groups, resp.Evidence.Plurality.Groups) || p.Coincidence != resp.Evidence.Plurality.Coincidence ||
		p.Reliability != resp.Evidence.Plurality.Reliability {
		t.Errorf("receipt's policy_snapshot.plurality %+v, want evidence.plurality %+v", p, resp.Evidence.Plurality)
	} else if stated := p.stated(); math.Abs(stated-rec.Policy.Calibration.Conservative) > 1e-12 {
		t.Errorf("receipt: %+v states %v, its conservative number %v", *p, stated, rec.Policy.Calibration.Conservative)
	}

	floor, err := trust.New(scattered(t), trust.WithPluralityFloor(0.99))
	if err != nil {
		t.Fatal(err)
	}
	for range 12 { // the same outcomes, under a floor they do not reach
		r, err := floor.Call(ctx, request(trust.ModeDelegation, trust.PolicyAdaptive))
		if err != nil {
			t.Fatal(err)
		}
		if err := floor.Feedback(ctx, r.TraceID, true); err != nil {
			t.Fatal(err)
		}
		checkPluralityContract(t, r, 0.99)
		if r.Status != trust.StatusRetry {
			t.Fatalf("floor 0.99: %s at confidence %v; want RETRY", r.Status, r.Confidence)
		}
	}

	off, _ := trust.New(scattered(t), trust.WithoutReputation())
	resp, err = off.Call(ctx, request(trust.ModeDelegation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusRetry || resp.Confidence != consensus.Posterior(2, 3) {
		t.Errorf("reputation off: %s at %v; want RETRY at Posterior(2, 3)", resp.Status, resp.Confidence)
	}
	for _, f := range []float64{0.49, 1, math.NaN()} {
		if _, err := trust.New(scattered(t), trust.WithPluralityFloor(f)); err == nil {
			t.Errorf("WithPluralityFloor(%v) accepted; want an error", f)
		}
	}
}

// aPair reports whether result is one of scattered's two pairs.
func aPair(result json.RawMessage) bool {
	return string(result) == "16" || string(result) == "13"
}

// pluralityJSON is evidence.plurality, or the receipt's
// policy_snapshot.plurality, as a client decodes it.
type pluralityJSON struct {
	Groups      []int   `json:"groups"`
	Coincidence float64 `json:"coincidence"`
	Reliability float64 `json:"reliability"`
}

// stated recomputes the number p states with no outcome.
func (p pluralityJSON) stated() float64 {
	return consensus.PluralityPosteriorAt(p.Groups, 0, p.Coincidence, p.Reliability)
}

// checkPluralityContract recomputes, from resp's JSON alone, what an
// adaptive delegation states: the agreeing runs are agreement × answered;
// the number before calibration is their Posterior; the confidence is
// that number read on the calibration points (the number itself without
// a calibration); and the status is VALID exactly when at least two runs
// agree and the confidence is above floor (the service's), with retry
// instructions exactly when it is RETRY.
func checkPluralityContract(t *testing.T, resp *trust.Response, floor float64) {
	t.Helper()
	raw, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status     string          `json:"status"`
		Confidence float64         `json:"confidence"`
		Retry      json.RawMessage `json:"retry_instructions"`
		Evidence   struct {
			Agreement   float64 `json:"agreement"`
			Answered    int     `json:"answered"`
			Calibration *struct {
				Uncalibrated float64            `json:"uncalibrated"`
				Conservative float64            `json:"conservative"`
				Points       []reputation.Point `json:"points"`
			} `json:"calibration"`
			Plurality *pluralityJSON `json:"plurality"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	ev := got.Evidence
	agreeing := int(math.Round(ev.Agreement * float64(ev.Answered)))
	score := consensus.Posterior(agreeing, ev.Answered-agreeing)
	want := score
	if c := ev.Calibration; c != nil {
		if math.Abs(c.Uncalibrated-score) > 1e-12 {
			t.Errorf("uncalibrated %v, want Posterior(%d, %d) = %v", c.Uncalibrated, agreeing, ev.Answered-agreeing, score)
		}
		if p := ev.Plurality; p == nil || p.Groups[0] != agreeing {
			t.Errorf("plurality %+v, want the groups of the answers, %d agreeing first", p, agreeing)
		} else if stated := p.stated(); math.Abs(c.Conservative-stated) > 1e-12 {
			t.Errorf("conservative %v, want %v from %+v", c.Conservative, stated, *p)
		}
		want = c.Conservative
		if len(c.Points) > 0 {
			want = reputation.Interpolate(c.Points, score)
		}
	}
	if math.Abs(got.Confidence-want) > 1e-12 {
		t.Errorf("confidence %v, want %v recomputed from the JSON", got.Confidence, want)
	}
	valid := agreeing >= 2 && got.Confidence > floor
	if (got.Status == string(trust.StatusValid)) != valid {
		t.Errorf("status %s with %d of %d agreeing at %v; VALID is %v by the rule", got.Status, agreeing, ev.Answered, got.Confidence, valid)
	}
	if retry := string(got.Retry) != "null"; retry != (got.Status == string(trust.StatusRetry)) {
		t.Errorf("status %s with retry_instructions %s", got.Status, got.Retry)
	}
}

// TestClient_Call_scatteredDelegation runs the scattered panel through
// Client → Handler → Service over loopback: the response decoded by the
// client states what the rule promises, RETRY before outcomes and VALID
// once the caller's reports calibrate the plurality above the floor, and
// checkPluralityContract recomputes it from the JSON.
func TestClient_Call_scatteredDelegation(t *testing.T) {
	s, err := trust.New(scattered(t))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, newServer(t, s).URL)
	alice := trust.WithCaller(context.Background(), "alice") // the caller the Handler names for testKey
	var resp *trust.Response
	for i := range 13 {
		if i > 0 {
			if err := s.Feedback(alice, resp.TraceID, true); err != nil {
				t.Fatal(err)
			}
		}
		if resp, err = c.Call(context.Background(), request(trust.ModeDelegation, trust.PolicyAdaptive)); err != nil {
			t.Fatal(err)
		}
		checkPluralityContract(t, resp, trust.DefaultPluralityFloor)
		if i == 0 && resp.Status != trust.StatusRetry {
			t.Errorf("before outcomes over HTTP: %s at %v; want RETRY", resp.Status, resp.Confidence)
		}
	}
	if resp.Status != trust.StatusValid || !aPair(resp.Result) {
		t.Errorf("after outcomes over HTTP: %s %s at %v; want VALID 16 or 13", resp.Status, resp.Result, resp.Confidence)
	}
}
