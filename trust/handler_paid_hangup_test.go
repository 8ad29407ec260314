package trust_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// countingSettler is the offline facilitator, counting its settlements.
type countingSettler struct {
	evm.Facilitator
	settled atomic.Int64
}

func (f *countingSettler) Settle(ctx context.Context, p *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.settled.Add(1)
	return f.Facilitator.Settle(ctx, p, o)
}

// disconnectAfter is a router.Service (an *router.Engine) whose n-th
// returning ValidateV3 call makes the HTTP client hang up, and waits
// until the server has seen it (the call's context is done).
type disconnectAfter struct {
	*router.Engine
	n      int
	hangUp context.CancelFunc
	mu     sync.Mutex
	done   int
}

func (c *disconnectAfter) ValidateV3(ctx context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	resp, err := c.Engine.ValidateV3(ctx, req)
	c.mu.Lock()
	c.done++
	last := c.done == c.n
	c.mu.Unlock()
	if last {
		c.hangUp()
		select {
		case <-ctx.Done(): // the server saw the client go
		case <-time.After(5 * time.Second):
		}
	}
	return resp, err
}

// TestHandler_x402BuyerHangsUpIsNotCharged: a buyer pays for an
// adaptive trust call (x402, settle after the work) and hangs up after
// the first batch of runs. The call ends with the request's
// cancellation, which the server answers 503 without settling, not with
// a 200 RETRY made of the two runs it had, which the middleware would
// settle for an answer no one receives.
func TestHandler_x402BuyerHangsUpIsNotCharged(t *testing.T) {
	o, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &countingSettler{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Routes: map[string]x402.Price{"POST " + trust.X402CallPath: {Accepts: []x402.PaymentRequirements{o}}}})
	if err != nil {
		t.Fatal(err)
	}
	valid, invalid := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	e, err := router.NewEngine(routertest.Sessions(1, 4, valid, invalid, valid, invalid))
	if err != nil {
		t.Fatal(err)
	}
	reqCtx, hangUp := context.WithCancel(t.Context())
	defer hangUp()
	svc, err := trust.New(&disconnectAfter{Engine: e, n: 2, hangUp: hangUp})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, svc, trust.WithX402(mw))
	proof := paymentProof(t, o)
	req, _ := http.NewRequestWithContext(reqCtx, "POST", srv.URL+trust.X402CallPath, strings.NewReader(`{"mode":"validation","policy":"adaptive","task":{"type":"summary","input":"x","claimed_result":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(x402.HeaderPaymentSignature, proof)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the client hung up, yet got %s", resp.Status)
	}
	srv.Close() // waits for the handler to finish
	if n := fac.settled.Load(); n != 0 {
		t.Errorf("the buyer hung up mid-call; the payment was settled %d time(s) for an answer no one received", n)
	}
}
