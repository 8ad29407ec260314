package trust_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_judgedDeadlineNoVote: a judged delegation whose producer
// is still working at the caller's deadline launches no second producer
// in the time left, which could only time out, and fails as Call
// documents a call with no vote in: a 504 *trust.Error with code
// timeout, not a RETRY from no vote.
func TestService_judgedDeadlineNoVote(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicyAdaptive} {
		t.Run(string(p), func(t *testing.T) {
			rec := routertest.NewRecorder(stuck(release))
			e, err := router.NewEngine(routertest.Sessions(1, 3, rec, rec, rec, rec, rec, rec))
			if err != nil {
				t.Fatal(err)
			}
			s, err := trust.New(e)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.Call(routertest.DeadlineOnly(500*time.Millisecond), probeRequest(p, trust.AgreementJudged))
			if err == nil {
				t.Errorf("%s, verdicts %v; want a 504 *trust.Error with code timeout", resp.Status, resp.Evidence.Verdicts)
			} else if terr := (*trust.Error)(nil); !errors.As(err, &terr) || terr.Status != http.StatusGatewayTimeout || terr.Code != problem.CodeTimeout {
				t.Errorf("err %v, want a 504 *trust.Error with code timeout", err)
			}
			if n := rec.Calls.Load(); n != 1 {
				t.Errorf("%d runs launched, want 1: no second producer at the deadline", n)
			}
		})
	}
}
