package routertest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestArithmetic(t *testing.T) {
	claim := func(s string) *router.Claim {
		out, _ := json.Marshal(s)
		return &router.Claim{Output: out}
	}
	for _, tt := range []struct {
		name string
		job  router.Job
		want router.Result
	}{
		{"true claim", router.Job{Kind: router.KindValidate, Claim: claim("17 * 3 = 51")},
			router.Result{Verdict: router.VerdictValid, Confidence: 0.95, Reasons: []string{"17 * 3 = 51 holds"}}},
		{"false claim", router.Job{Kind: router.KindValidate, Claim: claim("17 * 3 = 50")},
			router.Result{Verdict: router.VerdictInvalid, Confidence: 0.95, Reasons: []string{"17 * 3 is 51, not 50"}}},
		{"no equation", router.Job{Kind: router.KindValidate, Claim: claim("Paris is in France")},
			router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.5, Reasons: []string{"no equation to check"}}},
		{"true statement", router.Job{Kind: router.KindFactcheck, Statement: "6 * 7 = 42"},
			router.Result{Verdict: router.VerdictTrue, Confidence: 0.95, Reasons: []string{"6 * 7 = 42 holds"}}},
		{"statement without an equation", router.Job{Kind: router.KindFactcheck, Statement: "the sky is green"},
			router.Result{Verdict: router.VerdictFalse, Confidence: 0.5, Reasons: []string{"no equation to check"}}},
		{"delegation", router.Job{Kind: router.KindDelegate, Input: router.NewStringInput("What is 6 * 7?")},
			router.Result{Output: "42"}},
		{"delegation without a product", router.Job{Kind: router.KindDelegate, Input: router.NewStringInput("hello")},
			router.Result{Output: "cannot compute hello"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := routertest.Arithmetic().Work(context.Background(), &tt.job)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
