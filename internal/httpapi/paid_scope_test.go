package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestServer_paidScopeIncludesPrincipal: on a paid route whose paywall
// names no payer, two integrations with their own bearer keys behind one
// proxy (one address) that send the same Idempotency-Key each get their
// own answer; each one's retry gets its own kept answer.
func TestServer_paidScopeIncludesPrincipal(t *testing.T) {
	pass := func(next http.Handler) http.Handler { return next } // lets every request through, naming no payer
	srv := newServer(t, httpapi.Config{
		X402:          pass,
		Authenticator: httpapi.KeyAuthenticator(map[string]string{"key-a": "alice", "key-b": "bob"}),
		Endpoints:     []httpapi.Endpoint{{Method: "POST", Path: "/paid", Access: httpapi.Paid, Prepare: echo}},
	})
	call := func(key string) (principal, replayed string) {
		t.Helper()
		got := send(t, "POST", srv.URL+"/paid", `{"n":1}`, "Authorization", "Bearer "+key, "Idempotency-Key", "shared")
		var body struct{ Principal string }
		if err := json.Unmarshal([]byte(got.body), &body); err != nil || got.status != http.StatusOK {
			t.Fatalf("key %s: %d %s", key, got.status, got.body)
		}
		return body.Principal, got.header.Get(httpapi.HeaderIdempotentReplayed)
	}
	for _, tc := range []struct{ key, principal, replayed string }{
		{"key-a", "alice", ""},
		{"key-b", "bob", ""}, // bob reusing alice's key runs his own call
		{"key-a", "alice", "true"},
		{"key-b", "bob", "true"},
	} {
		principal, replayed := call(tc.key)
		if principal != tc.principal || replayed != tc.replayed {
			t.Errorf("key %s: answer for %q, replayed %q; want %q's answer, replayed %q", tc.key, principal, replayed, tc.principal, tc.replayed)
		}
	}
}

// TestServer_paidScopeAsksTheAuthenticator: an Authenticator that reads
// its credential from another header than Authorization names the
// principal of a paid request too, so two integrations behind one
// address that send the same Idempotency-Key each get their own answer.
func TestServer_paidScopeAsksTheAuthenticator(t *testing.T) {
	pass := func(next http.Handler) http.Handler { return next } // lets every request through, naming no payer
	apiKey := func(r *http.Request) (string, error) {
		switch r.Header.Get("X-Api-Key") {
		case "key-a":
			return "alice", nil
		case "key-b":
			return "bob", nil
		}
		return "", httpapi.ErrNoCredentials
	}
	srv := newServer(t, httpapi.Config{
		X402:          pass,
		Authenticator: apiKey,
		Endpoints:     []httpapi.Endpoint{{Method: "POST", Path: "/paid", Access: httpapi.Paid, Prepare: echo}},
	})
	for _, tc := range []struct{ key, principal, replayed string }{
		{"key-a", "alice", ""},
		{"key-b", "bob", ""},
		{"key-a", "alice", "true"},
	} {
		got := send(t, "POST", srv.URL+"/paid", `{"n":1}`, "X-Api-Key", tc.key, "Idempotency-Key", "shared")
		var body struct{ Principal string }
		if err := json.Unmarshal([]byte(got.body), &body); err != nil || got.status != http.StatusOK {
			t.Fatalf("key %s: %d %s", tc.key, got.status, got.body)
		}
		if replayed := got.header.Get(httpapi.HeaderIdempotentReplayed); body.Principal != tc.principal || replayed != tc.replayed {
			t.Errorf("key %s: answer for %q, replayed %q; want %q's answer, replayed %q", tc.key, body.Principal, replayed, tc.principal, tc.replayed)
		}
	}
}
