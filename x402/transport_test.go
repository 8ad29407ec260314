package x402_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/x402"
)

// post sends body to the server's paid route without GetBody, so that the
// Transport must buffer it.
func post(t *testing.T, ctx context.Context, c *http.Client, u, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u+"/paid", io.NopCloser(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil && req.Header.Get(x402.HeaderPaymentSignature)+req.Header.Get(x402.HeaderXPayment) != "" {
		t.Error("the caller's request was given a payment header")
	}
	return resp, err
}

func TestTransport_fullLoop(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        serverOptions
		wantVersion int
	}{
		{"v2", serverOptions{}, 2},
		{"v2 remote facilitator", serverOptions{remoteFacilitator: true}, 2},
		{"v1", serverOptions{v1Only: true}, 1},
		{"v1 remote facilitator", serverOptions{v1Only: true, remoteFacilitator: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPaidServer(t, tc.opts, echo)
			payer := newPayer(t)
			budget := x402.NewBudget(5000)
			c := &http.Client{Transport: &x402.Transport{Payer: payer, Budget: budget}}

			resp, err := post(t, t.Context(), c, ps.URL, "hello")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d (%s), want 200", resp.StatusCode, body)
			}
			if want := "hello paid by " + payer.Address().String(); string(body) != want {
				t.Errorf("body = %q, want %q", body, want)
			}
			s, err := x402.SettlementFromResponse(resp)
			if err != nil {
				t.Fatal(err)
			}
			recorded := ps.fac.Settlements()
			if len(recorded) != 1 {
				t.Fatalf("facilitator recorded %d settlements, want 1", len(recorded))
			}
			if !s.Success || s.Transaction != recorded[0].Transaction || s.Payer != payer.Address().String() || s.Amount != "1000" {
				t.Errorf("settlement = %+v, want success, tx %s, payer %s, amount 1000", s, recorded[0].Transaction, payer.Address())
			}
			wantNetwork := map[int]string{1: "base-sepolia", 2: "eip155:84532"}[tc.wantVersion]
			if s.Network != wantNetwork {
				t.Errorf("settlement network = %q, want %q", s.Network, wantNetwork)
			}
			if got := resp.Header.Get(x402.HeaderXPaymentResponse) != ""; got != (tc.wantVersion == 1) {
				t.Errorf("X-PAYMENT-RESPONSE present = %v, want %v", got, tc.wantVersion == 1)
			}
			proofs := ps.seenProofs()
			if len(proofs) != 1 {
				t.Fatalf("server saw %d proofs, want 1", len(proofs))
			}
			p, err := x402.DecodePaymentPayload(proofs[0])
			if err != nil {
				t.Fatal(err)
			}
			if p.X402Version != tc.wantVersion {
				t.Errorf("proof version = %d, want %d", p.X402Version, tc.wantVersion)
			}
			if got := budget.Spent(); got != 1000 {
				t.Errorf("budget spent = %d, want 1000", got)
			}
			if !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), x402.HeaderPaymentResponse) {
				t.Errorf("Access-Control-Expose-Headers = %q, want it to name %s", resp.Header.Get("Access-Control-Expose-Headers"), x402.HeaderPaymentResponse)
			}
		})
	}
}

func TestTransport_budgetExceeded(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Budget: x402.NewBudget(1500)}}
	resp, err := post(t, t.Context(), c, ps.URL, "one")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, err = post(t, t.Context(), c, ps.URL, "two")
	if !errors.Is(err, x402.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want ErrBudgetExceeded", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("err = %T, want it inside a *url.Error", err)
	}
	if !x402.Permanent(err) {
		t.Error("Permanent(budget exceeded) = false, want true")
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("payer signed %d payments, want 1", n)
	}
}

func TestTransport_noAcceptableOffer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy x402.Policy
	}{
		{"network", x402.Policy{Networks: []string{"base"}}},
		{"asset", x402.Policy{Assets: []string{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}},
		{"amount", x402.Policy{MaxAmount: 999}},
		{"scheme", x402.Policy{Schemes: []string{"upto"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPaidServer(t, serverOptions{}, echo)
			payer := newPayer(t)
			c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: tc.policy}}
			_, err := post(t, t.Context(), c, ps.URL, "x")
			if !errors.Is(err, x402.ErrNoAcceptableOffer) {
				t.Fatalf("err = %v, want ErrNoAcceptableOffer", err)
			}
			if n := payer.n.Load(); n != 0 {
				t.Errorf("payer signed %d payments, want 0", n)
			}
		})
	}
}

