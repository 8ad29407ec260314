package x402

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// flightServer answers 402 to a request without a proof and 200 to one
// with a proof, and records the proofs it received.
type flightServer struct {
	*httptest.Server
	mu     sync.Mutex
	proofs []string
}

func newFlightServer(t *testing.T) *flightServer {
	t.Helper()
	offer := PaymentRequirements{
		Scheme: SchemeExact, Network: "eip155:84532", Amount: "1000",
		Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 60,
	}
	terms, err := EncodeHeader(PaymentRequired{X402Version: Version2, Accepts: []PaymentRequirements{offer}})
	if err != nil {
		t.Fatal(err)
	}
	fs := &flightServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proof := r.Header.Get(HeaderPaymentSignature)
		if proof == "" {
			w.Header().Set(HeaderPaymentRequired, terms)
			w.WriteHeader(http.StatusPaymentRequired)
			return
		}
		fs.mu.Lock()
		fs.proofs = append(fs.proofs, proof)
		fs.mu.Unlock()
	}))
	return fs
}

func (fs *flightServer) seen() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.proofs...)
}

// gatedPayer signs a proof once its gate opens, telling paying when it
// starts; it counts its payments.
type gatedPayer struct {
	paying chan struct{}
	gate   chan struct{}
	n      atomic.Int32
}

func (p *gatedPayer) Pay(ctx context.Context, _ PaymentRequirements) (Proof, error) {
	n := p.n.Add(1)
	p.paying <- struct{}{}
	<-p.gate
	return Proof{Payload: json.RawMessage(`{"n":` + strconv.Itoa(int(n)) + `}`), Reference: "ref"}, nil
}

// keyedGet sends one request of the call named key in ctx.
func keyedGet(ctx context.Context, c *http.Client, url, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set(HeaderIdempotencyKey, key)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// newFlight returns a flightServer and a Transport paying it with payer
// from a Budget, and a client using it. Closing the server closes the
// client's connections.
func newFlight(t *testing.T, payer Payer) (*flightServer, *Transport, *http.Client, *Budget) {
	t.Helper()
	fs := newFlightServer(t)
	budget := NewBudget(1 << 20)
	tr := &Transport{Base: fs.Client().Transport, Payer: payer, Budget: budget}
	return fs, tr, &http.Client{Transport: tr}, budget
}

// waitHolders waits until n requests hold the one proof of t's calls.
func waitHolders(t *testing.T, tr *Transport, n int) {
	t.Helper()
	for {
		tr.mu.Lock()
		held := 0
		for _, m := range tr.paid {
			held = m.holders
		}
		tr.mu.Unlock()
		if held == n {
			return
		}
		time.Sleep(time.Millisecond) // polls the state, asserts no duration
	}
}

// TestTransport_sharedProofSentByAnotherRequestStaysSpent: the request
// that made a shared proof is cancelled before it sends it, and another
// request of the call sends it. The proof left the process: the Budget
// keeps it charged, and a retry of the call carries the same proof
// instead of paying again.
func TestTransport_sharedProofSentByAnotherRequestStaysSpent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	payer := &gatedPayer{paying: make(chan struct{}, 2), gate: make(chan struct{})}
	fs, tr, c, budget := newFlight(t, payer)
	defer fs.Close()

	ctxA, cancelA := context.WithCancel(t.Context())
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { errA <- keyedGet(ctxA, c, fs.URL, "call-1") }()
	<-payer.paying // A makes the proof
	go func() { errB <- keyedGet(t.Context(), c, fs.URL, "call-1") }()
	waitHolders(t, tr, 2) // B waits for A's proof
	cancelA()             // A gives up before sending it
	close(payer.gate)
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled maker: err = %v, want context.Canceled", err)
	}
	if err := <-errB; err != nil {
		t.Fatalf("request sending the shared proof: %v", err)
	}
	if got := budget.Spent(); got != 1000 {
		t.Errorf("budget spent %d after the proof was sent, want 1000", got)
	}
	if err := keyedGet(t.Context(), c, fs.URL, "call-1"); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("paid %d times for one call, want 1", n)
	}
	if p := fs.seen(); len(p) != 2 || p[0] != p[1] {
		t.Errorf("server received proofs %q, want the same proof twice", p)
	}
}

// TestTransport_waiterReturnsWhenItsContextEnds: a request waiting for the
// payment another request of its call is making returns as soon as its
// own context ends; the payment goes on and its maker sends it.
func TestTransport_waiterReturnsWhenItsContextEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	payer := &gatedPayer{paying: make(chan struct{}, 2), gate: make(chan struct{})}
	fs, tr, c, budget := newFlight(t, payer)
	defer fs.Close()

	errA := make(chan error, 1)
	go func() { errA <- keyedGet(t.Context(), c, fs.URL, "call-1") }()
	<-payer.paying
	ctxB, cancelB := context.WithCancel(t.Context())
	errB := make(chan error, 1)
	go func() { errB <- keyedGet(ctxB, c, fs.URL, "call-1") }()
	waitHolders(t, tr, 2)
	cancelB()
	// B returns while the payment is still being made (the gate is shut).
	var pe *PaymentError
	if err := <-errB; !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Errorf("waiter: err = %v, want context.Canceled and no *PaymentError (it sent nothing)", err)
	}
	close(payer.gate)
	if err := <-errA; err != nil {
		t.Fatalf("maker: %v", err)
	}
	if n, p := payer.n.Load(), fs.seen(); n != 1 || len(p) != 1 {
		t.Errorf("paid %d times, server received %d proofs; want 1 and 1", n, len(p))
	}
	if got := budget.Spent(); got != 1000 {
		t.Errorf("budget spent %d, want 1000", got)
	}
}

// TestTransport_waiterPaysWhenTheMakerGivesUp: when the request making a
// call's payment is cancelled before the proof exists, a request of the
// call that waited for it pays itself instead of failing with the other
// request's cancellation.
func TestTransport_waiterPaysWhenTheMakerGivesUp(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	paying, gate := make(chan struct{}, 2), make(chan struct{})
	var n atomic.Int32
	payer := PayerFunc(func(ctx context.Context, _ PaymentRequirements) (Proof, error) {
		if n.Add(1) == 1 {
			paying <- struct{}{}
			select {
			case <-ctx.Done():
				return Proof{}, ctx.Err()
			case <-gate:
			}
		}
		return Proof{Payload: json.RawMessage(`{"ok":true}`)}, nil
	})
	fs, tr, c, budget := newFlight(t, payer)
	defer fs.Close()
	defer close(gate)

	ctxA, cancelA := context.WithCancel(t.Context())
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { errA <- keyedGet(ctxA, c, fs.URL, "call-1") }()
	<-paying
	go func() { errB <- keyedGet(t.Context(), c, fs.URL, "call-1") }()
	waitHolders(t, tr, 2)
	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Errorf("maker: err = %v, want context.Canceled", err)
	}
	if err := <-errB; err != nil {
		t.Fatalf("waiter: %v, want it to pay and be served", err)
	}
	if got, p := budget.Spent(), fs.seen(); got != 1000 || len(p) != 1 {
		t.Errorf("budget spent %d, proofs received %d; want 1000 and 1", got, len(p))
	}
}
