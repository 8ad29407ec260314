package x402_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestTransport_offerWithoutTimeoutStaysWithinPolicy checks that an
// offer that names no validity (maxTimeoutSeconds 0, or below) does not
// let the payer sign an authorization longer than the Policy allows: the
// payer signs for the Policy's limit, and the proof echoes the server's
// offer unchanged.
func TestTransport_offerWithoutTimeoutStaysWithinPolicy(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, timeout := range []int{0, -5} {
		t.Run(strconv.Itoa(timeout), func(t *testing.T) {
			o := offer(t)
			o.MaxTimeoutSeconds = timeout
			terms, err := x402.EncodeHeader(x402.PaymentRequired{X402Version: x402.Version2, Accepts: []x402.PaymentRequirements{o}})
			if err != nil {
				t.Fatal(err)
			}
			proofs := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if v := r.Header.Get(x402.HeaderPaymentSignature); v != "" {
					proofs <- v
					return
				}
				w.Header().Set(x402.HeaderPaymentRequired, terms)
				w.WriteHeader(http.StatusPaymentRequired)
			}))
			defer srv.Close()
			payer, err := evm.NewPayer(testKey)
			if err != nil {
				t.Fatal(err)
			}
			payer.Now = func() time.Time { return now }
			tr := &x402.Transport{Payer: payer, Policy: x402.Policy{MaxTimeoutSeconds: 120}, Now: payer.Now}
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			p, err := x402.DecodePaymentPayload(<-proofs)
			if err != nil {
				t.Fatal(err)
			}
			vb, ok := p.AuthorizationValidBefore()
			if !ok {
				t.Fatal("the proof has no validBefore")
			}
			if limit := now.Add(120 * time.Second); vb.After(limit) {
				t.Errorf("authorization valid until %v, after the Policy's limit %v", vb, limit)
			}
			if p.Accepted.MaxTimeoutSeconds != timeout {
				t.Errorf("accepted.maxTimeoutSeconds = %d, want the server's %d", p.Accepted.MaxTimeoutSeconds, timeout)
			}
		})
	}
}

// TestTransport_unpayableOffersSayWhy checks that terms whose offers the
// payer cannot pay are refused with an error that names each offer and
// why, rather than a bare "no offer".
func TestTransport_unpayableOffersSayWhy(t *testing.T) {
	huge := offer(t)
	huge.Amount = "115792089237316195423570985008687907853269984665640564039457584007913129639936" // 2²⁵⁶
	odd := offer(t)
	odd.Scheme = "subscription"
	noDomain := offer(t)
	noDomain.Extra = nil
	terms, err := x402.EncodeHeader(x402.PaymentRequired{X402Version: x402.Version2, Accepts: []x402.PaymentRequirements{huge, odd, noDomain}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(x402.HeaderPaymentRequired, terms)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer srv.Close()
	payer := newPayer(t)
	resp, err := (&http.Client{Transport: &x402.Transport{Payer: payer}}).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("terms without a payable offer were paid")
	}
	if !errors.Is(err, x402.ErrNoAcceptableOffer) {
		t.Errorf("error %v, want one wrapping ErrNoAcceptableOffer", err)
	}
	for _, want := range []string{"is too large", `scheme "subscription" is not allowed`, "exact 1000 on eip155:84532: the payer cannot pay it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := payer.n.Load(); n != 0 {
		t.Errorf("payer signed %d payments, want none", n)
	}
}
