package trust_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// badTraceIDs are trace ids no traceparent can carry and no feedback
// route can name: router.WithTraceID documents 32 lowercase hex digits,
// not all zero.
var badTraceIDs = []string{
	"order-42",
	"4BF92F3577B34DA6A3CE929D0E0E4736",
	"4bf92f3577b34da6a3ce929d0e0e473",
	"00000000000000000000000000000000",
}

// TestService_badTraceID: a call whose context carries a trace id that
// is no W3C trace id (router.WithTraceID) is refused with an error naming
// the id, before any run, rather than run under a fresh trace id its
// caller never chose.
func TestService_badTraceID(t *testing.T) {
	w := routertest.NewRecorder(honest(0.9))
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range badTraceIDs {
		ctx := router.WithTraceID(trust.WithCaller(context.Background(), "key:alice"), id)
		resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicySafe))
		if err == nil || !strings.Contains(err.Error(), `"`+id+`"`) {
			t.Errorf("Call under trace id %q: %+v, %v; want an error naming it", id, resp, err)
		}
	}
	if n := w.Calls.Load(); n != 0 {
		t.Errorf("%d runs under refused trace ids, want none", n)
	}
}

// TestClient_badTraceID: a Client call or report whose context carries a
// trace id that is no W3C trace id is refused with an error naming the
// id, and nothing is sent, rather than sent under a trace id the caller
// never learns.
func TestClient_badTraceID(t *testing.T) {
	var hits atomic.Int64
	h, err := trust.NewHandler(&fakeCaller{}, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, id := range badTraceIDs {
		ctx := router.WithTraceID(context.Background(), id)
		for name, call := range map[string]func() error{
			"Call": func() error {
				_, err := c.Call(ctx, validationRequest())
				return err
			},
			"Feedback":        func() error { return c.Feedback(ctx, trace, true) },
			"FeedbackVerdict": func() error { return c.FeedbackVerdict(ctx, trace, router.VerdictValid) },
			"FetchReceipt": func() error {
				_, err := c.FetchReceipt(ctx, "rcpt_0123456789abcdefghijklmnop")
				return err
			},
			"VerifyReceipt": func() error {
				_, err := c.VerifyReceipt(ctx, &receipt.VerifyRequest{})
				return err
			},
		} {
			if err := call(); err == nil || !strings.Contains(err.Error(), `"`+id+`"`) {
				t.Errorf("%s under trace id %q: %v, want an error naming it", name, id, err)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent under refused trace ids, want none", n)
	}
}
