package pgstore_test

// Two servers (two x402.Middleware instances, each on its own
// pgstore.DB pool) over one database, driven over loopback HTTP by the
// library's own client (x402.Transport with an evm payer). A front server
// forwards the unpaid request to the first server and fans the paid
// request (same proof, same headers, same body) out to both servers at
// once.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

type fanResult struct {
	status int
	body   string
	header http.Header
}

// fanFront forwards unpaid requests to backends[0] and fans each paid
// request out to every backend at once, answering the client with
// the first 200 answer (else backends[0]'s).
type fanFront struct {
	backends []*httptest.Server
	mu       sync.Mutex
	results  [][]fanResult // per paid request, per backend
	proofs   []http.Header
}

func (f *fanFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	paid := r.Header.Get(x402.HeaderPaymentSignature) != ""
	targets := f.backends[:1]
	if paid {
		targets = f.backends
	}
	res := make([]fanResult, len(targets))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, b := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, b.URL+r.URL.RequestURI(), bytes.NewReader(body))
			req.Header = r.Header.Clone()
			<-start
			resp, err := b.Client().Do(req)
			if err != nil {
				res[i] = fanResult{status: -1, body: err.Error()}
				return
			}
			rb, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			res[i] = fanResult{status: resp.StatusCode, body: string(rb), header: resp.Header}
		}()
	}
	close(start)
	wg.Wait()
	if paid {
		f.mu.Lock()
		f.results = append(f.results, res)
		f.proofs = append(f.proofs, r.Header.Clone())
		f.mu.Unlock()
	}
	best := res[0]
	for _, r := range res {
		if r.status == http.StatusOK {
			best = r
			break
		}
	}
	for k, v := range best.header {
		w.Header()[k] = v
	}
	w.WriteHeader(best.status)
	io.WriteString(w, best.body)
}

// countingEscrowSettles counts the escrow operations it relays, by type.
type countingEscrowSettles struct {
	x402.Facilitator
	mu  sync.Mutex
	ops map[string]int
}

func (c *countingEscrowSettles) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	c.mu.Lock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	for _, op := range []string{"authorize", "capture", "void", "refund"} {
		if strings.Contains(string(p.Payload), `"type":"`+op+`"`) {
			c.ops[op]++
		}
	}
	c.mu.Unlock()
	return c.Facilitator.Settle(ctx, p, r)
}

func (c *countingEscrowSettles) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

// TestTwoServers_sameProof sends each paid request's proof to both
// servers at once, on an "exact" route (plain and gated) and on an
// "auth-capture" route, with and without an Idempotency-Key and the
// payment-identifier extension. At most one settlement (one capture),
// the handler runs at most once per proof, and the loser is refused or
// gets the same outcome.
func TestTwoServers_sameProof(t *testing.T) {
	for _, kind := range []string{"exact", "gated", "escrow"} {
		for _, withKey := range []bool{false, true} {
			for _, withID := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/key=%v/id=%v", kind, withKey, withID), func(t *testing.T) {
					sameProof(t, kind, withKey, withID)
				})
			}
		}
	}
}

func sameProof(t *testing.T, kind string, withKey, withID bool) {
	dbs := openDBs(t, 2)
	var runs atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		io.WriteString(w, "Paris")
	})
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	var bed *x402test.EscrowBed
	var counted *countingEscrowSettles
	if kind == "escrow" {
		bed = x402test.NewEscrowBed(t)
		counted = &countingEscrowSettles{Facilitator: bed.Facilitator}
		offer = bed.Offer
	}
	facs := []*evm.Facilitator{{}, {}}
	var backends []*httptest.Server
	for i, db := range dbs {
		price := x402.Price{Accepts: []x402.PaymentRequirements{offer}}
		if kind == "gated" {
			price.Gate = &x402.DeliveryGate{Check: func(ctx context.Context, req *http.Request, body []byte, resp *x402.BufferedResponse) x402.Delivery {
				return x402.Delivery{Deliver: true}
			}}
		}
		if withID {
			price.PaymentIdentifier = &x402.PaymentIdentifier{}
		}
		cfg := x402.MiddlewareConfig{
			Facilitator: facs[i],
			Replay:      db.Replay(),
			Outcomes:    db.Outcomes(),
			PaymentIDs:  db.PaymentIDs(),
			Routes:      map[string]x402.Price{"POST /paid": price},
		}
		if kind == "escrow" {
			cfg.Facilitator = counted
			cfg.Escrow = &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: db.Escrow()}
		}
		mw, err := x402.Middleware(cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(handler))
		t.Cleanup(srv.Close)
		backends = append(backends, srv)
	}
	front := &fanFront{backends: backends}
	fsrv := httptest.NewServer(front)
	t.Cleanup(fsrv.Close)
	payer, err := evm.NewPayer(testPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	policy := x402.Policy{}
	if kind == "escrow" {
		policy.Schemes = []string{x402.SchemeAuthCapture}
	}
	client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: policy}}
	var before x402test.EscrowBalances
	if bed != nil {
		before = bed.Balances()
	}
	req, _ := http.NewRequest(http.MethodPost, fsrv.URL+"/paid", strings.NewReader("q"))
	if withKey {
		req.Header.Set(x402.HeaderIdempotencyKey, "key-1")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	front.mu.Lock()
	results := front.results
	front.mu.Unlock()
	if len(results) != 1 {
		t.Fatalf("%d paid requests reached the front, want 1", len(results))
	}
	ok := 0
	for i, r := range results[0] {
		t.Logf("server %d: %d %q", i, r.status, r.body)
		if r.status == http.StatusOK {
			ok++
			if r.body != "Paris" {
				t.Errorf("server %d delivered %q", i, r.body)
			}
		}
	}
	if ok == 0 {
		t.Errorf("neither server delivered the answer")
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want 1", n)
	}
	switch kind {
	case "escrow":
		// A retry that finds the capture pending may send it again (the
		// facilitator's lifecycle is idempotent per operation, as
		// x402.SettleEscrow documents): the chain must move once.
		if n := counted.count("capture"); n > 2 {
			t.Errorf("%d captures sent, want at most 2", n)
		}
		const hold = x402test.EscrowHoldAmount
		if got, want := bed.Balances(), before.Plus(-hold, 0, hold); got != want {
			t.Errorf("balances %+v, want %+v", got, want)
		}
	default:
		if n := len(facs[0].Settlements()) + len(facs[1].Settlements()); n != 1 {
			t.Errorf("%d settlements, want 1", n)
		}
	}

	// The same proof again to both servers: nothing more is settled or run.
	front.mu.Lock()
	proof := front.proofs[0]
	front.mu.Unlock()
	for i, b := range backends {
		r2, _ := http.NewRequest(http.MethodPost, b.URL+"/paid", strings.NewReader("q"))
		r2.Header = proof.Clone()
		resp, err := b.Client().Do(r2)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("repeat on server %d: %d %q", i, resp.StatusCode, body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("after repeats the handler ran %d times, want 1", n)
	}
	if kind == "escrow" {
		const hold = x402test.EscrowHoldAmount
		if got, want := bed.Balances(), before.Plus(-hold, 0, hold); got != want {
			t.Errorf("after repeats balances %+v, want %+v", got, want)
		}
	} else if n := len(facs[0].Settlements()) + len(facs[1].Settlements()); n != 1 {
		t.Errorf("after repeats %d settlements, want 1", n)
	}
}
