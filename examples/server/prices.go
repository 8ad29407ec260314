package main

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// The prices of the x402 routes, in dollars paid in USDC: well below the
// 0.10 USDC that x402 clients pay by default.
const (
	validatePrice = "$0.001"
	delegatePrice = "$0.002"
	// trustPrice covers a fast, safe or oracle trust call, up to 5
	// replicas (oracle).
	trustPrice = "$0.005"
	// trustRunPrice is the price of one run of an adaptive trust call,
	// paid with the upto scheme: the terms authorize 5 runs (the most
	// adaptive launches, trustPrice in all), the settlement charges the
	// runs the call launched.
	trustRunPrice = "$0.001"
	// pingPrice makes GET /api/v1/x402/ping the cheapest paid route, for a
	// client to test its payment set-up.
	pingPrice = "$0.0001"
)

// pricedRoute is an x402 route and what it costs.
type pricedRoute struct {
	method, path string
	what         string // what is sold, for the offer's description
	price        string // in dollars
	offer        x402.PaymentRequirements
	discovery    *x402.Discovery // the route, as discovery services list it
}

// demoPrices prices every x402 route of the router and the trust call.
func demoPrices(payTo string) ([]pricedRoute, error) {
	var prs []pricedRoute
	add := func(method, path, what, price string, d *x402.Discovery, derr error) error {
		if derr != nil {
			return fmt.Errorf("describing %s: %w", path, derr)
		}
		offer, err := evm.USDC(network, payTo, price)
		if err != nil {
			return fmt.Errorf("pricing %s: %w", path, err)
		}
		prs = append(prs, pricedRoute{method: method, path: path, what: what, price: price, offer: offer, discovery: d})
		return nil
	}
	for _, rt := range router.Routes() {
		if rt.Variant != router.VariantX402 {
			continue
		}
		price := validatePrice
		switch rt.Op {
		case router.OpDelegateV1, router.OpDelegateV2:
			price = delegatePrice
		case router.OpPing:
			price = pingPrice
		}
		d, err := discoveryOf(rt.Op)
		if err := add(rt.Method, rt.Path, string(rt.Op), price, d, err); err != nil {
			return nil, err
		}
	}
	d, err := trustShape.discovery()
	if err := add(http.MethodPost, trust.X402CallPath, "trust call", trustPrice, d, err); err != nil {
		return nil, err
	}
	return prs, nil
}

// priceTable returns the prices by route pattern, as the x402 middleware
// and the router's /api/v1/about take them.
func priceTable(prices []pricedRoute) map[string]x402.Price {
	routes := make(map[string]x402.Price, len(prices))
	for _, p := range prices {
		routes[p.method+" "+p.path] = x402.Price{
			Accepts:     []x402.PaymentRequirements{p.offer},
			Description: "vouch demo server: " + p.what,
			MimeType:    "application/json",
			Discovery:   p.discovery,
		}
	}
	return routes
}

// facilitatorPath is where -facilitator serves the offline facilitator.
const facilitatorPath = "/x402/facilitator/"

// facilitatorHandler serves an offline facilitator at facilitatorPath,
// logging its errors to log.
func facilitatorHandler(m *metrics, log *slog.Logger) http.Handler {
	h := x402.NewFacilitatorHandler(m.countSettlements(&evm.Facilitator{}), x402.WithFacilitatorLogger(log))
	return http.StripPrefix(strings.TrimSuffix(facilitatorPath, "/"), h)
}

// trustPrices returns the prices of the trust call: fixed, the price of
// routes for fast, safe and oracle, and perRun, adaptive at trustRunPrice
// a run ("upto"); each also held in the offline escrow (auth-capture).
func trustPrices(routes map[string]x402.Price, payTo string, esc *demoEscrow) (fixed, perRun x402.Price, err error) {
	run, err := evm.UptoUSDC(network, payTo, trustRunPrice, evm.OfflineFacilitatorAddress)
	if err != nil {
		return fixed, perRun, fmt.Errorf("pricing adaptive runs: %w", err)
	}
	heldRun, err := esc.offer(payTo, trustRunPrice, evm.TransferEIP3009)
	if err != nil {
		return fixed, perRun, fmt.Errorf("pricing adaptive runs in escrow: %w", err)
	}
	fixed = routes[http.MethodPost+" "+trust.X402CallPath]
	fixed.Accepts = slices.Clip(fixed.Accepts)
	// A payer may name its payment: a retry with the same id gets the
	// first response, on any server sharing the database.
	fixed.PaymentIdentifier = &x402.PaymentIdentifier{}
	for _, method := range []string{evm.TransferEIP3009, evm.TransferPermit2} {
		held, err := esc.offer(payTo, trustPrice, method)
		if err != nil {
			return fixed, perRun, fmt.Errorf("pricing the trust call in escrow: %w", err)
		}
		fixed.Accepts = append(fixed.Accepts, held)
	}
	perRun = fixed
	perRun.Accepts = []x402.PaymentRequirements{run, heldRun}
	perRun.Description = "vouch demo server: adaptive trust call, per run"
	return fixed, perRun, nil
}

