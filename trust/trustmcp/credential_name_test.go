package trustmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
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
	users := map[string]*mcpauth.TokenInfo{"k-ip": {UserID: "ip:127.0.0.1"}, "k-payer": {UserID: "payer:0xabc"}, "k-ok": {UserID: "alice"}}
	url := bearerServer(t, s, users)
	for key, refused := range map[string]bool{"k-ip": true, "k-payer": true, "k-ok": false} {
		cs := bearerSession(t, url, key)
		res := callTool(t, cs, trustmcp.ToolValidateClaim, map[string]any{"input": "2+2", "claimed_result": "4"})
		_ = cs.Close()
		if res.IsError != refused || refused && !strings.Contains(text(res), "names this token's user as it names callers without a credential") {
			t.Errorf("token %s: isError %v %q, want refused %v", key, res.IsError, text(res), refused)
		}
	}
}

// A token the server verifies but whose TokenInfo names no user is not
// served as a caller without a credential, here the host's own
// (trust.DefaultCaller), whose private receipt it would read: its tool
// calls are tool errors, as are those of a token naming that caller.
func TestTools_tokenWithoutUser(t *testing.T) {
	f := newFixture(t)
	resp, err := f.svc.Call(t.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyFast,
		Task:    trust.Task{Input: router.NewStringInput("What is 17 * 3?"), ClaimedResult: json.RawMessage(`"17 * 3 = 51"`)},
		Receipt: receipt.Request{Mode: receipt.DeliveryDetached}})
	if err != nil {
		t.Fatal(err)
	}
	var ref receipt.Ref
	if err := json.Unmarshal(resp.Receipt, &ref); err != nil || ref.ReceiptID == "" {
		t.Fatalf("no receipt id in %s", resp.Receipt)
	}
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := bearerServer(t, s, map[string]*mcpauth.TokenInfo{"k-local": {UserID: trust.DefaultCaller}, "k-nouser": {}})
	for key, want := range map[string]string{
		"k-local":  "names this token's user as it names callers without a credential",
		"k-nouser": "the server's token names no user",
	} {
		cs := bearerSession(t, url, key)
		res := callTool(t, cs, trustmcp.ToolGetReceipt, map[string]any{"receipt_id": ref.ReceiptID})
		_ = cs.Close()
		if !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("token %s: get_receipt of the host's own receipt: isError %v %.120q, want a tool error saying %q", key, res.IsError, text(res), want)
		}
	}
}

// bearerServer serves s over stateless Streamable HTTP behind bearer
// tokens, each verified as users names it, and returns its URL.
func bearerServer(t *testing.T, s *mcp.Server, users map[string]*mcpauth.TokenInfo) string {
	t.Helper()
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if ti, ok := users[token]; ok {
			return ti, nil
		}
		return nil, mcpauth.ErrInvalidToken
	}
	srv := httptest.NewServer(mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})))
	t.Cleanup(srv.Close)
	return srv.URL
}

// bearerSession connects an MCP client to url with the bearer token key.
func bearerSession(t *testing.T, url, key string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
