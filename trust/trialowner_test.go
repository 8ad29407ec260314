package trust_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// sessionHeader is the header a client names its trial session in, as a
// TrialCaller that passes it on reads it.
type sessionHeader struct {
	base    http.RoundTripper
	session string
}

func (s sessionHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Session", s.session)
	return s.base.RoundTrip(r)
}

// TestHandler_trialCallsAreNotTheCredentials: a trial call is its trial
// caller's, whether it carries a credential or the TrialCaller names it
// after one: alice's trial call made with her own key, and a stranger's
// trial call whose session is named "alice", the name of alice's
// credential, or "key:alice", the trial caller of her credential (not
// taken: the stranger is its address), are neither reportable by alice
// on the feedback route (a
// trial call teaches nothing, and a report by the receipt id would have
// it teach) nor fetched by her on the receipt route; the same 404, and
// the book unmoved. alice's own normal call stays hers.
func TestHandler_trialCallsAreNotTheCredentials(t *testing.T) {
	priv, recs, book := feedbackBook(t)
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	svc, err := trust.New(e, trust.WithReceipts(&receipt.Issuer{Store: store}), trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(svc,
		trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"ka": "alice"})),
		trust.WithTrialLimit(router.TrialLimit{Rate: rate.Inf}),
		trust.WithTrialCaller(func(r *http.Request) string { return r.Header.Get("X-Session") }),
		trust.WithReceiptEndpoints(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := func(opts ...trust.ClientOption) *trust.Client {
		t.Helper()
		c, err := trust.NewClient(srv.URL, append([]trust.ClientOption{trust.WithRetry(router.RetryPolicy{})}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice := client(trust.WithAPIKey("ka"))
	calls := map[string]*trust.Client{
		"alice's trial call with her key": client(trust.WithAPIKey("ka"), trust.WithClientVariant(router.VariantTrial)),
		"a trial session named alice": client(trust.WithClientVariant(router.VariantTrial),
			trust.WithHTTPClient(&http.Client{Transport: sessionHeader{http.DefaultTransport, "alice"}})),
		"a trial session named key:alice": client(trust.WithClientVariant(router.VariantTrial),
			trust.WithHTTPClient(&http.Client{Transport: sessionHeader{http.DefaultTransport, "key:alice"}})),
	}
	ctx := context.Background()
	call := func(c *trust.Client) (traceID, receiptID string, keys []reputation.Key) {
		t.Helper()
		req := request(trust.ModeValidation, trust.PolicySafe)
		req.Receipt = receipt.Inline()
		resp, err := c.Call(ctx, req)
		var r *receipt.Receipt
		if err == nil {
			r, err = receipt.Parse(resp.Receipt)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range r.CortensorRefs.Sessions {
			keys = append(keys, reputation.Key{Session: id})
		}
		return resp.TraceID, r.ReceiptID, keys
	}
	for name, c := range calls {
		traceID, receiptID, keys := call(c)
		before := reputationtest.Load(t, recs, keys...)
		for by, id := range map[string]string{"trace id": traceID, "receipt id": receiptID} {
			err := alice.Feedback(ctx, id, false)
			if !errors.Is(err, trust.ErrUnknownCall) {
				t.Errorf("%s: alice's report by %s: %v, want ErrUnknownCall", name, by, err)
			}
			if diff := cmp.Diff(before, reputationtest.Load(t, recs, keys...)); diff != "" {
				t.Fatalf("%s: alice's report by %s moved the records (-before +after):\n%s", name, by, diff)
			}
		}
		var p *trust.Error
		if _, err := alice.FetchReceipt(ctx, receiptID); !errors.As(err, &p) || p.Status != http.StatusNotFound || p.Code != problem.CodeNotFound {
			t.Errorf("%s: alice's fetch of its receipt: %v, want 404", name, err)
		}
		if rec, err := store.Get(ctx, receiptID, time.Now()); err != nil || rec.Owner == "alice" {
			t.Errorf("%s: receipt owner %q (%v), want the trial caller's own name", name, rec.Owner, err)
		}
	}

	_, receiptID, keys := call(alice)
	before := reputationtest.Load(t, recs, keys...)
	if _, err := alice.FetchReceipt(ctx, receiptID); err != nil {
		t.Errorf("alice's fetch of her own receipt: %v", err)
	}
	if err := alice.Feedback(ctx, receiptID, false); err != nil {
		t.Fatalf("alice's report on her own call: %v", err)
	}
	if cmp.Equal(before, reputationtest.Load(t, recs, keys...)) {
		t.Error("alice's report on her own call left the records as they were")
	}
}
