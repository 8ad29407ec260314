package x402_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// proof signs a payment for the test offer and lets mutate tamper with it
// before it is encoded.
func proof(t *testing.T, version int, mutate func(p *x402.PaymentPayload, ep *evm.ExactPayload)) string {
	t.Helper()
	o := offer(t)
	if version == 1 {
		o.Network = "base-sepolia"
	}
	pr, err := newPayer(t).Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var ep evm.ExactPayload
	if err := json.Unmarshal(pr.Payload, &ep); err != nil {
		t.Fatal(err)
	}
	p := x402.PaymentPayload{X402Version: version, Accepted: o}
	if mutate != nil {
		mutate(&p, &ep)
	}
	p.Payload, _ = json.Marshal(ep)
	v, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// send posts to the paid route with the proof in header.
func send(t *testing.T, u, header, value string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, u+"/paid", strings.NewReader("x"))
	if value != "" {
		req.Header.Set(header, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// reason returns the error of the 402 terms in resp.
func reason(t *testing.T, resp *http.Response) string {
	t.Helper()
	terms, err := x402.ReadPaymentRequired(resp)
	if err != nil {
		t.Fatal(err)
	}
	return terms.Error
}

func TestMiddleware_noProofAnswersBothVersions(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	resp := send(t, ps.URL, "", "")
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	v2, err := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	if v2.X402Version != 2 || v2.Accepts[0].Network != "eip155:84532" || v2.Accepts[0].Amount != "1000" || v2.Resource.Description != "a paid echo" {
		t.Errorf("v2 terms = %+v", v2)
	}
	body, _ := io.ReadAll(resp.Body)
	v1, err := x402.DecodePaymentRequiredV1(body)
	if err != nil {
		t.Fatal(err)
	}
	a := v1.Accepts[0]
	if a.Network != "base-sepolia" || a.MaxAmountRequired != "1000" || !strings.HasSuffix(a.Resource, "/paid") || a.Description != "a paid echo" || a.Extra["name"] != "USDC" || a.Extra["version"] != "2" {
		t.Errorf("v1 terms = %+v", a)
	}
}

func TestMiddleware_rejections(t *testing.T) {
	for _, tc := range []struct {
		name       string
		header     string
		value      func(t *testing.T) string
		wantStatus int
		wantReason string
	}{
		{"v2 accepted amount lowered", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) { p.Accepted.Amount = "1" })
		}, 402, "matches none"},
		{"v2 accepted payTo changed", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) {
				p.Accepted.PayTo = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
			})
		}, 402, "matches none"},
		{"authorization value lowered", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) { ep.Authorization.Value = "999" })
		}, 402, evm.ReasonValue},
		{"authorization value raised after signing", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) { ep.Authorization.Value = "5000" })
		}, 402, evm.ReasonSignature},
		{"authorization payTo changed", x402.HeaderXPayment, func(t *testing.T) string {
			return proof(t, 1, func(p *x402.PaymentPayload, ep *evm.ExactPayload) {
				ep.Authorization.To = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
			})
		}, 402, "matches none"}, // a v1 proof names its offer by the authorization's recipient
		{"v2 authorization payTo changed", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) {
				ep.Authorization.To = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
			})
		}, 402, evm.ReasonRecipient},
		{"expired window", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) { ep.Authorization.ValidBefore = "1740672154" })
		}, 402, "authorization_validity_too_short"}, // refused before the facilitator is asked
		{"other network", x402.HeaderPaymentSignature, func(t *testing.T) string {
			return proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) { p.Accepted.Network = "eip155:8453" })
		}, 402, "matches none"},
		{"not base64", x402.HeaderPaymentSignature, func(*testing.T) string { return "%%%" }, 400, ""},
		{"not a payload", x402.HeaderXPayment, func(*testing.T) string { return "eyJhIjoxfQ==" }, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPaidServer(t, serverOptions{}, echo)
			resp := send(t, ps.URL, tc.header, tc.value(t))
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus == 400 {
				if ct := resp.Header.Get("Content-Type"); ct != problem.ContentType {
					t.Errorf("Content-Type = %q, want %q", ct, problem.ContentType)
				}
				var p problem.Details
				if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || !strings.HasPrefix(p.Detail, tc.header) {
					t.Errorf("problem = %+v (%v), want a detail naming %s", p, err, tc.header)
				}
			} else if got := reason(t, resp); !strings.Contains(got, tc.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", got, tc.wantReason)
			}
			if n := len(ps.fac.Settlements()); n != 0 {
				t.Errorf("facilitator settled %d payments, want 0", n)
			}
		})
	}
}

func TestMiddleware_replayedPayment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		header  string
	}{
		{"v2", 2, x402.HeaderPaymentSignature},
		{"v1", 1, x402.HeaderXPayment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPaidServer(t, serverOptions{}, echo)
			v := proof(t, tc.version, nil)
			if resp := send(t, ps.URL, tc.header, v); resp.StatusCode != http.StatusOK {
				t.Fatalf("first use: status = %d, want 200", resp.StatusCode)
			}
			resp := send(t, ps.URL, tc.header, v)
			if resp.StatusCode != http.StatusPaymentRequired {
				t.Fatalf("replay: status = %d, want 402", resp.StatusCode)
			}
			if got := reason(t, resp); !strings.Contains(got, "already used") {
				t.Errorf("replay reason = %q, want it to say the payment was already used", got)
			}
			if n := len(ps.fac.Settlements()); n != 1 {
				t.Errorf("facilitator settled %d payments, want 1", n)
			}
		})
	}
}

