package trustmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// A token whose UserID is spelt as the doors name a caller without a
// credential ("ip:<address>", "payer:<address>") would share that
// caller's calls, receipts and reports: its tool calls are tool errors;
// another user's are answered.
func TestTools_userNamedAsAnonymousCaller(t *testing.T) {
	e, _ := reputationEngine(t)
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(trustmcp.Config{Caller: svc})
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]string{"k-ip": "ip:127.0.0.1", "k-payer": "payer:0xabc", "k-ok": "alice"}
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if u, ok := users[token]; ok {
			return &mcpauth.TokenInfo{UserID: u}, nil
		}
		return nil, mcpauth.ErrInvalidToken
	}
	srv := httptest.NewServer(mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})))
	defer srv.Close()
	for key, refused := range map[string]bool{"k-ip": true, "k-payer": true, "k-ok": false} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := callTool(t, cs, trustmcp.ToolValidateClaim, map[string]any{"input": "2+2", "claimed_result": "4"})
		_ = cs.Close()
		if res.IsError != refused || refused && !strings.Contains(text(res), "names this token's user as it names callers without a credential") {
			t.Errorf("token %s: isError %v %q, want refused %v", key, res.IsError, text(res), refused)
		}
	}
}
