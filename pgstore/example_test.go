package pgstore_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
)

// A server that shares its state with the other servers on one database:
// idempotency keys for the router Handler, receipts for the Issuer, and
// payment replay protection and the outcomes it keeps for the x402
// Middleware. Every server runs the same code; a sweep in each removes
// expired rows.
//
// The example needs a database, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), pgstore.WithQueryTimeout(2*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	go db.Sweep(ctx, time.Minute, nil, func(err error) { log.Print(err) })

	var svc router.Service // the host's engine
	h, err := router.NewHandler(svc, router.WithIdempotency(db.Idempotency(), 24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	issuer := &receipt.Issuer{Store: db.Receipts()}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{Replay: db.Replay(), Outcomes: db.Outcomes() /* prices, facilitator ... */})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = issuer, paywall
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", h))
}

// An MCP server whose paid tools are shared with the other servers on one
// database: a payment is accepted once by all of them, and a retry of a
// paid call whose result was lost gets that result from whichever server
// it reaches.
//
// The example needs a database, so it is compiled but not run.
func ExampleDB_Answers() {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{
		Replay:  db.Replay(),
		Answers: db.Answers(),
		// Facilitator, Prices ...
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "v1"}, nil) // or trustmcp.NewServer
	// ... the tools ...
	srv.AddReceivingMiddleware(pay)
}
