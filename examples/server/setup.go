package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// server is the demo server before it listens.
type server struct {
	handler  http.Handler   // the API: router and trust endpoints
	metrics  *metrics       // served on -debug-addr
	obs      *observability // OpenTelemetry providers; /metrics on -debug-addr
	state    *state
	key      *signingKey
	log      *receipt.Log // the receipts' transparency log
	prices   []pricedRoute
	sessions string // describes the engine's sessions, for the banner

	mcp *mcp.Server // the trust tools, served at /mcp and by -mcp-stdio
	// a2a serves the trust skills over A2A; serve closes it once the
	// servers have stopped, ending the calls it runs after answering.
	a2a *trusta2a.Handler

	// grace is how long the calls in flight may take to finish once the
	// server is told to stop: shutdownGrace.
	grace time.Duration

	// finishEscrows finishes the escrowed payments left held, every
	// escrowFinishEvery, until ctx ends.
	finishEscrows func(ctx context.Context)
}

// newServer builds the engine and, in front of it, the router Handler and
// the trust Handler on one mux: /api/v4/ goes to the trust service, the
// rest to the router. Both take the same API keys and share the state;
// close the server's state when done.
func newServer(ctx context.Context, cfg config, log *slog.Logger) (_ *server, err error) {
	s := &server{metrics: newMetrics(cfg.debugCallIDs), grace: shutdownGrace}
	ss, desc, err := sessions(cfg)
	if err != nil {
		return nil, err
	}
	s.sessions = desc
	if s.obs, err = newObservability(ctx, os.Getenv); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.obs.close()
		}
	}()
	tp, mp := s.obs.tracerProvider(), s.obs.meterProvider()
	if s.key, err = setUpSigningKey(cfg); err != nil {
		return nil, err
	}
	if s.prices, err = demoPrices(cfg.payTo); err != nil {
		return nil, err
	}
	if s.state, err = openState(ctx, cfg, log); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.state.close()
		}
	}()
	engineOpts := []router.EngineOption{router.WithEngineLogger(log), router.WithEngineTelemetry(tp, mp)}
	if s.state.reputation != nil { // in the database, shared by every server on it, or in a file
		book, err := reputation.New(s.state.reputation, reputation.Options{})
		if err != nil {
			return nil, err
		}
		if err := identifySessions(ctx, book, ss, log); err != nil {
			return nil, err
		}
		engineOpts = append(engineOpts, router.WithReputation(book))
	}
	engine, err := router.NewEngine(s.metrics.countExecutions(ss), engineOpts...)
	if err != nil {
		return nil, err
	}
	priced := priceTable(s.prices)
	paid, err := paywall(priced, s.state.replay, s.metrics, s.obs, log)
	if err != nil {
		return nil, err
	}
	esc, err := newDemoEscrow(ctx, s.key.signer, cfg.chain)
	if err != nil {
		return nil, err
	}
	paidTrust, recovery, err := trustPaywall(priced, cfg.payTo, esc, s.state.escrow, s.state.replay, s.state.outcomes, s.state.paymentIDs, s.metrics, s.obs, log)
	if err != nil {
		return nil, err
	}
	about, err := aboutPrices(priced, cfg.payTo, esc)
	if err != nil {
		return nil, err
	}
	// Before serving, finish what an earlier run held and did not.
	finishEscrows(ctx, recovery, log)
	s.finishEscrows = func(ctx context.Context) {
		every(ctx, escrowFinishEvery, func() { finishEscrows(ctx, recovery, log) })
	}

	svc, err := trust.New(engine,
		trust.WithReceipts(&receipt.Issuer{Signer: s.key.signer, Store: s.state.receipts}),
		trust.WithTelemetry(tp, mp),
		trust.WithSignedReceipts(),
		trust.WithLogger(log),
	)
	if err != nil {
		return nil, err
	}
	verifier, err := receipt.NewVerifier(s.key.trusted)
	if err != nil {
		return nil, err
	}

	auth := router.KeyAuthenticator(cfg.integrations)
	limit := router.TrialLimit{Rate: cfg.trialRate, Burst: cfg.trialBurst}
	routerOpts := []router.HandlerOption{
		router.WithAuthenticator(auth),
		router.WithX402(paid),
		router.WithX402Prices(about),
		router.WithServiceInfo("vouch demo server", ""),
		router.WithIdempotency(s.state.idempotency, 0),
		router.WithHandlerLogger(log),
		router.WithHandlerTelemetry(tp, mp),
	}
	if s.log, err = receiptLog(cfg, s.state.receipts, s.key); err != nil {
		return nil, err
	}
	trustOpts := []trust.HandlerOption{
		trust.WithAuthenticator(auth),
		trust.WithX402(paidTrust),
		trust.WithIdempotency(s.state.idempotency, 0),
		trust.WithReceiptEndpoints(s.state.receipts, verifier),
		trust.WithReceiptLog(s.log),
		trust.WithHandlerLogger(log),
		trust.WithHandlerTelemetry(tp, mp),
	}
	if len(cfg.trustedProxies) > 0 {
		routerOpts = append(routerOpts, router.WithTrustedProxies(cfg.trustedProxies...))
		trustOpts = append(trustOpts, trust.WithTrustedProxies(cfg.trustedProxies...))
	}
	if s.state.limiter != nil {
		routerOpts = append(routerOpts, router.WithRateLimiter(s.state.limiter))
		trustOpts = append(trustOpts, trust.WithRateLimiter(s.state.limiter))
	} else {
		routerOpts = append(routerOpts, router.WithTrialLimit(limit))
		trustOpts = append(trustOpts, trust.WithTrialLimit(limit))
	}
	th, err := trust.NewHandler(svc, trustOpts...)
	if err != nil {
		return nil, err
	}
	rh, err := router.NewHandler(engine, append(routerOpts, router.WithStatusCalls(th.Calls))...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", rh)
	mux.Handle("/api/v4/", th)
	(&health{sessions: engine, ping: s.state.ping, log: log}).register(mux) // /healthz, /readyz
	// The routes served only as the flags say, counted by name.
	var optional []string
	if cfg.facilitator {
		mux.Handle(facilitatorPath, facilitatorHandler(s.metrics, log))
		optional = append(optional, "POST "+facilitatorPath+"verify", "POST "+facilitatorPath+"settle", "GET "+facilitatorPath+"supported")
	}
	handleGet(mux, escrowBalancePath, esc.balanceHandler()) // demo only: the offline escrow's ledger
	if s.mcp, s.a2a, err = mountAgents(mux, cfg, agentDeps{engine, svc, s.state.receipts, verifier, auth, s.state.replay, s.state.answers, s.prices, s.metrics, log, s.obs, esc, s.state.escrow}); err != nil {
		return nil, err
	}
	s.handler = s.metrics.countRequests(httpapi.RefuseUncleanPaths(mux), optional...) // a 404 naming the path, not the mux's redirect
	return s, nil
}
