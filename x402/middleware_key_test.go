package x402_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
)

// TestMiddleware_ambiguousIdempotencyKey sends a valid proof with an
// Idempotency-Key sent twice or empty: the middleware refuses it with a
// 400 naming the header before it looks at the payment, so the handler
// never runs, nothing settles, and the proof stays unspent for the retry
// with one key.
func TestMiddleware_ambiguousIdempotencyKey(t *testing.T) {
	var handled atomic.Int32
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		echo(w, r)
	})
	v := proof(t, 2, nil)
	post := func(keys []string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ps.URL+"/paid", strings.NewReader("x"))
		req.Header.Set(x402.HeaderPaymentSignature, v)
		if keys != nil {
			req.Header[x402.HeaderIdempotencyKey] = keys
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	for _, tt := range []struct {
		name   string
		keys   []string
		detail string
	}{
		{"sent twice", []string{"dupA", "dupB"}, "Idempotency-Key is sent 2 times; send one key"},
		{"empty", []string{""}, "Idempotency-Key is empty; send 1 to 255 visible ASCII characters, or no Idempotency-Key header"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(tt.keys)
			var got problem.Details
			if err := json.Unmarshal(body, &got); err != nil || resp.Header.Get("Content-Type") != problem.ContentType {
				t.Fatalf("%d %s: not a problem", resp.StatusCode, body)
			}
			want := problem.Details{Type: problem.TypePrefix + "invalid_request", Title: "Bad Request", Status: 400,
				Detail: tt.detail, Instance: "/paid", Code: problem.CodeInvalidRequest}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
		})
	}
	if n := handled.Load(); n != 0 {
		t.Fatalf("the handler ran %d times", n)
	}
	if resp, body := post([]string{"one"}); resp.StatusCode != 200 {
		t.Errorf("the proof with one key: %d %s, want 200", resp.StatusCode, body)
	}
	if n := len(ps.fac.Settlements()); n != 1 {
		t.Errorf("the facilitator settled %d payments, want 1", n)
	}
}
