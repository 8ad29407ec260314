package router_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// Routes lists every route once, with its variant and what admits a
// call: an API key, nothing (public or trial, which is rate limited), or
// a payment.
func ExampleRoutes() {
	for _, rt := range router.Routes() {
		auth := "bearer key"
		switch {
		case rt.Public:
			auth = "none"
		case rt.Variant == router.VariantTrial:
			auth = "none, rate limited"
		case rt.Variant == router.VariantX402:
			auth = "x402 payment"
		}
		alias := ""
		if rt.Alias {
			alias = " (alias)"
		}
		fmt.Printf("%-4s %-26s %-6s %s%s\n", rt.Method, rt.Path, rt.Variant, auth, alias)
	}
	// Output:
	// POST /api/v1/delegate           normal bearer key
	// POST /api/v1/trial/delegate     trial  none, rate limited
	// POST /api/v1/x402/delegate      x402   x402 payment
	// POST /api/v1/validate           normal bearer key
	// POST /api/v1/trial/validate     trial  none, rate limited
	// POST /api/v1/x402/validate      x402   x402 payment
	// POST /api/v1/factcheck          normal bearer key
	// POST /api/v1/fact-check         normal bearer key (alias)
	// POST /api/v1/trial/factcheck    trial  none, rate limited
	// POST /api/v1/trial/fact-check   trial  none, rate limited (alias)
	// POST /api/v1/x402/factcheck     x402   x402 payment
	// POST /api/v1/x402/fact-check    x402   x402 payment (alias)
	// POST /api/v2/delegate           normal bearer key
	// POST /api/v2/trial/delegate     trial  none, rate limited
	// POST /api/v2/x402/delegate      x402   x402 payment
	// POST /api/v2/validate           normal bearer key
	// POST /api/v2/trial/validate     trial  none, rate limited
	// POST /api/v2/x402/validate      x402   x402 payment
	// POST /api/v3/delegate           normal bearer key
	// POST /api/v3/validate           normal bearer key
	// POST /api/v3/factcheck          normal bearer key
	// GET  /api/v1/ping               normal none
	// GET  /api/v1/x402/ping          x402   x402 payment
	// GET  /api/v1/about              normal none
	// GET  /api/v1/status             normal bearer key
	// POST /api/v3/feedback           normal bearer key
}

// Factcheck v1 runs three replicas by default and answers with the
// majority verdict, its confidence and one run per replica. Session ids
// may be sent as strings, as the public router's documentation writes
// them.
func ExampleEngine_FactcheckV1() {
	T := routertest.Verdict(router.VerdictTrue)
	e, err := router.NewEngine(routertest.Sessions(201, 3, T, T, T))
	if err != nil {
		panic(err)
	}
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("demo-key"), router.WithSessionIDsAsStrings())
	if err != nil {
		panic(err)
	}

	resp, err := c.FactcheckV1(context.Background(), &router.FactcheckV1Request{
		Claim: "Water boils at 100 °C at sea level.", Mode: router.FactcheckStandard,
		SessionPool: []router.SessionID{201, 202, 203},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Verdict, resp.Consensus.Replicas, len(resp.Evidence.Runs))
	// Output: TRUE 3 3
}

// A client checks a server is up, reads what it serves, and, with the
// key, how its sessions are doing.
func ExampleClient_Status() {
	e, err := router.NewEngine(routertest.Sessions(1, 2, routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictValid)))
	if err != nil {
		panic(err)
	}
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})),
		router.WithServiceInfo("example router", "1.0.0"))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("demo-key"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	fmt.Println("ping:", c.Ping(ctx))
	about, err := c.About(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(about.Service, about.Version, about.Variants)
	st, err := c.Status(ctx)
	if err != nil {
		panic(err)
	}
	for _, s := range st.Sessions {
		fmt.Println("session", s.ID, s.Pool, s.Health)
	}
	fmt.Println("pings:", st.Calls["GET /api/v1/ping"])
	// Output:
	// ping: <nil>
	// example router 1.0.0 [normal trial]
	// session 1 pool-0 healthy
	// session 2 pool-1 healthy
	// pings: 1
}
