package trust_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestNumbers_judgedRejected: a judged delegation whose judges reject
// every candidate answers RETRY at confidence 0, read on no map, over a
// router that keeps reputation; its receipt, in process and over
// loopback HTTP, records the same decision and no calibration basis,
// as its evidence does (docs/INTERFACE.md, 9.4 and 10.3).
func TestNumbers_judgedRejected(t *testing.T) {
	p := panel{"rejecting", []voter{no("x"), no("x"), no("x"), no("x"), no("x")}}
	for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
		req := numbersRequest(trust.ModeDelegation, policy, false)
		req.Delegation = &trust.DelegationOptions{Agreement: trust.AgreementJudged}
		t.Run(string(policy)+"/engine", func(t *testing.T) {
			resp, err := numbersService(t, p, true).Call(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			checkRejected(t, resp, policy)
		})
		t.Run(string(policy)+"/loopback", func(t *testing.T) {
			h, err := trust.NewHandler(numbersService(t, p, true), trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"tk": "alice"})))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			c, err := trust.NewClient(srv.URL, trust.WithAPIKey("tk"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Call(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			checkRejected(t, resp, policy)
		})
	}
}

// checkRejected checks resp, a judged delegation at policy whose every
// candidate was rejected, and its receipt.
func checkRejected(t *testing.T, resp *trust.Response, policy trust.Policy) {
	t.Helper()
	if resp.Status != trust.StatusRetry || resp.Confidence != 0 || string(resp.Result) != "null" || resp.Evidence.Calibration != nil {
		t.Errorf("status %s, confidence %v, result %s, calibration %+v; want RETRY at 0, null, no calibration",
			resp.Status, resp.Confidence, resp.Result, resp.Evidence.Calibration)
	}
	r := checkDecision(t, resp, policy)
	if r.PolicySnapshot == nil {
		t.Fatal("no policy snapshot")
	}
}
