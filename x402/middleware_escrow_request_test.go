package x402_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// paidKeyed sends a paid request with the payment header proof and the
// Idempotency-Key key.
func (s *escrowServer) paidKeyed(t *testing.T, proof, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/paid", strings.NewReader(`{"claim":"Paris"}`))
	req.Header.Set(x402.HeaderPaymentSignature, proof)
	req.Header.Set(x402.HeaderIdempotencyKey, key)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// An answer sent with a void (the handler used nothing, or answered from
// its store) is the first request's: the retry of the proof with that
// request gets it again, and the proof sent with another request does
// not.
func TestMiddleware_escrowUncapturedAnswerBoundToRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"nothing used", func(w http.ResponseWriter, r *http.Request) {
			x402.ReportUsage(r.Context(), x402.Usage{Amount: 0})
			w.Write([]byte("the answer to " + r.Header.Get(x402.HeaderIdempotencyKey)))
		}},
		{"from the store", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(x402.HeaderIdempotentReplayed, "true")
			w.Write([]byte("the answer to " + r.Header.Get(x402.HeaderIdempotencyKey)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newEscrowServer(t, openBalance, nil, tc.handler)
			proof := s.proof(t)
			resp, body := s.paidKeyed(t, proof, "first")
			if resp.StatusCode != http.StatusOK || body != "the answer to first" {
				t.Fatalf("first use: status %d, %q", resp.StatusCode, body)
			}
			if resp, body := s.paidKeyed(t, proof, "first"); resp.StatusCode != http.StatusOK || body != "the answer to first" {
				t.Errorf("retry of the same request: status %d, %q", resp.StatusCode, body)
			}
			resp, body = s.paidKeyed(t, proof, "other")
			if resp.StatusCode != http.StatusPaymentRequired || strings.Contains(body, "the answer") {
				t.Errorf("the proof with another request: status %d, %q; want 402 without the first request's answer", resp.StatusCode, body)
			}
			if n := s.runs.Load(); n != 1 {
				t.Errorf("the handler ran %d times", n)
			}
		})
	}
}
