package x402_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// gatedServer serves an echo at "POST /gated" behind a gate that
// delivers answers whose request body is "good", and counts the handler's
// runs and the checks.
type gatedServer struct {
	*httptest.Server
	fac          *evm.Facilitator
	runs, checks atomic.Int32
	sawDeadline  atomic.Bool
}

func newGatedServer(t *testing.T) *gatedServer {
	t.Helper()
	return newGatedServerWith(t, nil)
}

// newGatedServerWith is newGatedServer with the outcome store outcomes
// (nil for the middleware's own).
func newGatedServerWith(t *testing.T, outcomes x402.OutcomeStore) *gatedServer {
	t.Helper()
	return newGatedServerVia(t, outcomes, nil)
}

// newGatedServerVia is newGatedServerWith whose middleware reaches the
// facilitator through via (nil: directly).
func newGatedServerVia(t *testing.T, outcomes x402.OutcomeStore, via func(*evm.Facilitator) x402.Facilitator) *gatedServer {
	t.Helper()
	gs := &gatedServer{fac: &evm.Facilitator{}}
	var fac x402.Facilitator = gs.fac
	if via != nil {
		fac = via(gs.fac)
	}
	check := func(ctx context.Context, req *http.Request, body []byte, resp *x402.BufferedResponse) x402.Delivery {
		gs.checks.Add(1)
		_, ok := ctx.Deadline()
		gs.sawDeadline.Store(ok)
		if again, _ := io.ReadAll(req.Body); string(again) != string(body) {
			t.Errorf("the check's request body = %q, want %q", again, body)
		}
		h := http.Header{"Vouch-Status": {"VALID"}}
		if string(body) != "good" || !strings.HasPrefix(string(resp.Body), "good") {
			h.Set("Vouch-Status", "INVALID")
			return x402.Delivery{Header: h, Refusal: x402.BufferedResponse{Status: http.StatusBadGateway, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("refused: " + string(resp.Body))}}
		}
		return x402.Delivery{Deliver: true, Header: h}
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /gated": {Accepts: []x402.PaymentRequirements{offer(t)}, Gate: &x402.DeliveryGate{Check: check}}},
		Outcomes:    outcomes,
	})
	if err != nil {
		t.Fatal(err)
	}
	gs.Server = httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gs.runs.Add(1)
		body, _ := io.ReadAll(r.Body)
		if string(body) == "fail" {
			http.Error(w, "the seller failed", http.StatusInternalServerError)
			return
		}
		w.Write(body)
	})))
	t.Cleanup(gs.Close)
	return gs
}

// post sends body with a proof made once for the whole test, so that
// each call repeats the same payment.
func (gs *gatedServer) post(t *testing.T, c *http.Client, body string) (*http.Response, string) {
	t.Helper()
	return gs.postKeyed(t, c, body, "call-1")
}

