package trust_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_safeOutweighed: safe answers the strict majority of its
// three runs until the host's reports show the one session that
// dissents right and the two that agree wrong. Its weighted vote then
// outweighs theirs, and safe answers RETRY while the calibrated
// confidence of such a winner is one half or below, then the winner
// once the reported outcomes of such calls lift it above one half.
func TestService_safeOutweighed(t *testing.T) {
	w := honest(0.9)
	s, _ := bookService(t, w, routertest.Lie(w), routertest.Lie(w))
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var statuses []trust.Status
	for i := range 30 {
		resp, err := s.Call(router.WithTraceID(ctx, fmt.Sprintf("%032x", i+1)), request(trust.ModeValidation, trust.PolicySafe))
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, resp.Status)
		switch resp.Status {
		case trust.StatusInvalid: // the two that agree
			if len(statuses) > 1 && statuses[len(statuses)-2] != trust.StatusInvalid {
				t.Fatalf("calls answered %v: the majority after another answer", statuses)
			}
		case trust.StatusRetry:
			if ri := resp.RetryInstructions; ri == nil || !strings.Contains(ri.Reason, "weighted winner states confidence") {
				t.Fatalf("call %d: RETRY with %+v, want the weighted winner's confidence as the reason", i, resp.RetryInstructions)
			}
		case trust.StatusValid:
			if resp.Confidence <= 0.5 || resp.Evidence.Agreement >= 0.5 {
				t.Fatalf("call %d: VALID at confidence %v with agreement %v, want above one half from one of three answers", i, resp.Confidence, resp.Evidence.Agreement)
			}
			if statuses[0] != trust.StatusInvalid || !slices.Contains(statuses, trust.StatusRetry) {
				t.Errorf("calls answered %v, want the majority first, then RETRY", statuses)
			}
			t.Logf("calls answered %v", statuses)
			return
		default:
			t.Fatalf("call %d: status %s", i, resp.Status)
		}
		if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictValid); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("calls answered %v: never the session the outcomes show right", statuses)
}

// TestService_oracleFailureFirst: at oracle, whose router call is
// fail_hard, on an engine that counts failures as negative evidence, a
// failure that arrives first does not cut short the four answers to
// come: the router's 409 carries every vote, the failure is no vote, and
// the call is VALID, as when the failure arrives last.
func TestService_oracleFailureFirst(t *testing.T) {
	v := routertest.Verdict(router.VerdictValid)
	ws := []router.Worker{routertest.Fail(errors.New("boom")), routertest.Slow(v, 10*time.Millisecond),
		routertest.Slow(v, 100*time.Millisecond), routertest.Slow(v, 100*time.Millisecond), routertest.Slow(v, 100*time.Millisecond)}
	e, err := router.NewEngine(routertest.Sessions(1, 5, ws...), router.WithFailureMode(consensus.FailuresNegative))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Call(t.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyOracle,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := resp.Evidence; resp.Status != trust.StatusValid || ev.Answered != 4 || ev.Failed != 1 || ev.Cancelled != 0 {
		t.Errorf("status %s, answered %d, failed %d, cancelled %d; want VALID, 4, 1, 0 (verdicts %v)", resp.Status, ev.Answered, ev.Failed, ev.Cancelled, ev.Verdicts)
	}
}
