package trust_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_receiptNamesFailureMode: over a router that counts failed
// runs as negative evidence, reached over loopback HTTP, a safe and an
// oracle call whose panel holds a failed run are asked of the trust
// service over loopback HTTP. The signed receipt's consensus snapshot
// names the router's failure mode, and each of its two blocks is
// recomputed from what the receipt records: the snapshot's agreement and
// confidence with the failed runs against the winner, as its failures
// member says, and the decision's with the failed runs as no votes, as
// the trust service counts them.
func TestService_receiptNamesFailureMode(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	v, fail := honest(0.9), routertest.Fail(errors.New("worker down"))
	// The late workers answer after the instant ones, so that the
	// router's early quorum cannot hide the failure. The delay orders
	// the runs; no test asserts a duration.
	lateV, lateFail := routertest.Slow(v, 100*time.Millisecond), routertest.Slow(fail, 100*time.Millisecond)
	tests := []struct {
		policy   trust.Policy
		workers  []router.Worker
		snapshot [2]float64 // the router's agreement and confidence
		decision [2]float64 // the trust service's
	}{
		{trust.PolicySafe, []router.Worker{v, fail, lateV}, [2]float64{2.0 / 3, 11.0 / 16}, [2]float64{1, 7.0 / 8}},
		{trust.PolicyOracle, []router.Worker{v, v, v, lateFail, v}, [2]float64{4.0 / 5, 57.0 / 64}, [2]float64{1, 31.0 / 32}},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			e, err := router.NewEngine(routertest.Sessions(1, 2, tt.workers...), router.WithFailureMode(consensus.FailuresNegative))
			if err != nil {
				t.Fatal(err)
			}
			rc := remoteRouter(t, e)
			s, err := trust.New(rc, trust.WithSigningKey(priv))
			if err != nil {
				t.Fatal(err)
			}
			req := request(trust.ModeValidation, tt.policy)
			req.Receipt = receipt.Inline()
			resp, err := newClient(t, newServer(t, s).URL).Call(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			r := res.Receipt
			cs := r.ConsensusSnapshot
			if cs == nil || cs.Failures != string(consensus.FailuresNegative) || len(cs.Verdicts) != len(tt.workers) {
				t.Fatalf("consensus snapshot %+v, want failures %q and a verdict per replica", cs, consensus.FailuresNegative)
			}
			if r.Decision.Status != string(trust.StatusValid) || r.Decision.Agreement == nil {
				t.Fatalf("decision %+v, want VALID with its agreement", r.Decision)
			}
			cast, failed := 0, 0
			for _, l := range cs.Verdicts {
				switch l := consensus.Label(l); {
				case l == consensus.LabelCancelled:
				case l.Failed():
					failed++
				default:
					cast++
				}
			}
			agreeing := len(cs.Agreeing)
			check := func(what string, agreement, confidence float64, against int, want [2]float64) {
				t.Helper()
				a, c := float64(agreeing)/float64(agreeing+against), consensus.Posterior(agreeing, against)
				if math.Abs(agreement-a) > 1e-12 || math.Abs(confidence-c) > 1e-12 {
					t.Errorf("%s: agreement %v, confidence %v; recomputed %v, %v from %+v", what, agreement, confidence, a, c, cs)
				}
				if math.Abs(agreement-want[0]) > 1e-12 || math.Abs(confidence-want[1]) > 1e-12 {
					t.Errorf("%s: agreement %v, confidence %v; want %v, %v", what, agreement, confidence, want[0], want[1])
				}
			}
			check("consensus snapshot", cs.Agreement, cs.Confidence, cast-agreeing+failed, tt.snapshot)
			check("decision", r.Decision.Agreement.Share, r.Decision.Confidence, cast-agreeing, tt.decision)
		})
	}
}
