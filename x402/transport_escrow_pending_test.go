package x402_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/x402"
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
