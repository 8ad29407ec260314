package trustmcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402/escrow"
)

// A result the answer store cannot keep before its verdict is recorded
// is not captured: the hold is voided and the call answered with the
// terms, saying nothing was bought. Before, the verdict was recorded and
// the capture sent all the same; when the capture went unanswered (the
// store, still down, keeping nothing after it either), the recovery
// captured the payment by that verdict, while the retry found no result:
// the payer was charged for a result it never got.
func TestPaywall_escrowUnkeptResultIsNotCaptured(t *testing.T) {
	store := &failingAnswers{}
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Answers = store })
	open := r.bed.Balances()
	p := r.pay(t, "square")
	store.fail.Store(true)
	r.fac.dropCapture.Store(true)
	res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text(res), "nothing was bought") {
		t.Errorf("first use while the answer store is down: %q, want the terms saying nothing was bought", text(res))
	}
	store.fail.Store(false) // the store is back; a recovery runs
	rec := &escrow.Recovery{Ledger: r.ledger, Facilitator: r.bed.Facilitator, Authorizer: r.bed.Authorizer}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := paidCall(context.Background(), t, r.cs, "square", 3, p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(open, r.bed.Balances()); diff != "" {
		t.Errorf("the payer was charged for a result it never got (-want +got):\n%s", diff)
	}
}
