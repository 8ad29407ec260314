package x402_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// TestMiddleware_noProofNamesEachVersionsHeader checks that the 402 of a
// request without proof tells a version 1 client (which reads the body)
// to send X-PAYMENT, and a version 2 client (which reads the
// PAYMENT-REQUIRED header) to send PAYMENT-SIGNATURE.
func TestMiddleware_noProofNamesEachVersionsHeader(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	resp := send(t, ps.URL, "", "")
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	v1, err := x402.DecodePaymentRequiredV1(body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v1.Error, x402.HeaderXPayment+" (x402 version 1)") {
		t.Errorf("version 1 error %q does not name %s", v1.Error, x402.HeaderXPayment)
	}
	v2, err := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v2.Error, x402.HeaderPaymentSignature+" (version 2)") {
		t.Errorf("version 2 error %q does not name %s", v2.Error, x402.HeaderPaymentSignature)
	}
}
