package trustmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestPaywall_keptResultIsTheCallersOwn: over Streamable HTTP behind
// bearer keys, alice pays for a call; bob, sending alice's payment with
// the same tool and arguments, is refused as a used payment and does not
// get the result alice bought, while alice's own retry still does.
func TestPaywall_keptResultIsTheCallersOwn(t *testing.T) {
	r := newReplayRig(t, trustmcp.PaywallConfig{})
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if token != "alice" && token != "bob" {
			return nil, mcpauth.ErrInvalidToken
		}
		return &mcpauth.TokenInfo{UserID: "key:" + token}, nil
	}
	h := mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return r.srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	session := func(key string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	alice, bob := session("alice"), session("bob")
	ctx := context.Background()
	p := r.payment(t)

	first, err := paidCall(ctx, t, alice, "square", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	want := answer(t, first)

	res, err := paidCall(ctx, t, bob, "square", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Errorf("bob, with alice's payment, got her result %s; want the payment refused as used", text(res))
	} else if pr := paidTerms(t, res); !strings.Contains(pr.Error, "already used") {
		t.Errorf("bob, with alice's payment: %q, want already used", pr.Error)
	}

	again, err := paidCall(ctx, t, alice, "square", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, answer(t, again)); diff != "" {
		t.Errorf("alice's retry: result differs from the first (-first +retry):\n%s", diff)
	}
	if n, s := r.runs.Load(), r.fac.settled.Load(); n != 1 || s != 1 {
		t.Errorf("%d runs and %d settlements, want 1 and 1", n, s)
	}
}
