package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"math/big"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// The parties' made-up keys and addresses: they hold nothing on any
// network.
const (
	buyerKey     = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	sellerKey    = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba" // consents to captures, voids and refunds
	usdc         = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	openBalance  = 1_000_000 // what every address holds on the offline chain before the run
	sellerPayTo  = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	sellerAPI    = "seller-key"
	sellerCaller = "seller" // the seller's key as the trust service names it
	buyerAPI     = "buyer-key"
	price        = "$0.01"
	spec         = "Summarize, keeping every figure."
)

// parties are the four HTTP servers of the demonstration, on loopback,
// and what the seller keeps of its payments.
type parties struct {
	escrow   *evm.Escrow       // the offline chain: balances held, captured, voided, refunded
	chain    *httptest.Server  // the offline escrow as a facilitator over HTTP
	market   *httptest.Server  // the marketplace's trust service
	seller   *httptest.Server  // the seller's paid, gated route
	disputes trustpay.Disputes // the seller's refunds of disputed deliveries
	service  *trust.Service    // the marketplace's trust service, in process
	offer    x402.PaymentRequirements
}

func (p *parties) close() {
	for _, s := range []*httptest.Server{p.seller, p.market, p.chain} {
		if s != nil {
			s.Close()
		}
	}
}

// start runs the facilitator, the marketplace and the seller.
func start(ctx context.Context) (_ *parties, err error) {
	p := &parties{escrow: &evm.Escrow{OpenBalance: big.NewInt(openBalance)}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	p.chain = httptest.NewServer(x402.NewFacilitatorHandler(p.escrow))

	// The marketplace embeds the trust service on its own workers: here,
	// deterministic judges that accept a summary only when it keeps every
	// figure of the source text. Buyer and seller call it with their keys.
	// It learns from outcome reports (Feedback), as the seller's dispute
	// refunds need.
	book, err := reputation.New(new(reputation.Memory), reputation.Options{})
	if err != nil {
		return nil, err
	}
	engine, err := router.NewEngine(routertest.Sessions(1, 2, judge(), judge(), judge(), judge(), judge()), router.WithReputation(book))
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
	p.service = svc

	// The seller sells summaries for $0.01, held in escrow before its
	// handler runs, captured only when the marketplace's validation finds
	// the summary VALID, voided otherwise.
	validator, err := trust.NewClient(p.market.URL, trust.WithAPIKey(sellerAPI))
	if err != nil {
		return nil, err
	}
	authKey, err := evm.ParsePrivateKey(sellerKey)
	if err != nil {
		return nil, err
	}
	operator, err := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	if err != nil {
		return nil, err
	}
	if p.offer, err = evm.AuthCaptureUSDC("eip155:84532", sellerPayTo, price, operator, authKey.Address()); err != nil {
		return nil, err
	}
	chain := &x402.FacilitatorClient{URL: p.chain.URL}
	authorizer := evm.ReceiverAuthorizer{Key: authKey}
	ledger := &x402.MemoryEscrowLedger{}
	// The seller's dispute policy: a delivery the seller itself reports
	// wrong (after the marketplace's arbitration) is refunded whole.
	p.disputes = trustpay.Disputes{Service: svc, Escrow: &escrow.Disputes{Ledger: ledger, Facilitator: chain, Authorizer: authorizer, Policy: escrow.RefundWhole}}
	cfg := x402.MiddlewareConfig{
		Facilitator: chain,
		Escrow:      &x402.EscrowConfig{Authorizer: authorizer, Ledger: ledger},
		Routes: map[string]x402.Price{"POST /summarize": {
			Accepts:     []x402.PaymentRequirements{p.offer},
			Description: "a summary that keeps every figure",
			MimeType:    "application/json",
			Gate: trustpay.Gate(trustpay.Route{Caller: validator, Policy: trust.PolicySafe, Type: "summarization", Spec: trust.JSON(spec),
				// The receipt records which judges agreed, so that an outcome
				// report on it reaches them.
				Receipt: receipt.Request{Include: receipt.Include{ConsensusSnapshot: true, RouterTraceRefs: true}}}),
		}},
	}
	// Before it serves, the seller finishes the payments it held and did
	// not finish before it last stopped (none here: its ledger is in
	// memory; with x402/boltstore or pgstore, those of a crash).
	recovery, err := escrow.NewRecovery(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := recovery.Finish(ctx); err != nil {
		return nil, err
	}
	paywall, err := x402.Middleware(cfg)
	if err != nil {
		return nil, err
	}
	p.seller = httptest.NewServer(p.remember(paywall(http.HandlerFunc(summarize))))
	return p, nil
}

// remember wraps the seller's paid route to remember which payment each
// validation it had made (its receipt, under the seller's key) was
// paid by, so that an outcome report on the validation can refund it.
func (p *parties) remember(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		sr, err := x402.DecodeSettleResponse(w.Header().Get(x402.HeaderPaymentResponse))
		if err != nil {
			return
		}
		if e, ok := x402.EscrowFromSettlement(sr); ok {
			p.disputes.Escrow.Paid(sellerCaller, e.ID, w.Header().Get(trustpay.HeaderReceipt))
		}
	})
}

// summaries are the seller's answers, by source text: one good, one that
// drops figures. An order names its source text in "source".
var summaries = map[string]string{
	"Revenue rose 12% to $4.1 billion in 2025; operating margin was 18%.": "Revenue grew 12% to $4.1 billion in 2025, with an 18% operating margin.",
	"Refunds within 30 days, at most 2 a year, for orders above $50.":     "Refunds are possible within a month.",
	"Shipping takes 3 to 5 days; orders above $50 ship free.":             "Shipping takes 3 to 5 days; orders ship free, $50 or not.",
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
// digit) of the source text; arbitrating a dispute, it also checks the
// qualifiers ("above", "below", "within", "at most") the validation did
// not. Without a text delivery or a source text, it passes nothing: it
// asks for them (NEEDS_SPEC).
func judge() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		var delivery string
		if job.Claim == nil || json.Unmarshal(job.Claim.Output, &delivery) != nil {
			return &router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.9, Reasons: []string{"no text delivery to judge"}}, nil
		}
		text, ok := sourceOf(job)
		if !ok {
			return &router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.9, Reasons: []string{"no source text to judge against"}}, nil
		}
		for _, f := range strings.Fields(text) {
			f = strings.Trim(f, ".,;:")
			if strings.ContainsAny(f, "0123456789") && !strings.Contains(delivery, f) {
				return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.95, Reasons: []string{"drops the figure " + f}}, nil
			}
		}
		if job.DisputeContext != nil {
			for _, q := range []string{"above", "below", "within", "at most"} {
				if strings.Contains(text, q) && !strings.Contains(delivery, q) {
					return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.95, Reasons: []string{"drops the qualifier " + q}}, nil
				}
			}
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.95, Reasons: []string{"keeps every figure"}}, nil
	})
}

// sourceOf is the source text of a job: the order's "source" member, or
// the input text itself; false when the input holds neither.
func sourceOf(job *router.Job) (string, bool) {
	if s, ok := job.TaskInput.String(); ok {
		return s, true
	}
	var order struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal(job.TaskInput.Raw(), &order); err != nil || order.Source == "" {
		return "", false
	}
	return order.Source, true
}

// describe names a server for the output.
func describe(name, url, what string) string {
	return fmt.Sprintf("%-12s %s  %s", name, url, what)
}
