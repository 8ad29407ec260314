package x402_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// idServers are n servers of one paid route that takes payment ids,
// sharing their replay and payment id stores, as servers on one database
// do; the proofs they receive are kept.
type idServers struct {
	urls   []string
	fac    *countingFacilitator
	runs   atomic.Int32
	mu     sync.Mutex
	proofs []string
	fail   atomic.Bool // the handler answers 500
	panics atomic.Bool // the handler panics
}

func newIDServers(t *testing.T, n int, pi *x402.PaymentIdentifier) *idServers {
	t.Helper()
	s := &idServers{fac: &countingFacilitator{Facilitator: &evm.Facilitator{}}}
	replay, ids := &x402.MemoryReplay{}, &x402.MemoryPaymentIDs{}
	for range n {
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: s.fac, Replay: replay, PaymentIDs: ids,
			Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, PaymentIdentifier: pi}}})
		if err != nil {
			t.Fatal(err)
		}
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.fail.Load() {
				http.Error(w, "down", http.StatusInternalServerError)
				return
			}
			if s.panics.Load() {
				panic(http.ErrAbortHandler)
			}
			w.Write([]byte("answer " + string(rune('0'+s.runs.Add(1)))))
		}))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.Header.Get(x402.HeaderPaymentSignature); v != "" {
				s.mu.Lock()
				s.proofs = append(s.proofs, v)
				s.mu.Unlock()
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		s.urls = append(s.urls, srv.URL)
	}
	return s
}

// send posts proof to server i and returns the status, body and
// PAYMENT-RESPONSE.
func (s *idServers) send(t *testing.T, i int, proof string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.urls[i]+"/paid", strings.NewReader("q"))
	req.Header.Set(x402.HeaderPaymentSignature, proof)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get(x402.HeaderPaymentResponse)
}

