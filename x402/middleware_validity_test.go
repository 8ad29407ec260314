package x402_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// An EIP-3009 authorization is valid only before its validBefore: one
// whose validBefore is the very second the route's time budget and
// settlement end could be settled too late, after the work was done. It
// is refused before the handler runs.
func TestMiddleware_validBeforeAtTheEndOfTheWorkIsTooShort(t *testing.T) {
	start := time.Unix(1_796_000_000, 0) // on the second
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	fac := &evm.Facilitator{Now: now}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Now:         now,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		// The work and the settlement take all the time they may.
		clock.Store(start.Add(x402.DefaultTimeBudget + x402.DefaultSettleTimeout).UnixNano())
		w.Write([]byte("work"))
	})))
	defer srv.Close()

	payer := newPayer(t)
	end := start.Add(x402.DefaultTimeBudget + x402.DefaultSettleTimeout)
	o := offer(t)
	// Signed so that validBefore is the end of the time budget and settlement.
	payer.Now = func() time.Time { return end.Add(-time.Duration(o.MaxTimeoutSeconds) * time.Second) }
	pr, err := payer.Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if vb, _ := (&x402.PaymentPayload{Payload: pr.Payload}).AuthorizationValidBefore(); !vb.Equal(end) {
		t.Fatalf("validBefore %s, want %s", vb, end)
	}
	v, _ := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: pr.Payload})
	resp := send(t, srv.URL, x402.HeaderPaymentSignature, v)
	got := []any{resp.StatusCode, strings.HasPrefix(reason(t, resp), "authorization_validity_too_short"), runs.Load(), len(fac.Settlements())}
	want := []any{http.StatusPaymentRequired, true, int32(0), 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status, refused as too short, handler runs, settlements (-want +got):\n%s", diff)
	}
}