func TestTransport_selectCannotWidenPolicy(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	tr := &x402.Transport{
		Payer:  payer,
		Policy: x402.Policy{MaxAmount: 10},
		Select: func(_ *http.Request, _ *x402.Policy, offers []x402.PaymentRequirements) (x402.PaymentRequirements, error) {
			return offers[0], nil // ignores the policy
		},
	}
	_, err := post(t, t.Context(), &http.Client{Transport: tr}, ps.URL, "x")
	if !errors.Is(err, x402.ErrNoAcceptableOffer) {
		t.Fatalf("err = %v, want ErrNoAcceptableOffer", err)
	}
}

func TestTransport_rejectedAfterPaying(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	payer.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) } // the authorization expired long ago
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	_, err := post(t, t.Context(), c, ps.URL, "x")
	var pe *x402.PaymentError
	if !errors.As(err, &pe) || !errors.Is(err, x402.ErrPaymentRejected) {
		t.Fatalf("err = %v, want a *PaymentError wrapping ErrPaymentRejected", err)
	}
	if !strings.Contains(pe.Reason, "validBefore") {
		t.Errorf("reason = %q, want the expired window named", pe.Reason)
	}
	if !strings.HasPrefix(pe.Reference, payer.Address().String()+":0x") {
		t.Errorf("reference = %q, want address:nonce", pe.Reference)
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("payer signed %d payments, want 1 (no second payment after a 402)", n)
	}
	if len(ps.fac.Settlements()) != 0 {
		t.Error("an expired authorization was settled")
	}
}

func TestTransport_requestWithPaymentHeaderIsNotPaid(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ps.URL+"/paid", strings.NewReader("x"))
	req.Header.Set(x402.HeaderXPayment, "bm90IGEgcHJvb2Y=")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d, want the server's 400 for the caller's own header", resp.StatusCode)
	}
	if n := payer.n.Load(); n != 0 {
		t.Errorf("payer signed %d payments, want 0", n)
	}
}

func TestTransport_non402PassesThrough(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		if _, paid := x402.PaymentFromContext(r.Context()); paid {
			t.Error("a free request carries a payment in its context")
		}
		io.WriteString(w, "free")
	})
	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	resp, err := c.Get(ps.URL + "/free")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || payer.n.Load() != 0 {
		t.Errorf("status = %d, payments = %d; want 200 and none", resp.StatusCode, payer.n.Load())
	}
	if _, err := x402.SettlementFromResponse(resp); !errors.Is(err, x402.ErrNoSettlement) {
		t.Errorf("SettlementFromResponse(free) err = %v, want ErrNoSettlement", err)
	}
}

func TestTransport_cancelledPaymentReportsReference(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // lets the server notice the client going away
		close(started)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := post(t, ctx, c, ps.URL, "x")
	var pe *x402.PaymentError
	if !errors.As(err, &pe) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a *PaymentError wrapping context.Canceled", err)
	}
	if pe.Reference == "" || pe.ID == "" {
		t.Errorf("PaymentError = %+v, want its id and reference", pe)
	}
	if x402.Permanent(err) {
		t.Error("Permanent(cancelled payment) = true, want false")
	}
}

func TestTransport_handlerFailureIsNotSettled(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "worker crashed", http.StatusInternalServerError)
	})
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	resp, err := post(t, t.Context(), c, ps.URL, "x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("status = %d, want the handler's 500", resp.StatusCode)
	}
	if _, err := x402.SettlementFromResponse(resp); !errors.Is(err, x402.ErrNoSettlement) {
		t.Errorf("settlement err = %v, want ErrNoSettlement", err)
	}
	if n := len(ps.fac.Settlements()); n != 0 {
		t.Errorf("facilitator settled %d payments, want 0", n)
	}
}

