package receipt_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// The counterparties the receipt block names may fetch the shared
// receipt, whether or not Params.Counterparties repeats them: the
// Issuer checks the block's names (shared_only, unique) and must not then
// drop them.
func TestIssuer_Issue_requestCounterpartiesMayFetch(t *testing.T) {
	s := newSigner(t, 1)
	is, store := newIssuer(t, s)
	p := fullParams()
	p.Request.Counterparties = []string{"party-b"}
	p.Counterparties = []string{"party-c"}
	out := issue(t, is, p)
	srv := httptest.NewServer(&receipt.Handler{
		Store:  store,
		Caller: headerCaller,
		Now:    func() time.Time { return t0().Add(time.Hour) },
	})
	defer srv.Close()
	got := map[string]int{}
	for _, caller := range []string{"owner-a", "party-b", "party-c", "mallory"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+receipt.ReceiptPath+out.Receipt.ReceiptID, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(callerHeader, caller)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got[caller] = resp.StatusCode
	}
	want := map[string]int{"owner-a": 200, "party-b": 200, "party-c": 200, "mallory": 404}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET status by caller (-want +got):\n%s", diff)
	}
}
