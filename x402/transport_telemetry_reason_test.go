package x402_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// TestTransport_telemetryServerReasonBounded: a server that rejects every
// paid request with a settlement naming a new errorReason each time makes
// no new series of vouch.x402.client.payments; each span keeps the
// reason the server gave.
func TestTransport_telemetryServerReasonBounded(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		terms, err := x402.EncodeHeader(x402.PaymentRequired{X402Version: x402.Version2,
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path}, Accepts: []x402.PaymentRequirements{offer(t)}})
		if err != nil {
			t.Error(err)
		}
		w.Header().Set(x402.HeaderPaymentRequired, terms)
		if r.Header.Get(x402.HeaderPaymentSignature) != "" {
			n++ // handlers of one test run one after the other
			sr, err := x402.EncodeHeader(x402.SettleResponse{ErrorReason: "made_up_" + strconv.Itoa(n), Network: "eip155:84532"})
			if err != nil {
				t.Error(err)
			}
			w.Header().Set(x402.HeaderPaymentResponse, sr)
		}
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer srv.Close()
	o := newObservedPayer(t, newPayer(t))
	for range 3 {
		if _, err := post(t, t.Context(), &http.Client{Transport: o.tr}, srv.URL+"/paid", "x"); !errors.Is(err, x402.ErrPaymentRejected) {
			t.Fatalf("err = %v, want ErrPaymentRejected", err)
		}
	}
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.reason=payment_rejected,vouch.payment.result=rejected,vouch.payment.reused=false": 3,
	}
	if diff := cmp.Diff(want, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}
	var reasons []string
	for _, s := range o.paySpans() {
		reasons = append(reasons, attrs(s)["vouch.payment.reason"])
	}
	if diff := cmp.Diff([]string{"made_up_1", "made_up_2", "made_up_3"}, reasons); diff != "" {
		t.Errorf("span reasons (-want +got):\n%s", diff)
	}
}
