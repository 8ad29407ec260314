package x402_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestMiddleware_hostileProofHeaders sends proof headers that are not a
// payment: each is a 400 problem naming the header, or a 402 with the
// terms, never a 500; the handler never runs and nothing is settled.
func TestMiddleware_hostileProofHeaders(t *testing.T) {
	var handled atomic.Int32
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		echo(w, r)
	})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	// A valid proof, re-encoded with one member repeated: the first copy
	// names a stranger as payer, the last the real one.
	var p map[string]any
	raw, _ := base64.StdEncoding.DecodeString(proof(t, 2, nil))
	json.Unmarshal(raw, &p)
	good, _ := json.Marshal(p)
	dup := strings.Replace(string(good), `"x402Version":2`, `"x402Version":2,"x402Version":2`, 1)
	flipped := proof(t, 2, func(_ *x402.PaymentPayload, ep *evm.ExactPayload) {
		b := []byte(ep.Signature)
		if b[10] == 'a' {
			b[10] = 'b'
		} else {
			b[10] = 'a'
		}
		ep.Signature = string(b)
	})
	for _, tc := range []struct {
		name   string
		value  string
		status int
	}{
		{"not base64", "@@@@", 400},
		{"empty (no proof)", b64(""), 402},
		{"base64 of text", b64("pay me"), 400},
		{"truncated JSON", b64(`{"x402Version":2,"accepted":{`), 400},
		{"nested deep", b64(strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500)), 400},
		{"invalid UTF-8", b64("{\"x402Version\":2,\"payload\":{\"s\":\"\xff\"}}"), 400},
		{"version overflow", b64(`{"x402Version":99999999999999999999999}`), 400},
		{"version as a string", b64(`{"x402Version":"2"}`), 400},
		{"unknown version", b64(`{"x402Version":3,"payload":{}}`), 400},
		{"repeated member", b64(dup), 400},
		{"payload an array", b64(`{"x402Version":2,"accepted":{},"payload":[]}`), 400},
		{"huge header", b64(`{"x402Version":2,"pad":"` + strings.Repeat("x", 200_000) + `"}`), 400},
		{"signature tampered", flipped, 402},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, ps.URL, x402.HeaderPaymentSignature, tc.value)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tc.status)
			}
			if tc.status == 400 {
				var p problem.Details
				if ct := resp.Header.Get("Content-Type"); ct != problem.ContentType || json.Unmarshal(body, &p) != nil || p.Status != 400 {
					t.Errorf("%s %s, want a 400 problem", ct, body)
				}
			}
		})
	}
	if n := handled.Load(); n != 0 {
		t.Errorf("the paid handler ran %d times for no valid payment", n)
	}
	if n := len(ps.fac.Settlements()); n != 0 {
		t.Errorf("the facilitator settled %d payments", n)
	}
}

// TestMiddleware_concurrentReplay sends one proof 16 times at once: one
// request is served and settled, the others are refused with 402.
func TestMiddleware_concurrentReplay(t *testing.T) {
	var handled atomic.Int32
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		echo(w, r)
	})
	v := proof(t, 2, nil)
	const n = 16
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, ps.URL+"/paid", strings.NewReader("x"))
			req.Header.Set(x402.HeaderPaymentSignature, v)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != 1 || count[402] != n-1 {
		t.Errorf("statuses %v, want one 200 and %d 402", count, n-1)
	}
	if got := handled.Load(); got != 1 {
		t.Errorf("the handler ran %d times, want 1", got)
	}
	if got := len(ps.fac.Settlements()); got != 1 {
		t.Errorf("the facilitator settled %d times, want 1", got)
	}
}

// TestMiddleware_proofMembersOfItsVersion: a proof missing its members
// is refused naming them as its version writes them: the version its
// x402Version names, else the version of the header it came in
// (X-PAYMENT: version 1, whose scheme and network are top-level members;
// PAYMENT-SIGNATURE: version 2, whose are in accepted).
func TestMiddleware_proofMembersOfItsVersion(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, header, value string
		fields              []string
	}{
		{"X-PAYMENT {}", x402.HeaderXPayment, b64(`{}`), []string{"x402Version", "scheme", "network", "payload"}},
		{"X-PAYMENT version 1", x402.HeaderXPayment, b64(`{"x402Version":1,"payload":{}}`), []string{"scheme", "network"}},
		{"X-PAYMENT, version 1 members, no version", x402.HeaderXPayment, b64(`{"scheme":"exact","network":"base-sepolia","payload":{}}`), []string{"x402Version"}},
		{"PAYMENT-SIGNATURE {}", x402.HeaderPaymentSignature, b64(`{}`), []string{"x402Version", "accepted.scheme", "accepted.network", "payload"}},
		{"PAYMENT-SIGNATURE version 1", x402.HeaderPaymentSignature, b64(`{"x402Version":1,"payload":{}}`), []string{"scheme", "network"}},
		{"X-PAYMENT version 2", x402.HeaderXPayment, b64(`{"x402Version":2,"payload":{}}`), []string{"accepted.scheme", "accepted.network"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, ps.URL, tc.header, tc.value)
			body, _ := io.ReadAll(resp.Body)
			var p problem.Details
			if resp.StatusCode != 400 || json.Unmarshal(body, &p) != nil {
				t.Fatalf("%d %s, want a 400 problem", resp.StatusCode, body)
			}
			var got []string
			for _, e := range p.Errors {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("fields named (-want +got):\n%s", diff)
			}
		})
	}
}
