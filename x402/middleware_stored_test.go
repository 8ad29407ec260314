package x402_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// clock is a time the test moves.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock        { c := &clock{}; c.Set(t); return c }

// answerStore is a paid handler that keeps its answers by payer and
// Idempotency-Key for a window, as vouch's servers do: a request whose
// answer it kept is answered from the store (Idempotent-Replayed: true)
// without doing the work.
type answerStore struct {
	clk    *clock
	window time.Duration
	mu     sync.Mutex
	kept   map[string]storedAnswer
	worked atomic.Int32
}

type storedAnswer struct {
	body  string
	until time.Time
}

func (s *answerStore) lookup(r *http.Request) (string, string, bool) {
	vp, _ := x402.PaymentFromContext(r.Context())
	body, _ := io.ReadAll(r.Body)
	k := vp.Payer + "|" + r.Header.Get(x402.HeaderIdempotencyKey) + "|" + string(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.kept[k]
	if !ok || !s.clk.Now().Before(a.until) {
		return k, string(body), false
	}
	return k, a.body, true
}

func (s *answerStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k, body, ok := s.lookup(r)
	if ok {
		w.Header().Set(x402.HeaderIdempotentReplayed, "true")
		io.WriteString(w, body)
		return
	}
	n := s.worked.Add(1)
	answer := body + " worked " + strings.Repeat("!", int(n))
	s.mu.Lock()
	if s.kept == nil {
		s.kept = make(map[string]storedAnswer)
	}
	s.kept[k] = storedAnswer{answer, s.clk.Now().Add(s.window)}
	s.mu.Unlock()
	io.WriteString(w, answer)
}

func (s *answerStore) ServeReplay(w http.ResponseWriter, r *http.Request) bool {
	_, body, ok := s.lookup(r)
	if ok {
		w.Header().Set(x402.HeaderIdempotentReplayed, "true")
		io.WriteString(w, body)
	}
	return ok
}

// TestMiddleware_answerFromStoreIsNeverSettled: one logical call retried
// over a day through the paying Transport, against a server that keeps
// answers for the idempotency window. Within the proof's validity the
// retry carries the same proof and gets the answer with the first
// settlement; after it, the Transport has forgotten the proof and pays
// anew, and the server answers from its store, verifying that payment
// and never settling it; after the window, the call runs and is paid
// again. Both for routes that settle after the work and before it.
func TestMiddleware_answerFromStoreIsNeverSettled(t *testing.T) {
	for _, settleBefore := range []bool{false, true} {
		name := "settle after"
		if settleBefore {
			name = "settle before"
		}
		t.Run(name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
			clk := newClock(t0)
			store := &answerStore{clk: clk, window: httpapi.DefaultIdempotencyWindow}
			fac := &evm.Facilitator{Now: clk.Now}
			mw, err := x402.Middleware(x402.MiddlewareConfig{
				Facilitator: fac,
				Now:         clk.Now,
				Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, SettleBefore: settleBefore}},
			})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(mw(store))
			defer srv.Close()
			payer := newPayer(t)
			payer.Payer.Now = clk.Now
			budget := x402.NewBudget(1 << 20)
			c := &http.Client{Transport: &x402.Transport{Payer: payer, Now: clk.Now, Budget: budget}}

			for _, step := range []struct {
				at                  time.Duration
				payments, work, tx  int
				replayed, settledIn bool
			}{
				{0, 1, 1, 1, false, true},                               // the call
				{30 * time.Second, 1, 1, 1, true, true},                 // same proof: the answer and the first settlement
				{30 * time.Minute, 2, 1, 1, true, false},                // new proof: verified only, never settled
				{30*time.Minute + 20*time.Second, 2, 1, 1, true, false}, // that proof again, still unspent
				{25 * time.Hour, 3, 2, 2, false, true},                  // the answer is gone: a new call, paid
			} {
				clk.Set(t0.Add(step.at))
				resp, err := keyedPost(t, c, srv.URL, "call-1")
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("at %s: %v, %v; want 200", step.at, resp, err)
				}
				got := struct{ payments, work, tx int }{int(payer.n.Load()), int(store.worked.Load()), len(fac.Settlements())}
				if want := (struct{ payments, work, tx int }{step.payments, step.work, step.tx}); got != want {
					t.Errorf("at %s: payments, work, settlements = %+v, want %+v", step.at, got, want)
				}
				if r := resp.Header.Get(x402.HeaderIdempotentReplayed) == "true"; r != step.replayed {
					t.Errorf("at %s: replayed = %v, want %v", step.at, r, step.replayed)
				}
				if s := resp.Header.Get(x402.HeaderPaymentResponse) != ""; s != step.settledIn {
					t.Errorf("at %s: PAYMENT-RESPONSE present = %v, want %v", step.at, s, step.settledIn)
				}
			}
			if got := budget.Spent(); got != 3000 {
				t.Errorf("budget spent %d, want 3000 (three proofs signed, two settled)", got)
			}
		})
	}
}