// pay pays one call to server 0 with the Transport, under payment key
// key (so that its payment id is key's), and returns the proof it sent.
func (s *idServers) pay(t *testing.T, key string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	req, _ := http.NewRequestWithContext(x402.WithPaymentKey(t.Context(), key), http.MethodPost, s.urls[0]+"/paid", strings.NewReader("q"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	return resp.StatusCode, s.proofs[len(s.proofs)-1]
}

// The route's terms offer the extension, and the Transport sends an id;
// a retry of the same id and payment, on the same server or another
// sharing the stores, gets the first response and its PAYMENT-RESPONSE,
// the handler run once and the payment settled once, never "already
// used"; the same id with another payment is 409.
func TestMiddleware_paymentIdentifierRetry(t *testing.T) {
	s := newIDServers(t, 2, &x402.PaymentIdentifier{})
	status, proof := s.pay(t, "order-7")
	if status != http.StatusOK {
		t.Fatalf("first call: %d", status)
	}
	p, err := x402.DecodePaymentPayload(proof)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Extensions[x402.ExtensionPaymentIdentifier]; !ok {
		t.Fatalf("the payment carries no payment id: %+v", p.Extensions)
	}
	type answer struct {
		Status           int
		Body, Settlement string
	}
	var first answer
	first.Status, first.Body, first.Settlement = s.send(t, 0, proof)
	if first.Status != http.StatusOK || first.Body != "answer 1" || first.Settlement == "" {
		t.Fatalf("the first retry: %+v", first)
	}
	for i := range 2 {
		var got answer
		got.Status, got.Body, got.Settlement = s.send(t, i, proof)
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("retry on server %d (-first +retry):\n%s", i, diff)
		}
	}
	if s.runs.Load() != 1 || s.fac.settles.Load() != 1 {
		t.Errorf("handler ran %d times, %d settles; want 1 and 1", s.runs.Load(), s.fac.settles.Load())
	}
	// Another payment under the same id: 409.
	if status, other := s.pay(t, "order-7"); status != http.StatusConflict || other == proof {
		t.Errorf("another payment under the same id: %d, want 409", status)
	}
	if s.runs.Load() != 1 || s.fac.settles.Load() != 1 {
		t.Errorf("after the conflict: handler ran %d times, %d settles", s.runs.Load(), s.fac.settles.Load())
	}
}

// A route that requires an id refuses a payment without one with 400,
// naming the member; the terms say it is required.
func TestMiddleware_paymentIdentifierRequired(t *testing.T) {
	s := newIDServers(t, 1, &x402.PaymentIdentifier{Required: true})
	resp, err := http.Post(s.urls[0]+"/paid", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	terms, err := x402.ReadPaymentRequired(resp)
	if err != nil {
		t.Fatal(err)
	}
	var ext struct {
		Info struct {
			Required bool `json:"required"`
		} `json:"info"`
	}
	if err := json.Unmarshal(terms.Extensions[x402.ExtensionPaymentIdentifier], &ext); err != nil || !ext.Info.Required {
		t.Fatalf("terms' extension %s, %v; want required", terms.Extensions[x402.ExtensionPaymentIdentifier], err)
	}
	_, proof := s.pay(t, "order-8")
	p, _ := x402.DecodePaymentPayload(proof)
	p.Extensions = nil
	bare, _ := x402.EncodeHeader(p)
	status, body, _ := s.send(t, 0, bare)
	if status != http.StatusBadRequest || !strings.Contains(body, "extensions.payment-identifier.info.id") {
		t.Errorf("a payment without an id: %d %s; want 400 naming extensions.payment-identifier.info.id", status, body)
	}
}

// A first request that charged nothing (the handler failed) leaves its
// id free: the retry with the same id and payment runs and is charged
// once.
func TestMiddleware_paymentIdentifierReleasedWhenNotCharged(t *testing.T) {
	s := newIDServers(t, 1, &x402.PaymentIdentifier{})
	s.fail.Store(true)
	if status, _ := s.pay(t, "order-9"); status != http.StatusInternalServerError {
		t.Fatalf("failing call: %d", status)
	}
	s.mu.Lock()
	proof := s.proofs[len(s.proofs)-1]
	s.mu.Unlock()
	s.fail.Store(false)
	if status, body, sr := s.send(t, 0, proof); status != http.StatusOK || body != "answer 1" || sr == "" || s.fac.settles.Load() != 1 {
		t.Errorf("retry after the failure: %d %q, settlement %q, %d settles; want 200 charged once", status, body, sr, s.fac.settles.Load())
	}
}

func TestMemoryPaymentIDs(t *testing.T) {
	x402test.TestPaymentIDStore(t, func(*testing.T) x402.PaymentIDStore { return &x402.MemoryPaymentIDs{} })
}

// A first request whose handler panicked charged nothing and keeps no
// response: its id is free for the retry, which runs and is charged once.
func TestMiddleware_paymentIdentifierReleasedAfterAPanic(t *testing.T) {
	s := newIDServers(t, 1, &x402.PaymentIdentifier{})
	s.panics.Store(true)
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t)}}
	req, _ := http.NewRequestWithContext(x402.WithPaymentKey(t.Context(), "order-10"), http.MethodPost, s.urls[0]+"/paid", strings.NewReader("q"))
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the panicking call answered %d", resp.StatusCode)
	}
	s.mu.Lock()
	proof := s.proofs[len(s.proofs)-1]
	s.mu.Unlock()
	s.panics.Store(false)
	if status, body, sr := s.send(t, 0, proof); status != http.StatusOK || body != "answer 1" || sr == "" || s.fac.settles.Load() != 1 {
		t.Errorf("retry after the panic: %d %q, settlement %q, %d settles; want 200 charged once", status, body, sr, s.fac.settles.Load())
	}
}

// Two payers that send the same payment id (as two callers whose
// Idempotency-Keys match do) are served apart: the second neither gets
// the first's response nor a 409, and each retry gets its own answer.
func TestMiddleware_paymentIdentifierPerPayer(t *testing.T) {
	s := newIDServers(t, 1, &x402.PaymentIdentifier{})
	payAs := func(key string) (int, string) {
		t.Helper()
		p, err := evm.NewPayer(key)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: &x402.Transport{Payer: p}}
		req, _ := http.NewRequestWithContext(x402.WithPaymentKey(t.Context(), "order-1042"), http.MethodPost, s.urls[0]+"/paid", strings.NewReader("q"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	const otherKey = "0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f"
	if status, body := payAs(testKey); status != http.StatusOK || body != "answer 1" {
		t.Fatalf("the first payer: %d %q", status, body)
	}
	if status, body := payAs(otherKey); status != http.StatusOK || body != "answer 2" {
		t.Errorf("the second payer under the same id: %d %q, want its own answer", status, body)
	}
	s.mu.Lock()
	first, second := s.proofs[0], s.proofs[len(s.proofs)-1]
	s.mu.Unlock()
	for _, c := range []struct{ proof, want string }{{first, "answer 1"}, {second, "answer 2"}} {
		if status, body, _ := s.send(t, 0, c.proof); status != http.StatusOK || body != c.want {
			t.Errorf("a retry: %d %q, want %q", status, body, c.want)
		}
	}
	if s.runs.Load() != 2 || s.fac.settles.Load() != 2 {
		t.Errorf("handler ran %d times, %d settles; want 2 and 2", s.runs.Load(), s.fac.settles.Load())
	}
}
