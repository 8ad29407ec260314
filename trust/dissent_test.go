package trust_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_dissent walks the dissent rule through a real service:
// session 1 is right (INVALID) and four sessions agree on the wrong
// VALID. Its record shows it right in two disagreements of two with
// the others' majority: not a leader (1/4 is no sign at 1/8), but a
// dissent the rule hears (Posterior(2, 0) = 7/8). A call whose five
// runs end four against session 1 answers its INVALID at the record's
// rate, 3/4, names the record in the response and the receipt, and
// states no calibration; with reputation off the four win.
func TestService_dissent(t *testing.T) {
	ctx := context.Background()
	book, e := oneRightFourWrong(t)
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyAdaptive)
	req.Receipt = receipt.Inline()

	// fiveRuns calls until a call runs all five sessions (selection
	// may first run two that agree and stop).
	fiveRuns := func(s *trust.Service) *trust.Response {
		t.Helper()
		for range 40 {
			resp, err := s.Call(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Evidence.Launched == 5 {
				return resp
			}
		}
		t.Fatal("no call ran all five sessions")
		return nil
	}
	scope := router.Scope(router.KindValidate, req.Task.Type)
	dissent := []reputation.Ballot{{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}}
	for range 2 {
		if err := book.Feedback(ctx, scope, dissent, false); err != nil {
			t.Fatal(err)
		}
	}
	if l, leads, err := book.Leader(ctx, scope, []int64{1, 2, 3, 4, 5}); err != nil || leads {
		t.Fatalf("two wins lead: %+v, %v, %v", l, leads, err)
	}

	resp := fiveRuns(s)
	want := &reputation.Lead{Session: 1, Won: 2}
	if diff := cmp.Diff(want, resp.Evidence.Dissent); diff != "" {
		t.Errorf("evidence.dissent (-want +got):\n%s", diff)
	}
	if resp.Status != trust.StatusInvalid || resp.Confidence != 0.75 || resp.Evidence.Calibration != nil || resp.Evidence.Agreement != 0.2 {
		t.Errorf("the dissent: status %s, confidence %v, calibration %+v, agreement %v; want INVALID at 3/4, uncalibrated, 1 of 5",
			resp.Status, resp.Confidence, resp.Evidence.Calibration, resp.Evidence.Agreement)
	}
	res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&receipt.LeaderSnapshot{Session: 1, Won: 2}, res.Receipt.PolicySnapshot.Dissent); diff != "" {
		t.Errorf("receipt's policy_snapshot.dissent (-want +got):\n%s", diff)
	}
	if res.Receipt.PolicySnapshot.Leader != nil {
		t.Errorf("receipt names a leader: %+v", res.Receipt.PolicySnapshot.Leader)
	}

	off, err := trust.New(e, trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	for range 10 { // with reputation off a split call stops at 3 of 4 (13/16)
		resp, err := off.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Evidence.Dissent != nil || resp.Status != trust.StatusValid {
			t.Errorf("reputation off: status %s, dissent %+v; want the four's VALID", resp.Status, resp.Evidence.Dissent)
		}
	}
}
