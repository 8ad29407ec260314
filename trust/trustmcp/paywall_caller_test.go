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
	session := bearerSessions(t, r.srv)
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

// TestPaywall_keptRefusalIsTheCallersOwn: over Streamable HTTP behind
// bearer keys, alice's paid call is refused by its tool's gate, and the
// refusal, with the verdict of her result, is kept for her retry; bob,
// sending alice's payment, is refused as a used payment and does not get
// the verdict of her result, while alice's own retry still does.
func TestPaywall_keptRefusalIsTheCallersOwn(t *testing.T) {
	// "cube" is judged as a square: its results are wrong.
	r := newReplayRig(t, trustmcp.PaywallConfig{Gates: map[string]trustmcp.ToolGate{"cube": squareGate(t)}})
	session := bearerSessions(t, r.srv)
	alice, bob := session("alice"), session("bob")
	ctx := context.Background()
	p := r.payment(t)

	first, err := paidCall(ctx, t, alice, "cube", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	if !first.IsError || !strings.Contains(text(first), "not delivered") {
		t.Fatalf("alice's cube(7): error %v, %q; want a refusal by the gate", first.IsError, text(first))
	}

	for _, tool := range []string{"cube", "square"} {
		res, err := paidCall(ctx, t, bob, tool, 7, p)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || strings.Contains(text(res), "not delivered") {
			t.Errorf("bob's %s(7), with alice's payment, got her refusal %q; want the payment refused as used", tool, text(res))
		} else if pr := paidTerms(t, res); !strings.Contains(pr.Error, "already used") {
			t.Errorf("bob's %s(7), with alice's payment: %q, want already used", tool, pr.Error)
		}
	}

	again, err := paidCall(ctx, t, alice, "cube", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.StructuredContent, again.StructuredContent); diff != "" || text(again) != text(first) {
		t.Errorf("alice's retry: %q, want her refusal %q again (-first +retry):\n%s", text(again), text(first), diff)
	}
	if n, s := r.runs.Load(), r.fac.settled.Load(); n != 1 || s != 0 {
		t.Errorf("%d runs and %d settlements, want 1 and 0", n, s)
	}
}

// bearerSessions serves srv over Streamable HTTP behind bearer keys, each
// naming the caller "key:" and the key, and returns a function that opens
// a client session with a key.
func bearerSessions(t *testing.T, srv *mcp.Server) func(key string) *mcp.ClientSession {
	t.Helper()
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if token != "alice" && token != "bob" {
			return nil, mcpauth.ErrInvalidToken
		}
		return &mcpauth.TokenInfo{UserID: "key:" + token}, nil
	}
	h := mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return func(key string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
}
