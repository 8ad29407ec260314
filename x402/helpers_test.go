package x402_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A key made up for the tests; it holds nothing on any network.
const testKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

const payTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// offer is the price of the test route: $0.001 in USDC on Base Sepolia.
func offer(t *testing.T) x402.PaymentRequirements {
	t.Helper()
	o, err := evm.USDC("base-sepolia", payTo, "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// countingPayer counts the payments an evm.Payer makes.
type countingPayer struct {
	*evm.Payer
	n atomic.Int32
}

func (p *countingPayer) Pay(ctx context.Context, o x402.PaymentRequirements) (x402.Proof, error) {
	p.n.Add(1)
	return p.Payer.Pay(ctx, o)
}

func newPayer(t *testing.T) *countingPayer {
	t.Helper()
	p, err := evm.NewPayer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return &countingPayer{Payer: p}
}

// paidServer serves handler at "POST /paid" behind the middleware, with
// the offline facilitator, reached directly or over HTTP.
type paidServer struct {
	*httptest.Server
	fac    *evm.Facilitator
	mu     sync.Mutex
	proofs []string // payment headers of the requests that reached the middleware
}

type serverOptions struct {
	remoteFacilitator bool // reach the facilitator through FacilitatorClient over loopback
	v1Only            bool // hide the PAYMENT-REQUIRED header, as a version 1 server would
	facilitator       x402.Facilitator
	next              http.Handler // served instead of the handler argument, when set
}

func newPaidServer(t *testing.T, opts serverOptions, handler http.HandlerFunc) *paidServer {
	t.Helper()
	ps := &paidServer{fac: &evm.Facilitator{}}
	var fac x402.Facilitator = ps.fac
	if opts.remoteFacilitator {
		fs := httptest.NewServer(x402.NewFacilitatorHandler(ps.fac))
		t.Cleanup(fs.Close)
		fac = &x402.FacilitatorClient{URL: fs.URL, HTTPClient: fs.Client()}
	}
	if opts.facilitator != nil {
		fac = opts.facilitator
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, Description: "a paid echo", MimeType: "text/plain"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var next http.Handler = handler
	if opts.next != nil {
		next = opts.next
	}
	paid := mw(next)
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(x402.HeaderPaymentSignature) + r.Header.Get(x402.HeaderXPayment); v != "" {
			ps.mu.Lock()
			ps.proofs = append(ps.proofs, v)
			ps.mu.Unlock()
		}
		if opts.v1Only {
			w = v1Writer{w}
		}
		paid.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	return ps
}

func (ps *paidServer) seenProofs() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]string(nil), ps.proofs...)
}

// v1Writer drops the version 2 terms header.
type v1Writer struct{ http.ResponseWriter }

func (w v1Writer) WriteHeader(code int) {
	w.Header().Del(x402.HeaderPaymentRequired)
	w.ResponseWriter.WriteHeader(code)
}

// echo answers with the request body and the payer.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	vp, ok := x402.PaymentFromContext(r.Context())
	if !ok {
		http.Error(w, "no payment in context", http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%s paid by %s", body, vp.Payer)
}
