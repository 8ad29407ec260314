package trustmcp_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Serve an in-process trust service as MCP tools and call validate_claim
// from an MCP client: one true claim and one bad argument.
func ExampleNewServer() {
	engine, err := router.NewEngine([]router.Session{
		{ID: 1, Pool: "a", Worker: routertest.Arithmetic()},
		{ID: 2, Pool: "b", Worker: routertest.Arithmetic()},
		{ID: 3, Pool: "c", Worker: routertest.Arithmetic()},
	})
	if err != nil {
		panic(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		panic(err)
	}
	server, err := trustmcp.NewServer(trustmcp.Config{Caller: svc, Router: engine})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim",
		Arguments: map[string]any{"input": "What is 17 * 3?", "claimed_result": "17 * 3 = 51", "policy": "safe"}})
	if err != nil {
		panic(err)
	}
	summary := res.Content[0].(*mcp.TextContent).Text
	fmt.Println(res.IsError, strings.Split(summary, ",")[0])

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delegate_task", Arguments: map[string]any{"policy": "safe"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// false VALID
	// true trustmcp: argument objective: objective or input is required: what the task is to achieve, or its input
}

// Make validate_claim cost $0.005 in USDC, paid as the x402 MCP transport
// defines it: the terms come back as a tool error, the payment goes in
// _meta["x402/payment"], and the settlement comes back in the result's
// _meta["x402/payment-response"]. The offline facilitator of x402/evm
// checks signatures and moves nothing.
func ExamplePaywall() {
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: routertest.Arithmetic()}})
	if err != nil {
		panic(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		panic(err)
	}
	server, err := trustmcp.NewServer(trustmcp.Config{Caller: svc})
	if err != nil {
		panic(err)
	}
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		panic(err)
	}
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{
		Facilitator: &evm.Facilitator{},
		Prices:      map[string]x402.Price{trustmcp.ToolValidateClaim: {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		panic(err)
	}
	server.AddReceivingMiddleware(pay)

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	args := map[string]any{"claimed_result": "17 * 3 = 51", "policy": "fast"}

	// Unpaid: the terms.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: args})
	if err != nil {
		panic(err)
	}
	terms, err := trustmcp.PaymentTerms(res)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.IsError, terms.Resource.URL, terms.Accepts[0].Network, terms.Accepts[0].Amount)

	// Paid: the answer and the settlement.
	payer, err := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		panic(err)
	}
	proof, err := payer.Pay(ctx, terms.Accepts[0])
	if err != nil {
		panic(err)
	}
	payment := x402.PaymentPayload{X402Version: x402.Version2, Resource: terms.Resource, Accepted: terms.Accepts[0], Payload: proof.Payload}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: args, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	if err != nil {
		panic(err)
	}
	settled := res.Meta[trustmcp.MetaPaymentResponse].(map[string]any)
	fmt.Println(res.IsError, strings.Split(res.Content[0].(*mcp.TextContent).Text, ",")[0], settled["success"])

	// The same call with the same payment, as after losing the answer:
	// the kept answer and the first settlement, nothing run or settled
	// again. With other arguments, the payment is already used.
	again, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: args, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	if err != nil {
		panic(err)
	}
	fmt.Println(again.Content[0].(*mcp.TextContent).Text == res.Content[0].(*mcp.TextContent).Text,
		again.Meta[trustmcp.MetaPaymentResponse].(map[string]any)["transaction"] == settled["transaction"])
	other, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: map[string]any{"claimed_result": "17 * 3 = 52"},
		Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	if err != nil {
		panic(err)
	}
	fmt.Println(other.IsError, strings.Contains(other.Content[0].(*mcp.TextContent).Text, "already used"))
	// Output:
	// true mcp://tool/validate_claim eip155:84532 5000
	// false VALID true
	// true true
	// true true
}
