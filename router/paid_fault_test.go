package router_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// payerKey is a key made up for the tests; it holds nothing on any
// network.
const payerKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

// countingPayer counts the proofs an evm.Payer signs.
type countingPayer struct {
	*evm.Payer
	n atomic.Int32
}

func (p *countingPayer) Pay(ctx context.Context, o x402.PaymentRequirements) (x402.Proof, error) {
	p.n.Add(1)
	return p.Payer.Pay(ctx, o)
}

// failingSettler is the offline facilitator with a settlement that
// always fails; it counts the attempts.
type failingSettler struct {
	*evm.Facilitator
	attempts atomic.Int32
}

func (f *failingSettler) Settle(_ context.Context, _ *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.attempts.Add(1)
	return &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: o.Network}, nil
}

// paidExchange is one paid request as it left the client, and the answer
// that reached the client.
type paidExchange struct {
	header http.Header
	body   []byte
	resp   http.Header
	status int
}

// paidCapture is the RoundTripper under x402.Transport: it keeps every
// paid request (one carrying a proof) and the answer it got.
type paidCapture struct {
	mu   sync.Mutex
	seen []paidExchange
}

func (c *paidCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get(x402.HeaderPaymentSignature) == "" {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultTransport.RoundTrip(r2)
	x := paidExchange{header: r.Header.Clone(), body: body}
	if err == nil {
		x.resp, x.status = resp.Header.Clone(), resp.StatusCode
	}
	c.mu.Lock()
	c.seen = append(c.seen, x)
	c.mu.Unlock()
	return resp, err
}

func (c *paidCapture) exchanges() []paidExchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]paidExchange(nil), c.seen...)
}

// paidRouter is a router.Handler on one honest session behind the x402
// middleware (the given facilitator, the offline one when nil) and a
// fault injector, on loopback, and a Client paying through x402.Transport
// over a paidCapture.
type paidRouter struct {
	srv   *httptest.Server
	fi    *faultInjector
	rec   *routertest.Recorder
	payer *countingPayer
	cap   *paidCapture
	c     *router.Client
}

