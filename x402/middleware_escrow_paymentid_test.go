package x402_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// withPaymentID returns the payment header proof carrying the payment id
// id in the "payment-identifier" extension.
func withPaymentID(t *testing.T, proof, id string) string {
	t.Helper()
	p, err := x402.DecodePaymentPayload(proof)
	if err != nil {
		t.Fatal(err)
	}
	p.Extensions = map[string]json.RawMessage{x402.ExtensionPaymentIdentifier: json.RawMessage(`{"info":{"required":false,"id":"` + id + `"}}`)}
	v, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A payment id whose first payment's capture went unanswered is not
// free: that capture may still happen (the recovery sends it), so
// another payment under the same id is refused (409), never a second
// purchase, and the retry of the first payment completes its capture and
// gets the answer.
func TestMiddleware_escrowPaymentIDOfAPendingCapture(t *testing.T) {
	noLeak(t)
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) {
			p := cfg.Routes["POST /paid"]
			p.PaymentIdentifier = &x402.PaymentIdentifier{}
			cfg.Routes["POST /paid"] = p
		}, evm.TransferEIP3009)
	fac := &unansweredCapture{Escrow: s.escrow}
	s.facilitate(t, fac)
	const id = "pay_0123456789abcdef"
	first := withPaymentID(t, s.proof(t), id)
	if resp, _ := s.paid(t, first); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first use: status %d, want 402 (the capture went unanswered)", resp.StatusCode)
	}

	// The payer's Transport no longer has the first proof, and pays anew
	// under the same id.
	second, body := s.paid(t, withPaymentID(t, s.proof(t), id))
	if second.StatusCode != http.StatusConflict {
		t.Errorf("another payment under the id: %d %q, want 409", second.StatusCode, body)
	}

	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: fac, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	resp, body := s.paid(t, first)
	got := []any{resp.StatusCode, body}
	if resp.StatusCode == http.StatusOK {
		sr, e := escrowOf(t, resp)
		got = append(got, sr.Success, e.State)
	}
	want := []any{http.StatusOK, "Paris", true, x402.EscrowCaptured}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry of the first payment (-want +got):\n%s", diff)
	}
	if payer, _ := s.balances(); payer != openBalance-50_000 {
		t.Errorf("payer holds %d, want one capture of 50000", payer)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want once", n)
	}
}
