package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_delegationReceiptRecordsAgreement: in a delegation whose
// three runs all report OK but one output dissents, the receipt's
// consensus snapshot and the router's v3 delegate response record which
// runs agreed with the winning output, so that agreement follows from
// what they record (agreeing runs over the runs that answered).
func TestService_delegationReceiptRecordsAgreement(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	other := router.WorkerFunc(func(_ context.Context, _ *router.Job) (*router.Result, error) {
		return &router.Result{Output: "something else", Confidence: 0.9}, nil
	})
	w := honest(0.9)
	e := newEngine(t, w, other, w)
	s, err := trust.New(e, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeDelegation, trust.PolicySafe)
	req.Receipt = receipt.Inline()
	resp, err := s.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub)); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	var r struct {
		Consensus json.RawMessage `json:"consensus_snapshot"`
	}
	if err := json.Unmarshal(resp.Receipt, &r); err != nil {
		t.Fatal(err)
	}
	checkAgreeing(t, "receipt consensus_snapshot", r.Consensus)

	// The router's own v3 delegate response.
	d, err := e.DelegateV3(context.Background(), &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "o", Input: router.NewStringInput("x")},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(d.Consensus)
	if err != nil {
		t.Fatal(err)
	}
	checkAgreeing(t, "delegate v3 consensus", raw)
}

// checkAgreeing recomputes agreement from a consensus block's JSON: its
// agreeing runs over the runs whose verdict is a vote.
func checkAgreeing(t *testing.T, what string, raw json.RawMessage) {
	t.Helper()
	var c struct {
		Agreement float64  `json:"agreement"`
		Verdicts  []string `json:"verdicts"`
		Agreeing  []int    `json:"agreeing"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	votes := 0
	for _, v := range c.Verdicts {
		if v != "TIMEOUT" && v != "ERROR" && v != "CANCELLED" {
			votes++
		}
	}
	if len(c.Agreeing) == 0 || votes == 0 {
		t.Fatalf("%s %s: no agreeing runs recorded", what, raw)
	}
	if got := float64(len(c.Agreeing)) / float64(votes); math.Abs(got-c.Agreement) > 1e-12 || c.Agreement != 2.0/3 {
		t.Errorf("%s %s: %d agreeing of %d votes give %v; it states %v (want 2/3)", what, raw, len(c.Agreeing), votes, got, c.Agreement)
	}
}

// TestService_weightedReceiptRecomputes: over an engine that keeps
// reputation, a safe call's receipt records what weighed its votes, and
// its confidence and agreement are recomputed from the consensus snapshot
// alone: the summed weights of each verdict, the tempering, the agreeing
// replicas.
func TestService_weightedReceiptRecomputes(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := honest(0.9)
	s, err := trust.New(agreementEngine(t, w, w, routertest.Lie(w), w, w), trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	reported := map[string]bool{} // the verdicts whose map holds an outcome
	for i := range 12 {
		req := request(trust.ModeValidation, trust.PolicySafe)
		req.Receipt = receipt.Inline()
		resp, err := s.Call(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub))
		if err != nil {
			t.Fatal(err)
		}
		cs := res.Receipt.ConsensusSnapshot
		if cs.Strategy != "weighted" || cs.WeightBy != "reputation" || len(cs.Weights) != len(cs.Verdicts) {
			t.Fatalf("call %d: snapshot %+v, want strategy weighted by reputation with a weight per replica", i, cs)
		}
		scores := map[string]float64{}
		votes := 0
		for j, v := range cs.Verdicts {
			if l := consensus.Label(v); l == consensus.LabelCancelled || l.Failed() {
				continue
			}
			scores[v] += cs.Weights[j]
			votes++
		}
		win := cs.Verdicts[cs.Agreeing[0]]
		var ss []float64
		wi := 0
		for v, sc := range scores {
			if v == win {
				wi = len(ss)
			}
			ss = append(ss, sc)
		}
		// Before calibration: the weighted confidence, and the
		// conservative number, no higher than the Posterior of the
		// votes, which the router states. The receipt's confidence is
		// the conservative number with no calibration point, else the
		// weighted confidence read on the points its policy snapshot
		// names, on the map of safe's verdict.
		agreeing := len(cs.Agreeing)
		weighted := consensus.Credence(ss, wi, cs.Tempering)
		conservative := min(weighted, consensus.Posterior(agreeing, votes-agreeing))
		cal := res.Receipt.PolicySnapshot.Calibration
		if cal == nil || cal.Tier != "safe/"+win || math.Abs(cal.Uncalibrated-weighted) > 1e-12 ||
			math.Abs(cal.Conservative-conservative) > 1e-12 || math.Abs(cs.Confidence-conservative) > 1e-12 {
			t.Fatalf("call %d: calibration %+v, consensus confidence %v; want tier safe/%s, uncalibrated %v, conservative and consensus confidence %v",
				i, cal, cs.Confidence, win, weighted, conservative)
		}
		points := make([]reputation.Point, len(cal.Points))
		for j, p := range cal.Points {
			points[j] = reputation.Point{Score: p.Score, Rate: p.Rate}
		}
		want := conservative
		if len(points) > 0 {
			want = reputation.Interpolate(points, weighted)
		}
		if math.Abs(want-res.Receipt.Decision.Confidence) > 1e-12 || math.Abs(want-resp.Confidence) > 1e-12 {
			t.Errorf("call %d: confidence %v (response %v), recomputed %v from the snapshot", i, res.Receipt.Decision.Confidence, resp.Confidence, want)
		}
		if (cal.Basis == reputation.BasisOutcomes) != reported[win] {
			t.Errorf("call %d: basis %q of safe/%s, want outcomes once one was reported on that map", i, cal.Basis, win)
		}
		reported[win] = true
		if err := s.Feedback(context.Background(), resp.TraceID, i%3 != 0); err != nil {
			t.Fatal(err)
		}
		if got := float64(len(cs.Agreeing)) / float64(votes); math.Abs(got-cs.Agreement) > 1e-12 {
			t.Errorf("call %d: agreement %v, recomputed %v", i, cs.Agreement, got)
		}
	}
}
