package trustpay_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
)

// A buyer that hangs up while its answer is validated is told, should it
// send the proof again, that its request was cancelled: not that the
// validation ran out of the route's time budget, which it did not.
func TestGate_buyerHangUpIsCancelledNotTimeout(t *testing.T) {
	rt := trustpay.Route{Caller: service(t), Policy: trust.PolicySafe, Type: "summary", Spec: trust.JSON("keep every figure")}
	hangUp := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		t.Cleanup(cancel)
		time.AfterFunc(50*time.Millisecond, cancel)
		return ctx
	}

	j := rt.Judge(hangUp(), router.NewStringInput("Revenue rose 4% to $2.1bn."), json.RawMessage(`"slow"`), rt.Receipt)
	if j.Status != trustpay.StatusCancelled || !errors.Is(j.Err, context.Canceled) || j.Deliver() {
		t.Errorf("Judge after a hang-up = status %q, err %v; want %q and context.Canceled", j.Status, j.Err, trustpay.StatusCancelled)
	}

	req := httptest.NewRequest(http.MethodPost, "/summarize", strings.NewReader("Revenue rose 4% to $2.1bn."))
	d := trustpay.Gate(rt).Check(hangUp(), req, []byte("Revenue rose 4% to $2.1bn."),
		&x402.BufferedResponse{Status: http.StatusOK, Header: http.Header{}, Body: []byte(`"slow"`)})
	var p struct{ Code, Detail string }
	json.Unmarshal(d.Refusal.Body, &p)
	switch {
	case d.Deliver:
		t.Fatal("a hang-up delivered the answer")
	case d.Refusal.Status != http.StatusServiceUnavailable || p.Code != "unavailable":
		t.Errorf("refusal %d %s, want 503 unavailable", d.Refusal.Status, d.Refusal.Body)
	case !strings.Contains(p.Detail, "cancelled") || strings.Contains(p.Detail, "time budget"):
		t.Errorf("refusal detail %q does not say the request was cancelled", p.Detail)
	}
	if got := d.Header.Get(trustpay.HeaderStatus); got != trustpay.StatusCancelled || d.Verdict != trustpay.StatusCancelled {
		t.Errorf("Vouch-Status %q, verdict %q, want %q", got, d.Verdict, trustpay.StatusCancelled)
	}
}