// postKeyed sends body under the Idempotency-Key key: a new key, a new
// payment.
func (gs *gatedServer) postKeyed(t *testing.T, c *http.Client, body, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gs.URL+"/gated", strings.NewReader(body))
	req.Header.Set(x402.HeaderIdempotencyKey, key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestGate_deliveredIsSettledOnce(t *testing.T) {
	gs := newGatedServer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	for i := range 2 {
		resp, body := gs.post(t, c, "good")
		if resp.StatusCode != http.StatusOK || body != "good" || resp.Header.Get("Vouch-Status") != "VALID" {
			t.Fatalf("call %d: %d %q, Vouch-Status %q", i, resp.StatusCode, body, resp.Header.Get("Vouch-Status"))
		}
		if sr, err := x402.SettlementFromResponse(resp); err != nil || !sr.Success {
			t.Errorf("call %d: settlement %+v, %v", i, sr, err)
		}
	}
	if n := len(gs.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
	if r, c := gs.runs.Load(), gs.checks.Load(); r != 1 || c != 1 {
		t.Errorf("handler ran %d times, checked %d times; want once each", r, c)
	}
	if !gs.sawDeadline.Load() {
		t.Error("the check ran without the route's time budget")
	}
}

func TestGate_refusedIsNeverSettled(t *testing.T) {
	gs := newGatedServer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	for i := range 2 {
		resp, body := gs.post(t, c, "bad")
		if resp.StatusCode != http.StatusBadGateway || body != "refused: bad" || resp.Header.Get("Vouch-Status") != "INVALID" {
			t.Fatalf("call %d: %d %q, Vouch-Status %q", i, resp.StatusCode, body, resp.Header.Get("Vouch-Status"))
		}
		if resp.Header.Get(x402.HeaderPaymentResponse) != "" {
			t.Errorf("call %d: a refusal carries a payment response", i)
		}
	}
	if s := gs.fac.Settlements(); len(s) != 0 {
		t.Errorf("settlements = %+v, want none", s)
	}
	if r, c := gs.runs.Load(), gs.checks.Load(); r != 1 || c != 1 {
		t.Errorf("handler ran %d times, checked %d times; want once each (the retry answered from the kept outcome)", r, c)
	}
}

func TestGate_handlerFailureIsNotChecked(t *testing.T) {
	gs := newGatedServer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	resp, _ := gs.post(t, c, "fail")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("status %d, want the handler's 500", resp.StatusCode)
	}
	if gs.checks.Load() != 0 || len(gs.fac.Settlements()) != 0 {
		t.Errorf("checked %d times, %d settlements; want neither", gs.checks.Load(), len(gs.fac.Settlements()))
	}
}

func TestGate_config(t *testing.T) {
	for name, p := range map[string]x402.Price{
		"no check": {Accepts: []x402.PaymentRequirements{offer(t)}, Gate: &x402.DeliveryGate{}},
		"settle before": {Accepts: []x402.PaymentRequirements{offer(t)}, SettleBefore: true, Gate: &x402.DeliveryGate{Check: func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
			return x402.Delivery{}
		}}},
	} {
		if _, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: map[string]x402.Price{"POST /gated": p}}); err == nil {
			t.Errorf("%s: Middleware accepted the gate", name)
		}
	}
}

func TestGate_refusalIsCountedAsNotDelivered(t *testing.T) {
	rec := telemetrytest.New(t)
	refuse := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Refusal: x402.BufferedResponse{Status: http.StatusOK, Body: []byte("no")}}
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator:   &evm.Facilitator{},
		Routes:        map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, Gate: &x402.DeliveryGate{Check: refuse}}},
		MeterProvider: rec.MeterProvider,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(echo)))
	defer srv.Close()
	resp := send(t, srv.URL, x402.HeaderPaymentSignature, proof(t, 2, nil))
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("a refusal of status 200 was sent as %d, want 502", resp.StatusCode)
	}
	if got := rec.Points(t)["vouch.x402.refusals"]; got["vouch.payment.reason=not_delivered"] != 1 {
		t.Errorf("refusals = %v, want one not_delivered", got)
	}
}

// TestGate_payersKeptApart: another payer's traffic, refused for free or
// paid for, does not push a payer's delivered answer out of a small
// outcome store: the payer's retry of the same payment still gets its
// answer, from the kept outcome, with no new run and no second
// settlement.
func TestGate_payersKeptApart(t *testing.T) {
	gs := newGatedServerWith(t, &x402.MemoryOutcomes{MaxEntries: 4})
	alice := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	evePayer, err := evm.NewPayer("0x8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63")
	if err != nil {
		t.Fatal(err)
	}
	eve := &http.Client{Transport: &x402.Transport{Payer: evePayer}}
	if resp, body := gs.post(t, alice, "good"); resp.StatusCode != http.StatusOK || body != "good" {
		t.Fatalf("alice's call: %d %q", resp.StatusCode, body)
	}
	for i := range 6 {
		if resp, _ := gs.postKeyed(t, eve, "bad", fmt.Sprint("refused-", i)); resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("eve's refused call %d: %d, want 502", i, resp.StatusCode)
		}
		if resp, _ := gs.postKeyed(t, eve, "good", fmt.Sprint("bought-", i)); resp.StatusCode != http.StatusOK {
			t.Fatalf("eve's paid call %d: %d, want 200", i, resp.StatusCode)
		}
	}
	runs := gs.runs.Load()
	resp, body := gs.post(t, alice, "good")
	if resp.StatusCode != http.StatusOK || body != "good" {
		t.Errorf("alice's retry after eve's 12 calls: %d %q; want her kept answer", resp.StatusCode, body)
	}
	if gs.runs.Load() != runs {
		t.Error("alice's retry ran the handler again")
	}
	if n := len(gs.fac.Settlements()); n != 7 {
		t.Errorf("%d settlements, want 7 (alice's one, eve's six)", n)
	}
}
