package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The parties' made-up keys and addresses: they hold nothing on any
// network.
const (
	buyerKey    = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	sellerPayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	sellerAPI   = "seller-key"
	buyerAPI    = "buyer-key"
	price       = "$0.01"
	spec        = "Summarize, keeping every figure."
)

// parties are the four HTTP servers of the demonstration, on loopback.
type parties struct {
	facilitator *evm.Facilitator // what the chain would record
	chain       *httptest.Server // the offline facilitator over HTTP
	market      *httptest.Server // the marketplace's trust service
	seller      *httptest.Server // the seller's paid, gated route
}

func (p *parties) close() {
	for _, s := range []*httptest.Server{p.seller, p.market, p.chain} {
		if s != nil {
			s.Close()
		}
	}
}

// start runs the facilitator, the marketplace and the seller.
func start() (_ *parties, err error) {
	p := &parties{facilitator: &evm.Facilitator{}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	p.chain = httptest.NewServer(x402.NewFacilitatorHandler(p.facilitator))

	// The marketplace embeds the trust service on its own workers: here,
	// deterministic judges that accept a summary only when it keeps every
	// figure of the source text. Buyer and seller call it with their keys.
	engine, err := router.NewEngine(routertest.Sessions(1, 2, judge(), judge(), judge(), judge(), judge()))
	if err != nil {
		return nil, err
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}), trust.WithSigningKey(key), trust.WithSignedReceipts())
	if err != nil {
		return nil, err
	}
	th, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{sellerAPI: "seller", buyerAPI: "buyer"})))
	if err != nil {
		return nil, err
	}
	p.market = httptest.NewServer(th)

	// The seller sells summaries for $0.01 and delivers, and is paid,
	// only what the marketplace's validation finds VALID.
	validator, err := trust.NewClient(p.market.URL, trust.WithAPIKey(sellerAPI))
	if err != nil {
		return nil, err
	}
	offer, err := evm.USDC("eip155:84532", sellerPayTo, price)
	if err != nil {
		return nil, err
	}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &x402.FacilitatorClient{URL: p.chain.URL},
		Routes: map[string]x402.Price{"POST /summarize": {
			Accepts:     []x402.PaymentRequirements{offer},
			Description: "a summary that keeps every figure",
			MimeType:    "application/json",
			Gate:        trustpay.Gate(trustpay.Route{Caller: validator, Policy: trust.PolicySafe, Type: "summarization", Spec: trust.JSON(spec)}),
		}},
	})
	if err != nil {
		return nil, err
	}
	p.seller = httptest.NewServer(paywall(http.HandlerFunc(summarize)))
	return p, nil
}

// summaries are the seller's answers, by source text: one good, one that
// drops figures. An order names its source text in "source".
var summaries = map[string]string{
	"Revenue rose 12% to $4.1 billion in 2025; operating margin was 18%.": "Revenue grew 12% to $4.1 billion in 2025, with an 18% operating margin.",
	"Refunds within 30 days, at most 2 a year, for orders above $50.":     "Refunds are possible within a month.",
	"Shipping takes 3 to 5 days; orders above $50 ship free.":             "Shipping takes 3 to 5 days, free above $50.",
}

// summarize is the seller's handler.
func summarize(w http.ResponseWriter, r *http.Request) {
	var order struct {
		Source string `json:"source"`
	}
	if err := json.NewDecoder(r.Body).Decode(&order); err != nil {
		http.Error(w, "the order is not JSON with a source", http.StatusBadRequest)
		return
	}
	s, ok := summaries[order.Source]
	if !ok {
		http.Error(w, "no summary of that source", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(s)
}

// judge accepts a delivery when it keeps every figure (a token with a
// digit) of the source text.
func judge() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		var delivery string
		if job.Claim == nil || json.Unmarshal(job.Claim.Output, &delivery) != nil {
			return &router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.9, Reasons: []string{"no text delivery to judge"}}, nil
		}
		text := sourceOf(job)
		for _, f := range strings.Fields(text) {
			f = strings.Trim(f, ".,;:")
			if strings.ContainsAny(f, "0123456789") && !strings.Contains(delivery, f) {
				return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.95, Reasons: []string{"drops the figure " + f}}, nil
			}
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.95, Reasons: []string{"keeps every figure"}}, nil
	})
}

// sourceOf is the source text of a job: the order's "source" member, or
// the input text itself.
func sourceOf(job *router.Job) string {
	if s, ok := job.TaskInput.String(); ok {
		return s
	}
	var order struct {
		Source string `json:"source"`
	}
	json.Unmarshal(job.TaskInput.Raw(), &order)
	return order.Source
}

// describe names a server for the output.
func describe(name, url, what string) string {
	return fmt.Sprintf("%-12s %s  %s", name, url, what)
}
