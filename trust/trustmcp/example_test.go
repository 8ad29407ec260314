package trustmcp_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// Serve an in-process trust service as MCP tools and call validate_claim
// from an MCP client: one true claim and one bad argument.
func ExampleNewServer() {
	engine, err := router.NewEngine([]router.Session{
		{ID: 1, Pool: "a", Worker: arithmetic()},
		{ID: 2, Pool: "b", Worker: arithmetic()},
		{ID: 3, Pool: "c", Worker: arithmetic()},
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
