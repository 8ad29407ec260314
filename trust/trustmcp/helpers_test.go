package trustmcp_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// fixture is an in-process trust service with signed receipts.
type fixture struct {
	engine   *router.Engine
	svc      *trust.Service
	store    *receipt.MemStore
	verifier *receipt.Verifier
	cfg      trustmcp.Config
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	var ss []router.Session
	for i := 1; i <= 5; i++ {
		ss = append(ss, router.Session{ID: router.SessionID(i), Pool: fmt.Sprint("pool", i), Worker: routertest.Arithmetic()})
	}
	engine, err := router.NewEngine(ss)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: store}), trust.WithSignedReceipts())
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{engine: engine, svc: svc, store: store, verifier: verifier, cfg: trustmcp.Config{
		Caller: svc, Router: engine, Receipts: &trustmcp.StoreReceipts{Store: store, Verifier: verifier},
	}}
}

// connect serves s over in-memory transports and returns a client
// session on it, closed when the test ends.
func connect(t testing.TB, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// callTool calls name with args and fails the test on a protocol error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// decode decodes the structured content of res into v, failing the test
// on a tool error.
func decode(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// text is the first text content of res.
func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// statelessHTTP serves s over stateless Streamable HTTP that answers in
// JSON, until the test ends.
func statelessHTTP(t *testing.T, s *mcp.Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(srv.Close)
	return srv
}

// rawToolCall posts a tools/call of tool with args, JSON as written, to
// the MCP endpoint at url, decodes the answer into v and returns it as
// sent; a status other than 200 fails the test.
func rawToolCall(t *testing.T, url, tool, args string, v any) []byte {
	t.Helper()
	return post(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`, v)
}

// newServer returns the MCP server of a new fixture (see newFixture).
func newServer(t testing.TB) *mcp.Server {
	t.Helper()
	s, err := trustmcp.NewServer(newFixture(t).cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
