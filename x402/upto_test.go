package x402_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// uptoOffer authorizes at most $0.005 (5000 atomic units), settled by
// the zero evm.Facilitator.
func uptoOffer(t *testing.T) x402.PaymentRequirements {
	t.Helper()
	o, err := evm.UptoUSDC("eip155:84532", payTo, "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// uptoServer serves handler at "POST /metered" behind the middleware,
// priced with uptoOffer, reaching the offline facilitator over HTTP.
func uptoServer(t *testing.T, price x402.Price, handler http.HandlerFunc) (*httptest.Server, *evm.Facilitator) {
	t.Helper()
	fac := &evm.Facilitator{}
	fs := httptest.NewServer(x402.NewFacilitatorHandler(fac))
	t.Cleanup(fs.Close)
	if price.Accepts == nil {
		price.Accepts = []x402.PaymentRequirements{uptoOffer(t)}
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &x402.FacilitatorClient{URL: fs.URL, HTTPClient: fs.Client()},
		Routes:      map[string]x402.Price{"POST /metered": price},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(handler))
	t.Cleanup(srv.Close)
	return srv, fac
}

func uptoClient(p x402.Payer, maxAmount uint64) *http.Client {
	return &http.Client{Transport: &x402.Transport{Payer: p, Policy: x402.Policy{Schemes: []string{x402.SchemeUpto}, MaxAmount: maxAmount}}}
}

func TestUpto_settlesTheUsageReported(t *testing.T) {
	srv, fac := uptoServer(t, x402.Price{}, func(w http.ResponseWriter, r *http.Request) {
		if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 5001}); !errors.Is(err, x402.ErrUsageAboveMaximum) {
			t.Errorf("ReportUsage above the maximum = %v, want ErrUsageAboveMaximum", err)
		}
		if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 2000, Units: 2, Unit: "run"}); err != nil {
			t.Errorf("ReportUsage = %v", err)
		}
		io.WriteString(w, "two runs")
	})
	resp, err := uptoClient(newPayer(t), 0).Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, settlement %v, %v", resp.StatusCode, sr, err)
	}
	if sr.Amount != "2000" {
		t.Errorf("settled %s, want 2000", sr.Amount)
	}
	u, ok := x402.UsageFromSettlement(sr)
	if !ok || u != (x402.Usage{Amount: 2000, Units: 2, Unit: "run", MaxAmount: 5000}) {
		t.Errorf("usage in the payment response = %+v, %v", u, ok)
	}
	s := fac.Settlements()
	if len(s) != 1 || s[0].Amount != "2000" || s[0].Permit2 == nil || s[0].Permit2.Permitted.Amount != "5000" {
		t.Errorf("facilitator settlements = %+v, want one of 2000 under an authorization of 5000", s)
	}
}

func TestUpto_unreportedSettlesTheMaximum(t *testing.T) {
	srv, fac := uptoServer(t, x402.Price{}, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	resp, err := uptoClient(newPayer(t), 0).Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := fac.Settlements(); len(s) != 1 || s[0].Amount != "5000" {
		t.Errorf("settlements = %+v, want one of the maximum, 5000", s)
	}
}

func TestUpto_reportAfterTheHandlerIsClosed(t *testing.T) {
	ctxs := make(chan context.Context, 1)
	srv, fac := uptoServer(t, x402.Price{}, func(w http.ResponseWriter, r *http.Request) { ctxs <- r.Context() })
	resp, err := uptoClient(newPayer(t), 0).Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The answer is sent after the settlement, so the handler has returned.
	if err := x402.ReportUsage(<-ctxs, x402.Usage{Amount: 1}); !errors.Is(err, x402.ErrUsageClosed) {
		t.Errorf("late ReportUsage = %v, want ErrUsageClosed", err)
	}
	if s := fac.Settlements(); len(s) != 1 || s[0].Amount != "5000" {
		t.Errorf("settlements = %+v, want the maximum", s)
	}
}

func TestUpto_transportRefusesAboveItsPolicy(t *testing.T) {
	srv, fac := uptoServer(t, x402.Price{}, func(w http.ResponseWriter, r *http.Request) {
		t.Error("the handler ran without payment")
	})
	p := newPayer(t)
	_, err := uptoClient(p, 4999).Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
	if !errors.Is(err, x402.ErrAmountAboveLimit) || !errors.Is(err, x402.ErrNoAcceptableOffer) || !x402.Permanent(err) {
		t.Errorf("err = %v, want ErrAmountAboveLimit and ErrNoAcceptableOffer", err)
	}
	if n := p.n.Load(); n != 0 {
		t.Errorf("the payer signed %d authorizations, want none", n)
	}
	if s := fac.Settlements(); len(s) != 0 {
		t.Errorf("settlements = %+v", s)
	}
	// The zero Policy pays "exact" only.
	c := &http.Client{Transport: &x402.Transport{Payer: p}}
	if _, err := c.Post(srv.URL+"/metered", "text/plain", strings.NewReader("q")); !errors.Is(err, x402.ErrNoAcceptableOffer) {
		t.Errorf("zero Policy: err = %v, want ErrNoAcceptableOffer", err)
	}
}

func TestUpto_budgetIsChargedTheMaximum(t *testing.T) {
	srv, _ := uptoServer(t, x402.Price{}, func(w http.ResponseWriter, r *http.Request) {
		x402.ReportUsage(r.Context(), x402.Usage{Amount: 1})
	})
	b := x402.NewBudget(7000)
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t), Budget: b, Policy: x402.Policy{Schemes: []string{x402.SchemeUpto}}}}
	resp, err := c.Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if b.Spent() != 5000 {
		t.Errorf("budget spent %d, want the 5000 authorized", b.Spent())
	}
	if _, err := c.Post(srv.URL+"/metered", "text/plain", strings.NewReader("q")); !errors.Is(err, x402.ErrBudgetExceeded) {
		t.Errorf("second call: err = %v, want ErrBudgetExceeded", err)
	}
}

