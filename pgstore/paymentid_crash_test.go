package pgstore_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// dieAfterCapture relays every settle; once a capture has been answered by
// the escrow it runs die (the server loses its database) and reports the
// answer lost, as a server that dies mid-settlement leaves it.
type dieAfterCapture struct {
	x402.Facilitator
	once sync.Once
	die  func()
}

func (f *dieAfterCapture) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if strings.Contains(string(p.Payload), `"type":"capture"`) {
		died := false
		f.once.Do(func() { f.die(); died = true })
		if died {
			return nil, context.DeadlineExceeded
		}
	}
	return sr, err
}

// A server (A) captures an "auth-capture" payment that carries a payment
// id, and dies (its database connection closes) before it records the
// capture and the id's response. The payer's retry, same proof and same
// payment id, goes to the second server (B), which shares every store.
// While the first request may still run (its lease: the route's time
// budget and four settlement timeouts) the retry is 409; after it, the
// retry is served as the first request of the id, and the payment's kept
// outcome, its capture finished by B's recovery, answers it: the payer,
// charged once, gets the answer, as it does without a payment id.
func TestPaymentID_serverDiesAfterCapture(t *testing.T) {
	for _, withID := range []bool{false, true} {
		name := "no-id"
		if withID {
			name = "with-id"
		}
		t.Run(name, func(t *testing.T) { serverDiesAfterCapture(t, withID) })
	}
}

func serverDiesAfterCapture(t *testing.T, withID bool) {
	// dbs[0] only drops the schema at cleanup; A runs on dbs[1], B on dbs[2].
	dbs := openDBs(t, 3)
	bed := x402test.NewEscrowBed(t)
	counted := bed.Facilitator
	var runs sync.Map
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := runs.LoadOrStore(name, new(int))
			*(n.(*int))++
			io.WriteString(w, "Paris")
		})
	}
	price := x402.Price{Accepts: []x402.PaymentRequirements{bed.Offer}}
	if withID {
		price.PaymentIdentifier = &x402.PaymentIdentifier{}
	}
	c := &clock{now: time.Now()}
	mk := func(db *pgstore.DB, f x402.Facilitator, now func() time.Time) *httptest.Server {
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: f, Replay: db.Replay(), Outcomes: db.Outcomes(), PaymentIDs: db.PaymentIDs(),
			Escrow: &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: db.Escrow()}, Now: now,
			Routes: map[string]x402.Price{"POST /paid": price}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(handler("srv")))
		t.Cleanup(srv.Close)
		return srv
	}
	a := mk(dbs[1], &dieAfterCapture{Facilitator: counted, die: func() { dbs[1].Close() }}, nil)
	b := mk(dbs[2], counted, c.Now)

	// The payer pays through a front that records the paid request's
	// headers and sends it to A.
	var paid http.Header
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(x402.HeaderPaymentSignature) != "" {
			paid = r.Header.Clone()
		}
		relay(w, r, a)
	}))
	t.Cleanup(front.Close)
	payer, _ := evm.NewPayer(testPayerKey)
	client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	before := bed.Balances()
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/paid", strings.NewReader("q"))
	req.Header.Set(x402.HeaderIdempotencyKey, "call-1")
	if resp, err := client.Do(req); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("first use on A (which died): %d %s", resp.StatusCode, body)
	} else {
		t.Logf("first use on A (which died): %v", err)
	}
	if paid == nil {
		t.Fatal("no paid request reached A")
	}
	const hold = x402test.EscrowHoldAmount
	if got, want := bed.Balances(), before.Plus(-hold, 0, hold); got != want {
		t.Fatalf("balances %+v, want %+v: the capture happened on the chain", got, want)
	}

	retry := func(label string) (int, string) {
		r, _ := http.NewRequest(http.MethodPost, b.URL+"/paid", strings.NewReader("q"))
		r.Header = paid.Clone()
		resp, err := b.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s: %d %s", label, resp.StatusCode, body)
		return resp.StatusCode, string(body)
	}
	// B restarts its recovery (as examples/server does every few minutes):
	// the payment's verdict is recorded, so it is finished as captured.
	rec := &escrow.Recovery{Ledger: dbs[2].Escrow(), Facilitator: counted, Authorizer: bed.Authorizer, Now: c.Now}
	if done, err := rec.Finish(context.Background()); err != nil {
		t.Fatalf("B's recovery: %v (%+v)", err, done)
	}
	status, body := retry("retry on B after A died and B recovered")
	switch {
	case withID && (status != http.StatusConflict || !strings.Contains(body, "still running")):
		t.Errorf("the retry on B within the first request's lease = %d %q; want 409, still running", status, body)
	case !withID && (status != http.StatusOK || body != "Paris"):
		t.Errorf("the retry on B = %d %q; want 200 \"Paris\": the payer was charged and the answer is kept", status, body)
	}
	// Past the lease (30s of time budget and four settlement timeouts of
	// 15s), within the capture window.
	c.Add(5 * time.Minute)
	if status, body := retry("retry on B five minutes later"); status != http.StatusOK || body != "Paris" {
		t.Errorf("the retry on B five minutes later = %d %q; want 200 \"Paris\": the payer was charged and the answer is kept", status, body)
	}
	if got, want := bed.Balances(), before.Plus(-hold, 0, hold); got != want {
		t.Errorf("balances %+v, want %+v: charged once", got, want)
	}
}

