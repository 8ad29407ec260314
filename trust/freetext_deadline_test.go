package trust_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
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

// TestService_judgedDeadlineJudgesTimeOut: a judged delegation whose
// candidate was produced, and whose judges were all still working at the
// caller's deadline, answers RETRY with the candidate as its best
// effort, as for judges that did not settle, and its evidence accounts
// for every run it launched: the producer's answer and each judge's
// TIMEOUT.
func TestService_judgedDeadlineJudgesTimeOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	judge := stuck(release)
	for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
		t.Run(string(p), func(t *testing.T) {
			e, err := router.NewEngine(routertest.Sessions(1, 3, routertest.Answer("Paris"), judge, judge, judge, judge, judge))
			if err != nil {
				t.Fatal(err)
			}
			s, err := trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5, 6))
			if err != nil {
				t.Fatal(err)
			}
			req := probeRequest(p, trust.AgreementJudged)
			resp, err := s.Call(routertest.DeadlineOnly(500*time.Millisecond), req)
			if err != nil {
				t.Fatalf("%v, want RETRY with the candidate", err)
			}
			checkUnsettled(t, resp, router.LabelTimeout)
			if ri := resp.RetryInstructions; ri == nil || ri.Policy != p || strings.Contains(ri.Reason, "disagreed") {
				t.Errorf("retry instructions %+v, want a retry at %s, with more time, and no disagreement", ri, p)
			}
		})
	}
}

// checkUnsettled checks that resp answers RETRY with the candidate
// "Paris" of a judged delegation whose judges all failed, each with a
// label of failed, and that its evidence accounts for every run: the
// producer's answer and every judge's failure.
func checkUnsettled(t *testing.T, resp *trust.Response, failed ...router.Label) {
	t.Helper()
	if got := resultString(t, resp.Result); resp.Status != trust.StatusRetry || got != "Paris" {
		t.Errorf("%s with %q, want RETRY with the candidate %q", resp.Status, got, "Paris")
	}
	ev := resp.Evidence
	judges := ev.Launched - 1
	if judges < 1 || ev.Answered != 1 || ev.Failed != judges || len(ev.Verdicts) != ev.Launched ||
		ev.Verdicts[0] != router.LabelOK || slices.ContainsFunc(ev.Verdicts[1:], func(l router.Label) bool { return !slices.Contains(failed, l) }) {
		t.Errorf("verdicts %v, %d launched, %d answered, %d failed; want the producer's OK and every judge one of %v",
			ev.Verdicts, ev.Launched, ev.Answered, ev.Failed, failed)
	}
	if c := ev.Judging.Candidates; len(c) != 1 || c[0].Verdict != trust.StatusRetry || len(c[0].Judges) != judges {
		t.Errorf("candidates %+v, want one, not settled, judged by the %d runs after it", c, judges)
	}
}
