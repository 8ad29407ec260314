package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Defaults of the flags.
const (
	defaultAddr   = "127.0.0.1:8080"
	defaultAPIKey = "demo-key"
	// defaultPayTo is the burn address: demo payments name a recipient
	// that nobody owns.
	defaultPayTo = "0x000000000000000000000000000000000000dEaD"
	// network is where the x402 routes ask to be paid. The offline
	// facilitator accepts test networks only.
	network = "base-sepolia"
)

// config is what the flags set.
//
// Later flags hook in here and in newServer: -workers FILE (sessions run by
// chat-completions workers instead of the demo ones), -database-url (durable
// idempotency, replay and receipt stores), -signing-key and -receipts FILE
// (signed receipts of the trust service).
type config struct {
	addr   string
	apiKey string
	payTo  string
}

// parseFlags reads the command line. -h prints the usage to out and
// returns flag.ErrHelp.
func parseFlags(args []string, out io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.addr, "addr", defaultAddr, "`HOST:PORT` to listen on (port 0 picks a free one)")
	fs.StringVar(&cfg.apiKey, "api-key", defaultAPIKey, "`KEY` that normal routes take as Authorization: Bearer KEY")
	fs.StringVar(&cfg.payTo, "pay-to", defaultPayTo, "EVM `ADDRESS` that receives the x402 payments")
	fs.Usage = func() {
		fmt.Fprint(out, `usage: go run ./examples/server [flags]

Serves the vouch router endpoints (v1, v2, v3; normal, trial and x402
variants) from an in-process engine with six deterministic demo workers.
See examples/server/README.md for the sessions, the workers' rules and the
routes. Stop it with Ctrl-C.

flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.apiKey == "" {
		return config{}, fmt.Errorf("-api-key must not be empty")
	}
	if _, err := evm.ParseAddress(cfg.payTo); err != nil {
		return config{}, fmt.Errorf("-pay-to: %w", err)
	}
	return cfg, nil
}

// demoSessions returns sessions 1 to 6, serving every tier, in two worker
// pools: a (1, 3, 5) and b (2, 4, 6). Session 2 answers after a delay and
// session 5 is wrong about one call in three; the others are honest.
func demoSessions() []router.Session {
	ss := make([]router.Session, 6)
	for i := range ss {
		id := router.SessionID(i + 1)
		pool := "a"
		if id%2 == 0 {
			pool = "b"
		}
		w := honest()
		switch id {
		case 2:
			w = slow(w, 1500*time.Millisecond)
		case 5:
			w = sometimesWrong(w, 1.0/3, 5)
		}
		ss[i] = router.Session{ID: id, Worker: w, Pool: pool}
	}
	return ss
}

// pricedRoute is an x402 route and what it costs.
type pricedRoute struct {
	route router.Route
	price string // in dollars, paid in USDC
	offer x402.PaymentRequirements
}

// demoPrices prices every x402 route: validations $0.001, delegations
// $0.002, well below the 0.10 USDC that x402 clients pay by default.
func demoPrices(payTo string) ([]pricedRoute, error) {
	var prs []pricedRoute
	for _, rt := range router.Routes() {
		if rt.Variant != router.VariantX402 {
			continue
		}
		price := "$0.001"
		if rt.Op == router.OpDelegateV1 || rt.Op == router.OpDelegateV2 {
			price = "$0.002"
		}
		offer, err := evm.USDC(network, payTo, price)
		if err != nil {
			return nil, fmt.Errorf("pricing %s: %w", rt.Path, err)
		}
		prs = append(prs, pricedRoute{route: rt, price: price, offer: offer})
	}
	return prs, nil
}

// server is the demo server before it listens.
type server struct {
	handler http.Handler
	prices  []pricedRoute
}

// newServer builds the engine, the router Handler and the x402 middleware.
func newServer(cfg config, log *slog.Logger) (*server, error) {
	engine, err := router.NewEngine(demoSessions(), router.WithEngineLogger(log))
	if err != nil {
		return nil, err
	}
	prices, err := demoPrices(cfg.payTo)
	if err != nil {
		return nil, err
	}
	routes := make(map[string]x402.Price, len(prices))
	for _, p := range prices {
		routes[p.route.Method+" "+p.route.Path] = x402.Price{
			Accepts:     []x402.PaymentRequirements{p.offer},
			Description: "vouch demo router: " + string(p.route.Op),
			MimeType:    "application/json",
		}
	}
	paid, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{}, // offline: checks signatures, moves nothing
		Routes:      routes,
		Logger:      log,
	})
	if err != nil {
		return nil, err
	}
	h, err := router.NewHandler(engine,
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{cfg.apiKey: "demo"})),
		router.WithX402(paid),
		router.WithIdempotency(nil, 0),
		router.WithHandlerLogger(log),
	)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	// Later: the trust service's call and /api/v4/receipt,
	// /api/v4/verify_receipt mount here, in front of the same engine.
	return &server{handler: mux, prices: prices}, nil
}

// printBanner tells a newcomer where the server is and what to paste.
func printBanner(w io.Writer, base string, cfg config, s *server) {
	var b strings.Builder
	fmt.Fprintf(&b, "vouch demo router listening on %s\n", base)
	fmt.Fprintf(&b, "  API key: %s (send Authorization: Bearer %s)\n", cfg.apiKey, cfg.apiKey)
	fmt.Fprintf(&b, "  sessions 1-6 in pools a (1,3,5) and b (2,4,6); session 2 is slow, session 5 wrong one call in three\n\n")
	fmt.Fprintf(&b, "try:\n  curl -s %s/api/v3/validate -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n", base, cfg.apiKey)
	fmt.Fprintf(&b, "    -d '{\"claim\":{\"type\":\"tool_output\",\"output\":\"17 * 3 = 51\"},\"consensus\":{\"replicas\":3}}'\n\n")
	if len(s.prices) > 0 {
		o := s.prices[0].offer
		fmt.Fprintf(&b, "x402 (offline facilitator: signatures are checked, nothing moves on chain):\n")
		fmt.Fprintf(&b, "  network %s (%s), asset %s (%s), payTo %s\n", o.Network, network, o.Asset,
			o.ExtraString("name"), o.PayTo)
		for _, p := range s.prices {
			fmt.Fprintf(&b, "  %-4s %-24s %s (%s atomic units)\n", p.route.Method, p.route.Path, p.price, p.offer.Amount)
		}
		fmt.Fprintf(&b, "  pay for one: go run ./examples/paid-call -url %s/api/v2/x402/validate\n", base)
	}
	fmt.Fprint(w, b.String())
}
