package x402_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A paying client reports each payment as a span "x402.pay"; here the
// spans are kept in memory. The server is an x402 Middleware on the
// offline facilitator, which checks signatures and moves nothing.
func ExampleTransport_telemetry() {
	price, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		panic(err)
	}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"GET /report": {Accepts: []x402.PaymentRequirements{price}}},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(paywall(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "the report")
	})))
	defer srv.Close()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	payer, err := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318") // a made-up key
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &x402.Transport{Payer: payer, TracerProvider: tp}}
	resp, err := client.Get(srv.URL + "/report")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	for _, s := range spans.GetSpans() {
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.String()
		}
		fmt.Println(s.Name, attrs["vouch.payment.amount"], attrs["vouch.payment.network"], attrs["vouch.payment.result"])
	}
	// Output:
	// x402.pay 1000 eip155:84532 settled
}