// A server (A) dies while the handler of an "exact" route runs, before
// anything is charged: its database connection closes, so neither the
// proof's reservation nor the payment id's row is released. The payer
// calls again under the same Idempotency-Key on the second server (B); as
// the replay store documents, it signs a new authorization (the first stays
// used until its validBefore), and x402.Transport sends the same payment id
// (derived from the key). Once the first request's lease has passed, B
// serves the new payment: the id does not stay held for MaxValidity.
func TestPaymentID_serverDiesBeforeCharge(t *testing.T) {
	for _, withID := range []bool{false, true} {
		name := "no-id"
		if withID {
			name = "with-id"
		}
		t.Run(name, func(t *testing.T) {
			dbs := openDBs(t, 3)
			offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
			if err != nil {
				t.Fatal(err)
			}
			price := x402.Price{Accepts: []x402.PaymentRequirements{offer}, TimeBudget: 200 * time.Millisecond}
			if withID {
				price.PaymentIdentifier = &x402.PaymentIdentifier{}
			}
			facs := []*evm.Facilitator{{}, {}}
			mk := func(db *pgstore.DB, f x402.Facilitator, h http.Handler) *httptest.Server {
				mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: f, Replay: db.Replay(), Outcomes: db.Outcomes(), PaymentIDs: db.PaymentIDs(),
					SettleTimeout: 200 * time.Millisecond, Routes: map[string]x402.Price{"POST /paid": price}})
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(mw(h))
				t.Cleanup(srv.Close)
				return srv
			}
			a := mk(dbs[1], facs[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				dbs[1].Close() // the server dies mid-work: nothing it does after this reaches the database
				http.Error(w, "died", http.StatusInternalServerError)
			}))
			b := mk(dbs[2], facs[1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Paris") }))
			// One address in front of both, as a load balancer: the
			// first call (its 402 and its paid request) goes to A, the
			// rest to B.
			var mu sync.Mutex
			target := a
			lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				to := target
				mu.Unlock()
				relay(w, r, to)
			}))
			t.Cleanup(lb.Close)
			payer, _ := evm.NewPayer(testPayerKey)
			call := func(url string) (int, string) {
				client := &http.Client{Transport: &x402.Transport{Payer: payer}}
				req, _ := http.NewRequest(http.MethodPost, url+"/paid", strings.NewReader("q"))
				req.Header.Set(x402.HeaderIdempotencyKey, "call-1")
				resp, err := client.Do(req)
				if err != nil {
					return -1, err.Error()
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, string(body)
			}
			status, body := call(lb.URL)
			t.Logf("first call on A (which died): %d %s", status, body)
			if n := len(facs[0].Settlements()); n != 0 {
				t.Fatalf("A settled %d payments, want 0", n)
			}
			mu.Lock()
			target = b
			mu.Unlock()
			time.Sleep(time.Second + 100*time.Millisecond) // past the first request's lease: 200ms and four times 200ms
			status, body = call(lb.URL)
			t.Logf("the call again on B: %d %s", status, body)
			if status != http.StatusOK || body != "Paris" {
				t.Errorf("the call again on B = %d %q; want 200 \"Paris\": the first charged nothing and runs nowhere", status, body)
			}
		})
	}
}

// relay sends r to the server to, as a front (a load balancer) does, and
// writes its answer to w.
func relay(w http.ResponseWriter, r *http.Request, to *httptest.Server) {
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, to.URL+r.URL.RequestURI(), r.Body)
	req.Header = r.Header.Clone()
	resp, err := to.Client().Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
