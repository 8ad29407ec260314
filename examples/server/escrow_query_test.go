package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
)

// TestBalanceHandler_query: the balance route takes no query, and over
// loopback refuses one as the library's routes do, with a 400 naming
// each parameter (rule unknown) or the query it cannot read (rule
// malformed), where it answered 200 as if the query were not there.
func TestBalanceHandler_query(t *testing.T) {
	t.Parallel()
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	esc, err := newDemoEscrow(context.Background(), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	handleGet(mux, escrowBalancePath, esc.balanceHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	path := srv.URL + "/x402/escrow/balance/0x000000000000000000000000000000000000dEaD"

	get := func(url string) (int, []byte) {
		t.Helper()
		resp, err := srv.Client().Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	const message = "is not a parameter of this endpoint, which takes none"
	for query, want := range map[string][]problem.FieldError{
		"?x=1":     {{Field: "x", Rule: "unknown", Message: message}},
		"?b=2&a=1": {{Field: "a", Rule: "unknown", Message: message}, {Field: "b", Rule: "unknown", Message: message}},
		"?a=%zz":   {{Field: "(query)", Rule: "malformed", Message: `is not name=value pairs joined by "&", each escaped as a URL's query is`}},
		"?x=1;y=2": {{Field: "(query)", Rule: "malformed", Message: `is not name=value pairs joined by "&", each escaped as a URL's query is`}},
	} {
		status, raw := get(path + query)
		var p problem.Details
		if err := json.Unmarshal(raw, &p); err != nil || status != http.StatusBadRequest || p.Code != problem.CodeInvalidRequest {
			t.Errorf("%s: %d %s, want a 400 invalid_request problem", query, status, raw)
			continue
		}
		if diff := cmp.Diff(want, p.Errors); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", query, diff)
		}
	}
	if status, raw := get(path); status != http.StatusOK {
		t.Errorf("without a query: %d %s, want 200", status, raw)
	}
}
