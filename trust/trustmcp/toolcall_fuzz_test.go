package trustmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// invalidCalls records the requests a tool passed on although they do not
// validate.
type invalidCalls struct {
	mu   sync.Mutex
	seen []string
}

func (c *invalidCalls) check(what string, err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, fmt.Sprintf("%s: %v", what, err))
}

// take returns the recorded requests and forgets them.
func (c *invalidCalls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.seen
	c.seen = nil
	return seen
}

// checkedService is the trust service, recording each call whose request
// does not validate.
type checkedService struct {
	*trust.Service
	bad *invalidCalls
}

func (s checkedService) Call(ctx context.Context, req *trust.Request) (*trust.Response, error) {
	s.bad.check("trust call", req.Validate())
	return s.Service.Call(ctx, req)
}

// checkedRouter is the router, recording each fact check whose request
// does not validate.
type checkedRouter struct {
	router.Service
	bad *invalidCalls
}

func (r checkedRouter) Factcheck(ctx context.Context, req *router.FactcheckRequest) (*router.FactcheckResponse, error) {
	r.bad.check("factcheck", req.Validate())
	return r.Service.Factcheck(ctx, req)
}

// FuzzToolCall calls every tool over an MCP session with any JSON as its
// arguments, as a client sends them: the arguments go through the
// server's own reading of them (the input schema, the rules of every
// door, whole numbers, the typed decoding). The server never panics and
// never answers a protocol error; a tool error says why in text; a
// result has structured content that is a JSON object; and a request
// reaches the trust service or the router only when it validates.
func FuzzToolCall(f *testing.F) {
	tools := []string{
		trustmcp.ToolValidateClaim, trustmcp.ToolDelegateTask, trustmcp.ToolArbitrate, trustmcp.ToolFactcheck,
		trustmcp.ToolGetReceipt, trustmcp.ToolVerifyReceipt, trustmcp.ToolReportOutcome,
	}
	for _, s := range []struct {
		tool int
		args string
	}{
		{0, `{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?","policy":"oracle","receipt":"inline"}`},
		{0, `{"claimed_result":12345678901234567891,"policy":"fast"}`},
		{0, `{"claimed_result":"x","tier":"safe"}`},
		{1, `{"objective":"17 * 3","policy":"fast"}`},
		{1, `{"input":"how many?","answer":"number","tolerance":{"absolute":0.5,"relative":0.01}}`},
		{1, `{"input":"x","answer":"number","tolerance":{"absolute":1e400}}`},
		{1, `{"input":{"kind":"array","items":[1,2]},"agreement":"judged"}`},
		{2, `{"claimed_result":{"answer":51},"dispute_context":"the buyer says 50","policy":"adaptive"}`},
		{3, `{"claim":"17 * 3 = 51","mode":"realtime","replicas":5.0}`},
		{3, `{"claim":"17 * 3 = 51","replicas":5e0}`},
		{4, `{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}`},
		{5, `{"receipt":"{\"receipt_id\":\"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa\"}","input":"x"}`},
		{6, `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","right":true}`},
		{6, `{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa","verdict":"INVALID"}`},
		{6, `{"trace_id":"","right":true}`},
		{0, `[]`},
		{1, `null`},
		{2, ``},
	} {
		f.Add(uint8(s.tool), []byte(s.args))
	}
	fx := newFixture(f)
	bad := &invalidCalls{}
	cfg := fx.cfg
	cfg.Caller = checkedService{Service: fx.svc, bad: bad}
	cfg.Router = checkedRouter{Service: fx.engine, bad: bad}
	s, err := trustmcp.NewServer(cfg)
	if err != nil {
		f.Fatal(err)
	}
	cs := connect(f, s)
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		name := tools[int(tool)%len(tools)]
		params := &mcp.CallToolParams{Name: name}
		if len(args) > 0 {
			if !json.Valid(args) {
				return // no client can send it
			}
			params.Arguments = json.RawMessage(args)
		}
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			t.Fatalf("%s %s: protocol error %v", name, args, err)
		}
		if seen := bad.take(); len(seen) > 0 {
			t.Fatalf("%s %s passed on invalid requests: %v", name, args, seen)
		}
		if res.IsError {
			if text(res) == "" {
				t.Fatalf("%s %s: a tool error without text", name, args)
			}
			return
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
			t.Fatalf("%s %s: structured content %s is not an object", name, args, b)
		}
	})
}