func TestMiddleware_handlerFailureReleasesProof(t *testing.T) {
	fail := true
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		if fail {
			http.Error(w, "bad input", http.StatusUnprocessableEntity)
			return
		}
		echo(w, r)
	})
	v := proof(t, 2, nil)
	if resp := send(t, ps.URL, x402.HeaderPaymentSignature, v); resp.StatusCode != http.StatusUnprocessableEntity || resp.Header.Get(x402.HeaderPaymentResponse) != "" {
		t.Fatalf("failing handler: status %d, settlement %q; want 422 and none", resp.StatusCode, resp.Header.Get(x402.HeaderPaymentResponse))
	}
	fail = false
	if resp := send(t, ps.URL, x402.HeaderPaymentSignature, v); resp.StatusCode != http.StatusOK {
		t.Fatalf("same proof after the failure: status %d, want 200", resp.StatusCode)
	}
}

// failingSettle verifies with the offline facilitator but fails to settle.
type failingSettle struct{ *evm.Facilitator }

func (f failingSettle) Settle(_ context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: r.Network, Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66"}, nil
}

func TestMiddleware_settlementFailure(t *testing.T) {
	handled := false
	ps := newPaidServer(t, serverOptions{facilitator: failingSettle{&evm.Facilitator{}}}, func(w http.ResponseWriter, r *http.Request) {
		handled = true
		io.WriteString(w, "the paid answer")
	})
	resp := send(t, ps.URL, x402.HeaderPaymentSignature, proof(t, 2, nil))
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	s, err := x402.SettlementFromResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Success || s.ErrorReason != "insufficient_funds" {
		t.Errorf("settlement = %+v, want success false with the reason", s)
	}
	body, _ := io.ReadAll(resp.Body)
	if !handled || strings.Contains(string(body), "the paid answer") {
		t.Errorf("handler ran = %v, body = %q; want it run and its answer withheld", handled, body)
	}
}

// downFacilitator answers nothing.
type downFacilitator struct{ *evm.Facilitator }

func (*downFacilitator) Verify(context.Context, *x402.PaymentPayload, x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	return nil, errors.New("connection refused")
}

func TestMiddleware_facilitatorDownIs503(t *testing.T) {
	ps := newPaidServer(t, serverOptions{facilitator: &downFacilitator{&evm.Facilitator{}}}, echo)
	resp := send(t, ps.URL, x402.HeaderPaymentSignature, proof(t, 2, nil))
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503", resp.StatusCode)
	}
}

// TestMiddleware_503NamesTheRequest: behind a server that names each
// request on X-Request-Id, the 503 problem carries that id and the path,
// as every other problem of the server does.
func TestMiddleware_503NamesTheRequest(t *testing.T) {
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &downFacilitator{&evm.Facilitator{}},
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	paid := mw(http.HandlerFunc(echo))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-7")
		paid.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	resp := send(t, srv.URL, x402.HeaderPaymentSignature, proof(t, 2, nil))
	var got problem.Details
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || got.RequestID != "req-7" || got.Instance != "/paid" || got.Code != problem.CodeUnavailable {
		t.Errorf("status %d, problem %+v; want 503 unavailable with request_id req-7 and instance /paid", resp.StatusCode, got)
	}
}

func TestMiddleware_config(t *testing.T) {
	good := func(t *testing.T) map[string]x402.Price {
		return map[string]x402.Price{"/paid": {Accepts: []x402.PaymentRequirements{offer(t)}}}
	}
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) x402.MiddlewareConfig
		ok   bool
	}{
		{"valid", func(t *testing.T) x402.MiddlewareConfig {
			return x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: good(t)}
		}, true},
		{"no facilitator", func(t *testing.T) x402.MiddlewareConfig { return x402.MiddlewareConfig{Routes: good(t)} }, false},
		{"no prices", func(t *testing.T) x402.MiddlewareConfig {
			return x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}}
		}, false},
		{"bad pattern", func(t *testing.T) x402.MiddlewareConfig {
			return x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: map[string]x402.Price{"POST": {Accepts: []x402.PaymentRequirements{offer(t)}}}}
		}, false},
		{"bad amount", func(t *testing.T) x402.MiddlewareConfig {
			o := offer(t)
			o.Amount = "0.5"
			return x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: map[string]x402.Price{"/paid": {Accepts: []x402.PaymentRequirements{o}}}}
		}, false},
		{"no timeout", func(t *testing.T) x402.MiddlewareConfig {
			o := offer(t)
			o.MaxTimeoutSeconds = 0
			return x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: map[string]x402.Price{"/paid": {Accepts: []x402.PaymentRequirements{o}}}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x402.Middleware(tc.cfg(t))
			if (err == nil) != tc.ok {
				t.Errorf("Middleware err = %v, want ok = %v", err, tc.ok)
			}
		})
	}
}

func TestMiddleware_priceFunc(t *testing.T) {
	o := offer(t)
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		PriceFunc: func(r *http.Request) (x402.Price, bool) {
			return x402.Price{Accepts: []x402.PaymentRequirements{o}}, r.URL.Query().Has("pay")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, tc := range []struct {
		target string
		want   int
	}{{"/x", 200}, {"/x?pay", 402}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.want {
			t.Errorf("%s: status = %d, want %d", tc.target, rec.Code, tc.want)
		}
	}
}
