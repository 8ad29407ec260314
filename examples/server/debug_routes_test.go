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
// the health checks and the offline escrow's balances included, and the
// offline facilitator's routes when -facilitator serves them (and only
// then: without it they are paths the server does not serve).
func TestRun_debugVarsServedRoutes(t *testing.T) {
	t.Parallel()
	facilitator := []string{"POST /x402/facilitator/verify", "POST /x402/facilitator/settle", "GET /x402/facilitator/supported"}
	for _, tc := range []struct {
		name  string
		flags []string
		calls []string // "METHOD /path"
		want  map[string]int64
	}{
		{
			name: "always served",
			calls: []string{"POST /api/v4/feedback", "GET /healthz", "GET /readyz",
				"GET /x402/escrow/balance/0x0000000000000000000000000000000000000001", "GET /no/such/route"},
			want: map[string]int64{
				"POST /api/v4/feedback": 1, "GET /healthz": 1, "GET /readyz": 1,
				"GET /x402/escrow/balance/{address}": 1, "other": 1,
			},
		},
		{
			name:  "with -facilitator",
			flags: []string{"-facilitator"},
			calls: append([]string{"GET /no/such/route"}, facilitator...),
			want: map[string]int64{
				"POST /x402/facilitator/verify": 1, "POST /x402/facilitator/settle": 1,
				"GET /x402/facilitator/supported": 1, "other": 1,
			},
		},
		{
			name:  "without -facilitator",
			calls: facilitator,
			want:  map[string]int64{"other": 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, _, _ := startServerBanner(t, append([]string{"-debug-addr", "127.0.0.1:0"}, tc.flags...)...)
			for _, call := range tc.calls {
				method, path, _ := strings.Cut(call, " ")
				req, err := http.NewRequestWithContext(context.Background(), method, b.base+path, strings.NewReader(`{}`))
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
			// A route is counted once its handler returns, which may be
			// just after the client has read the answer: read until the
			// counts settle.
			got := readVars(t, b.debug).Calls
			for deadline := time.Now().Add(5 * time.Second); !cmp.Equal(tc.want, got) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				got = readVars(t, b.debug).Calls
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
