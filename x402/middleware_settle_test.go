package x402_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestMiddleware_refusesAuthorizationTooShortForTheWork: an authorization
// that expires before the route's time budget and the settlement can end
// would buy work that then fails to settle. It is refused with 402 and
// terms that say why, and the handler never runs.
func TestMiddleware_refusesAuthorizationTooShortForTheWork(t *testing.T) {
	var served atomic.Int32
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		echo(w, r)
	})
	payer := newPayer(t)
	// Signed 50 s ago for the offer's 60 s: valid for 10 s more, less than
	// the default time budget and settlement.
	payer.Now = func() time.Time { return time.Now().Add(-50 * time.Second) }
	pr, err := payer.Pay(t.Context(), offer(t))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: offer(t), Payload: pr.Payload})
	resp := send(t, ps.URL, x402.HeaderPaymentSignature, v)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	if got := reason(t, resp); !strings.Contains(got, "validBefore") || !strings.Contains(got, "time budget") {
		t.Errorf("reason = %q, want it to name validBefore and the time budget", got)
	}
	if n := served.Load(); n != 0 {
		t.Errorf("the handler ran %d times, want 0", n)
	}
	if n := len(ps.fac.Settlements()); n != 0 {
		t.Errorf("the facilitator settled %d payments, want 0", n)
	}
	// A fresh authorization from the same payer is taken.
	if resp := send(t, ps.URL, x402.HeaderPaymentSignature, proof(t, 2, nil)); resp.StatusCode != http.StatusOK {
		t.Errorf("fresh authorization: status = %d, want 200", resp.StatusCode)
	}
}

// disconnecting is the offline facilitator whose Settle waits until the
// client of the request has gone away, settles, and then fails as an HTTP
// facilitator call would if its context was cancelled meanwhile: the
// payment settled, and the server was not told.
type disconnecting struct {
	*evm.Facilitator
	settling chan struct{}          // closed when Settle starts
	gone     <-chan context.Context // the request's context, sent by the server
}

func (f *disconnecting) Settle(ctx context.Context, p *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	close(f.settling)
	select {
	case rc := <-f.gone:
		<-rc.Done()
	case <-time.After(5 * time.Second):
	}
	sr, err := f.Facilitator.Settle(context.Background(), p, o)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return sr, err
}

// markWatch is a MemoryReplay that tells when a settlement is recorded.
type markWatch struct {
	x402.MemoryReplay
	marked chan struct{}
}

func (m *markWatch) MarkSettled(ctx context.Context, key string, sp x402.SettledPayment) error {
	defer close(m.marked)
	return m.MemoryReplay.MarkSettled(ctx, key, sp)
}

// TestMiddleware_clientGoneDuringSettlement: a client that disconnects
// while its payment settles must not cancel the settlement, and a retry
// with the same proof and Idempotency-Key gets the kept answer, settled
// once, without the work running again.
func TestMiddleware_clientGoneDuringSettlement(t *testing.T) {
	noLeak(t) // the settlement the client left ends; nothing it started outlives it
	contexts := make(chan context.Context, 1)
	fac := &disconnecting{Facilitator: &evm.Facilitator{}, settling: make(chan struct{}), gone: contexts}
	k := &keeper{}
	replay := &markWatch{marked: make(chan struct{})}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Replay:      replay,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	paid := mw(k)
	var first sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Do(func() { contexts <- r.Context() })
		paid.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	v := proof(t, 2, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-fac.settling
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/paid", strings.NewReader("x"))
	req.Header.Set(x402.HeaderPaymentSignature, v)
	req.Header.Set(x402.HeaderIdempotencyKey, "k1")
	if resp, err := srv.Client().Do(req); !errors.Is(err, context.Canceled) {
		if err == nil {
			resp.Body.Close()
		}
		t.Fatalf("first call: err = %v, want the client's cancellation", err)
	}
	select { // the retry comes after the first use ended on the server
	case <-replay.marked:
	case <-time.After(2 * time.Second):
		t.Error("the settlement was not recorded for replay")
	}

	resp, body := sendKeyed(t, srv.URL, x402.HeaderPaymentSignature, v, "k1")
	if resp.StatusCode != http.StatusOK || body != "x served" {
		t.Fatalf("retry = %d %q, want 200 and the kept answer", resp.StatusCode, body)
	}
	if s, err := x402.SettlementFromResponse(resp); err != nil || !s.Success {
		t.Errorf("retry settlement = %+v, %v; want the first settlement", s, err)
	}
	if n := len(fac.Settlements()); n != 1 {
		t.Errorf("the facilitator settled %d payments, want 1", n)
	}
	if n := k.served.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want 1", n)
	}
}

// TestMiddleware_settleBefore: a route that settles before the work runs
// its handler only once the payment settled (the handler sees the
// settlement), and keeps the payment when the handler then fails.
func TestMiddleware_settleBefore(t *testing.T) {
	fac := &evm.Facilitator{}
	var settledFirst atomic.Bool
	handler := func(w http.ResponseWriter, r *http.Request) {
		vp, _ := x402.PaymentFromContext(r.Context())
		settledFirst.Store(len(fac.Settlements()) == 1 && vp.Settlement != nil && vp.Settlement.Success)
		if r.Header.Get("X-Fail") != "" {
			http.Error(w, "failed", http.StatusInternalServerError)
			return
		}
		echo(w, r)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, SettleBefore: true, TimeBudget: 50 * time.Second}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(handler)))
	t.Cleanup(srv.Close)

	resp := send(t, srv.URL, x402.HeaderPaymentSignature, proof(t, 2, nil))
	if resp.StatusCode != http.StatusOK || !settledFirst.Load() {
		t.Fatalf("status = %d, settled before the work = %v; want 200 and true", resp.StatusCode, settledFirst.Load())
	}
	if _, err := x402.SettlementFromResponse(resp); err != nil {
		t.Errorf("settlement header: %v", err)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/paid", strings.NewReader("x"))
	req.Header.Set(x402.HeaderPaymentSignature, proof(t, 2, nil))
	req.Header.Set("X-Fail", "1")
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get(x402.HeaderPaymentResponse) == "" {
		t.Errorf("failing handler = %d with settlement %q, want 500 with the settlement", resp.StatusCode, resp.Header.Get(x402.HeaderPaymentResponse))
	}
	if n := len(fac.Settlements()); n != 2 {
		t.Errorf("the facilitator settled %d payments, want 2 (the failed work is paid)", n)
	}
}