func newPaidRouter(t *testing.T, fac x402.Facilitator, script ...fault) *paidRouter {
	t.Helper()
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pr := &paidRouter{rec: routertest.NewRecorder(routertest.Verdict(router.VerdictValid)), cap: &paidCapture{}}
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, pr.rec)), router.WithX402(mw))
	if err != nil {
		t.Fatal(err)
	}
	pr.fi = &faultInjector{next: h, script: script}
	pr.srv = httptest.NewServer(pr.fi)
	t.Cleanup(pr.srv.Close)
	p, err := evm.NewPayer(payerKey)
	if err != nil {
		t.Fatal(err)
	}
	pr.payer = &countingPayer{Payer: p}
	pr.c, err = router.NewClient(pr.srv.URL,
		router.WithClientVariant(router.VariantX402),
		router.WithHTTPClient(&http.Client{Transport: &x402.Transport{Payer: pr.payer, Base: pr.cap}}),
		router.WithRetry(router.RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// TestClient_paidCallFaults sends a paid validate v2 through
// router.Client over x402.Transport to a router.Handler behind the x402
// middleware and the offline facilitator, with a fault injected into the
// paid attempt (the first attempt is the unpaid one, answered 402). In
// every case the payer signs one proof, the facilitator settles at most
// once and the worker runs at most once. An answer lost after settlement
// is delivered by the retry, which carries the same proof and key; a
// failure reaches the caller as an error.
func TestClient_paidCallFaults(t *testing.T) {
	tests := []struct {
		name        string
		fault       fault
		wantSettled int
		wantRuns    int64
		wantOK      bool
	}{
		{"503 before the run: retried with the same proof", status503, 1, 1, true},
		{"reset before the run: retried with the same proof", resetEarly, 1, 1, true},
		{"answer lost after settling: delivered, not paid again", dropAfterRun, 1, 1, true},
		{"502 after settling: delivered, not paid again", badGatewayAfterRun, 1, 1, true},
		{"500 before the run: not retried, not settled", status500, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fac := &evm.Facilitator{}
			pr := newPaidRouter(t, fac, pass, tt.fault)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := pr.c.ValidateV2(ctx, validateV2(1))

			if tt.wantOK {
				if err != nil || got.Verdict != router.VerdictValid {
					t.Errorf("ValidateV2 = %+v, %v; want VALID", got, err)
				}
			} else {
				var re *router.Error
				switch {
				case err == nil:
					t.Errorf("ValidateV2 succeeded, want the fault reported")
				case !errors.As(err, &re):
					t.Errorf("error %v (%T), want a *router.Error", err, err)
				}
			}
			if n := pr.payer.n.Load(); n != 1 {
				t.Errorf("the payer signed %d proofs, want 1", n)
			}
			settled := fac.Settlements()
			if n := len(settled); n != tt.wantSettled {
				t.Errorf("the facilitator settled %d times, want %d", n, tt.wantSettled)
			}
			if n := pr.rec.Calls.Load(); n != tt.wantRuns {
				t.Errorf("the worker ran %d times, want %d", n, tt.wantRuns)
			}
			if !tt.wantOK || len(settled) != 1 {
				return
			}
			// The answer that reached the client carries the settlement.
			xs := pr.cap.exchanges()
			last := xs[len(xs)-1]
			sr, err := x402.SettlementFromResponse(&http.Response{Header: last.resp})
			if err != nil || !sr.Success || sr.Transaction != settled[0].Transaction {
				t.Errorf("settlement of the delivered answer = %+v, %v; want the one settlement %s", sr, err, settled[0].Transaction)
			}
			wantReplayed := tt.fault == dropAfterRun || tt.fault == badGatewayAfterRun
			if got := last.resp.Get("Idempotent-Replayed") == "true"; got != wantReplayed {
				t.Errorf("Idempotent-Replayed on the delivered answer = %v, want %v", got, wantReplayed)
			}
		})
	}
}

// TestClient_paidCallSettlementFailed loses the answer of a paid call
// whose settlement failed: the retry, with the same proof and key, is
// refused (402) and the caller gets no answer; the worker ran once, and
// settlement was tried once.
func TestClient_paidCallSettlementFailed(t *testing.T) {
	fac := &failingSettler{Facilitator: &evm.Facilitator{}}
	pr := newPaidRouter(t, fac, pass, dropAfterRun)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := pr.c.ValidateV2(ctx, validateV2(1))
	var pe *x402.PaymentError
	if !errors.As(err, &pe) || pe.Reference == "" {
		t.Fatalf("ValidateV2 error = %v (%T), want an *x402.PaymentError naming the payment", err, err)
	}
	if n := fac.attempts.Load(); n != 1 {
		t.Errorf("settlement was tried %d times, want 1", n)
	}
	if n := pr.rec.Calls.Load(); n != 1 {
		t.Errorf("the worker ran %d times, want 1", n)
	}
	if n := pr.payer.n.Load(); n != 1 {
		t.Errorf("the payer signed %d proofs, want 1", n)
	}
	xs := pr.cap.exchanges()
	if len(xs) != 2 || xs[1].status != http.StatusPaymentRequired {
		t.Fatalf("paid attempts = %d, last status %d; want 2, the retry answered 402", len(xs), xs[len(xs)-1].status)
	}
	if xs[1].resp.Get("Idempotent-Replayed") != "" || xs[1].resp.Get(x402.HeaderPaymentResponse) != "" {
		t.Errorf("the refused retry carries %v, want neither a replay nor a settlement", xs[1].resp)
	}
}

// TestClient_paidCallRepeats sends the proof of a settled call again, by
// hand, after the call's answer was lost: the same proof, key and body
// from the same payer get the same answer, also 16 at once, and also from
// another address (idempotency on a paid route is scoped by the payer);
// a different key, no key or another body get 402. Through all of it the
// worker ran once and the facilitator settled once.
func TestClient_paidCallRepeats(t *testing.T) {
	fac := &evm.Facilitator{}
	pr := newPaidRouter(t, fac, pass, dropAfterRun)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pr.c.ValidateV2(ctx, validateV2(1)); err != nil {
		t.Fatalf("ValidateV2 = %v", err)
	}
	xs := pr.cap.exchanges()
	if len(xs) != 2 {
		t.Fatalf("%d paid attempts, want 2 (one lost, one delivered)", len(xs))
	}
	first := xs[0]
	settled := fac.Settlements()
	if len(settled) != 1 {
		t.Fatalf("%d settlements, want 1", len(settled))
	}

	send := func(client *http.Client, mutate func(h http.Header), body []byte) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, pr.srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = first.header.Clone()
		if mutate != nil {
			mutate(req.Header)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Error(err)
		}
		return resp.StatusCode, resp.Header, b
	}
	plain := &http.Client{Transport: &http.Transport{}}
	status, h, want := send(plain, nil, first.body)
	if status != http.StatusOK || h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat = %d, Idempotent-Replayed %q; want 200 replayed", status, h.Get("Idempotent-Replayed"))
	}
	sr, err := x402.SettlementFromResponse(&http.Response{Header: h})
	if err != nil || sr.Transaction != settled[0].Transaction {
		t.Errorf("settlement of the repeat = %+v, %v; want transaction %s", sr, err, settled[0].Transaction)
	}

	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				status, h, got := send(plain, nil, first.body)
				if status != http.StatusOK || h.Get("Idempotent-Replayed") != "true" {
					t.Errorf("concurrent repeat = %d, Idempotent-Replayed %q; want 200 replayed", status, h.Get("Idempotent-Replayed"))
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("concurrent repeat body (-want +got):\n%s", diff)
				}
			})
		}
		wg.Wait()
	})

	otherBody := bytes.Replace(first.body, []byte(`"req-1"`), []byte(`"req-2"`), 1)
	if bytes.Equal(otherBody, first.body) {
		t.Fatalf("the request body %s has no request id to change", first.body)
	}
	otherCaller := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)},
	}).DialContext}}
	refused := []struct {
		name   string
		client *http.Client
		mutate func(http.Header)
		body   []byte
	}{
		{"another key", plain, func(h http.Header) { h.Set("Idempotency-Key", "another-key") }, first.body},
		{"no key", plain, func(h http.Header) { h.Del("Idempotency-Key") }, first.body},
		{"another body", plain, nil, otherBody},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := send(tt.client, tt.mutate, tt.body)
			if status != http.StatusPaymentRequired {
				t.Errorf("status = %d, want 402; body %s", status, body)
			}
			if h.Get("Idempotent-Replayed") != "" || h.Get(x402.HeaderPaymentResponse) != "" {
				t.Errorf("the refusal carries a replay or a settlement: %v", h)
			}
		})
	}
	t.Run("same payer from another address", func(t *testing.T) {
		status, h, got := send(otherCaller, nil, first.body)
		if status != http.StatusOK || h.Get("Idempotent-Replayed") != "true" {
			t.Errorf("status = %d, Idempotent-Replayed %q; want 200 replayed", status, h.Get("Idempotent-Replayed"))
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
	})
	if n := pr.rec.Calls.Load(); n != 1 {
		t.Errorf("the worker ran %d times, want 1", n)
	}
	if n := len(fac.Settlements()); n != 1 {
		t.Errorf("the facilitator settled %d times, want 1", n)
	}
	if n := pr.payer.n.Load(); n != 1 {
		t.Errorf("the payer signed %d proofs, want 1", n)
	}
}
