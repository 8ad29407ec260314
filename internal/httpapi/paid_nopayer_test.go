package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// whoAmI answers whom the Server takes the request for: its caller, the
// owner of its call, and whether the call is accountable.
func whoAmI(*http.Request, []byte) (httpapi.Run, error) {
	return func(ctx context.Context) (any, error) {
		return map[string]any{"caller": httpapi.Caller(ctx), "owner": httpapi.Owner(ctx), "accountable": httpapi.Accountable(ctx)}, nil
	}, nil
}

// TestServer_paidWithoutPayerSharesNothing: on a paid route whose
// paywall names no payer (a facilitator that leaves it out, on a
// payload that names none either), two payers behind one address, and
// an anonymous trial caller there, are not one caller "ip:<address>":
// the second payer sending the first's Idempotency-Key and body runs its
// own call rather than being given the first's kept answer, neither
// call is owned by a name another request gets, and neither is
// accountable (nothing is remembered to report on or dispute). An
// integration whose credential the request carries is that integration,
// and its retry gets its kept answer.
func TestServer_paidWithoutPayerSharesNothing(t *testing.T) {
	pass := func(next http.Handler) http.Handler { return next } // admits every request
	srv := newServer(t, httpapi.Config{
		X402:           pass,
		Payer:          func(*http.Request) string { return "" },
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Endpoints: []httpapi.Endpoint{
			{Method: http.MethodPost, Path: "/paid", Access: httpapi.Paid, Prepare: whoAmI},
			{Method: http.MethodPost, Path: "/trial", Access: httpapi.Trial, Prepare: whoAmI},
		},
	})
	type answer struct {
		Replayed    bool
		Caller      string
		Owner       string
		Accountable bool
	}
	post := func(path string, headers ...string) answer {
		t.Helper()
		got := send(t, http.MethodPost, srv.URL+path, `{"order":1}`,
			append([]string{"Idempotency-Key", "order-1", "X-Forwarded-For", "198.51.100.7"}, headers...)...)
		var a answer
		if got.status != http.StatusOK || json.Unmarshal([]byte(got.body), &a) != nil {
			t.Fatalf("%s: %d %s", path, got.status, got.body)
		}
		a.Replayed = got.header.Get(httpapi.HeaderIdempotentReplayed) == "true"
		return a
	}
	first, second, trial := post("/paid"), post("/paid"), post("/trial")
	if second.Replayed {
		t.Errorf("the second payer was given the first one's kept answer: %+v", second)
	}
	for name, a := range map[string]answer{"first payer": first, "second payer": second} {
		if a.Accountable || strings.HasPrefix(a.Caller, "ip:") || a.Caller == "payer:" || a.Owner == trial.Owner || a.Caller == trial.Caller {
			t.Errorf("%s taken for %+v; want a name of its own, not accountable (the trial caller there is %+v)", name, a, trial)
		}
	}
	if first.Owner == second.Owner {
		t.Errorf("both payers own their calls as %q", first.Owner)
	}

	alice := []string{"Authorization", "Bearer " + testKey}
	want := answer{Caller: "key:alice", Owner: "alice", Accountable: true}
	if diff := cmp.Diff(want, post("/paid", alice...)); diff != "" {
		t.Errorf("alice's paid call (-want +got):\n%s", diff)
	}
	want.Replayed = true
	if diff := cmp.Diff(want, post("/paid", alice...)); diff != "" {
		t.Errorf("alice's retry (-want +got):\n%s", diff)
	}
}