// aboutPrices returns routes with the trust call priced by every offer
// its route accepts (trustPrices), for the router's /api/v1/about: the
// router's x402 middleware takes routes, without the escrow's offers.
func aboutPrices(routes map[string]x402.Price, payTo string, esc *demoEscrow) (map[string]x402.Price, error) {
	fixed, perRun, err := trustPrices(routes, payTo, esc)
	if err != nil {
		return nil, err
	}
	about := maps.Clone(routes)
	fixed.Accepts = slices.Concat(fixed.Accepts, perRun.Accepts)
	// Each 402 answer sets an escrow offer's deadlines from its own
	// moment; the list leaves them out rather than show zeros.
	for i, o := range fixed.Accepts {
		if o.Scheme == x402.SchemeAuthCapture {
			o.Extra = maps.Clone(o.Extra)
			delete(o.Extra, "captureDeadline")
			delete(o.Extra, "refundDeadline")
			fixed.Accepts[i] = o
		}
	}
	about[http.MethodPost+" "+trust.X402CallPath] = fixed
	return about, nil
}

// trustPaywall returns the x402 middleware of the trust call, priced by
// trustPrices, with the runs of an adaptive call reported as the
// settlement's usage (trustpay.ChargeRuns), paid through the offline
// facilitator; a payment held in the offline escrow is captured when the
// verdict is definitive (VALID or INVALID) and voided otherwise, its
// lifecycle kept in ledger and the answers its captures buy in outcomes;
// a payment named by a payment id is served once per id, the first
// response kept in ids. It returns the recovery that finishes the
// payments held and not finished.
func trustPaywall(routes map[string]x402.Price, payTo string, esc *demoEscrow, ledger x402.EscrowLedger, replay x402.ReplayStore, outcomes x402.OutcomeStore, ids x402.PaymentIDStore, m *metrics, obs *observability, log *slog.Logger) (func(http.Handler) http.Handler, *escrow.Recovery, error) {
	fixed, perRun, err := trustPrices(routes, payTo, esc)
	if err != nil {
		return nil, nil, err
	}
	price, err := trustpay.Prices{Fixed: fixed, PerRun: perRun}.PriceFunc(trust.X402CallPath)
	if err != nil {
		return nil, nil, err
	}
	cfg := x402.MiddlewareConfig{
		Facilitator:    m.countSettlements(esc.facilitator(&evm.Facilitator{})),
		Escrow:         esc.config(ledger),
		PriceFunc:      price,
		Replay:         replay,
		Outcomes:       outcomes,
		PaymentIDs:     ids,
		Logger:         log,
		TracerProvider: obs.tracerProvider(),
		MeterProvider:  obs.meterProvider(),
	}
	mw, err := x402.Middleware(cfg)
	if err != nil {
		return nil, nil, err
	}
	recovery, err := escrow.NewRecovery(cfg)
	if err != nil {
		return nil, nil, err
	}
	return func(next http.Handler) http.Handler { return mw(trustpay.ChargeRuns(next, log)) }, recovery, nil
}

// paywall returns the x402 middleware of the priced routes, paid through
// the offline facilitator (which checks signatures and moves nothing),
// with the used payments kept in replay.
func paywall(routes map[string]x402.Price, replay x402.ReplayStore, m *metrics, obs *observability, log *slog.Logger) (func(http.Handler) http.Handler, error) {
	return x402.Middleware(x402.MiddlewareConfig{
		Facilitator:    m.countSettlements(&evm.Facilitator{}),
		Routes:         routes,
		Replay:         replay,
		Logger:         log,
		TracerProvider: obs.tracerProvider(),
		MeterProvider:  obs.meterProvider(),
	})
}
