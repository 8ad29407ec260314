package trust_test

import (
	"context"
	"crypto/ed25519"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// verdictOf is a worker that answers every validation with v.
func verdictOf(v router.Verdict) router.Worker {
	return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return &router.Result{Verdict: v, Confidence: 0.9, Reasons: []string{"read it"}}, nil
	})
}

// oneRightFourWrong returns a book and an engine over it whose session 1
// always answers INVALID, rightly, and sessions 2 to 5 always VALID.
func oneRightFourWrong(t *testing.T) (*reputation.Book, *router.Engine) {
	t.Helper()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	right, wrong := verdictOf(router.VerdictInvalid), verdictOf(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 1, right, wrong, wrong, wrong, wrong), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	return book, e
}

// TestService_leader: four look-alike sessions that are always wrong
// outvote the one that is always right. Each call's outcome is reported,
// and each report on a call where session 1 dissented counts as a
// disagreement it won. Once it has won two, and lost none, its
// reliability stands well clear of the others' and its record leads at
// 1/2 (reputation.Book.Leader): adaptive runs it alone, reports its
// verdict with its record, the level it passed and its margin, and
// states its confidence on the leader's calibration map.
func TestService_leader(t *testing.T) {
	ctx := context.Background()
	book, e := oneRightFourWrong(t)
	s, err := trust.New(e, trust.WithoutExams()) // one disagreement a report: TestService_exam leads sooner
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyAdaptive)
	scope := router.Scope(router.KindValidate, req.Task.Type)
	ids := []int64{1, 2, 3, 4, 5}
	var led *trust.Response
	won := 0
	for i := range 20 {
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Evidence.Leader != nil {
			led = resp
			break
		}
		if resp.Status != trust.StatusValid {
			// Weighted by the outcomes, the lone right vote outweighs
			// the four but cannot settle a call alone: RETRY, with no
			// outcome to report. The rest of the record is reported
			// straight to the book, as another server would.
			dissent := []reputation.Ballot{{Session: 1, Opposed: true}, {Session: 2, Backed: true}}
			for ; won < 4; won++ {
				if err := book.Feedback(ctx, scope, dissent, false); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if err := s.Feedback(ctx, resp.TraceID, false); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if slices.Contains(resp.Evidence.Verdicts, router.Label(router.VerdictInvalid)) {
			won++
		}
		if l, ok, err := book.Leader(ctx, scope, ids); err != nil || ok != (won >= 2) {
			t.Fatalf("after call %d, %d disagreements won: leader %+v (%v, %v)", i, won, l, ok, err)
		}
	}
	if led == nil {
		t.Fatal("no call ran a leader")
	}
	rel, err := book.Reliabilities(ctx, scope, ids)
	if err != nil {
		t.Fatal(err)
	}
	margin := rel.Of(1) - max(rel.Of(2), rel.Of(3), rel.Of(4), rel.Of(5))
	if margin < reputation.DefaultLeadMargin {
		t.Fatalf("session 1's margin %v, under the default lead margin", margin)
	}
	want := &reputation.Lead{Session: 1, Won: float64(won), Level: reputation.MaxLeadLevel, Margin: margin}
	if diff := cmp.Diff(want, led.Evidence.Leader); diff != "" {
		t.Errorf("leader (-want +got):\n%s", diff)
	}
	if led.Status != trust.StatusInvalid || led.Evidence.Launched != 1 || len(led.Evidence.Steps) != 1 {
		t.Errorf("led call: status %s, %d runs, %d steps; want the leader's INVALID on one run",
			led.Status, led.Evidence.Launched, len(led.Evidence.Steps))
	}
	if c := led.Evidence.Calibration; c == nil || c.Tier != "adaptive/INVALID"+trust.LeaderCalibrationSuffix || c.Read() != led.Confidence {
		t.Errorf("led call's calibration %+v, confidence %v; want the leader's map, read to the confidence", c, led.Confidence)
	}

	// The lead holds while the leader is right.
	if err := s.Feedback(ctx, led.TraceID, true); err != nil {
		t.Fatal(err)
	}
	again, err := s.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Evidence.Leader == nil || again.Status != trust.StatusInvalid || again.Evidence.Launched != 1 {
		t.Errorf("after a right lead: leader %+v, status %s, %d runs", again.Evidence.Leader, again.Status, again.Evidence.Launched)
	}

	// The receipt of a led call names the leader and its record.
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := trust.New(e, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	resp, r := callInline(t, signed, trust.PolicyAdaptive, pub)
	if resp.Evidence.Leader == nil || r.PolicySnapshot == nil {
		t.Fatalf("a led call with a receipt: leader %+v, policy snapshot %+v", resp.Evidence.Leader, r.PolicySnapshot)
	}
	l := resp.Evidence.Leader
	if diff := cmp.Diff(&receipt.LeaderSnapshot{Session: l.Session, Won: l.Won, Lost: l.Lost, Level: l.Level, Margin: l.Margin}, r.PolicySnapshot.Leader); diff != "" {
		t.Errorf("receipt's policy_snapshot.leader (-evidence.leader +got):\n%s", diff)
	}

	// Reputation off never leads.
	off, err := trust.New(e, trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	resp, err = off.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Evidence.Leader != nil || resp.Status != trust.StatusValid {
		t.Errorf("reputation off: leader %+v, status %s; want the majority's VALID", resp.Evidence.Leader, resp.Status)
	}
}
