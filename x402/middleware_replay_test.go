package x402_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// keeper is a paid handler and an x402.Replayer: it answers as echo and
// keeps each answer by Idempotency-Key; ServeReplay answers from what it
// kept, unless refuse is set.
type keeper struct {
	mu      sync.Mutex
	kept    map[string]string
	served  atomic.Int32
	replays atomic.Int32
	refuse  bool
}

func (k *keeper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.served.Add(1)
	body, _ := io.ReadAll(r.Body)
	answer := string(body) + " served"
	k.mu.Lock()
	if k.kept == nil {
		k.kept = make(map[string]string)
	}
	k.kept[r.Header.Get(x402.HeaderIdempotencyKey)] = answer
	k.mu.Unlock()
	io.WriteString(w, answer)
}

func (k *keeper) ServeReplay(w http.ResponseWriter, r *http.Request) bool {
	k.replays.Add(1)
	k.mu.Lock()
	answer, ok := k.kept[r.Header.Get(x402.HeaderIdempotencyKey)]
	k.mu.Unlock()
	if !ok || k.refuse {
		return false
	}
	w.Header().Set("Idempotent-Replayed", "true")
	io.WriteString(w, answer)
	return true
}

// failedSettlement is the offline facilitator whose settlements fail.
type failedSettlement struct{ *evm.Facilitator }

func (failedSettlement) Settle(_ context.Context, _ *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: o.Network}, nil
}

func sendKeyed(t *testing.T, u, header, proof, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, u+"/paid", strings.NewReader("x"))
	req.Header.Set(header, proof)
	if key != "" {
		req.Header.Set(x402.HeaderIdempotencyKey, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestMiddleware_repeatOfSettledProof checks when a proof sent again gets
// the answer its first use bought: only with the same key, after a
// settlement that succeeded, from a handler that is a Replayer and has the
// answer; never by running the handler or settling again.
func TestMiddleware_repeatOfSettledProof(t *testing.T) {
	tests := []struct {
		name        string
		version     int
		notReplayer bool // serve through a plain http.Handler
		refuse      bool // the Replayer has no answer
		failSettle  bool
		firstKey    string
		repeatKey   string
		wantReplay  bool
		wantAsked   int32 // ServeReplay calls
	}{
		{name: "v2, same key", version: 2, firstKey: "k1", repeatKey: "k1", wantReplay: true, wantAsked: 1},
		{name: "v1, same key", version: 1, firstKey: "k1", repeatKey: "k1", wantReplay: true, wantAsked: 1},
		{name: "another key", version: 2, firstKey: "k1", repeatKey: "k2"},
		{name: "no key on the repeat", version: 2, firstKey: "k1"},
		{name: "no key on the first use", version: 2, repeatKey: "k1"},
		{name: "the handler has no answer", version: 2, refuse: true, firstKey: "k1", repeatKey: "k1", wantAsked: 1},
		{name: "not a Replayer", version: 2, notReplayer: true, firstKey: "k1", repeatKey: "k1"},
		{name: "settlement failed", version: 2, failSettle: true, firstKey: "k1", repeatKey: "k1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keeper{refuse: tt.refuse}
			var h http.Handler = k
			if tt.notReplayer {
				h = http.HandlerFunc(k.ServeHTTP)
			}
			opts := serverOptions{}
			if tt.failSettle {
				opts.facilitator = failedSettlement{&evm.Facilitator{}}
			}
			opts.next = h
			ps := newPaidServer(t, opts, nil)
			header := x402.HeaderPaymentSignature
			if tt.version == 1 {
				header = x402.HeaderXPayment
			}
			v := proof(t, tt.version, nil)
			first, firstBody := sendKeyed(t, ps.URL, header, v, tt.firstKey)
			wantFirst := http.StatusOK
			if tt.failSettle {
				wantFirst = http.StatusPaymentRequired
			}
			if first.StatusCode != wantFirst {
				t.Fatalf("first use: status = %d, want %d", first.StatusCode, wantFirst)
			}
			resp, body := sendKeyed(t, ps.URL, header, v, tt.repeatKey)
			if tt.wantReplay {
				if resp.StatusCode != http.StatusOK || body != firstBody {
					t.Errorf("repeat = %d %q, want 200 %q", resp.StatusCode, body, firstBody)
				}
				for _, name := range []string{x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
					if got, want := resp.Header.Get(name), first.Header.Get(name); got != want {
						t.Errorf("repeat %s = %q, want the first settlement %q", name, got, want)
					}
				}
			} else if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(x402.HeaderPaymentResponse) != "" {
				t.Errorf("repeat = %d with settlement %q, want 402 and none", resp.StatusCode, resp.Header.Get(x402.HeaderPaymentResponse))
			}
			if n := k.served.Load(); n != 1 {
				t.Errorf("the handler ran %d times, want 1", n)
			}
			if n := k.replays.Load(); n != tt.wantAsked {
				t.Errorf("ServeReplay was called %d times, want %d", n, tt.wantAsked)
			}
			wantSettled := 1
			if tt.failSettle {
				wantSettled = 0
			}
			if n := len(ps.fac.Settlements()); n != wantSettled {
				t.Errorf("the facilitator settled %d payments, want %d", n, wantSettled)
			}
		})
	}
}