// TestTransport_retryablehttpDoesNotPayTwice: the handler fails once with
// 503 after the payment was verified; go-retryablehttp repeats the call and
// the Transport sends the same proof again.
func TestTransport_retryablehttpDoesNotPayTwice(t *testing.T) {
	for _, tc := range []struct {
		name         string
		key          func(*retryablehttp.Request)
		wantPayments int32
	}{
		{"Idempotency-Key", func(r *retryablehttp.Request) { r.Header.Set(x402.HeaderIdempotencyKey, "call-0001") }, 1},
		{"WithPaymentKey", func(r *retryablehttp.Request) {
			*r = *r.WithContext(x402.WithPaymentKey(r.Context(), "call-0002"))
		}, 1},
		{"no key", func(*retryablehttp.Request) {}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
				calls++ // handlers of one test run one after the other
				if calls == 1 {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
				echo(w, r)
			})
			payer := newPayer(t)
			rc := retryablehttp.NewClient()
			rc.Logger = nil
			rc.RetryWaitMin, rc.RetryWaitMax, rc.RetryMax = time.Millisecond, time.Millisecond, 3
			rc.HTTPClient.Transport = &x402.Transport{Payer: payer}
			rc.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
				if x402.Permanent(err) {
					return false, err
				}
				return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
			}
			req, err := retryablehttp.NewRequestWithContext(t.Context(), http.MethodPost, ps.URL+"/paid", strings.NewReader("again"))
			if err != nil {
				t.Fatal(err)
			}
			tc.key(req)
			resp, err := rc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "again paid by") {
				t.Fatalf("status %d body %q, want 200 and the echo", resp.StatusCode, body)
			}
			if n := payer.n.Load(); n != tc.wantPayments {
				t.Errorf("payer signed %d payments, want %d", n, tc.wantPayments)
			}
			if n := len(ps.fac.Settlements()); n != 1 {
				t.Errorf("facilitator settled %d payments, want 1", n)
			}
			if tc.wantPayments == 1 {
				proofs := ps.seenProofs()
				if len(proofs) != 2 || proofs[0] != proofs[1] {
					t.Errorf("server saw proofs %d times, differing = %v; want the same proof twice", len(proofs), len(proofs) == 2 && proofs[0] != proofs[1])
				}
			}
		})
	}
}

func TestTransport_nilPayerReturns402(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	resp, err := post(t, t.Context(), &http.Client{Transport: &x402.Transport{}}, ps.URL, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	terms, err := x402.ReadPaymentRequired(resp)
	if err != nil {
		t.Fatal(err)
	}
	if terms.X402Version != 2 || len(terms.Accepts) != 1 || terms.Accepts[0].Amount != "1000" || terms.Resource == nil || !strings.HasSuffix(terms.Resource.URL, "/paid") {
		t.Errorf("terms = %+v, want version 2, one offer of 1000, resource …/paid", terms)
	}
}

// TestTransport_paymentIdentifierExtension: terms that offer the
// payment-identifier extension get it back with an id derived from the
// call's key, the same in every Transport.
func TestTransport_paymentIdentifierExtension(t *testing.T) {
	var proofs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(x402.HeaderPaymentSignature); v != "" {
			proofs = append(proofs, v)
			return
		}
		v, _ := x402.EncodeHeader(x402.PaymentRequired{
			X402Version: 2,
			Resource:    &x402.ResourceInfo{URL: "http://example.com/"},
			Accepts:     []x402.PaymentRequirements{offer(t)},
			Extensions:  map[string]json.RawMessage{"payment-identifier": json.RawMessage(`{"info":{"required":false},"schema":{"type":"object"}}`)},
		})
		w.Header().Set(x402.HeaderPaymentRequired, v)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer srv.Close()
	for range 2 {
		c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
		req, _ := http.NewRequestWithContext(x402.WithPaymentKey(t.Context(), "order-42"), http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var ids []string
	for _, v := range proofs {
		p, err := x402.DecodePaymentPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		var ext struct {
			Info struct {
				Required *bool  `json:"required"`
				ID       string `json:"id"`
			} `json:"info"`
		}
		if err := json.Unmarshal(p.Extensions["payment-identifier"], &ext); err != nil || ext.Info.Required == nil {
			t.Fatalf("extension = %s (%v), want the server's info kept", p.Extensions["payment-identifier"], err)
		}
		ids = append(ids, ext.Info.ID)
	}
	if len(ids) != 2 || ids[0] != ids[1] || !strings.HasPrefix(ids[0], "pay_") || len(ids[0]) < 16 || len(ids[0]) > 128 {
		t.Errorf("ids = %q, want the same pay_ id of 16 to 128 characters twice", ids)
	}
}