// TestRetention_transportAndServerAgree: the server keeps answers
// (httpapi.DefaultIdempotencyWindow) longer than the zero Policy lets the
// Transport keep a proof (DefaultMaxTimeoutSeconds, the longest
// authorization it signs), so a retry that comes after the Transport
// forgot its proof still finds the answer, and is not charged for it; and
// the middleware reads the header the server sets on a stored answer.
func TestRetention_transportAndServerAgree(t *testing.T) {
	proof := time.Duration(x402.DefaultMaxTimeoutSeconds) * time.Second
	if proof >= httpapi.DefaultIdempotencyWindow {
		t.Errorf("the Transport keeps a proof up to %s, the server an answer %s: a retry could pay for a stored answer", proof, httpapi.DefaultIdempotencyWindow)
	}
	if x402.HeaderIdempotentReplayed != httpapi.HeaderIdempotentReplayed {
		t.Errorf("x402 reads %q, the server sets %q", x402.HeaderIdempotentReplayed, httpapi.HeaderIdempotentReplayed)
	}
}

// TestMiddleware_vouchServerAnswerIsNotChargedTwice: behind the x402
// middleware, internal/httpapi's paid endpoint keeps its answer by payer
// and Idempotency-Key; the retry of a settled call with a new proof from
// the same payer gets the stored answer, Idempotent-Replayed: true, and
// its payment is not settled; that proof, unspent, is taken again.
func TestMiddleware_vouchServerAnswerIsNotChargedTwice(t *testing.T) {
	for _, settleBefore := range []bool{false, true} {
		fac := &evm.Facilitator{}
		mw, err := x402.Middleware(x402.MiddlewareConfig{
			Facilitator: fac,
			Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, SettleBefore: settleBefore}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		payer := func(r *http.Request) string {
			if vp, ok := x402.PaymentFromContext(r.Context()); ok {
				return vp.Payer
			}
			return ""
		}
		s, err := httpapi.NewServer(httpapi.Config{X402: mw, Payer: payer, Endpoints: []httpapi.Endpoint{{
			Method: http.MethodPost, Path: "/paid", Access: httpapi.Paid,
			Prepare: func(_ *http.Request, body []byte) (httpapi.Run, error) {
				return func(context.Context) (any, error) { return map[string]any{"run": runs.Add(1)}, nil }, nil
			},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		defer srv.Close()
		first, second := proof(t, 2, nil), proof(t, 2, nil)
		for i, p := range []string{first, second, second} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/paid", strings.NewReader(`{"n":1}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(x402.HeaderIdempotencyKey, "call-1")
			req.Header.Set(x402.HeaderPaymentSignature, p)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			replayed := resp.Header.Get(x402.HeaderIdempotentReplayed) == "true"
			if resp.StatusCode != http.StatusOK || string(body) != "{\"run\":1}\n" || replayed != (i > 0) {
				t.Errorf("settle before %v, request %d: %d %q replayed %v; want 200, the first run's answer", settleBefore, i, resp.StatusCode, body, replayed)
			}
		}
		if n, tx := runs.Load(), len(fac.Settlements()); n != 1 || tx != 1 {
			t.Errorf("settle before %v: %d runs, %d settlements; want 1 and 1", settleBefore, n, tx)
		}
	}
}
