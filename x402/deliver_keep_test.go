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

// keepWatch is a MemoryOutcomes that tells when an outcome starts being
// kept and keeps it only once told to proceed, and that tells when an
// outcome was first looked up.
type keepWatch struct {
	x402.MemoryOutcomes
	keeping, proceed chan struct{}
	once             sync.Once
	looked           chan struct{}
}

func (k *keepWatch) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	close(k.keeping)
	<-k.proceed
	return k.MemoryOutcomes.Keep(ctx, key, o, until)
}

func (k *keepWatch) Lookup(ctx context.Context, key string, now time.Time) (x402.Outcome, bool, error) {
	o, ok, err := k.MemoryOutcomes.Lookup(ctx, key, now)
	k.once.Do(func() { close(k.looked) })
	return o, ok, err
}

// postGated sends body to the gated route with the proof v under the
// Idempotency-Key key.
func postGated(ctx context.Context, u, v, key, body string) (*http.Response, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u+"/gated", strings.NewReader(body))
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
		resp, body, err := postGated(t.Context(), gs.URL, v, "call-1", "good")
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
	resp, body, err := postGated(t.Context(), gs.URL, v, "call-1", "good")
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
