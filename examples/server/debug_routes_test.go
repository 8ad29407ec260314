package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRun_debugVarsServedRoutes: every route the server serves counts in
// /debug/vars under its own name, as its documentation says, and only a
// path it does not serve counts as "other": the trust call's feedback,
// the health checks and the offline escrow's balances included.
func TestRun_debugVarsServedRoutes(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0")
	do := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, b.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	do(http.MethodPost, "/api/v4/feedback", `{}`)
	do(http.MethodGet, "/healthz", "")
	do(http.MethodGet, "/readyz", "")
	do(http.MethodGet, "/x402/escrow/balance/0x0000000000000000000000000000000000000001", "")
	do(http.MethodGet, "/no/such/route", "")

	want := map[string]int64{
		"POST /api/v4/feedback": 1, "GET /healthz": 1, "GET /readyz": 1,
		"GET /x402/escrow/balance/{address}": 1, "other": 1,
	}
	// A route is counted once its handler returns, which may be just after
	// the client has read the answer: read until the counts settle.
	got := readVars(t, b.debug).Calls
	for deadline := time.Now().Add(5 * time.Second); !cmp.Equal(want, got) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got = readVars(t, b.debug).Calls
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