func TestUpto_middlewareRefusesToSettleBefore(t *testing.T) {
	_, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"POST /metered": {Accepts: []x402.PaymentRequirements{uptoOffer(t)}, SettleBefore: true}},
	})
	if err == nil || !strings.Contains(err.Error(), "SettleBefore") {
		t.Errorf("Middleware = %v, want an error naming SettleBefore", err)
	}
}

func TestReportUsage_outsideUpto(t *testing.T) {
	if err := x402.ReportUsage(t.Context(), x402.Usage{Amount: 1}); !errors.Is(err, x402.ErrNotUpto) {
		t.Errorf("ReportUsage = %v, want ErrNotUpto", err)
	}
}

func TestUpto_authorizationValidBeforeIsTheDeadline(t *testing.T) {
	payer := newPayer(t)
	payer.Now = func() time.Time { return time.Unix(1_800_000_000, 0) }
	o := uptoOffer(t)
	proof, err := payer.Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	p := &x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: proof.Payload}
	vb, ok := p.AuthorizationValidBefore()
	if want := time.Unix(1_800_000_000+int64(o.MaxTimeoutSeconds), 0); !ok || !vb.Equal(want) {
		t.Errorf("AuthorizationValidBefore = %v, %v; want the deadline %v", vb, ok, want)
	}
	key, until := x402.ReplayKey(p, o, time.Unix(1_800_000_000, 0))
	if !strings.HasPrefix(key, "permit2:eip155:84532:") || until.Before(vb) {
		t.Errorf("ReplayKey = %q until %v", key, until)
	}
}

func TestUpto_gatedRouteSettlesTheUsageOnDelivery(t *testing.T) {
	deliver := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}
	srv, fac := uptoServer(t, x402.Price{Gate: &x402.DeliveryGate{Check: deliver}}, func(w http.ResponseWriter, r *http.Request) {
		x402.ReportUsage(r.Context(), x402.Usage{Amount: 1000, Units: 1, Unit: "run"})
		io.WriteString(w, "one run")
	})
	resp, err := uptoClient(newPayer(t), 0).Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := fac.Settlements(); len(s) != 1 || s[0].Amount != "1000" {
		t.Errorf("settlements = %+v, want one of 1000", s)
	}
}

// A handler that fails, or panics, settles nothing, and the usage it
// reports after it returned is refused as after an answer that settled:
// what the handler did not report in time is never charged.
func TestUpto_reportAfterAFailedHandlerIsClosed(t *testing.T) {
	deliver := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}
	for _, tc := range []struct {
		name  string
		price x402.Price
		fail  func(w http.ResponseWriter)
	}{
		{"error status", x402.Price{}, func(w http.ResponseWriter) { http.Error(w, "failed", http.StatusInternalServerError) }},
		{"panic", x402.Price{}, func(http.ResponseWriter) { panic(http.ErrAbortHandler) }},
		{"gated, error status", x402.Price{Gate: &x402.DeliveryGate{Check: deliver}}, func(w http.ResponseWriter) { http.Error(w, "failed", http.StatusInternalServerError) }},
		{"gated, panic", x402.Price{Gate: &x402.DeliveryGate{Check: deliver}}, func(http.ResponseWriter) { panic(http.ErrAbortHandler) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctxs := make(chan context.Context, 1)
			srv, fac := uptoServer(t, tc.price, func(w http.ResponseWriter, r *http.Request) {
				if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 1000}); err != nil {
					t.Errorf("ReportUsage = %v", err)
				}
				ctxs <- r.Context()
				tc.fail(w)
			})
			resp, err := uptoClient(newPayer(t), 0).Post(srv.URL+"/metered", "text/plain", strings.NewReader("q"))
			if err == nil {
				resp.Body.Close()
			}
			if err := x402.ReportUsage(<-ctxs, x402.Usage{Amount: 1}); !errors.Is(err, x402.ErrUsageClosed) {
				t.Errorf("ReportUsage after the handler returned = %v, want ErrUsageClosed", err)
			}
			if s := fac.Settlements(); len(s) != 0 {
				t.Errorf("settlements = %+v, want none", s)
			}
		})
	}
}
