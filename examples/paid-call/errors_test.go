package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestRun_everyOfferRefusedOnOneLine: a route whose offers are all
// refused, each for its own reason, is reported on stderr in one line
// that starts with the program's name and gives every reason.
func TestRun_everyOfferRefusedOnOneLine(t *testing.T) {
	const payTo = "0x000000000000000000000000000000000000dEaD"
	exact, err := evm.USDC("base-sepolia", payTo, "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	upto, err := evm.UptoUSDC("base-sepolia", payTo, "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		t.Fatal(err)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: &evm.Facilitator{},
		Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{exact, upto}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{}`))
	})))
	defer srv.Close()

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL + "/paid", "-max", "$0.0005"}, &out, &errOut, func(string) string { return "" })
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	var unprefixed []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "paid-call: ") {
			unprefixed = append(unprefixed, l)
		}
	}
	if diff := cmp.Diff([]string(nil), unprefixed); diff != "" {
		t.Errorf("stderr lines without the program's name (-want +got):\n%s\nstderr:\n%s", diff, &errOut)
	}
	if len(lines) != 1 {
		t.Errorf("stderr has %d lines, want 1:\n%s", len(lines), &errOut)
	}
	for _, w := range []string{"no acceptable offer", "above the limit of 500", `scheme "upto" is not allowed`} {
		if !strings.Contains(errOut.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, &errOut)
		}
	}
}

// TestRun_badMethod: a -method that is empty or not an HTTP method is a
// usage error naming the flag, before any call; an empty one is never
// sent as GET.
func TestRun_badMethod(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
	}))
	defer srv.Close()
	for _, tt := range []struct {
		method, want string
	}{
		{"", `paid-call: -method "": `},
		{"BAD METHOD", `paid-call: -method "BAD METHOD": `},
	} {
		var errOut bytes.Buffer
		code := run(context.Background(), []string{"-url", srv.URL, "-method", tt.method, "-data", ""}, &bytes.Buffer{}, &errOut, func(string) string { return "" })
		if code != 2 || !strings.HasPrefix(errOut.String(), tt.want) {
			t.Errorf("-method %q: exit %d, stderr %q; want exit 2 and %q", tt.method, code, &errOut, tt.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the server got %d requests; want none", n)
	}
}

// TestRun_settlementBeforeARedirect: a paid call whose server settles and
// then redirects (303 See Other to the result, a free resource) prints
// the settlement of the paid answer, not "none".
func TestRun_settlementBeforeARedirect(t *testing.T) {
	exact, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &evm.Facilitator{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac,
		Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{exact}}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /paid", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/result", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /result", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"result":"ready"}`))
	})
	srv := httptest.NewServer(mw(mux))
	defer srv.Close()

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL + "/paid"}, &out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
	}
	settled := fac.Settlements()
	if len(settled) != 1 {
		t.Fatalf("%d settlements, want 1", len(settled))
	}
	got := out.String()
	for _, w := range []string{`"result": "ready"`, `"success": true`, `"transaction": "` + settled[0].Transaction + `"`} {
		if !strings.Contains(got, w) {
			t.Errorf("stdout lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "settlement: none") {
		t.Errorf("stdout reports no settlement for a payment that settled:\n%s", got)
	}
}

// TestRun_paymentBeforeARedirectReported: a call whose paid request is
// redirected to another paid resource, which the Transport does not pay
// again, fails; the payment it sent, which settled, is reported with its
// reference.
func TestRun_paymentBeforeARedirectReported(t *testing.T) {
	exact, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &evm.Facilitator{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Routes: map[string]x402.Price{
		"POST /paid":  {Accepts: []x402.PaymentRequirements{exact}},
		"GET /result": {Accepts: []x402.PaymentRequirements{exact}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /paid", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/result", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /result", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(mw(mux))
	defer srv.Close()

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL + "/paid"}, &out, &errOut, func(string) string { return "" })
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	settled := fac.Settlements()
	if len(settled) != 1 {
		t.Fatalf("%d settlements, want 1", len(settled))
	}
	ref := settled[0].Payer + ":" + settled[0].Authorization.Nonce
	for _, w := range []string{"payment asked after a redirect", "may have been made", ref} {
		if !strings.Contains(strings.ToLower(errOut.String()), strings.ToLower(w)) {
			t.Errorf("stderr lacks %q:\n%s", w, &errOut)
		}
	}
}
