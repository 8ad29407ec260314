package x402_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// handClock is a clock that the test moves by hand.
type handClock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *handClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock d on.
func (c *handClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// slowVerifier is the offline facilitator whose Verify takes verifyD and
// whose Settle takes d on its clock, as a remote facilitator's may.
type slowVerifier struct {
	*evm.Facilitator
	clock   *handClock
	d       time.Duration
	verifyD time.Duration
}

func (f slowVerifier) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	f.clock.Advance(f.verifyD)
	return f.Facilitator.Verify(ctx, p, r)
}

func (f slowVerifier) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.clock.Advance(f.d) // the transaction lands d after it is sent
	return f.Facilitator.Settle(ctx, p, r)
}

// TestMiddleware_verifyTimeLeavesValidity: an authorization valid for the
// route's time budget and SettleTimeout from the moment the request
// arrives, whose verification then takes 14 s (within SettleTimeout), is
// refused before the handler runs: the work and a settlement of 14 s would
// end after it expires. With an instant verification the same timings
// work and settle.
func TestMiddleware_verifyTimeLeavesValidity(t *testing.T) {
	if worked, settled := paidOnce(t, 0); !worked || !settled {
		t.Fatalf("with an instant verification: worked %v, settled %v; want both", worked, settled)
	}
	if worked, settled := paidOnce(t, 14*time.Second); worked || settled {
		t.Errorf("with a verification of 14 s: worked %v, settled %v; want neither (no work for a payment that cannot settle)", worked, settled)
	}
}

// paidOnce pays one call whose verification takes verifyD and
// reports whether the handler ran and whether the payment settled.
func paidOnce(t *testing.T, verifyD time.Duration) (bool, bool) {
	clock := &handClock{t: time.Unix(1_800_000_000, 0)}
	fac := slowVerifier{Facilitator: &evm.Facilitator{Now: clock.Now}, clock: clock, d: 14 * time.Second, verifyD: verifyD}
	o := offer(t)
	o.MaxTimeoutSeconds = 46 // >= TimeBudget 30s + SettleTimeout 15s, as checkPrice requires
	var worked atomic.Int32
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{o}}},
		Now:         clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		worked.Add(1)
		clock.Advance(29 * time.Second) // within the 30 s time budget
		io.WriteString(w, "expensive work")
	})))
	defer srv.Close()

	payer, err := evm.NewPayer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	payer.Now = clock.Now
	client := &http.Client{Transport: &x402.Transport{Payer: payer}}
	resp, err := client.Post(srv.URL+"/paid", "text/plain", bytes.NewReader([]byte("x")))
	if resp != nil {
		resp.Body.Close()
	}
	t.Logf("verify %s: worked %d, settled %d, err = %v", verifyD, worked.Load(), len(fac.Settlements()), err)
	return worked.Load() == 1, len(fac.Settlements()) == 1
}
