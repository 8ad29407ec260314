package trustmcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// Delegate a task whose answer is a number: three sessions answer 18,
// "18" and 18.4, which agree within the tolerance around their median;
// a misspelt tolerance member is an argument error.
func ExampleDelegateTaskArgs_numeric() {
	engine, err := router.NewEngine([]router.Session{
		{ID: 1, Worker: routertest.Answer(18)},
		{ID: 2, Worker: routertest.Answer("18")},
		{ID: 3, Worker: routertest.Answer(18.4)},
	})
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

	for _, tolerance := range []map[string]any{{"absolute": 0.5}, {"abs": 0.5}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delegate_task", Arguments: map[string]any{
			"input": "How many seats are in row 3?", "policy": "safe", "answer": "number", "tolerance": tolerance}})
		if err != nil {
			panic(err)
		}
		if res.IsError {
			fmt.Println(res.Content[0].(*mcp.TextContent).Text)
			continue
		}
		var resp trust.Response
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &resp); err != nil {
			panic(err)
		}
		fmt.Println(resp.Status, string(resp.Result), resp.Evidence.Agreement)
	}
	// Output:
	// VALID 18 1
	// validating "arguments": validating root: validating /properties/tolerance: validating /properties/tolerance/propertyNames: enum: abs does not equal any of: [absolute relative]
}
