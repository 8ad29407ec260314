package trust_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_judgedJudgesFail: a judged delegation whose candidate was
// produced, and whose judges all failed, some with an error and (with a
// deadline) some out of time, has not settled its candidate: it answers
// RETRY with the candidate, at every tier, as adaptive always has, and as
// for judges that all ran out of time, rather than a 502 that drops the
// candidate its producer ran for. Its evidence accounts for every run it
// launched.
func TestService_judgedJudgesFail(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	broken := routertest.Fail(errors.New("the judge's model is unloaded"))
	for _, tc := range []struct {
		name   string
		judges []router.Worker
		ctx    func() context.Context
		failed []router.Label
	}{
		{"errors", []router.Worker{broken, broken, broken, broken, broken}, context.Background,
			[]router.Label{router.LabelError}},
		{"errors and timeouts", []router.Worker{broken, stuck(release), broken, stuck(release), broken},
			func() context.Context { return routertest.DeadlineOnly(500 * time.Millisecond) },
			[]router.Label{router.LabelError, router.LabelTimeout}},
	} {
		for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				e, err := router.NewEngine(routertest.Sessions(1, 3, append([]router.Worker{routertest.Answer("Paris")}, tc.judges...)...))
				if err != nil {
					t.Fatal(err)
				}
				s, err := trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5, 6))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := s.Call(tc.ctx(), probeRequest(p, trust.AgreementJudged))
				if err != nil {
					t.Fatalf("%v, want RETRY with the candidate", err)
				}
				checkUnsettled(t, resp, tc.failed...)
				if resp.RetryInstructions == nil {
					t.Error("no retry instructions")
				}
			})
		}
	}
}