// TestMiddleware_handlerRunsWithinTimeBudget: the handler's context has the
// route's time budget as its deadline.
func TestMiddleware_handlerRunsWithinTimeBudget(t *testing.T) {
	var left atomic.Int64
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, TimeBudget: 20 * time.Second}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := r.Context().Deadline(); ok {
			left.Store(int64(time.Until(d)))
		}
		echo(w, r)
	})))
	t.Cleanup(srv.Close)
	if resp := send(t, srv.URL, x402.HeaderPaymentSignature, proof(t, 2, nil)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	if d := time.Duration(left.Load()); d <= 0 || d > 20*time.Second {
		t.Errorf("time left to the handler = %s, want the 20 s budget", d)
	}
}

func TestMiddleware_timeBudgetConfig(t *testing.T) {
	o := offer(t) // maxTimeoutSeconds 60
	for _, tc := range []struct {
		name   string
		price  x402.Price
		settle time.Duration
		ok     bool
	}{
		{"defaults fit the offer", x402.Price{Accepts: []x402.PaymentRequirements{o}}, 0, true},
		{"budget and settlement fill the offer", x402.Price{Accepts: []x402.PaymentRequirements{o}, TimeBudget: 50 * time.Second}, 10 * time.Second, true},
		{"budget too long for the offer", x402.Price{Accepts: []x402.PaymentRequirements{o}, TimeBudget: 50 * time.Second}, 0, false},
		{"settling first needs no budget", x402.Price{Accepts: []x402.PaymentRequirements{o}, TimeBudget: 10 * time.Minute, SettleBefore: true}, 0, true},
		{"negative budget", x402.Price{Accepts: []x402.PaymentRequirements{o}, TimeBudget: -time.Second}, 0, false},
		{"negative settle timeout", x402.Price{Accepts: []x402.PaymentRequirements{o}}, -time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x402.Middleware(x402.MiddlewareConfig{
				Facilitator:   &evm.Facilitator{},
				Routes:        map[string]x402.Price{"POST /paid": tc.price},
				SettleTimeout: tc.settle,
			})
			if (err == nil) != tc.ok {
				t.Errorf("Middleware error = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// lookupWatch is a MemoryReplay that tells when a settlement is first
// looked up.
type lookupWatch struct {
	x402.MemoryReplay
	once   sync.Once
	looked chan struct{}
}

func (l *lookupWatch) LookupSettled(ctx context.Context, key string, now time.Time) (x402.SettledPayment, bool, error) {
	l.once.Do(func() { close(l.looked) })
	return l.MemoryReplay.LookupSettled(ctx, key, now)
}

// heldSettlement is the offline facilitator whose Settle waits for
// proceed.
type heldSettlement struct {
	*evm.Facilitator
	settling chan struct{}
	proceed  chan struct{}
}

func (f *heldSettlement) Settle(ctx context.Context, p *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	close(f.settling)
	<-f.proceed
	return f.Facilitator.Settle(ctx, p, o)
}

// TestMiddleware_retryWhileSettling: a retry with the same proof and key
// that arrives while the first use still settles (its client gave up)
// waits for the settlement and gets the kept answer, instead of 402.
func TestMiddleware_retryWhileSettling(t *testing.T) {
	fac := &heldSettlement{Facilitator: &evm.Facilitator{}, settling: make(chan struct{}), proceed: make(chan struct{})}
	replay := &lookupWatch{looked: make(chan struct{})}
	k := &keeper{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Replay:      replay,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(k))
	t.Cleanup(srv.Close)
	v := proof(t, 2, nil)

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-fac.settling
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/paid", strings.NewReader("x"))
	req.Header.Set(x402.HeaderPaymentSignature, v)
	req.Header.Set(x402.HeaderIdempotencyKey, "k1")
	if resp, err := srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("first call answered, want the client's cancellation")
	}
	go func() { // let the settlement end once the retry is waiting for it
		<-replay.looked
		close(fac.proceed)
	}()
	resp, body := sendKeyed(t, srv.URL, x402.HeaderPaymentSignature, v, "k1")
	if resp.StatusCode != http.StatusOK || body != "x served" {
		t.Fatalf("retry = %d %q, want 200 and the kept answer", resp.StatusCode, body)
	}
	if n := len(fac.Settlements()); n != 1 {
		t.Errorf("the facilitator settled %d payments, want 1", n)
	}
	if n := k.served.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want 1", n)
	}
}

// TestMiddleware_priceFuncChecked: a PriceFunc price whose time budget
// no authorization can cover is a server error, not terms no payer can
// meet.
func TestMiddleware_priceFuncChecked(t *testing.T) {
	o := offer(t) // maxTimeoutSeconds 60
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		PriceFunc: func(r *http.Request) (x402.Price, bool) {
			return x402.Price{Accepts: []x402.PaymentRequirements{o}, TimeBudget: time.Minute}, true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	mw(http.HandlerFunc(echo)).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/paid", strings.NewReader("x")))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503", rec.Code)
	}
}
