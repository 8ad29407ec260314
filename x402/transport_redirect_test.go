package x402_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// postVia posts body to u with c, following redirects.
func postVia(t *testing.T, c *http.Client, u, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

// TestTransport_redirectToAnotherHost checks that a Transport in the
// caller's own http.Client does not pay a host that a redirect reached
// from the one the caller asked: the request fails with an error
// wrapping ErrRedirectedPayment, nothing is signed, spent or settled.
func TestTransport_redirectToAnotherHost(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	elsewhere := strings.Replace(ps.URL, "127.0.0.1", "localhost", 1)
	var hops atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hops.Add(1) == 1 { // a first hop on the same origin is followed as usual
			http.Redirect(w, r, "/next", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, elsewhere+"/paid", http.StatusTemporaryRedirect)
	}))
	defer front.Close()
	payer := newPayer(t)
	budget := x402.NewBudget(5000)
	o := newObservedPayer(t, payer)
	o.tr.Budget = budget
	c := &http.Client{Transport: o.tr}

	resp, err := postVia(t, c, front.URL+"/start", "hello")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, x402.ErrRedirectedPayment) || !x402.Permanent(err) {
		t.Errorf("POST redirected to another host: %v, want a permanent error wrapping ErrRedirectedPayment", err)
	}
	if err != nil && !strings.Contains(err.Error(), front.URL) {
		t.Errorf("error %q does not name the origin %s", err, front.URL)
	}
	if n := payer.n.Load(); n != 0 {
		t.Errorf("payer signed %d payments, want none", n)
	}
	if n := len(ps.fac.Settlements()); n != 0 || budget.Spent() != 0 {
		t.Errorf("%d settlements, %d spent; want none", n, budget.Spent())
	}
	want := map[string]int64{"vouch.payment.reason=redirected,vouch.payment.result=declined,vouch.payment.reused=false": 1}
	if diff := cmp.Diff(want, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}
}

// TestTransport_redirectOnTheSameOrigin checks that a redirect that stays
// on the origin the caller asked is still paid.
func TestTransport_redirectOnTheSameOrigin(t *testing.T) {
	ps := newPaidServer(t, serverOptions{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/paid", http.StatusPermanentRedirect)
			return
		}
		echo(w, r)
	})}, nil)
	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	resp, err := postVia(t, c, ps.URL+"/old", "hello")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := "hello paid by " + payer.Address().String(); resp.StatusCode != http.StatusOK || string(body) != want {
		t.Errorf("answer %d %q, want 200 %q", resp.StatusCode, body, want)
	}
	if n := len(ps.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
}

// TestTransport_redirectAfterPaymentIsNotPaidAgain checks that one call
// pays at most once along its redirects: a server that takes the payment
// and redirects to a resource that answers 402 again (here, on and on)
// gets one payment, and the call fails with an error wrapping
// ErrRedirectedPayment instead of paying at every hop.
func TestTransport_redirectAfterPaymentIsNotPaidAgain(t *testing.T) {
	var hop atomic.Int32
	ps := newPaidServer(t, serverOptions{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/paid?hop="+strconv.Itoa(int(hop.Add(1))), http.StatusTemporaryRedirect)
	})}, nil)
	payer := newPayer(t)
	budget := x402.NewBudget(1 << 20)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Budget: budget}}

	resp, err := postVia(t, c, ps.URL+"/paid", "hello")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, x402.ErrRedirectedPayment) || !x402.Permanent(err) {
		t.Errorf("POST redirected after paying: %v, want a permanent error wrapping ErrRedirectedPayment", err)
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("payer signed %d payments, want 1", n)
	}
	if got, want := budget.Spent(), uint64(1000); got != want {
		t.Errorf("spent %d, want %d", got, want)
	}
	if n := len(ps.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
}
