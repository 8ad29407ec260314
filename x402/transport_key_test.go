package x402_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// keyedPost posts "x" to u+"/paid" through c with the Idempotency-Key
// key and closes the answer's body. It returns any error for the caller
// to check and never fails t itself, so that it may run on any goroutine.
func keyedPost(t *testing.T, c *http.Client, u, key string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u+"/paid", strings.NewReader("x"))
	if err != nil {
		return nil, err
	}
	req.Header.Set(x402.HeaderIdempotencyKey, key)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

// TestTransport_keptProofStaysWithItsHost: a proof kept for one logical
// call is bound to the method, host and path it paid for; a request to
// another host with the same Idempotency-Key pays that host anew and never
// carries the first host's proof.
func TestTransport_keptProofStaysWithItsHost(t *testing.T) {
	a := newPaidServer(t, serverOptions{}, echo)
	b := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	for _, u := range []string{a.URL, b.URL} {
		resp, err := keyedPost(t, c, u, "call-1")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %v, %v; want 200", u, resp, err)
		}
	}
	pa, pb := a.seenProofs(), b.seenProofs()
	if len(pa) != 1 || len(pb) != 1 || pa[0] == pb[0] {
		t.Errorf("proofs seen by a %d, by b %d, the same one: %v; want one each, different", len(pa), len(pb), len(pa) == 1 && len(pb) == 1 && pa[0] == pb[0])
	}
	if n := payer.n.Load(); n != 2 {
		t.Errorf("paid %d times, want 2 (one per host)", n)
	}
}

// TestTransport_concurrentCallsWithOneKeyPayOnce: concurrent requests of
// one logical call (one Idempotency-Key, one URL) make one payment
// between them.
func TestTransport_concurrentCallsWithOneKeyPayOnce(t *testing.T) {
	k := &keeper{}
	ps := newPaidServer(t, serverOptions{next: k}, nil)
	payer := newPayer(t)
	budget := x402.NewBudget(1 << 20)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Budget: budget}}
	const n = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			// A copy that reaches the server while the first is in
			// flight may be refused as already used: only the
			// payments made count, not each copy's answer.
			_, _ = keyedPost(t, c, ps.URL, "call-1")
		})
	}
	close(start)
	wg.Wait()
	if got := payer.n.Load(); got != 1 {
		t.Errorf("paid %d times for one logical call, want 1", got)
	}
	if got := budget.Spent(); got != 1000 {
		t.Errorf("budget spent %d, want 1000 (one payment)", got)
	}
	if got := len(ps.fac.Settlements()); got != 1 {
		t.Errorf("settled %d payments, want 1", got)
	}
}
