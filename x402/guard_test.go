package x402_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// misbehaving is the offline facilitator with Verify or Settle replaced
// by a call that answers neither a result nor an error, or panics.
type misbehaving struct {
	*evm.Facilitator
	verify, settle string // "", "nil", "panic" or "error"
}

func (f *misbehaving) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	switch f.verify {
	case "nil":
		return nil, nil
	case "panic":
		panic("verify broke")
	}
	return f.Facilitator.Verify(ctx, p, r)
}

func (f *misbehaving) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	switch f.settle {
	case "nil":
		return nil, nil
	case "panic":
		panic("settle broke")
	case "error":
		return nil, errors.New("settle: dial db.internal:5432 as user vouch_billing: connection refused")
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// TestMiddleware_misbehavingFacilitator: a facilitator that answers
// neither a result nor an error, or panics, is unavailable, with or
// without telemetry: verify gets 503 and the handler does not run; settle
// gets 402 with a failed settlement (the handler ran, its answer is held
// back) and the proof stays used, since the payment may have moved.
func TestMiddleware_misbehavingFacilitator(t *testing.T) {
	for _, tc := range []struct {
		name           string
		verify, settle string
		want           int
		ran            int32
	}{
		{"verify nil", "nil", "", http.StatusServiceUnavailable, 0},
		{"verify panics", "panic", "", http.StatusServiceUnavailable, 0},
		{"settle nil", "", "nil", http.StatusPaymentRequired, 1},
		{"settle panics", "", "panic", http.StatusPaymentRequired, 1},
	} {
		for _, observed := range []bool{false, true} {
			name := tc.name
			if observed {
				name += ", observed"
			}
			t.Run(name, func(t *testing.T) {
				fac := &misbehaving{Facilitator: &evm.Facilitator{}, verify: tc.verify, settle: tc.settle}
				var ran atomic.Int32
				handler := func(w http.ResponseWriter, r *http.Request) {
					ran.Add(1)
					echo(w, r)
				}
				var u string
				if observed {
					u, _, _ = observedPaywall(t, fac) // serves echo, uncounted
				} else {
					u = newPaidServer(t, serverOptions{facilitator: fac}, handler).URL
				}
				p := proof(t, 2, nil)
				resp := send(t, u, x402.HeaderPaymentSignature, p)
				if resp.StatusCode != tc.want {
					t.Fatalf("status = %d, want %d", resp.StatusCode, tc.want)
				}
				if !observed && ran.Load() != tc.ran {
					t.Errorf("handler ran %d times, want %d", ran.Load(), tc.ran)
				}
				if tc.settle == "" {
					return
				}
				sr, err := x402.SettlementFromResponse(resp)
				if err != nil || sr.Success || sr.ErrorReason != "unexpected_settle_error" {
					t.Errorf("settlement = %+v, %v; want a failed one, reason unexpected_settle_error", sr, err)
				}
				if again := send(t, u, x402.HeaderPaymentSignature, p); again.StatusCode != http.StatusPaymentRequired || reason(t, again) != "the payment was already used" {
					t.Errorf("repeat of a proof whose settlement is unknown: status %d, want 402 already used", again.StatusCode)
				}
			})
		}
	}
}

// TestFacilitatorHandler_noAnswerIs502: the facilitator API serving a
// facilitator that answers nothing answers 502, and a FacilitatorClient
// reports a *FacilitatorError.
func TestFacilitatorHandler_noAnswerIs502(t *testing.T) {
	fs := httptest.NewServer(x402.NewFacilitatorHandler(&misbehaving{Facilitator: &evm.Facilitator{}, verify: "nil", settle: "panic"}))
	defer fs.Close()
	c := &x402.FacilitatorClient{URL: fs.URL, HTTPClient: fs.Client()}
	p, err := x402.DecodePaymentPayload(proof(t, 2, nil))
	if err != nil {
		t.Fatal(err)
	}
	for op, call := range map[string]func() error{
		"verify": func() error { _, err := c.Verify(t.Context(), p, offer(t)); return err },
		"settle": func() error { _, err := c.Settle(t.Context(), p, offer(t)); return err },
	} {
		var fe *x402.FacilitatorError
		if err := call(); !errors.As(err, &fe) || fe.StatusCode != http.StatusBadGateway {
			t.Errorf("%s: err = %v, want a *FacilitatorError with status 502", op, err)
		}
	}
}

// nilTransport answers neither a response nor an error.
type nilTransport struct{}

func (nilTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, nil }

// TestTransport_misbehavingDependencies: a Base that answers nothing and a
// Payer that panics are errors of the request, not panics; the Budget is
// refunded for a proof never made.
func TestTransport_misbehavingDependencies(t *testing.T) {
	c := &http.Client{Transport: &x402.Transport{Base: nilTransport{}, Payer: newPayer(t)}}
	if _, err := post(t, t.Context(), c, "http://127.0.0.1:1", "x"); err == nil || !strings.Contains(err.Error(), "nil *http.Response") {
		t.Errorf("Base answering nothing: err = %v, want one naming the nil response", err)
	}
	ps := newPaidServer(t, serverOptions{}, echo)
	budget := x402.NewBudget(1 << 20)
	panicky := x402.PayerFunc(func(context.Context, x402.PaymentRequirements) (x402.Proof, error) { panic("wallet broke") })
	c = &http.Client{Transport: &x402.Transport{Payer: panicky, Budget: budget}}
	for range 2 { // the second request of the call is not left waiting
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ps.URL+"/paid", strings.NewReader("x"))
		req.Header.Set(x402.HeaderIdempotencyKey, "call-1")
		if _, err := c.Do(req); err == nil || !strings.Contains(err.Error(), "panicked") {
			t.Errorf("panicking Payer: err = %v, want one saying it panicked", err)
		}
	}
	if got := budget.Spent(); got != 0 {
		t.Errorf("budget spent %d, want 0 (no proof was made)", got)
	}
}

// TestMiddleware_settleErrorNotReturned: the text of a facilitator's
// error (which may name hosts and users) is logged, never sent to the
// payer, in the body or in the settlement header.
func TestMiddleware_settleErrorNotReturned(t *testing.T) {
	fac := &misbehaving{Facilitator: &evm.Facilitator{}, settle: "error"}
	u := newPaidServer(t, serverOptions{facilitator: fac}, echo).URL
	resp := send(t, u, x402.HeaderPaymentSignature, proof(t, 2, nil))
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	for where, text := range map[string]string{
		"body":                     string(body),
		x402.HeaderPaymentResponse: resp.Header.Get(x402.HeaderPaymentResponse),
		x402.HeaderPaymentRequired: resp.Header.Get(x402.HeaderPaymentRequired),
	} {
		if decoded, err := base64.StdEncoding.DecodeString(text); err == nil {
			text = string(decoded)
		}
		if strings.Contains(text, "db.internal") || strings.Contains(text, "vouch_billing") {
			t.Errorf("the %s carries the facilitator's error text: %s", where, text)
		}
	}
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil || sr.ErrorReason != "unexpected_settle_error" {
		t.Errorf("settlement = %+v, %v; want reason unexpected_settle_error", sr, err)
	}
}
