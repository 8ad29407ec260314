package x402_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// keepWatch is a MemoryOutcomes that tells when an outcome that is not
// Unpaid starts being kept and keeps it only once told to proceed, and
// that tells when an outcome was first looked up.
type keepWatch struct {
	x402.MemoryOutcomes
	keeping, proceed chan struct{}
	once             sync.Once
	looked           chan struct{}
}

func (k *keepWatch) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	if o.Unpaid != nil { // kept before the settlement: the watch is of the outcome after it
		return k.MemoryOutcomes.Keep(ctx, key, o, until)
	}
	close(k.keeping)
	<-k.proceed
	return k.MemoryOutcomes.Keep(ctx, key, o, until)
}

func (k *keepWatch) Lookup(ctx context.Context, key string, now time.Time) (x402.Outcome, bool, error) {
	o, ok, err := k.MemoryOutcomes.Lookup(ctx, key, now)
	k.once.Do(func() { close(k.looked) })
	return o, ok, err
}

// postProof posts body to url with the proof v under the
// Idempotency-Key key.
func postProof(ctx context.Context, url, v, key, body string) (*http.Response, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set(x402.HeaderPaymentSignature, v)
	req.Header.Set(x402.HeaderIdempotencyKey, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// TestGate_retryWhileOutcomeIsKept: a retry with the same proof that
// arrives once the first use settled, while its delivered outcome is
// still being kept, waits for it and gets the delivered answer with the
// first settlement, instead of 402 "already used" for an answer its
// payer paid for.
func TestGate_retryWhileOutcomeIsKept(t *testing.T) {
	kw := &keepWatch{keeping: make(chan struct{}), proceed: make(chan struct{}), looked: make(chan struct{})}
	gs := newGatedServerWith(t, kw)
	v := proof(t, 2, nil)

	type answer struct {
		status     int
		body       string
		settlement string
	}
	firstDone := make(chan answer, 1)
	go func() {
		resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
		if err != nil {
			t.Error(err)
			firstDone <- answer{}
			return
		}
		firstDone <- answer{resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse)}
	}()
	<-kw.keeping // settled; its outcome not kept yet
	go func() {  // let the outcome be kept once the retry looked for it
		<-kw.looked
		close(kw.proceed)
	}()
	resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
	if err != nil {
		t.Fatal(err)
	}
	retry := answer{resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse)}
	first := <-firstDone
	if first.status != http.StatusOK || first.settlement == "" {
		t.Fatalf("first use = %d %q with settlement %q, want 200 and a settlement", first.status, first.body, first.settlement)
	}
	if diff := cmp.Diff(first, retry, cmp.AllowUnexported(answer{})); diff != "" {
		t.Errorf("retry differs from the first use's answer (-first +retry):\n%s", diff)
	}
	if n := len(gs.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
	if r, c := gs.runs.Load(), gs.checks.Load(); r != 1 || c != 1 {
		t.Errorf("handler ran %d times, checked %d times; want once each", r, c)
	}
}

// lateKeeper is a paid handler and an x402.Replayer that keeps its
// answer only once told the payment settled (x402.AfterSettle), and then
// only once told to proceed; it tells when it starts keeping and when
// ServeReplay was first asked.
type lateKeeper struct {
	keeping, proceed, asked chan struct{}
	once                    sync.Once
	mu                      sync.Mutex
	kept                    map[string]string
}

func (k *lateKeeper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	answer, key := string(body)+" served", r.Header.Get(x402.HeaderIdempotencyKey)
	x402.AfterSettle(r.Context(), func(settled bool) {
		if !settled {
			return
		}
		close(k.keeping)
		<-k.proceed
		k.mu.Lock()
		k.kept[key] = answer
		k.mu.Unlock()
	})
	io.WriteString(w, answer)
}

func (k *lateKeeper) ServeReplay(w http.ResponseWriter, r *http.Request) bool {
	k.once.Do(func() { close(k.asked) })
	k.mu.Lock()
	answer, ok := k.kept[r.Header.Get(x402.HeaderIdempotencyKey)]
	k.mu.Unlock()
	if ok {
		io.WriteString(w, answer)
	}
	return ok
}

// TestMiddleware_repeatWhileAnswerIsKept: a repeat of a proof that
// arrives once the first use settled, while the handler is still keeping
// the answer it keeps after settlement, waits for it and gets that answer
// with the first settlement, instead of 402 "already used".
func TestMiddleware_repeatWhileAnswerIsKept(t *testing.T) {
	k := &lateKeeper{keeping: make(chan struct{}), proceed: make(chan struct{}), asked: make(chan struct{}), kept: map[string]string{}}
	ps := newPaidServer(t, serverOptions{next: k}, nil)
	v := proof(t, 2, nil)
	type answer struct {
		status           int
		body, settlement string
	}
	firstDone := make(chan answer, 1)
	go func() {
		resp, body, err := postProof(t.Context(), ps.URL+"/paid", v, "k1", "x")
		if err != nil {
			t.Error(err)
			firstDone <- answer{}
			return
		}
		firstDone <- answer{resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse)}
	}()
	<-k.keeping // settled; the answer not kept yet
	go func() { // let it be kept once the repeat asked for it
		<-k.asked
		close(k.proceed)
	}()
	resp, body := sendKeyed(t, ps.URL, x402.HeaderPaymentSignature, v, "k1")
	repeat := answer{resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse)}
	first := <-firstDone
	if first.status != http.StatusOK || first.settlement == "" {
		t.Fatalf("first use = %d %q with settlement %q, want 200 and a settlement", first.status, first.body, first.settlement)
	}
	if diff := cmp.Diff(first, repeat, cmp.AllowUnexported(answer{})); diff != "" {
		t.Errorf("the repeat differs from the first use (-first +repeat):\n%s", diff)
	}
	if n := len(ps.fac.Settlements()); n != 1 {
		t.Errorf("the facilitator settled %d payments, want 1", n)
	}
}
