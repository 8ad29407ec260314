package x402_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// A capture the facilitator did not answer is not a rejected payment:
// the server keeps the answer it buys and tells the payer to send the
// same payment again. The Transport's error says so (ErrPaymentPending,
// not permanent), and a retry policy that stops on Permanent errors
// sends the call again with the same proof, which completes the capture
// and gets the answer, paid once.
func TestTransport_escrowCapturePendingIsRetried(t *testing.T) {
	noLeak(t)
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
	s.facilitate(t, &unansweredCapture{Escrow: s.escrow})
	o := newObservedPayer(t, s.payer)
	transport := o.tr
	transport.Base, transport.Policy = s.Client().Transport, x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}

	first, err := (&http.Client{Transport: transport}).Do(escrowCall(t, s.URL, "call-pending-1"))
	if err == nil {
		first.Body.Close()
		t.Fatalf("first use: status %d, want an error (the capture went unanswered)", first.StatusCode)
	}
	if !errors.Is(err, x402.ErrPaymentPending) || x402.Permanent(err) {
		t.Errorf("first use: %v: want ErrPaymentPending, not permanent", err)
	}
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.reason=payment_pending,vouch.payment.result=unknown,vouch.payment.reused=false": 1,
	}
	if diff := cmp.Diff(want, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}

	rc := retryablehttp.NewClient()
	rc.Logger = nil
	rc.RetryWaitMin, rc.RetryWaitMax, rc.RetryMax = time.Millisecond, time.Millisecond, 3
	rc.HTTPClient.Transport = transport
	rc.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if x402.Permanent(err) {
			return false, err
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	s.facilitate(t, &unansweredCapture{Escrow: s.escrow}) // the next capture goes unanswered too
	req, err := retryablehttp.FromRequest(escrowCall(t, s.URL, "call-pending-2"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Do(req)
	if err != nil {
		t.Fatalf("retried call: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_, e := escrowOf(t, resp)
	got := []any{resp.StatusCode, string(body), e.State}
	if diff := cmp.Diff([]any{http.StatusOK, "Paris", x402.EscrowCaptured}, got); diff != "" {
		t.Errorf("retried call (-want +got):\n%s", diff)
	}
	if n := s.payer.n.Load(); n != 2 {
		t.Errorf("%d payments made, want one for each call", n)
	}
}

// escrowCall is a paid call to the escrow server's route, named by key.
func escrowCall(t *testing.T, url, key string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/paid", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(x402.HeaderIdempotencyKey, key)
	return req
}

// A pending capture outlives the authorization that placed its hold: the
// server keeps the answer it buys until the capture deadline, and may
// capture until then. The Transport keeps the proof as long, so that a
// retry of the call after the authorization expired carries it again
// and gets the answer, rather than paying a second hold for the same
// call while the first is captured too.
func TestTransport_escrowProofKeptForItsPendingCapture(t *testing.T) {
	noLeak(t)
	var ahead atomic.Int64 // how far every clock is ahead of the real one
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Now = now }, evm.TransferEIP3009)
	fac := &unansweredCapture{Escrow: s.escrow}
	s.facilitate(t, fac)
	s.escrow.Now, s.payer.Now = now, now
	c := &http.Client{Transport: &x402.Transport{Base: s.Client().Transport, Payer: s.payer, Now: now, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	if _, err := c.Do(escrowCall(t, s.URL, "call-late")); !errors.Is(err, x402.ErrPaymentPending) {
		t.Fatalf("first use: %v, want ErrPaymentPending", err)
	}

	// Two minutes on: the authorization (valid 60 s) has expired, the
	// capture deadline (ten minutes) has not.
	ahead.Store(int64(2 * time.Minute))
	resp, err := c.Do(escrowCall(t, s.URL, "call-late"))
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_, e := escrowOf(t, resp)
	if diff := cmp.Diff([]any{http.StatusOK, "Paris", x402.EscrowCaptured}, []any{resp.StatusCode, string(body), e.State}); diff != "" {
		t.Errorf("the retry (-want +got):\n%s", diff)
	}
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: fac, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Now: now}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if payer, _ := s.balances(); payer != openBalance-50_000 {
		t.Errorf("payer holds %d, want one capture of 50000 for the one call", payer)
	}
	if n := s.payer.n.Load(); n != 1 {
		t.Errorf("%d payments made, want one", n)
	}
}
