package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
)

// FuzzBalanceHandler asks the escrow balance route for any address, as a
// buyer writes it in the path: the route answers 200 with the address in
// its EIP-55 form, equal to the one asked for but for case, or a 400
// problem naming "address"; never another status, never a panic.
func FuzzBalanceHandler(f *testing.F) {
	for _, s := range []string{
		"0x000000000000000000000000000000000000dEaD",
		"0x000000000000000000000000000000000000dead",
		"0X000000000000000000000000000000000000DEAD",
		"0x000000000000000000000000000000000000DeaD",
		"0x00000000000000000000000000000000000000",
		"notanaddress",
		"0xzz00000000000000000000000000000000000000",
		"\xff",
	} {
		f.Add(s)
	}
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		f.Fatal(err)
	}
	esc, err := newDemoEscrow(context.Background(), signer, nil)
	if err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	handleGet(mux, escrowBalancePath, esc.balanceHandler())
	f.Fuzz(func(t *testing.T, addr string) {
		if addr == "" || addr == "." || addr == ".." || strings.Contains(addr, "/") {
			return // another route, or a path ServeMux cleans and redirects
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path = "/x402/escrow/balance/" + addr
		r.URL.RawPath = "/x402/escrow/balance/" + url.PathEscape(addr)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		switch rec.Code {
		case http.StatusOK:
			var b escrowBalance
			if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || !strings.EqualFold(b.Address, addr) {
				t.Fatalf("address %q: 200 %s, want its balance", addr, rec.Body)
			}
		case http.StatusBadRequest:
			var p problem.Details
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Field != "address" {
				t.Fatalf("address %q: 400 %s, want a problem naming address", addr, rec.Body)
			}
		default:
			t.Fatalf("address %q: %d %s, want 200 or 400", addr, rec.Code, rec.Body)
		}
	})
}
