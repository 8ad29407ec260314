package trustmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

const benchKey = "bench-key"

// withKey adds the bench key to every request.
type withKey struct{ base http.RoundTripper }

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+benchKey)
	return k.base.RoundTrip(r)
}

// BenchmarkValidateClaim makes the same trust call (validation of
// "17 * 3 = 51", policy fast: one run on an instant worker, so that the
// transport is what differs) four ways: in process, over plain HTTP
// (trust.Client to trust.NewHandler), and as the validate_claim tool over
// the SDK's in-memory transport and over Streamable HTTP (stateless, JSON
// responses, behind a bearer key as the HTTP route is).
func BenchmarkValidateClaim(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	req := &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyFast,
		Task: trust.Task{ClaimedResult: json.RawMessage(`"17 * 3 = 51"`)}}
	args := map[string]any{"claimed_result": "17 * 3 = 51", "policy": "fast"}
	check := func(b *testing.B, status trust.Status, err error) {
		if err != nil || status != trust.StatusValid {
			b.Fatalf("%s (%v), want VALID", status, err)
		}
	}
	callTool := func(b *testing.B, cs *mcp.ClientSession) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	}

	b.Run("transport=none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := f.svc.Call(ctx, req)
			check(b, resp.Status, err)
		}
	})

	b.Run("transport=http", func(b *testing.B) {
		h, err := trust.NewHandler(f.svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{benchKey: "bench"})))
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		c, err := trust.NewClient(srv.URL, trust.WithAPIKey(benchKey))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Call(ctx, req)
			check(b, resp.Status, err)
		}
	})

	server, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("transport=mcp-memory", func(b *testing.B) {
		callTool(b, connect(b, server))
	})

	b.Run("transport=mcp-http", func(b *testing.B) {
		verify := func(context.Context, string, *http.Request) (*mcpauth.TokenInfo, error) {
			return &mcpauth.TokenInfo{UserID: "bench"}, nil
		}
		h := mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
			mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
		srv := httptest.NewServer(h)
		defer srv.Close()
		hc := &http.Client{Transport: withKey{base: http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		callTool(b, cs)
	})
}
