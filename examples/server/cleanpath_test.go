package main

import (
	"testing"

	"github.com/vouchkit/vouch/internal/uncleantest"
)

// TestRun_uncleanPath: the README's curls with a doubled slash, as a
// base URL ending in a slash writes them, sent by a client that does
// not follow redirects (curl without -L), get a 404 problem naming the
// route meant, from every door: the router, the trust call, MCP, A2A.
// The mux answered them with a redirect, and a POST with an empty body.
func TestRun_uncleanPath(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	for path, clean := range map[string]string{
		"//api/v4/trust":      "/api/v4/trust",
		"/api/v4//trust":      "/api/v4/trust",
		"//api/v3/validate":   "/api/v3/validate",
		"//api/v4/x402/trust": "/api/v4/x402/trust",
		"/" + mcpPath:         mcpPath,
		"/" + a2aPath:         a2aPath,
	} {
		uncleantest.NotFound(t, base, path, clean, `{}`, "Authorization", "Bearer "+defaultAPIKey)
	}
}
